// Times one generated wpipe2d kernel outside the tuner, for experiments on the template that the
// tuner cannot run: a variant that is wrong at the domain's edges (say, the loop body without
// the boundary ring's selects in every period) still shows what its interior costs.
// scripts/wpipe2d-variants.sh builds one executable per variant with nvcc, the kernel source
// included below (KERNEL_SOURCE: the output of `tbtune emit ... --no-compile`), and its
// launch shape passed as macros. No verification: the numbers mean speed only.
// Usage: wpipe2d_variant NX NY STEPS   (prints: GCells/s over the interior, as tbtune counts)
#include <cuda_runtime.h>

#include <array>
#include <cstdio>
#include <cstdlib>

#include KERNEL_SOURCE

#include "tuner/codegen/strategies/wpipe2d_grid.hpp"  // the tuner's geometry, linked from wpipe2d_grid.cpp and split.cpp

namespace {

#define CHECK(call)                                                                 \
  do {                                                                              \
    cudaError_t e_ = (call);                                                        \
    if (e_ != cudaSuccess) {                                                        \
      std::fprintf(stderr, "%s:%d: %s\n", __FILE__, __LINE__, cudaGetErrorString(e_)); \
      std::exit(1);                                                                 \
    }                                                                               \
  } while (0)

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: %s NX NY STEPS\n", argv[0]);
    return 2;
  }
  const int nx = std::atoi(argv[1]), ny = std::atoi(argv[2]), steps = std::atoi(argv[3]);
  constexpr int R = TB_RADIUS, W = TB_WARPS, DEPTH = TB_WARPS * TB_TW;
  const long smem = long(wp_ring_groups(W)) * TB_ROWS * 32 * TB_RX * long(sizeof(real));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaFuncSetAttribute(tb_full, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, tb_full, W * 32, smem));
  const int bps = resident < TB_BPS ? resident : TB_BPS;
  const tbtune::Wpipe2dGrid grid = tbtune::wpipe2d_grid(nx, ny, R, TB_RX, DEPTH, TB_ROWS, long(sms) * bps,
                                                        tbtune::ring_loop_speed(TB_WP_OPS), TB_WP_SPLIT);
  const auto fg = grid.full_grid(), eg = grid.edge_grid();
#if TB_WP_SPLIT
  CHECK(cudaFuncSetAttribute(tb_edge, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  cudaStream_t side;
  cudaEvent_t forked, joined;
  CHECK(cudaStreamCreateWithFlags(&side, cudaStreamNonBlocking));
  CHECK(cudaEventCreateWithFlags(&forked, cudaEventDisableTiming));
  CHECK(cudaEventCreateWithFlags(&joined, cudaEventDisableTiming));
#endif
  const size_t bytes = size_t(nx) * ny * sizeof(real);
  real *a = nullptr, *b = nullptr;
  CHECK(cudaMalloc(&a, bytes));
  CHECK(cudaMalloc(&b, bytes));
  // Every byte 0x3f: every cell about 4.8e-4, a normal number the averaging stencils keep bounded.
  CHECK(cudaMemset(a, 0x3f, bytes));
  CHECK(cudaMemset(b, 0x3f, bytes));
  const int passes = steps / DEPTH;
  auto run = [&] {
    for (int p = 0; p < passes; ++p) {
      // As the tuner's KernelSet runs a pass: the edge kernel on a second stream, beside.
      real *in = p % 2 ? b : a, *out = p % 2 ? a : b;
#if TB_WP_SPLIT
      CHECK(cudaEventRecord(forked, 0));
      CHECK(cudaStreamWaitEvent(side, forked, 0));
      tb_edge<<<dim3(eg[0], eg[1]), W * 32, smem, side>>>(in, out, nx, ny, 1, nullptr);
      if (fg[0] * fg[1] > 0) tb_full<<<dim3(fg[0], fg[1]), W * 32, smem>>>(in, out, nx, ny, 1, nullptr);
      CHECK(cudaEventRecord(joined, side));
      CHECK(cudaStreamWaitEvent(0, joined, 0));
#else
      tb_full<<<dim3(fg[0], fg[1]), W * 32, smem>>>(in, out, nx, ny, 1, nullptr);
#endif
    }
  };
  run();  // warm-up
  CHECK(cudaDeviceSynchronize());
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  float best = 1e30f;
  for (int rep = 0; rep < 5; ++rep) {
    CHECK(cudaEventRecord(start));
    run();
    CHECK(cudaEventRecord(stop));
    CHECK(cudaEventSynchronize(stop));
    float ms = 0;
    CHECK(cudaEventElapsedTime(&ms, start, stop));
    if (ms < best) best = ms;
  }
  CHECK(cudaGetLastError());
  const double cells = double(nx - 2 * R) * double(ny - 2 * R) * double(passes) * DEPTH;
  std::printf("%.1f GCells/s (best of 5, %d passes of depth %d, grids %ux%u + %u, %d blocks/SM resident)\n",
              cells / (best * 1e-3) / 1e9, passes, DEPTH, fg[0], fg[1], eg[0], bps);
  return 0;
}
