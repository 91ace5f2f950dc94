#include "tuner/search/tune.hpp"

#include <chrono>
#include <filesystem>

#include <fmt/format.h>

#include "tuner/gpu/compile_worker.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/gpu/probe.hpp"
#include "tuner/search/worker_measurer.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

std::string own_executable() {
  std::error_code ec;
  const auto p = std::filesystem::read_symlink("/proc/self/exe", ec);
  if (ec) throw Error("cannot find this program's own path to start the GPU worker: " + ec.message());
  return p.string();
}

}  // namespace

DeviceRecord device_record(const DeviceInfo& d) {
  DeviceRecord r;
  r.name = d.name;
  r.cc_major = d.cc_major;
  r.cc_minor = d.cc_minor;
  r.sm_count = d.sm_count;
  r.memory_bytes = d.memory_bytes;
  r.driver_version = d.driver_version;
  const std::string v = nvrtc_version();
  r.nvrtc_major = std::stoi(v.substr(0, v.find('.')));
  r.nvrtc_minor = std::stoi(v.substr(v.find('.') + 1));
  return r;
}

TuneRecord tune_record(const Problem& problem, const TuneOptions& options, const WinnerKey& key,
                       SpaceSize space, int selected, const EngineResult& engine, double wall_s) {
  TuneRecord r;
  r.key = key;
  r.steps = problem.steps;
  r.stencil_name = problem.stencil.name;
  // The filter as one text, so that `report` keeps a --param run apart from the whole space's.
  r.only_strategy = options.only_strategy;
  if (!options.only_params.empty()) {
    if (!r.only_strategy.empty()) r.only_strategy.push_back(' ');
    r.only_strategy.append(params_text(options.only_params));
  }
  r.search = options.search;
  r.budget_s = options.budget_s;
  r.fresh = options.fresh;
  r.allow_spills = options.allow_spills;
  r.space = space;
  r.selected = selected;
  r.tally = engine.tally;
  if (engine.winner) {
    r.winner_strategy = engine.winner->trial.strategy;
    r.winner_params = engine.winner->trial.params;
    r.winner_gcells = engine.winner->trial.gcells_median;
  }
  r.interrupted = engine.interrupted;
  r.out_of_budget = engine.out_of_budget;
  r.wall_s = wall_s;
  r.tool_version = TBTUNE_VERSION;
  return r;
}

CandidateChoice choose_candidates(const Problem& problem, const DeviceProfile& profile,
                                  const TuneOptions& options) {
  CandidateChoice c;
  c.ranked = rank_candidates(problem, profile, options.only_strategy, options.only_params);
  c.chosen = rank_candidates(problem, profile, "naive");
  if (c.chosen.empty()) throw Error("the naive strategy does not support this problem");
  const std::vector<RankedCandidate> selected = select_candidates(c.ranked, options.search);
  c.selected = int(selected.size());
  c.chosen.insert(c.chosen.end(), selected.begin(), selected.end());
  // A model search times as many candidates as it selected: the model's register estimate lets
  // through kernels that ptxas spills (it cannot tell which; docs/bench-3d.md), and the next
  // ones of the same strategy in rank order, up to kStandIns per selected one, take the place
  // of those pruned.
  constexpr int kStandIns = 3;
  c.stand_ins = options.search.mode == SearchMode::Model && !options.allow_spills;
  if (c.stand_ins) {
    const auto more = stand_ins(c.ranked, selected, kStandIns);
    c.chosen.insert(c.chosen.end(), more.begin(), more.end());
  }
  return c;
}

TuneResult tune(const Problem& problem, const TuneOptions& options, Cache& cache,
                const ProgressFn& progress) {
  const auto started = std::chrono::steady_clock::now();
  if (options.spec_text.empty())
    throw Error("tune needs the spec text (TuneOptions::spec_text): the GPU worker reads the problem from it");
  const std::string exe = options.worker_exe.empty() ? own_executable() : options.worker_exe;
  WorkerMeasurer measurer(exec_launcher({exe, "worker"}), {options.device, options.timeout_s});

  TuneResult result;
  result.device = measurer.device();  // NoGpuError without a GPU
  const DeviceRecord record = device_record(result.device);
  // The model uses this GPU's measured profile: stored by an earlier probe, else probed now.
  if (options.profile) {
    result.profile = *options.profile;
  } else if (auto stored = cache.profile(record.fingerprint(), profile_for(result.device))) {
    result.profile = *stored;
  } else if (options.probe) {
    result.profile = measurer.probe(9, options.compile_cache_dir);
    cache.put_profile(record.fingerprint(), result.profile);
  } else {
    result.profile = profile_for(result.device);
  }
  result.key = WinnerKey{problem.stencil.hash, record.fingerprint(), problem.dtype, problem.domain,
                         steps_class(problem.steps)};
  cache.put_device(record);
  cache.put_stencil(problem.stencil, options.spec_text);

  const CandidateChoice choice = choose_candidates(problem, result.profile, options);

  measurer.set_problem(problem, options.spec_text, options.seed, options.timing,
                       options.compile_cache_dir);
  EngineOptions eo;
  eo.arch = arch_for(result.device.cc_major, result.device.cc_minor);
  eo.compile_cache_dir = options.compile_cache_dir;
  eo.profile = result.profile;
  eo.allow_spills = options.allow_spills;
  eo.budget_s = options.budget_s;
  eo.fresh = options.fresh;
  eo.stop = options.stop;
  eo.max_timed = choice.stand_ins ? choice.selected : 0;
  eo.keep_faster_winner = !options.only_strategy.empty() || !options.only_params.empty();
  // Compiles run in `tbtune compile-worker` processes, so that the engine can end those it no
  // longer needs (NVRTC cannot be stopped in a thread). Ended at the search's end, a stand-in
  // compiled ahead of need costs only the cores it took. Two ahead: j2d49pt's default tune took
  // 49.0 and 51.0 s against 57.4 and 58.6 with one, j3d27pt's the same (docs/tuning.md).
  CompileProcesses compiles(exec_launcher({exe, "compile-worker"}));
  eo.compile = [&compiles](const std::string& source, const std::string& arch, const std::string& dir) {
    return compiles.compile(source, arch, dir);
  };
  eo.stop_compiles = [&compiles] { compiles.stop(); };
  eo.compile_ahead = 2;
  EngineResult er = run_engine(problem, result.key, choice.chosen, measurer, cache, eo, progress);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  result.record = tune_record(problem, options, result.key, space_size(choice.ranked),
                              choice.selected, er, wall_s);
  // After the engine's own writes: a run stopped by a signal still gets here and is recorded.
  cache.add_tune(result.record);
  result.trials = std::move(er.trials);
  result.winner = std::move(er.winner);
  result.kept = std::move(er.kept);
  result.reused = er.reused;
  result.not_run = er.not_run;
  result.interrupted = er.interrupted;
  result.out_of_budget = er.out_of_budget;
  result.worker_starts = measurer.starts();
  return result;
}

}  // namespace tbtune
