// `tbtune tune SPEC`: compile, verify and time candidates on the GPU; store every trial and
// the winner. Without a GPU it shows the model's ranking and says that timing needs one.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "tuner/error.hpp"
#include "tuner/tune.hpp"

namespace tbtune::cli {
namespace {

struct TuneArgs {
  ProblemArgs problem;
  std::string db;
  int device = 0;
  int top = 8;
  std::string strategy;
  bool json = false;
  bool quiet = false;
  bool no_probe = false;
};

void print_ranking(const Problem& p, const DeviceProfile& profile, const std::string& only, int top) {
  const auto ranked = rank_candidates(p, profile, only);
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : ranked) {
    if (int(rows.size()) >= top) break;
    rows.push_back({c.strategy->name(), params_text(c.params), fixed(c.prediction.PP_gcells),
                    bottleneck_name(c.prediction.bottleneck), c.prediction.fits ? "yes" : "no"});
  }
  fmt::print("{} candidates; the model's best {} for the {} profile:\n", ranked.size(), rows.size(),
             profile.name);
  print_table({"strategy", "params", "PP GCells/s", "bound", "fits"}, rows);
}

int run_tune(const TuneArgs& a) {
  Spec spec;
  const Problem p = a.problem.load(&spec);
  if (!a.strategy.empty() && !find_strategy(a.strategy))
    throw UsageError("--strategy '" + a.strategy + "': no such strategy (see tbtune emit --help)");
  const std::string db_path = a.db.empty() ? Cache::default_path() : a.db;

  TuneOptions o;
  o.device = a.device;
  o.top = a.top;
  o.only_strategy = a.strategy;
  o.spec_text = spec.text;
  o.probe = !a.no_probe;
  o.compile_cache_dir = (std::filesystem::path(db_path).parent_path() / "cubins").string();
  TuneResult r;
  try {
    Cache cache(db_path, Cache::Mode::ReadWrite);
    Progress progress(a.quiet || a.json);
    r = tune(p, o, cache, std::ref(progress));
  } catch (const NoGpuError& e) {
    // A login node or CI: still useful, and not a failure.
    const DeviceProfile profile = *builtin_profile("h100");
    if (a.json) {
      nlohmann::json j{{"stencil", stencil_json(p)}, {"gpu", nullptr}, {"message", e.what()}};
      std::cout << j.dump(2) << '\n';
      return kOk;
    }
    fmt::print("{}: {} ({}, {}, radius {}, {} points)\n", a.problem.spec_path, p.stencil.name,
               dtype_name(p.dtype), shape_name(p.stencil.shape), p.stencil.radius, p.stencil.points.size());
    print_ranking(p, profile, a.strategy, 10);
    fmt::print("\nTiming needs an NVIDIA GPU, and none is usable here: {}\n"
               "Nothing was timed or stored. Run this on a GPU node to tune.\n", e.what());
    return kOk;
  }

  if (a.json) {
    nlohmann::json trials = nlohmann::json::array();
    for (const Trial& t : r.trials) trials.push_back(trial_json(t));
    nlohmann::json j{{"stencil", stencil_json(p)},
                     {"device", {{"name", r.device.name}, {"fingerprint", r.key.device_fingerprint},
                                 {"sm_count", r.device.sm_count}}},
                     {"db", db_path}, {"trials", trials}, {"winner", nullptr}};
    if (r.winner) j["winner"] = trial_json(r.winner->trial);
    std::cout << j.dump(2) << '\n';
    return r.winner ? kOk : kError;
  }
  std::vector<std::vector<std::string>> rows;
  for (const Trial& t : r.trials) {
    const bool ok = t.status == TrialStatus::Ok;
    rows.push_back({t.strategy, params_text(t.params), trial_status_name(t.status),
                    ok ? fixed(t.gcells_median) : "-", fixed(t.predicted.PP_gcells),
                    ok && t.predicted.PP_gcells > 0 ? fixed(100 * t.gcells_median / t.predicted.PP_gcells, 0) + "%" : "-",
                    std::to_string(t.registers), ok ? fmt::format("{:.1e}", t.max_rel_error) : "-"});
  }
  fmt::print("{} on {} ({}), {} steps, domain {}x{}{}\n", p.stencil.name, r.device.name,
             dtype_name(p.dtype), p.steps, p.domain[0], p.domain[1],
             p.dims() == 3 ? "x" + std::to_string(p.domain[2]) : "");
  print_table({"strategy", "params", "status", "GCells/s", "model PP", "% of PP", "regs", "max err"}, rows);
  for (const Trial& t : r.trials)
    if (t.status != TrialStatus::Ok) fmt::print("  {} {}: {}\n", t.strategy, params_text(t.params), t.message.substr(0, 300));
  if (!r.winner) {
    fmt::print("no candidate passed verification; nothing stored as winner\n");
    return kError;
  }
  fmt::print("winner: {} {} at {:.1f} GCells/s, stored in {}\n", r.winner->trial.strategy,
             params_text(r.winner->trial.params), r.winner->trial.gcells_median, db_path);
  return kOk;
}

}  // namespace

void add_tune_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Rank candidates with the model, then compile, verify (against the naive kernel) and "
              "time the best ones on the GPU; every trial and the winner, with its CUBIN, go to the "
              "cache. Without a GPU it prints the model's ranking and exits 0.");
  args->problem.add_to(cmd);
  add_db_option(cmd, args->db);
  cmd->add_option("--device", args->device, "CUDA device number")->capture_default_str();
  cmd->add_option("--top", args->top, "candidates to time besides the naive reference")
      ->capture_default_str()->check(CLI::Range(0, 10000));
  cmd->add_option("--strategy", args->strategy, "tune only this strategy");
  cmd->add_flag("--json", args->json, "print JSON (no progress output)");
  cmd->add_flag("-q,--quiet", args->quiet, "no progress output");
  cmd->add_flag("--no-probe", args->no_probe,
                "without a stored profile for this GPU, use the built-in one instead of probing");
  cmd->callback([&action, args] { action = [args] { return run_tune(*args); }; });
}

}  // namespace tbtune::cli
