// `tbtune tune SPEC`: compile, verify and time candidates on the GPU; store every trial and
// the winner. Without a GPU it shows the model's ranking and says that timing needs one.
#include <atomic>
#include <csignal>
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune::cli {
namespace {

struct TuneArgs {
  ProblemArgs problem;
  std::string db;
  int device = 0;
  std::string search = "model";
  int top = SearchDefaults::top;
  double within_percent = SearchDefaults::within * 100;
  int max_candidates = SearchDefaults::max_candidates;
  double budget = 0;
  double timeout = 60;
  bool allow_spills = false;
  std::vector<std::string> params;
  bool fresh = false;
  std::string strategy;
  bool json = false;
  bool quiet = false;
  bool verbose = false;
  bool no_probe = false;
};

// Set by SIGINT/SIGTERM; the engine stops after the candidate in flight. The handler is reset
// after the first signal, so a second Ctrl-C ends the process at once.
std::atomic<bool> g_stop{false};
extern "C" void on_stop_signal(int) { g_stop.store(true); }

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_stop_signal;
  sa.sa_flags = SA_RESETHAND;
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

SearchOptions search_options(const TuneArgs& a) {
  SearchOptions s;
  s.mode = a.search == "exhaustive" ? SearchMode::Exhaustive : SearchMode::Model;
  s.top = a.top;
  s.within = a.within_percent / 100;
  s.max_candidates = a.max_candidates;
  return s;
}

/// "model search (top 8, within 3%, each strategy's best 5, at most 48)" or "exhaustive search".
std::string search_text(const SearchOptions& s) {
  if (s.mode == SearchMode::Exhaustive) return "exhaustive search";
  return fmt::format("model search (top {}, within {:g}%, each strategy's best {}, at most {})", s.top,
                     100 * s.within, SearchDefaults::per_strategy, s.max_candidates);
}

/// "12 of the 312 feasible candidates (3.8%)". An exhaustive search times every candidate that
/// may fit (may_be_feasible), variants (Strategy::primary_of) included, which the feasible count
/// leaves out: "all 640 candidates that may fit on chip, variants included (312 shapes fit by
/// the register estimate; ptxas decides)".
std::string selected_text(int selected, const SpaceSize& space, SearchMode mode) {
  if (mode == SearchMode::Exhaustive)
    return fmt::format("all {} candidates that may fit on chip, variants included ({} shapes fit by the register "
                       "estimate; ptxas decides)",
                       selected, space.feasible);
  return fmt::format("{} of the {} feasible candidates ({:.1f}%)", selected, space.feasible,
                     space.feasible > 0 ? 100.0 * selected / space.feasible : 0.0);
}

void print_ranking(const std::vector<RankedCandidate>& ranked, const DeviceProfile& profile, int top) {
  std::vector<std::vector<std::string>> rows;
  for (const auto& c : ranked) {
    if (int(rows.size()) >= top) break;
    rows.push_back({c.strategy->name(), params_text(c.params), fixed(c.prediction.PP_gcells),
                    bottleneck_name(c.prediction.bottleneck),
                    // Over the register file by the estimate, but within the strategy's slack.
                    std::string(c.prediction.fits ? "yes" : may_be_chosen_by_model(c) ? "ptxas decides" : "no") +
                        (c.primary ? " (variant)" : "")});
  }
  fmt::print("{} candidates; the model's best {} for the {} profile:\n", ranked.size(), rows.size(),
             profile.name);
  print_table({"strategy", "params", "PP GCells/s", "bound", "fits"}, rows);
}

int no_gpu(const TuneArgs& a, const Problem& p, const NoGpuError& e) {
  // A login node or CI: still useful, and not a failure. The selection shown is the one a GPU
  // with the built-in profile would get; a probed profile can shift the margin slightly.
  const DeviceProfile profile = *builtin_profile("h100");
  const auto ranked = rank_candidates(p, profile, a.strategy, parse_params(a.params));
  const SearchOptions search = search_options(a);
  const SpaceSize space = space_size(ranked);
  const int selected = int(select_candidates(ranked, search).size());
  if (a.json) {
    nlohmann::json j{{"stencil", stencil_json(p)}, {"gpu", nullptr}, {"message", e.what()},
                     {"search", {{"mode", search_mode_name(search.mode)}, {"profile", profile.name},
                                 {"space", space.candidates}, {"feasible", space.feasible},
                                 {"selected", selected}}}};
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  fmt::print("{}: {} ({}, {}, radius {}, {} points)\n", a.problem.spec_path, p.stencil.name,
             dtype_name(p.dtype), shape_name(p.stencil.shape), p.stencil.radius, p.stencil.points.size());
  print_ranking(in_model_search_order(ranked), profile, 10);
  fmt::print("the {} would time {}\n", search_text(search), selected_text(selected, space, search.mode));
  fmt::print("\nTiming needs an NVIDIA GPU: {}.\n"
             "Nothing was timed or stored. Run this on a GPU node to tune.\n", e.what());
  return g_stop.load() ? kInterrupted : kOk;
}

/// The run as the `tunes` table records it.
nlohmann::json search_json(const TuneRecord& r) {
  const SearchTally& t = r.tally;
  return {{"mode", search_mode_name(r.search.mode)}, {"top", r.search.top},
          {"within", r.search.within}, {"max_candidates", r.search.max_candidates},
          {"space", r.space.candidates}, {"feasible", r.space.feasible}, {"selected", r.selected},
          {"timed", t.timed}, {"reused", t.reused}, {"pruned", t.pruned},
          {"compile_errors", t.compile_errors}, {"not_run", t.not_run}, {"wall_s", r.wall_s}};
}

void print_result(const Problem& p, const TuneResult& r) {
  std::vector<std::vector<std::string>> rows;
  for (const Trial& t : r.trials) {
    const bool ok = t.status == TrialStatus::Ok;
    rows.push_back({t.strategy, params_text(t.params),
                    std::string(trial_status_name(t.status)) + (t.reused ? "*" : ""),
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
  if (r.reused > 0)
    fmt::print("* {} trial(s) taken from an earlier run of this tune, not timed again (--fresh re-times them)\n", r.reused);
  const TuneRecord& rec = r.record;
  fmt::print("{}: {}: {} timed, {} reused, {} pruned, {} not compiled, {} not run; {:.1f} s\n",
             search_text(rec.search), selected_text(rec.selected, rec.space, rec.search.mode), rec.tally.timed,
             rec.tally.reused, rec.tally.pruned, rec.tally.compile_errors, rec.tally.not_run,
             rec.wall_s);
  if (r.worker_starts > 1) fmt::print("the GPU worker was restarted {} time(s)\n", r.worker_starts - 1);
  if (r.out_of_budget) fmt::print("time budget spent: {} candidate(s) not run\n", r.not_run);
  if (r.interrupted) fmt::print("interrupted: {} candidate(s) not run; run the same command again to resume\n", r.not_run);
}

int run_tune(const TuneArgs& a) {
  // First of all, so that a signal during loading, probing or ranking also ends in exit 130
  // (after the current phase) rather than the default action's 143.
  install_stop_handlers();
  Spec spec;
  const Problem p = a.problem.load(&spec);
  if (!a.strategy.empty() && !find_strategy(a.strategy))
    throw UsageError("--strategy '" + a.strategy + "': no such strategy (see tbtune emit --help)");
  const std::string db_path = a.db.empty() ? Cache::default_path() : a.db;

  TuneOptions o;
  o.device = a.device;
  o.search = search_options(a);
  o.budget_s = a.budget;
  o.timeout_s = a.timeout;
  o.allow_spills = a.allow_spills;
  o.fresh = a.fresh;
  o.only_strategy = a.strategy;
  o.only_params = parse_params(a.params);
  o.spec_text = spec.text;
  o.probe = !a.no_probe;
  o.stop = &g_stop;
  o.compile_cache_dir = (std::filesystem::path(db_path).parent_path() / "cubins").string();
  TuneResult r;
  try {
    Cache cache(db_path, Cache::Mode::ReadWrite);
    // --json keeps stderr quiet unless -v asks for the trials' lines (a job log beside the JSON).
    Progress progress(a.quiet || (a.json && !a.verbose) ? Verbosity::Quiet
                      : a.verbose                      ? Verbosity::Verbose
                                                       : Verbosity::Normal);
    r = tune(p, o, cache, std::ref(progress));
  } catch (const NoGpuError& e) {
    return no_gpu(a, p, e);
  }
  // A stop that came when no candidate was left to skip (all reused, or during ranking of an
  // empty selection) still exits 130, as documented.
  const bool stopped = r.interrupted || g_stop.load();
  const int done = stopped ? kInterrupted : r.winner ? kOk : kError;

  if (a.json) {
    nlohmann::json trials = nlohmann::json::array();
    for (const Trial& t : r.trials) trials.push_back(trial_json(t));
    nlohmann::json j{{"stencil", stencil_json(p)},
                     {"device", {{"name", r.device.name}, {"fingerprint", r.key.device_fingerprint},
                                 {"sm_count", r.device.sm_count}}},
                     {"db", db_path}, {"trials", trials}, {"winner", nullptr},
                     {"reused", r.reused}, {"not_run", r.not_run}, {"interrupted", r.interrupted},
                     {"out_of_budget", r.out_of_budget}, {"worker_restarts", r.worker_starts - 1},
                     {"search", search_json(r.record)}};
    if (r.winner) j["winner"] = trial_json(r.winner->trial);
    j["winner_stored"] = r.winner && !r.kept;
    if (r.kept) j["stored_winner"] = trial_json(r.kept->trial);
    std::cout << j.dump(2) << '\n';
    return done;
  }
  print_result(p, r);
  if (!r.winner) {
    fmt::print("no candidate passed verification; nothing stored as winner\n");
    return stopped ? kInterrupted : kError;
  }
  const char* so_far = r.interrupted || r.out_of_budget ? " so far" : "";
  if (r.kept) {
    fmt::print("best of this run{}: {} {} at {:.1f} GCells/s; the stored winner in {} stays {} {} at "
               "{:.1f} GCells/s (faster; a tune of part of the space does not replace it)\n",
               so_far, r.winner->trial.strategy, params_text(r.winner->trial.params),
               r.winner->trial.gcells_median, db_path, r.kept->trial.strategy,
               params_text(r.kept->trial.params), r.kept->trial.gcells_median);
    return done;
  }
  fmt::print("winner{}: {} {} at {:.1f} GCells/s, stored in {}\n", so_far, r.winner->trial.strategy,
             params_text(r.winner->trial.params), r.winner->trial.gcells_median, db_path);
  return done;
}

}  // namespace

void add_tune_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<TuneArgs>();
  CLI::App* cmd = app.add_subcommand(
      "tune", "Rank candidates with the model, then compile (in parallel), verify (against the naive "
              "kernel) and time the chosen ones on the GPU, each in a supervised worker process; "
              "every trial and the winner, with its CUBIN, go to the cache. An interrupted tune "
              "resumes from the stored trials. Without a GPU it prints the model's ranking and exits 0.");
  args->problem.add_to(cmd);
  add_db_option(cmd, args->db);
  cmd->add_option("--device", args->device, "CUDA device number")->capture_default_str();
  cmd->add_option("--search", args->search,
                  fmt::format("model: the model's top K plus everything predicted within --within of its best, "
                              "plus up to each strategy's best {} (one-step kernels: its best) predicted at least "
                              "{:g} of the best, at most --max-candidates; exhaustive: every candidate that may fit "
                              "on chip (ptxas decides the registers)",
                              SearchDefaults::per_strategy, SearchDefaults::strategy_floor))
      ->capture_default_str()->check(CLI::IsMember({"model", "exhaustive"}));
  cmd->add_option("--top", args->top, "K: candidates the model search always times")
      ->capture_default_str()->check(CLI::Range(0, 100000));
  cmd->add_option("--within", args->within_percent,
                  "percent: the model search also times candidates predicted this close to the best")
      ->capture_default_str()->check(finite_range(0.0, 100.0));
  cmd->add_option("--max-candidates", args->max_candidates,
                  "at most this many candidates in a model search (besides the naive reference)")
      ->capture_default_str()->check(CLI::Range(0, 100000));
  cmd->add_option("--budget", args->budget,
                  "seconds: start no candidate after this; the winner so far is stored (0: no limit)")
      ->capture_default_str()->check(finite_range(0.0, 1e9));
  cmd->add_option("--timeout", args->timeout,
                  "seconds a candidate may take on the GPU before it counts as a timeout")
      ->capture_default_str()->check(finite_range(0.1, 1e6));
  cmd->add_flag("--allow-spills", args->allow_spills, "time candidates whose kernels spill registers");
  cmd->add_flag("--fresh", args->fresh, "ignore trials stored by an earlier run; time everything again");
  cmd->add_option("--strategy", args->strategy, "tune only this strategy");
  cmd->add_option("--param", args->params,
                  "NAME=VALUE (repeatable): tune only candidates with these parameter values, e.g. "
                  "--strategy smtile3d --param t=2 --param tx=64 (the model's register estimate "
                  "does not rule them out; ptxas does)");
  cmd->add_flag("--json", args->json, "print JSON on stdout (no progress output unless -v: its lines go to stderr)");
  CLI::Option* quiet = cmd->add_flag("-q,--quiet", args->quiet, "no progress output");
  cmd->add_flag("-v,--verbose", args->verbose,
                   "one progress line per trial: the seconds since the search started, its status "
                   "and message")
      ->excludes(quiet);
  cmd->add_flag("--no-probe", args->no_probe,
                "without a stored profile for this GPU, use the built-in one instead of probing");
  cmd->callback([&action, args] { action = [args] { return run_tune(*args); }; });
}

}  // namespace tbtune::cli
