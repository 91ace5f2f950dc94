#pragma once
/// @file tune.hpp
/// `tune()`: everything a tune needs around the engine (tuner/engine.hpp): the device and its
/// profile (from the GPU worker), the model's ranking and the search's choice, the cache rows
/// for the device and stencil, and the supervised GPU worker that measures.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "tuner/gpu/gpu.hpp"
#include "tuner/gpu/runner.hpp"
#include "tuner/record/trial.hpp"
#include "tuner/search/engine.hpp"
#include "tuner/search/search.hpp"

namespace tbtune {

struct TuneOptions {
  int device = 0;
  SearchOptions search;              ///< which candidates to time (tuner/search.hpp)
  std::string only_strategy;         ///< tune one strategy only (empty: all)
  Params only_params;                ///< tune only candidates with these values (rank_candidates)
  std::uint64_t seed = 20231;
  std::string compile_cache_dir;     ///< folder of compiled CUBINs (empty: none)
  TimingOptions timing;
  /// The spec's text: stored with the stencil in the cache, and what the GPU worker reads the
  /// problem from. Required.
  std::string spec_text;
  bool probe = true;                 ///< no stored profile for this GPU: probe it (and store it)
  /// Model with this profile instead of a stored, probed or built-in one. A sweep whose CUBINs
  /// were compiled ahead (on a node without a GPU) with a named profile passes the same one, so
  /// the GPU run chooses the same candidates and compiles nothing.
  std::optional<DeviceProfile> profile;
  bool allow_spills = false;         ///< time candidates whose kernels spill registers
  double budget_s = 0;               ///< start no candidate after this many seconds (0: none)
  bool fresh = false;                ///< ignore trials stored by earlier (interrupted) runs
  double timeout_s = 60;             ///< per candidate, in the GPU worker
  const std::atomic<bool>* stop = nullptr;  ///< set to stop after the current candidate
  /// The tbtune executable whose hidden `worker` and `compile-worker` subcommands run the GPU
  /// jobs and the NVRTC compiles; empty: this process's own executable.
  std::string worker_exe;
};

struct TuneResult {
  DeviceInfo device;
  DeviceProfile profile;
  WinnerKey key;
  std::vector<Trial> trials;       ///< in the order they were run; the first is naive
  std::optional<Winner> winner;    ///< the fastest verified trial
  std::optional<Winner> kept;      ///< a faster stored winner that a filtered tune left in place
  int reused = 0;                  ///< trials resumed from the cache
  int not_run = 0;                 ///< left out by the budget or a stop request
  bool interrupted = false;
  bool out_of_budget = false;
  int worker_starts = 0;           ///< GPU worker processes started (1 + restarts)
  TuneRecord record;               ///< the run as recorded in the cache's `tunes` table
};

/// The device record the cache keys results with.
[[nodiscard]] DeviceRecord device_record(const DeviceInfo& device);

/// What a tune run records: its search (`options`, over a ranked space of size `space` from
/// which `selected` candidates were chosen), what the engine made of them, its winner and
/// `wall_s`, the seconds of the whole run. created_at is left to the cache.
[[nodiscard]] TuneRecord tune_record(const Problem& problem, const TuneOptions& options,
                                     const WinnerKey& key, SpaceSize space, int selected,
                                     const EngineResult& engine, double wall_s);

/// The candidates a tune hands to the engine, and the ranked space they come from.
struct CandidateChoice {
  std::vector<RankedCandidate> ranked;  ///< the whole space, best first (options' filters applied)
  std::vector<RankedCandidate> chosen;  ///< naive first, then the selection, then the stand-ins
  int selected = 0;                     ///< the search's selection, naive and stand-ins left out
  bool stand_ins = false;               ///< whether stand-ins follow the selection (model search)
};

/// What tune() compiles and times for `problem` with `profile`: the naive reference, the
/// search's selection, and for a model search without `allow_spills` up to 3 stand-ins per
/// selected candidate (they take the place of those pruned after compiling). The engine
/// compiles every chosen candidate, so compiling these ahead leaves a tune nothing to compile.
[[nodiscard]] CandidateChoice choose_candidates(const Problem& problem, const DeviceProfile& profile,
                                                const TuneOptions& options);

/// Tunes `problem` on the GPU, storing trials and the winner in `cache`, and at the end one
/// `tunes` row (tune_record()), also when stopped by `options.stop` or the budget. This
/// process never initialises CUDA: a worker process does the GPU work. Throws NoGpuError
/// without a GPU; failures of single candidates become trials. A run that throws after
/// choosing its candidates (the naive reference failing, the GPU side failing as a whole)
/// records no `tunes` row: its trials are stored, and the next run counts them as reused.
[[nodiscard]] TuneResult tune(const Problem& problem, const TuneOptions& options, Cache& cache,
                              const ProgressFn& progress = {});

}  // namespace tbtune
