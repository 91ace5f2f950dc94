#pragma once
/// @file kernel_set.hpp
/// A candidate's compiled kernels, loaded and ready to advance a problem by any number of
/// steps: `depth` steps per launch of the full kernel, then the remainder through the rest
/// kernel where the CUBIN has the one for it (Strategy::rest_params), the rest one step per
/// launch. The tuner's runner and the application-facing library both run kernels through
/// this one class.
#include <memory>
#include <string>

#include "tuner/codegen/strategy.hpp"
#include "tuner/gpu/gpu.hpp"

namespace tbtune {

/// Whether `cubin` names a kernel `name`: the name as a whole string of its string tables, read
/// without loading the image (no GPU, no NVRTC). A lookup asks it of a stored winner before
/// loading it, so that an image an earlier tbtune built, whose kernels this one would launch
/// wrongly, is a miss rather than an error.
[[nodiscard]] bool cubin_names_kernel(const std::string& cubin, const char* name);

class KernelSet {
 public:
  /// Loads `cubin` on the current device and resolves launch geometry from the kernels' real
  /// occupancy. Throws CudaError, or Error when the candidate cannot be launched as built.
  KernelSet(const Strategy& strategy, const Params& params, const Problem& problem,
            const std::string& cubin, const DeviceInfo& device);

  /// Advances `steps` steps from `a`, ping-ponging between the device arrays `a` and `b` (both
  /// holding the boundary ring). Returns the array holding the result. Asynchronous, on
  /// `stream` (a cudaStream_t; nullptr: the default stream); an edge kernel runs on a second
  /// stream that `stream` waits for at the end of each pass.
  void* run(void* a, void* b, long steps, void* stream = nullptr);

  [[nodiscard]] int depth() const { return depth_; }
  [[nodiscard]] const Launch& full_launch() const { return full_launch_; }

 private:
  Problem problem_;
  std::unique_ptr<LoadedModule> module_;
  const void* full_ = nullptr;
  const void* step_ = nullptr;
  const void* edge_ = nullptr;         // kEdgeKernel, when the full launch has an edge grid
  const void* rest_ = nullptr;         // the rest kernel, when the CUBIN has rest_params' one
  Launch rest_launch_;
  int rest_depth_ = 0;
  std::unique_ptr<SideStream> side_;  // where it runs
  Launch full_launch_, step_launch_;
  int depth_ = 1;
  DeviceBuffer scratch_;
};

}  // namespace tbtune
