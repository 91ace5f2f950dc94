#pragma once
/// @file probe.hpp
/// Microbenchmarks of the present GPU (`tbtune probe`): the figures of DeviceProfile that the
/// model depends on most, measured rather than taken from the built-in table. The kernels are
/// templates/probe.cuh, compiled with NVRTC and timed with CUDA events (warm-up, then the
/// median of several repetitions). Each benchmark takes a few milliseconds of GPU time.
#include <string>
#include <vector>

#include "model/device_profile.hpp"
#include "tuner/gpu/gpu.hpp"

namespace tbtune {

/// What the probe measures, in DeviceProfile's units and conventions.
struct ProbeFigures {
  double gm_bw = 0;         ///< bytes/s: device-to-device copy, 16-byte accesses, read + write
  double sm_bw = 0;         ///< bytes/s: conflict-free shared-memory reads, whole device
  double fp64_flops = 0;    ///< flop/s of dependent-chain-free FP64 FMAs (FMA = 2 flops)
  double fp32_flops = 0;    ///< the same in FP32
  double grid_sync_s = 0;   ///< seconds per grid.sync() at one block (256 threads) per SM
  /// Seconds per dependent load of a one-thread pointer chase over lines not in any cache: the
  /// idle latency, somewhat below the loaded latency the built-in profiles estimate (600 ns).
  double gm_latency_s = 0;
};

struct ProbeOptions {
  int repetitions = 9;            ///< timed runs per benchmark (the median is kept); >= 1
  std::string compile_cache_dir;  ///< folder of compiled CUBINs (empty: none)
};

struct ProbeResult {
  DeviceInfo device;
  DeviceProfile builtin;    ///< profile_for(device): what the model uses without a probe
  DeviceProfile profile;    ///< probed_profile(builtin, device.name, figures)
  ProbeFigures figures;
  double gpu_seconds = 0;   ///< total time of every timed and warm-up run
};

/// The model profile for a present GPU: the built-in profile of its architecture with the
/// device's own SM count, shared-memory and register capacities.
[[nodiscard]] DeviceProfile profile_for(const DeviceInfo& device);

/// `builtin` with every ProbeFigures field replaced and named "probed:<device_name>".
/// A figure that is not positive (not measured) keeps the built-in value.
[[nodiscard]] DeviceProfile probed_profile(const DeviceProfile& builtin,
                                           const std::string& device_name,
                                           const ProbeFigures& figures);

/// Runs every microbenchmark on `device` (already opened with open_device).
/// Throws CompileError when the probe kernels do not compile, CudaError when a run fails.
[[nodiscard]] ProbeResult probe_device(const DeviceInfo& device, const ProbeOptions& options = {});

/// The median of `values` (the mean of the middle two for an even count); 0 for none.
[[nodiscard]] double median_of(std::vector<double> values);

}  // namespace tbtune
