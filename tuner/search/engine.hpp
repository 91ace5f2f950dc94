#pragma once
/// @file engine.hpp
/// The tuning engine proper: given the candidates to try (the naive reference first), compile
/// them all on a thread pool, then in rank order prune, verify and time each as its compile
/// finishes, record every trial in the cache as it ends, and store the winner. Resumes from
/// trials already stored; stops early on request or when the time budget is spent. The GPU is
/// reached only through a Measurer, so the engine is tested on CPU.
#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/record/trial.hpp"
#include "tuner/search/measurer.hpp"
#include "tuner/search/search.hpp"

namespace tbtune {

/// Progress events, for the CLI to show; the library never prints.
struct TuneEvent {
  enum class Kind { Start, Measured } kind = Kind::Start;
  int index = 0;                  ///< place among the candidates looked at, 0-based (0: naive)
  int total = 0;
  const Trial* trial = nullptr;   ///< for Measured
  double elapsed_s = 0;           ///< since the engine started
};
using ProgressFn = std::function<void(const TuneEvent&)>;

using CompileFn = std::function<CompiledModule(const std::string& source, const std::string& arch,
                                               const std::string& cache_dir)>;

struct EngineOptions {
  std::string arch;                 ///< "sm_90"
  std::string compile_cache_dir;    ///< folder of compiled CUBINs (empty: none)
  DeviceProfile profile;            ///< for the post-compile resource check
  bool allow_spills = false;        ///< time candidates whose kernels spill registers
  double budget_s = 0;              ///< start no candidate after this many seconds (0: no limit)
  bool fresh = false;               ///< ignore trials stored by earlier runs
  /// Stop once this many candidates (naive left out) were timed or reused, or left out by a stop
  /// or the budget (0: run them all). The candidates after the first max_timed stand in, in
  /// order, for those of their own strategy passed over: pruned after compiling, not compiled,
  /// or answered `resources` (by the pruning or the GPU worker); the model's register estimate
  /// cannot say which spill. A stand-in no passed-over candidate of its strategy needs is skipped.
  int max_timed = 0;
  /// A search of part of the space (--strategy, --param) does not replace a stored winner that
  /// ran faster: the cache keeps the fastest candidate it knows, which applications look up.
  bool keep_faster_winner = false;
  unsigned compile_threads = 0;     ///< 0: one per hardware thread
  /// Stand-ins compiled ahead of need: when a compile passes a candidate over, its strategy's
  /// next stand-in compiles (it takes the place), and up to this many after it too while
  /// compile threads are idle, in case it is passed over as well. Only worth it where
  /// stop_compiles ends compiles still running: those no place needed would hold the end.
  int compile_ahead = 0;
  /// Called once the search needs no more compiles (it ended, was stopped or failed), before
  /// the engine waits for its compile threads: ends the compiles still running (empty: they
  /// run to their end).
  std::function<void()> stop_compiles;
  const std::atomic<bool>* stop = nullptr;  ///< set (by a signal handler) to stop early
  CompileFn compile = compile_cuda; ///< replaced in tests
  std::string work_dir;             ///< CUBIN files and the reference output; empty: a temp dir
};

struct EngineResult {
  std::vector<Trial> trials;        ///< in list order; reused ones have `reused` set
  std::optional<Winner> winner;     ///< the fastest verified trial, stored in the cache unless:
  std::optional<Winner> kept;       ///< the faster stored winner kept (keep_faster_winner)
  int reused = 0;                   ///< trials taken from the cache instead of run
  int not_run = 0;                  ///< candidates left out by the budget or a stop request
  SearchTally tally;                ///< the same run counted per outcome, naive left out
  bool interrupted = false;         ///< stopped by `stop`
  bool out_of_budget = false;
};

/// Runs the engine over `candidates` (candidates[0] must be the naive strategy) for `problem`,
/// whose trials and winner go to `cache` under `key`. Throws Error when the naive reference
/// fails (nothing could be verified) or the GPU side cannot work at all; a failing candidate
/// is a trial.
[[nodiscard]] EngineResult run_engine(const Problem& problem, const WinnerKey& key,
                                      const std::vector<RankedCandidate>& candidates,
                                      Measurer& measurer, Cache& cache,
                                      const EngineOptions& options, const ProgressFn& progress = {});

/// The post-compile check of one candidate: empty when it may run, else why not (and the
/// status to record). Exposed for tests.
struct Pruning {
  TrialStatus status = TrialStatus::Ok;
  std::string message;
};
[[nodiscard]] Pruning prune_after_compile(const RankedCandidate& candidate,
                                          const CompiledModule& module,
                                          const DeviceProfile& profile, bool allow_spills);

}  // namespace tbtune
