// Times one generated wpipe2d kernel outside the tuner, for experiments on the template that the
// tuner cannot run: a variant that is wrong at the domain's edges (say, the loop body without
// the boundary ring's selects in every period) still shows what its interior costs.
// scripts/wpipe2d-variants.sh builds one executable per variant with nvcc, the kernel source
// included below (KERNEL_SOURCE: the output of `tbtune emit ... --no-compile`), and its
// launch shape passed as macros. No verification: the numbers mean speed only.
// Usage: wpipe2d_variant NX NY STEPS   (prints: GCells/s over the interior, as tbtune counts)
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>

#include KERNEL_SOURCE

#include "tuner/codegen/strategies/strategies.hpp"  // split_stream, linked from split.cpp

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
  const int valid_x = 32 * TB_RX - 2 * DEPTH * R;
  const long smem = long(wp_ring_groups(W)) * TB_ROWS * 32 * TB_RX * long(sizeof(real));
  int sms = 0;
  CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
  CHECK(cudaFuncSetAttribute(tb_full, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)));
  int resident = 0;
  CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, tb_full, W * 32, smem));
  const int bps = resident < TB_BPS ? resident : TB_BPS;
  const unsigned gx = unsigned((nx - 2 * R + valid_x - 1) / valid_x);
  const unsigned gy = unsigned(tbtune::split_stream(ny - 2 * R, gx, long(sms) * bps, DEPTH, R, TB_ROWS).segments);
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
      tb_full<<<dim3(gx, gy), W * 32, smem>>>(p % 2 ? b : a, p % 2 ? a : b, nx, ny, 1, nullptr);
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
  std::printf("%.1f GCells/s (best of 5, %d passes of depth %d, grid %ux%u, %d blocks/SM resident)\n",
              cells / (best * 1e-3) / 1e9, passes, DEPTH, gx, gy, bps);
  return 0;
}
