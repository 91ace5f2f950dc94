#pragma once
/// @file worker_measurer.hpp
/// The real Measurer: each job runs in a supervised worker process (`tbtune worker`, see
/// tuner/worker.hpp), so a candidate that crashes, poisons its CUDA context or never ends costs
/// one trial (launch_error or timeout) and a restart, never the tune. The tuner process itself
/// never initialises CUDA: device facts and the probe come from the worker too.
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "model/device_profile.hpp"
#include "tuner/gpu/gpu.hpp"
#include "tuner/gpu/supervisor.hpp"
#include "tuner/search/measurer.hpp"

namespace tbtune {

struct WorkerOptions {
  int device = 0;
  double timeout_s = 60;        ///< per candidate: load, checked run and timed runs
  /// Start-up jobs (device, input upload, probe) get at least this long.
  double setup_timeout_s = 120;
};

class WorkerMeasurer : public Measurer {
 public:
  WorkerMeasurer(Launcher launcher, WorkerOptions options);

  /// Opens the device in the worker. Throws NoGpuError without a usable GPU.
  [[nodiscard]] DeviceInfo device();
  /// Runs the microbenchmarks in the worker.
  [[nodiscard]] DeviceProfile probe(int repetitions, const std::string& compile_cache_dir);
  /// What every (re)started worker is set up with before its first measurement.
  /// `compile_cache_dir` (may be empty) is where the worker compiles its comparison kernel.
  void set_problem(const Problem& problem, const std::string& spec_text, std::uint64_t seed,
                   const TimingOptions& timing, const std::string& compile_cache_dir);

  [[nodiscard]] MeasureOutcome measure(const MeasureJob& job) override;
  /// Worker processes started so far (1 + restarts).
  [[nodiscard]] int starts() const { return supervisor_.starts(); }

 private:
  /// Sends a start-up job; throws (NoGpuError, Error) when it fails.
  nlohmann::json setup_call(const nlohmann::json& request);
  /// Starts a worker if none runs and replays the hello and setup jobs to it.
  void ensure_ready();

  Supervisor supervisor_;
  WorkerOptions options_;
  std::string setup_request_;   ///< empty until set_problem
  int ready_start_ = 0;         ///< the start number the set-up was last sent to
  nlohmann::json hello_;        ///< the latest worker's answer to "hello"
};

}  // namespace tbtune
