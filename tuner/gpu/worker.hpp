#pragma once
/// @file worker.hpp
/// The GPU worker: the process `tbtune worker` that the tuner starts (tuner/worker_measurer.hpp)
/// to open the device, probe it, and load, run, verify and time candidates. It is the only
/// tbtune process that touches CUDA during a tune, so a candidate that poisons the CUDA context
/// (an illegal address) or never ends takes down only this process.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tuner/gpu/gpu.hpp"
#include "tuner/gpu/protocol.hpp"
#include "tuner/gpu/runner.hpp"

namespace tbtune {

/// The worker's state and job handler (message formats: tuner/messages.hpp).
class GpuWorker {
 public:
  GpuWorker();
  ~GpuWorker();
  GpuWorker(const GpuWorker&) = delete;
  GpuWorker& operator=(const GpuWorker&) = delete;

  /// Answers one request. Failures are replies ({"error": ...} for the job, or a trial status
  /// for a candidate); after a CUDA error the reply asks to exit, as the context may be
  /// unusable, and the tuner starts a fresh worker.
  [[nodiscard]] JobResult handle(const std::string& request);

  struct State;  ///< defined in worker.cpp

 private:
  std::unique_ptr<State> state_;
};

/// `tbtune worker`: serves jobs on file descriptor `fd` until the tuner closes it; returns the
/// process exit code.
int run_worker(int fd);

}  // namespace tbtune
