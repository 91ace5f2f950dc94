#pragma once
/// @file device_profile.hpp
/// What the model needs to know about a GPU: capacities, bandwidths, throughputs, latencies.
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tbtune {

struct DeviceProfile {
  std::string name;            ///< "a100", "h100", "h200", or "probed:<device name>"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long smem_per_sm = 0;        ///< bytes of shared memory per SM
  long smem_per_block = 0;     ///< bytes a block may opt in to
  int regs_per_sm = 65536;
  int max_threads_per_sm = 2048;
  int max_blocks_per_sm = 32;
  long l2_bytes = 0;
  double clock_ghz = 0;
  double gm_bw = 0;            ///< global memory, bytes/s, counting reads plus writes
  double sm_bw = 0;            ///< shared memory, bytes/s, whole device
  double fp32_flops = 0;       ///< flop/s (an FMA counts 2)
  double fp64_flops = 0;       ///< flop/s (an FMA counts 2)
  double grid_sync_s = 0;      ///< one grid-wide sync at one block per SM, seconds
  double gm_latency_s = 0;     ///< global-memory load latency, seconds (Little's law)
  /// Latency of one cell update in a temporal-blocking pipeline (reads of the level below,
  /// the stencil's arithmetic, the write and the barrier it waits at), seconds; 0: not modelled.
  /// Fitted from measured cmq2d trials, see docs/model.md "Parallelism".
  double update_latency_s = 0;
  int schedulers_per_sm = 4;   ///< warp schedulers per SM, each issuing one warp instruction per clock
  /// Share of clocks in which one warp of a temporal-blocking kernel has an instruction ready
  /// (its own dependences, shuffles and barriers hold it the rest); 0: not modelled. With W warps
  /// per scheduler, a scheduler finds none ready (1 - share)^W of the time. Fitted from wpipe2d's
  /// trials, see docs/model.md "Issue".
  double warp_ready_share = 0;
};

/// Built-in profiles: "a100" (thesis table 5.2), "h100" (measured on the test machine), "h200".
[[nodiscard]] std::optional<DeviceProfile> builtin_profile(std::string_view name);
[[nodiscard]] std::vector<std::string> builtin_profile_names();

}  // namespace tbtune
