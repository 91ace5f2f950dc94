// Built-in device profiles. Each figure says where it comes from; docs/model.md has the table.
//
// Conventions (the same as device_profile.hpp):
// - gm_bw is a *copy* bandwidth counting read plus write bytes, so T_gm = bytes moved / gm_bw
//   holds for a kernel that reads and writes (eq. 5.2 counts both in a_gm).
// - flop rates count an FMA as 2 flops. The H100's "FP64 FMA 31.9 TFLOP/s" of GPU.md can only
//   be read that way: 132 SMs x 64 FP64 lanes x 2 flop/FMA x 1.98 GHz = 33.45 TFLOP/s peak, of
//   which 31.9 is 95%; counting an FMA as one flop the peak would be 16.7 and 31.9 impossible.
// - gm_latency_s is a loaded global-memory latency *estimate* for Little's law (thesis 2.4);
//   nobody has measured it here. 600 ns is the usual figure for A100/H100-class HBM under load
//   (idle pointer-chase latency is ~480-500 ns; queueing near saturation adds to it). GPU.md's
//   "1 block x 256 threads per SM, no ILP: 1.11 TB/s" implies ~490 ns at 40% of peak, which is
//   consistent with a loaded latency a little above that.
#include "model/device_profile.hpp"

namespace tbtune {
namespace {

constexpr double kTera = 1e12;
constexpr long kKiB = 1024;

DeviceProfile a100() {
  // Thesis table 5.2 (A100-PCIE) for the four model figures; the rest from the A100 datasheet.
  DeviceProfile d;
  d.name = "a100";
  d.cc_major = 8;
  d.cc_minor = 0;
  d.sm_count = 108;
  d.smem_per_sm = 164 * kKiB;    // table 5.2 "164 KB" (the thesis' 20992 cells of 8 B match KiB)
  d.smem_per_block = 163 * kKiB; // CUDA's opt-in limit on cc 8.0: 1 KiB is kept per block
  d.regs_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.l2_bytes = 40L * 1024 * 1024;
  d.clock_ghz = 1.41;
  d.gm_bw = 1.555 * kTera;       // table 5.2
  d.sm_bw = 19.49 * kTera;       // table 5.2
  d.fp64_flops = 9.7 * kTera;    // table 5.2
  d.fp32_flops = 19.5 * kTera;   // datasheet (non-tensor)
  d.grid_sync_s = 1.2e-6;        // section 5.6.2
  d.gm_latency_s = 600e-9;       // estimate, see the file comment
  d.update_latency_s = 110 / (d.clock_ghz * 1e9);  // the H100's 110 cycles (not measured here)
  d.warp_ready_share = 0.4;      // the H100's (not measured here)
  return d;
}

DeviceProfile h100() {
  // Measured on the H100 test machine (GPU.md, 2026-11-22) unless marked otherwise.
  DeviceProfile d;
  d.name = "h100";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.smem_per_sm = 228 * kKiB;
  d.smem_per_block = 227 * kKiB;
  d.regs_per_sm = 65536;
  d.max_threads_per_sm = 2048;
  d.max_blocks_per_sm = 32;
  d.l2_bytes = 50L * 1024 * 1024;
  d.clock_ghz = 1.98;
  d.gm_bw = 2.82 * kTera;        // HBM copy, read + write
  d.sm_bw = 33.1 * kTera;        // shared-memory read
  d.fp64_flops = 31.9 * kTera;   // FMA = 2 flops, see the file comment
  d.fp32_flops = 2 * 31.9 * kTera;  // estimate: sm_90 has twice the FP32 lanes of FP64
  d.grid_sync_s = 1.12e-6;       // at 1 block/SM
  d.gm_latency_s = 600e-9;       // estimate
  d.update_latency_s = 110 / (d.clock_ghz * 1e9);  // 110 cycles: fitted, docs/model.md
  d.warp_ready_share = 0.4;      // fitted on wpipe2d's float and double trials, docs/model.md
  return d;
}

DeviceProfile h200() {
  // Same GH100 SMs and clock as the H100, more and faster HBM. Measured on this workplace's H200
  // (CUDA 13.0, one-off program, not in the repo): cudaDeviceProp gives 132 SMs, cc 9.0, L2
  // 62914560 B, 233472 B smem/SM, 232448 B opt-in/block; a grid-stride double2 copy kernel
  // reached 3.96-4.01 TB/s (read + write) and cudaMemcpy D2D 4.29 TB/s; grid.sync() at
  // 1 block/SM took 0.98-1.01 us. We take the kernel copy figure: stencil kernels move data with
  // SM loads and stores, as that kernel does, not with the copy engines.
  DeviceProfile d = h100();
  d.name = "h200";
  d.l2_bytes = 60L * 1024 * 1024;
  d.gm_bw = 4.0 * kTera;
  d.grid_sync_s = 1.0e-6;
  // Estimates, not measured on the H200: shared-memory bandwidth and flop rates scale with SMs
  // and clock, which are the H100's; so is the latency (HBM3e is not lower-latency than HBM3).
  return d;
}

}  // namespace

std::optional<DeviceProfile> builtin_profile(std::string_view name) {
  if (name == "a100") return a100();
  if (name == "h100") return h100();
  if (name == "h200") return h200();
  return std::nullopt;
}

std::vector<std::string> builtin_profile_names() { return {"a100", "h100", "h200"}; }

}  // namespace tbtune
