// `tbtune report`: how well the model predicted the measured trials behind every stored winner,
// the recorded model searches against exhaustive ones, and (--svg) a roofline chart of the
// winners. Reads the cache only; needs no GPU.
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "db/cache.hpp"
#include "tuner/report/report.hpp"
#include "tuner/spec/error.hpp"

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

nlohmann::json summary_json(const std::optional<SearchSummary>& s) {
  if (!s) return nullptr;
  const TuneRecord& r = s->last;
  nlohmann::json winner = nullptr;
  if (!r.winner_strategy.empty())
    winner = {{"strategy", r.winner_strategy}, {"params", params_json(r.winner_params)},
              {"gcells", r.winner_gcells}};
  return {{"runs", s->runs}, {"complete", r.complete()}, {"space", r.space.candidates},
          {"feasible", r.space.feasible}, {"selected", r.selected}, {"timed", s->timed},
          {"timed_fraction", s->timed_fraction()}, {"wall_s", s->wall_s}, {"winner", winner},
          {"options", {{"top", r.search.top}, {"within", r.search.within},
                       {"max_candidates", r.search.max_candidates}}}};
}

template <class T>
nlohmann::json or_null(const std::optional<T>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json search_json(const std::vector<SearchEvidence>& evidence) {
  nlohmann::json out = nlohmann::json::array();
  for (const SearchEvidence& e : evidence) {
    const TuneRecord& p = e.problem();
    out.push_back({{"stencil", p.stencil_name}, {"hash", p.key.stencil_hash},
                   {"device", p.key.device_fingerprint}, {"dtype", dtype_name(p.key.dtype)},
                   {"domain", p.key.domain}, {"steps", p.steps},
                   {"strategy", p.only_strategy.empty() ? nlohmann::json(nullptr) : nlohmann::json(p.only_strategy)},
                   {"space", p.space.candidates}, {"feasible", p.space.feasible},
                   {"model", summary_json(e.model)}, {"exhaustive", summary_json(e.exhaustive)},
                   {"ratio", or_null(e.ratio())}, {"within_3pct", or_null(e.meets_within())},
                   {"timed_at_most_10pct", or_null(e.meets_timed())},
                   {"wall_at_most_60s", or_null(e.meets_wall())}});
  }
  return out;
}

std::string mark(const std::optional<bool>& met) { return met ? (*met ? "pass" : "FAIL") : "-"; }

/// One search's cells: candidates timed ('*': incomplete, i.e. stopped or out of budget; with
/// the share of the feasible candidates for the model search), winner GCells/s, wall seconds.
std::vector<std::string> summary_cells(const std::optional<SearchSummary>& s, bool with_share) {
  if (!s) return {"-", "-", "-"};
  std::string timed = std::to_string(s->timed) + (s->last.complete() ? "" : "*");
  if (with_share) timed += fmt::format(" ({:.1f}%)", 100 * s->timed_fraction());
  return {timed, s->last.winner_gcells > 0 ? fixed(s->last.winner_gcells) : "-", fixed(s->wall_s)};
}

std::vector<std::string> evidence_row(const SearchEvidence& e) {
  const TuneRecord& p = e.problem();
  std::vector<std::string> row{
      p.stencil_name + (p.only_strategy.empty() ? "" : " [" + p.only_strategy + "]"),
      dtype_name(p.key.dtype), domain_text(p.key), std::to_string(p.steps),
      std::to_string(p.space.feasible)};
  for (std::string& cell : summary_cells(e.model, true)) row.push_back(std::move(cell));
  for (std::string& cell : summary_cells(e.exhaustive, false)) row.push_back(std::move(cell));
  const auto r = e.ratio();
  row.insert(row.end(), {r ? fmt::format("{:.3f}", *r) : "-", mark(e.meets_within()),
                         mark(e.meets_timed()), mark(e.meets_wall())});
  return row;
}

void print_search(const std::vector<SearchEvidence>& evidence) {
  if (evidence.empty()) {
    fmt::print("\nsearch: no tune runs recorded\n");
    return;
  }
  fmt::print("\nsearch: the model search against the exhaustive search (criteria: winner within "
             "{:.0f}% of the exhaustive best, at most {:.0f}% of the feasible candidates timed, "
             "at most {:.0f} s)\n",
             100 * SearchCriteria::within, 100 * SearchCriteria::timed_fraction,
             SearchCriteria::wall_s);
  bool incomplete = false;
  std::string device;
  std::vector<std::vector<std::string>> rows;
  const auto flush = [&] {
    if (rows.empty()) return;
    fmt::print("on {}:\n", device);
    print_table({"stencil", "dtype", "domain", "steps", "feasible", "model timed",
                 "model GCells/s", "model s", "exh. timed", "exh. GCells/s", "exh. s",
                 "model/exh.", "within 3%", "<=10% timed", "<=60 s"},
                rows);
    rows.clear();
  };
  for (const SearchEvidence& e : evidence) {
    if (e.problem().key.device_fingerprint != device) {
      flush();
      device = e.problem().key.device_fingerprint;
    }
    rows.push_back(evidence_row(e));
    for (const auto* s : {&e.model, &e.exhaustive})
      incomplete = incomplete || (*s && !(*s)->last.complete());
  }
  flush();
  if (incomplete)
    fmt::print("* incomplete (interrupted or out of budget): run the same tune again to resume\n");
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
  const std::vector<SearchEvidence> evidence = search_evidence(cache.tunes());
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
    j["search"] = search_json(evidence);
    j["svg"] = nullptr;
    if (chart)
      j["svg"] = {{"file", a.svg}, {"device", chart->device_fingerprint},
                  {"profile", chart->profile.name}, {"dtype", dtype_name(chart->dtype)},
                  {"drawn", chart->drawn}, {"left_out", chart->left_out}};
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  print_report(path, report);
  print_search(evidence);
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
                "of each verified trial, and per strategy the median |measured/PP - 1|; for every "
                "problem tuned with a model and/or an exhaustive search, the candidates each "
                "timed, their winners and wall times against the search criteria. --svg "
                "draws the winners on a roofline of their device (the probed profile if one is "
                "stored, else the built-in one). Reads the cache only; needs no GPU.");
  add_db_option(cmd, args->db);
  cmd->add_option("--svg", args->svg, "write a roofline chart of the winners to this SVG file");
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([&action, args] { action = [args] { return run_report(*args); }; });
}

}  // namespace tbtune::cli
