// templates/wpipe.cuh: what the register-tiled, warp-pipelined templates share (wpipe2d.cuh,
// wpipe3d.cuh): lanes that hold TB_RX contiguous x cells each and read the cells beyond their
// strip from the lanes that hold them. Their shared memory goes by 32-bit address
// (tb_shared_load, tb_shared_store and tb_copy_async in common.cuh).

#include <cuda_pipeline_primitives.h>

// The rest pass's kernel is named tb_rest_<depth> (the host's rest_kernel_name):
// WP_REST_NAME pastes TB_REST_DEPTH's value onto the prefix.
#define WP_CAT2(a, b) a##b
#define WP_CAT(a, b) WP_CAT2(a, b)
#define WP_REST_NAME WP_CAT(tb_rest_, TB_REST_DEPTH)

__device__ __forceinline__ constexpr int wp_mod(int v, int m) { return ((v % m) + m) % m; }
__device__ __forceinline__ constexpr int wp_gcd(int a, int b) { return b == 0 ? a : wp_gcd(b, a % b); }

// Cell p of a lane's strip r of TB_RX cells, p possibly beyond it: cell p lives floor(p / RX)
// lanes away (any radius), shuffled when it is read rather than kept, so the registers go to
// depth instead. A constant p once the callers' loops are unrolled. The warp's outer lanes get
// garbage, which the tile's overlap absorbs.
__device__ __forceinline__ real wp_cell(const real (&r)[TB_RX], int p) {
  constexpr int RX = TB_RX;
  if (p >= 0 && p < RX) return r[p];
  const int q = p < 0 ? -((-p + RX - 1) / RX) : p / RX;  // lanes away
  const int c = p - q * RX;                             // cell in that lane
  return q < 0 ? __shfl_up_sync(0xffffffffu, r[c], -q) : __shfl_down_sync(0xffffffffu, r[c], q);
}

// The cells beyond the strips of ROWS rows that one evaluation reads, each shuffled once: a
// window reads through here for every term of every output cell, and the compiler does not
// merge two equal shuffles (PTX of wpipe3d's j3d27pt iteration: 216 shuffles, 96 distinct).
// Row `row`'s cell p lies R or fewer cells beyond the strip (-R <= p < RX + R), slot h of the
// row's 2R. `have` is constant once the callers' loops are unrolled, so its tests fold away
// and each shuffle stays where its value is first read.
template <int ROWS>
struct WpHalo {
  real cell[ROWS][2 * TB_RADIUS];
  bool have[ROWS][2 * TB_RADIUS];
  __device__ __forceinline__ WpHalo() {
#pragma unroll
    for (int r = 0; r < ROWS; ++r)
#pragma unroll
      for (int h = 0; h < 2 * TB_RADIUS; ++h) have[r][h] = false;
  }
  __device__ __forceinline__ real operator()(const real (&r)[TB_RX], int row, int p) {
    if (p >= 0 && p < TB_RX) return r[p];
    const int h = p < 0 ? p + TB_RADIUS : p - TB_RX + TB_RADIUS;
    if (!have[row][h]) {
      cell[row][h] = wp_cell(r, p);
      have[row][h] = true;
    }
    return cell[row][h];
  }
};

// The one-step kernel (the host's kCellStepKernel): one thread per interior cell (step.cuh,
// assembled before this). It runs only the steps a run's passes leave over, so it is built
// plain: the templates' one-warp pass, built for it before, was a third of a module's compile
// (docs/tuning.md).
extern "C" __global__ void __launch_bounds__(TB_STEP_BX * TB_STEP_BY * TB_STEP_BZ)
tb_cell_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tb_naive_step(in, out, nx, ny, nz);
}
