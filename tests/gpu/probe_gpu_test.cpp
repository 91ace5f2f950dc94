// GPU test of model/probe: the microbenchmarks run and give plausible figures; on an H100 they
// agree with the figures GPU.md records. Skipped (GTEST_SKIP) without a usable GPU.
#include "tuner/gpu/probe.hpp"

#include <chrono>
#include <cstdio>

#include <gtest/gtest.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

TEST(ProbeGpu, FiguresArePlausible) {
  DeviceInfo device;
  try {
    device = open_device(0);
  } catch (const NoGpuError& e) {
    GTEST_SKIP() << "no GPU: " << e.what();
  }
  const auto start = std::chrono::steady_clock::now();
  const ProbeResult r = probe_device(device);
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const ProbeFigures& f = r.figures;
  std::printf("%s: copy %.3f TB/s, smem %.2f TB/s, fp64 %.2f TFLOP/s, fp32 %.2f TFLOP/s, "
              "grid.sync %.3f us, latency %.0f ns; %.3f s GPU, %.1f s wall\n",
              device.name.c_str(), f.gm_bw / 1e12, f.sm_bw / 1e12, f.fp64_flops / 1e12,
              f.fp32_flops / 1e12, f.grid_sync_s * 1e6, f.gm_latency_s * 1e9, r.gpu_seconds, wall);
  EXPECT_LT(r.gpu_seconds, 1.0);
  EXPECT_EQ(r.profile.name, "probed:" + device.name);
  // Within a factor of 3 of the built-in profile of the architecture, whatever the GPU.
  auto near_builtin = [](double measured, double builtin, const char* what) {
    EXPECT_GT(measured, builtin / 3) << what;
    EXPECT_LT(measured, builtin * 3) << what;
  };
  near_builtin(f.gm_bw, r.builtin.gm_bw, "gm_bw");
  near_builtin(f.sm_bw, r.builtin.sm_bw, "sm_bw");
  near_builtin(f.fp64_flops, r.builtin.fp64_flops, "fp64_flops");
  near_builtin(f.fp32_flops, r.builtin.fp32_flops, "fp32_flops");
  near_builtin(f.grid_sync_s, r.builtin.grid_sync_s, "grid_sync_s");
  near_builtin(f.gm_latency_s, r.builtin.gm_latency_s, "gm_latency_s");
  // GPU.md's H100 figures: copy 2.82 TB/s, shared memory 33.1 TB/s, FP64 31.9 TFLOP/s,
  // grid.sync 1.12 us. Clocks vary a little from run to run, hence the tolerance.
  if (device.name.find("H100") != std::string::npos) {
    EXPECT_NEAR(f.gm_bw / 1e12, 2.82, 0.25);
    EXPECT_NEAR(f.sm_bw / 1e12, 33.1, 3.0);
    EXPECT_NEAR(f.fp64_flops / 1e12, 31.9, 3.0);
    EXPECT_NEAR(f.grid_sync_s * 1e6, 1.12, 0.3);
  }
}

}  // namespace
}  // namespace tbtune
