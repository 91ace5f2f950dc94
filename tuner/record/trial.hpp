#pragma once
/// @file trial.hpp
/// The outcome of trying one candidate: what the cache stores for every candidate.
#include <string>

#include "model/model.hpp"
#include "tuner/codegen/strategy.hpp"

namespace tbtune {

enum class TrialStatus {
  Ok,            ///< compiled, ran, verified and timed
  CompileError,  ///< NVRTC rejected the source
  Resources,     ///< too many registers / shared memory / spills to launch as asked
  LaunchError,   ///< the launch or the kernel failed
  WrongResult,   ///< differs from the naive kernel beyond tolerance
  Timeout,       ///< ran longer than the per-candidate limit
  Skipped,       ///< not run (no GPU, pruned after compiling)
};
[[nodiscard]] const char* trial_status_name(TrialStatus s);   ///< "ok", "compile_error", ...
[[nodiscard]] TrialStatus trial_status_from_name(const std::string& name);  ///< throws Error

struct Trial {
  std::string strategy;
  Params params;
  Prediction predicted;
  TrialStatus status = TrialStatus::Skipped;
  std::string message;          ///< error text, or empty
  double gcells_median = 0;     ///< measured, GCells/s (from the median time)
  double gcells_best = 0;       ///< from the fastest repetition
  double seconds_median = 0;    ///< one full run of `steps` steps
  int repetitions = 0;
  double max_rel_error = 0;     ///< vs the naive kernel
  int registers = 0;
  int spill_bytes = 0;          ///< spill stores + loads reported by ptxas
  long smem_bytes = 0;          ///< static + dynamic shared memory per block
  std::string cubin;            ///< the compiled image (binary bytes), kept for the winner
  bool reused = false;          ///< taken from the cache by a resumed tune, not run again
};

}  // namespace tbtune
