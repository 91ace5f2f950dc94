// templates/cmq2d.cuh: EBISU-style temporal blocking for 2D stencils (SM tiling).
//
// A block owns a tile of TB_TILE_X columns (one per thread) and streams it along y through the
// rows [y0, y1) of its y segment, advancing DEPTH time steps in one pass. Each time level
// s = 0 .. DEPTH-1 keeps a circular queue of TB_RING rows in shared memory; level s + 1 is
// computed from level s, and level DEPTH goes straight to global memory. The queues form one
// circular multi-queue.
//
// Lazy streaming: in iteration k, level 0 receives input rows [ys + k*ILP, +ILP) and level s
// computes rows g(k, s) = ys + (k - s)*ILP - s*R .. + ILP, which only read rows that level s-1
// finished in earlier iterations. So one __syncthreads() per iteration (per group of ILP rows)
// is the only barrier. A level's ring must hold the rows being read and the rows being written,
// 2*ILP + 2*R; TB_RING is the least multiple of ILP that does (TB_PHASES = TB_RING / ILP).
//
// Computed addresses, no index arithmetic: row y of a level lives in ring slot (y - ys) mod
// TB_RING. The main loop is unrolled TB_PHASES times, and after TB_PHASES iterations every level
// has advanced exactly TB_RING rows, so in each unrolled copy every slot is a compile-time
// constant and every shared-memory access is a fixed offset from one per-thread pointer.
//
// Columns: the tile overlaps its neighbours by DEPTH*R on each side (redundant halo work); the
// valid output is the middle TB_TILE_X - 2*DEPTH*R columns. Rows: a segment starts streaming
// DEPTH*R rows before y0. Cells of the boundary ring keep their value at every level, which is
// what makes the result exact for any domain size. Input rows of the next iteration are loaded
// into registers one iteration ahead (prefetch), so global latency overlaps the computation.
// With TB_RRS (redundant register streaming) each thread also keeps the rows of its own column
// in registers, so only the neighbouring columns are read from shared memory.

#define TB_PITCH (TB_TILE_X + 2 * TB_RADIUS)  // ring row: the tile plus R padding columns per side
#define TB_PHASES (TB_RING / TB_ILP)

// (v mod TB_RING) in 0 .. TB_RING-1 for any int v; folds to a constant when v is one.
__device__ __forceinline__ constexpr int cmq2d_slot(int v) {
  return ((v % TB_RING) + TB_RING) % TB_RING;
}

// Reads level s-1 around one cell of row `rel` (relative to ys, mod TB_RING). Other columns
// come from the level's ring in shared memory; with redundant register streaming (TB_RRS) the
// thread's own column (dx == 0) comes from `own`, a register window of the rows it computed
// itself. After inlining and unrolling, `rel`, the offsets and so every address are constants.
struct Cmq2dAccess {
  const real* ring;  // the level's ring, at the thread's column, slot 0
  int rel;           // ring row of the centre cell (before the mod)
  const real* own;   // own[R + dy] = row (centre + dy) of this thread's column (TB_RRS)
  __device__ __forceinline__ real operator()(int dx, int dy, int) const {
    if (TB_RRS && dx == 0) return own[dy + TB_RADIUS];
    return ring[cmq2d_slot(rel + dy) * TB_PITCH + dx];
  }
};

// The register window of one level: rows [g - 2R, g + ILP) after the level computed rows
// [g, g + ILP); the next level reads it as rows [g' - R, g' + ILP + R) with g' = g - R.
__device__ __forceinline__ void cmq2d_push(real* window, const real* fresh) {
  constexpr int KEEP = 2 * TB_RADIUS;
#pragma unroll
  for (int i = 0; i < KEEP; ++i) window[i] = window[i + TB_ILP];
#pragma unroll
  for (int j = 0; j < TB_ILP; ++j) window[KEEP + j] = fresh[j];
}

