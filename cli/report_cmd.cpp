// `tbtune report`: how well the model predicted the measured trials behind every stored winner,
// and (--svg) a roofline chart of the winners. Reads the cache only; needs no GPU.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "db/cache.hpp"
#include "model/report.hpp"
#include "tuner/error.hpp"

namespace tbtune::cli {
namespace {

struct ReportArgs {
  std::string db;
  std::string svg;
  bool json = false;
};

std::string domain_text(const WinnerKey& k) {
  return fmt::format("{}x{}{}", k.domain[0], k.domain[1],
                     k.domain[2] > 1 ? "x" + std::to_string(k.domain[2]) : "");
}

void write_file(const std::string& path, const std::string& text) {
  std::ofstream f(path, std::ios::binary);
  f << text;
  if (!f.flush()) throw UsageError("--svg '" + path + "': cannot write the file");
}

nlohmann::json report_json(const ModelReport& r) {
  nlohmann::json keys = nlohmann::json::array();
  for (const ReportKey& k : r.keys) {
    const Winner& w = k.winner;
    nlohmann::json trials = nlohmann::json::array();
    for (const ReportRow& row : k.rows) {
      const auto e = row.error();
      trials.push_back({{"strategy", row.strategy}, {"params", params_json(row.params)},
                        {"predicted_PP_gcells", row.predicted_pp}, {"gcells", row.measured},
                        {"error", e ? nlohmann::json(*e) : nlohmann::json(nullptr)}});
    }
    keys.push_back({{"stencil", w.stencil_name}, {"hash", w.key.stencil_hash},
                    {"device", w.key.device_fingerprint}, {"dtype", dtype_name(w.key.dtype)},
                    {"domain", w.key.domain}, {"steps", w.steps},
                    {"winner", trial_json(w.trial)}, {"trials", trials}});
  }
  nlohmann::json strategies = nlohmann::json::array();
  for (const StrategyAccuracy& s : r.strategies)
    strategies.push_back({{"strategy", s.strategy}, {"trials", s.trials},
                          {"median_abs_error", s.median_abs_error}});
  return {{"keys", keys}, {"strategies", strategies}};
}

void print_report(const std::string& path, const ModelReport& r) {
  fmt::print("{}: {} winner(s)\n", path, r.keys.size());
  for (const ReportKey& k : r.keys) {
    const Winner& w = k.winner;
    fmt::print("\n{} ({}, {}, {} steps) on {}: winner {} {} at {:.1f} GCells/s\n", w.stencil_name,
               dtype_name(w.key.dtype), domain_text(w.key), w.steps, w.key.device_fingerprint,
               w.trial.strategy, params_text(w.trial.params), w.trial.gcells_median);
    std::vector<std::vector<std::string>> rows;
    for (const ReportRow& row : k.rows) {
      const auto e = row.error();
      rows.push_back({row.strategy, params_text(row.params), fixed(row.predicted_pp),
                      fixed(row.measured), e ? fmt::format("{:+.0f}%", 100 * *e) : "-"});
    }
    print_table({"strategy", "params", "model PP", "GCells/s", "measured/PP - 1"}, rows);
  }
  std::vector<std::vector<std::string>> rows;
  for (const StrategyAccuracy& s : r.strategies)
    rows.push_back({s.strategy, std::to_string(s.trials), fmt::format("{:.1f}%", 100 * s.median_abs_error)});
  fmt::print("\nmodel error per strategy, over every verified trial:\n");
  print_table({"strategy", "trials", "median |measured/PP - 1|"}, rows);
}

int run_report(const ReportArgs& a) {
  const std::string path = a.db.empty() ? Cache::default_path() : a.db;
  const Cache cache(path, Cache::Mode::ReadOnly);
  const ModelReport report = model_report(cache);
  std::optional<ReportRoofline> chart;
  if (!a.svg.empty()) {
    chart = report_roofline(cache, report, [&cache](const Winner& w, const DeviceProfile& d) {
      return stored_winner_terms(cache, w, d);
    });
    if (chart->svg.empty()) throw UsageError("--svg: the cache holds no winners to chart");
    write_file(a.svg, chart->svg);
  }
  if (a.json) {
    nlohmann::json j = report_json(report);
    j["db"] = path;
    j["svg"] = nullptr;
    if (chart)
      j["svg"] = {{"file", a.svg}, {"device", chart->device_fingerprint},
                  {"profile", chart->profile.name}, {"dtype", dtype_name(chart->dtype)},
                  {"drawn", chart->drawn}, {"left_out", chart->left_out}};
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  print_report(path, report);
  if (chart) {
    fmt::print("\nroofline of {} {} winner(s) on the '{}' profile written to {}\n", chart->drawn,
               dtype_name(chart->dtype), chart->profile.name, a.svg);
    for (const std::string& why : chart->left_out) fmt::print("  not drawn: {}\n", why);
  }
  return kOk;
}

}  // namespace

void add_report_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ReportArgs>();
  CLI::App* cmd = app.add_subcommand(
      "report", "For every stored winner, the model's predicted PP next to the measured GCells/s "
                "of each verified trial, and per strategy the median |measured/PP - 1|. --svg "
                "draws the winners on a roofline of their device (the probed profile if one is "
                "stored, else the built-in one). Reads the cache only; needs no GPU.");
  add_db_option(cmd, args->db);
  cmd->add_option("--svg", args->svg, "write a roofline chart of the winners to this SVG file");
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([&action, args] { action = [args] { return run_report(*args); }; });
}

}  // namespace tbtune::cli
