#pragma once
/// @file measurer.hpp
/// What the engine asks of the GPU side: "run this compiled candidate, verify it against the
/// reference and time it". An interface, so the engine is tested on CPU with a planted
/// backend; the real one runs each job in a supervised worker process (WorkerMeasurer).
#include <string>

#include "tuner/gpu/runner.hpp"
#include "tuner/record/trial.hpp"
#include "tuner/search/search.hpp"

namespace tbtune {

struct MeasureJob {
  int index = 0;                           ///< position in the engine's list (0: naive)
  const RankedCandidate* candidate = nullptr;
  std::string cubin_path;                  ///< the compiled image, as a file
  std::string ptxas_log;                   ///< NVRTC's log with ptxas' resource report
  /// True for the naive reference run: its output is saved to `reference_path` for verifying
  /// the others. False: the output is compared with the one saved there.
  bool is_reference = false;
  std::string reference_path;
};

/// How a job ended. Verification against the tolerance is the engine's business: a job that
/// ran reports status Ok with the measured max error.
struct MeasureOutcome {
  TrialStatus status = TrialStatus::Ok;  ///< Ok, Resources, LaunchError or Timeout
  std::string message;
  Measurement measurement;               ///< when Ok
};

class Measurer {
 public:
  virtual ~Measurer() = default;
  /// Never throws for a failure of the candidate itself (that is the outcome's status); throws
  /// Error when the GPU side cannot work at all.
  [[nodiscard]] virtual MeasureOutcome measure(const MeasureJob& job) = 0;
};

}  // namespace tbtune
