#pragma once
/// @file runner.hpp
/// Runs compiled candidates on the GPU: the exact step count from the deterministic input with
/// ping-pong buffers, verification against a reference result, and event timing.
#include <cstdint>
#include <string>
#include <vector>

#include "tuner/codegen/strategy.hpp"
#include "tuner/gpu/device_compare.hpp"
#include "tuner/gpu/gpu.hpp"
#include "tuner/gpu/nvrtc.hpp"

namespace tbtune {

struct TimingOptions {
  double min_seconds = 0.2;  ///< keep repeating until the timed runs add up to this
  int min_reps = 3;
  int max_reps = 20;
};

struct Measurement {
  double seconds_median = 0;  ///< one run of all the problem's steps
  double seconds_min = 0;
  int repetitions = 0;
  double max_error = 0;       ///< vs the reference (0 when none was given)
  int registers = 0;          ///< of the full-depth kernel
  int spill_bytes = 0;
  long smem_bytes = 0;        ///< static + dynamic per block
};

class Runner {
 public:
  /// Uploads the deterministic input (seed) for `problem` to device `device` and prepares the
  /// comparison kernel (compiled into `compile_cache_dir` if not empty).
  Runner(const Problem& problem, const DeviceInfo& device, std::uint64_t seed,
         const std::string& compile_cache_dir = {});

  /// Loads `module`, runs the problem's steps once, compares the result with `reference` on
  /// the GPU (if not null, throwing nothing: the error is returned) and copies it to `output`
  /// (if not null), then times repeated runs. Throws CudaError when a launch fails and Error
  /// when the candidate cannot be launched as built.
  [[nodiscard]] Measurement measure(const Strategy& strategy, const Params& params,
                                    const CompiledModule& module, const DeviceBuffer* reference,
                                    const TimingOptions& timing,
                                    std::vector<unsigned char>* output = nullptr);

  /// Bytes of one result (all cells of the problem's dtype).
  [[nodiscard]] std::size_t result_bytes() const { return bytes_; }
  [[nodiscard]] const DeviceInfo& device() const { return device_; }

 private:
  void reset();  ///< both buffers back to the input

  Problem problem_;
  DeviceInfo device_;
  std::size_t bytes_;
  DeviceBuffer input_, a_, b_;
  DeviceComparer comparer_;
};

}  // namespace tbtune