template <int DEPTH>
__device__ __forceinline__ void cmq2d_pass(const real* __restrict__ in, real* __restrict__ out,
                                           int nx, int ny) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  real* rings = reinterpret_cast<real*>(tb_smem);
  constexpr int R = TB_RADIUS, ILP = TB_ILP, W = TB_ILP + 2 * TB_RADIUS;
  constexpr int VALID_X = TB_TILE_X - 2 * DEPTH * R;

  // Columns: this thread's global column and the block's valid output columns [c0, c1).
  const int lx = threadIdx.x;
  const int c0 = R + blockIdx.x * VALID_X;
  const int c1 = min(c0 + VALID_X, nx - R);
  const int gx = c0 - DEPTH * R + lx;
  const bool col_in = gx >= 0 && gx < nx;
  const bool col_interior = gx >= R && gx < nx - R;
  const bool col_out = gx >= c0 && gx < c1;

  // Rows: the block's output rows [y0, y1) and the input rows it streams [ys, ye).
  const int interior_y = ny - 2 * R;
  const int seg = (interior_y + gridDim.y - 1) / gridDim.y;
  const int y0 = R + blockIdx.y * seg;
  const int y1 = min(y0 + seg, ny - R);
  if (y0 >= y1) return;
  const int ys = max(0, y0 - DEPTH * R);
  const int ye = min(ny, y1 + DEPTH * R);
  // Enough iterations for level DEPTH to pass y1, rounded up to whole unrolled rounds; the
  // extra iterations read nothing (guarded loads) and write nothing (guarded stores).
  const int needed = (y1 - ys + DEPTH * R + ILP - 1) / ILP + DEPTH;
  const int iterations = (needed + TB_PHASES - 1) / TB_PHASES * TB_PHASES;

  real* col = rings + lx + R;  // this thread's column in the ring of level 0
  const real* in_col = in + gx;
  // Register windows of levels 0 .. DEPTH-1 (unused without TB_RRS). Zeroed: their first rows
  // are read before they are pushed, and an uninitialised read is undefined behaviour that the
  // compiler may resolve to a later iteration's value (seen as wrong rows once per ring round).
  real own[DEPTH][W];
#pragma unroll
  for (int s = 0; s < DEPTH; ++s)
#pragma unroll
    for (int i = 0; i < W; ++i) own[s][i] = real(0);

  // Input rows of iteration k, loaded during iteration k - 1.
  real cur[ILP];
#pragma unroll
  for (int j = 0; j < ILP; ++j) {
    const int gy = ys + j;
    cur[j] = (col_in && gy < ye) ? __ldg(in_col + (long)gy * nx) : real(0);
  }

  for (int k0 = 0; k0 < iterations; k0 += TB_PHASES) {
#pragma unroll
    for (int ph = 0; ph < TB_PHASES; ++ph) {
      const int k = k0 + ph;
      real ahead[ILP];
#pragma unroll
      for (int j = 0; j < ILP; ++j) {
        const int gy = ys + (k + 1) * ILP + j;
        ahead[j] = (col_in && gy < ye) ? __ldg(in_col + (long)gy * nx) : real(0);
      }

      // Levels DEPTH .. 1, top down, so each level reads the window of the level below before
      // that level pushes this iteration's rows into it.
#pragma unroll
      for (int s = DEPTH; s >= 1; --s) {
        const int rel0 = (ph - s) * ILP - s * R;   // ring row of the first row computed, + k0*ILP
        const int row0 = ys + k0 * ILP + rel0;     // its global row
        const real* below = col + (s - 1) * TB_RING * TB_PITCH;
        real v[ILP];
#pragma unroll
        for (int j = 0; j < ILP; ++j) {
          const int gy = row0 + j;
          const Cmq2dAccess u{below, rel0 + j, own[s - 1] + j};
          v[j] = (col_interior && gy >= R && gy < ny - R) ? TbStencil::apply(u) : u(0, 0, 0);
        }
        if (s < DEPTH) {
          real* level = col + s * TB_RING * TB_PITCH;
#pragma unroll
          for (int j = 0; j < ILP; ++j) level[cmq2d_slot(rel0 + j) * TB_PITCH] = v[j];
          if (TB_RRS) cmq2d_push(own[s], v);
        } else if (col_out) {
#pragma unroll
          for (int j = 0; j < ILP; ++j) {
            const int gy = row0 + j;
            if (gy >= y0 && gy < y1) out[(long)gy * nx + gx] = v[j];
          }
        }
      }

      // Level 0: this iteration's input rows.
#pragma unroll
      for (int j = 0; j < ILP; ++j) col[cmq2d_slot(ph * ILP + j) * TB_PITCH] = cur[j];
      if (TB_RRS) cmq2d_push(own[0], cur);
#pragma unroll
      for (int j = 0; j < ILP; ++j) cur[j] = ahead[j];
      __syncthreads();
    }
  }
}

extern "C" __global__ void __launch_bounds__(TB_TILE_X, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  cmq2d_pass<TB_DEPTH>(in, out, nx, ny);
}

extern "C" __global__ void __launch_bounds__(TB_TILE_X, TB_BPS)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  cmq2d_pass<1>(in, out, nx, ny);
}
