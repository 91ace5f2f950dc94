// templates/probe.cuh: microbenchmarks behind `tbtune probe` (model/probe.cpp launches them).
// Plain CUDA, compiled by NVRTC as it is. Each kernel does a known amount of work so the host
// can turn one CUDA-event time into a rate; results are written out so nothing is optimised away.
#include <cooperative_groups.h>

// Global-memory copy with 16-byte loads and stores, grid-stride, PROBE_COPY_ILP independent
// loads in flight per thread before the stores (Little's law: one load at a time per thread
// does not saturate HBM at the occupancy this launch has). The host counts read + write bytes.
#define PROBE_COPY_ILP 4
extern "C" __global__ void probe_copy(const uint4* __restrict__ in, uint4* __restrict__ out,
                                      long long n) {
  const long long stride = (long long)gridDim.x * blockDim.x;
  long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  for (; i + (PROBE_COPY_ILP - 1) * stride < n; i += PROBE_COPY_ILP * stride) {
    uint4 v[PROBE_COPY_ILP];
#pragma unroll
    for (int k = 0; k < PROBE_COPY_ILP; ++k) v[k] = in[i + k * stride];
#pragma unroll
    for (int k = 0; k < PROBE_COPY_ILP; ++k) out[i + k * stride] = v[k];
  }
  for (; i < n; i += stride) out[i] = in[i];
}

// Shared-memory reads: every thread reads PROBE_SMEM_LOADS 4-byte words per iteration. A warp's
// 32 lanes always read 32 consecutive words (the index keeps the lane in its low 5 bits), so
// every load is conflict-free and moves 128 bytes per warp. The index moves each iteration, so
// the loads cannot be hoisted out of the loop. The host counts iters x loads x 4 bytes per thread.
#define PROBE_SMEM_WORDS 4096  // 16 KiB: several blocks fit on one SM
#define PROBE_SMEM_LOADS 8
extern "C" __global__ void probe_smem(float* out, int iters) {
  __shared__ float s[PROBE_SMEM_WORDS];
  for (int k = threadIdx.x; k < PROBE_SMEM_WORDS; k += blockDim.x) s[k] = float(k & 255);
  __syncthreads();
  float acc[PROBE_SMEM_LOADS];
#pragma unroll
  for (int k = 0; k < PROBE_SMEM_LOADS; ++k) acc[k] = 0.f;
  unsigned idx = threadIdx.x & (PROBE_SMEM_WORDS - 1);
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < PROBE_SMEM_LOADS; ++k) acc[k] += s[idx ^ (unsigned)(k * 32)];
    idx = (idx + 256u) & (PROBE_SMEM_WORDS - 1);
  }
  float sum = 0.f;
#pragma unroll
  for (int k = 0; k < PROBE_SMEM_LOADS; ++k) sum += acc[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}

// FMA throughput: PROBE_FMA_CHAINS independent chains per thread hide the FMA latency; the
// inner unroll keeps loop overhead off the issue slots. The host counts iters x chains x 2 flops.
#define PROBE_FMA_CHAINS 8
__device__ __forceinline__ double probe_fma(double a, double b, double c) { return fma(a, b, c); }
__device__ __forceinline__ float probe_fma(float a, float b, float c) { return fmaf(a, b, c); }
template <class T>
__device__ __forceinline__ void probe_fma_body(T* out, int iters, T b, T c) {
  T a[PROBE_FMA_CHAINS];
#pragma unroll
  for (int k = 0; k < PROBE_FMA_CHAINS; ++k) a[k] = T(threadIdx.x + k);
#pragma unroll 8
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int k = 0; k < PROBE_FMA_CHAINS; ++k) a[k] = probe_fma(a[k], b, c);
  }
  T sum = T(0);
#pragma unroll
  for (int k = 0; k < PROBE_FMA_CHAINS; ++k) sum += a[k];
  out[blockIdx.x * blockDim.x + threadIdx.x] = sum;
}
extern "C" __global__ void probe_fma64(double* out, int iters, double b, double c) {
  probe_fma_body<double>(out, iters, b, c);
}
extern "C" __global__ void probe_fma32(float* out, int iters, float b, float c) {
  probe_fma_body<float>(out, iters, b, c);
}

// Grid-wide barrier latency: `n` grid.sync() in a row; launched cooperatively at one block per
// SM. The host takes the difference of two launches with different n, which cancels the launch.
extern "C" __global__ void probe_grid_sync(int n, int* out) {
  cooperative_groups::grid_group g = cooperative_groups::this_grid();
  for (int i = 0; i < n; ++i) g.sync();
  if (blockIdx.x == 0 && threadIdx.x == 0) out[0] = n;
}

// Pointer chase for global-memory latency. probe_chase_init links slot order[k] to slot
// order[k + 1] (slots `stride` words apart, so every hop lands on its own cache line);
// probe_chase follows `steps` links from `start` with one thread: each load depends on the last.
extern "C" __global__ void probe_chase_init(unsigned* buf, const unsigned* order, int n,
                                            unsigned stride) {
  for (int k = blockIdx.x * blockDim.x + threadIdx.x; k < n; k += gridDim.x * blockDim.x)
    buf[order[k] * stride] = order[(k + 1) % n] * stride;
}
extern "C" __global__ void probe_chase(const unsigned* buf, unsigned start, int steps,
                                       unsigned* out) {
  unsigned j = start;
  for (int i = 0; i < steps; ++i) j = __ldcg(buf + j);
  out[0] = j;
}
