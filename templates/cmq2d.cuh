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
// Redundant register streaming (TB_RRS): each thread also keeps its own column of every level
// in a register ring with the same slots, so the stencil's dx == 0 points come from registers
// and only the neighbouring columns are read from shared memory. Being indexed like the shared
// rings, the register rings need no shifting.
//
// Columns: the tile overlaps its neighbours by DEPTH*R on each side (redundant halo work); the
// valid output is the middle TB_TILE_X - 2*DEPTH*R columns. Rows: a segment starts streaming
// DEPTH*R rows before y0. Cells of the boundary ring keep their value at every level, which is
// what makes the result exact for any domain size. Input rows of the next iteration are loaded
// into registers one iteration ahead (prefetch), so global latency overlaps the computation.
//
// Most iterations are "steady": every row they compute is interior, every row they load exists
// and every row they finish is in [y0, y1). Those run a copy of the body without row checks;
// only the first and last few iterations of a segment check rows.

#define TB_PITCH (TB_TILE_X + 2 * TB_RADIUS)  // ring row: the tile plus R padding columns per side
#define TB_PHASES (TB_RING / TB_ILP)

// (v mod TB_RING) in 0 .. TB_RING-1 for any int v; folds to a constant when v is one.
__device__ __forceinline__ constexpr int cmq2d_slot(int v) {
  return ((v % TB_RING) + TB_RING) % TB_RING;
}

// Reads level s-1 around one cell of ring row `rel` (before the mod). Other columns come from
// the level's shared ring; with TB_RRS the thread's own column (dx == 0) comes from its register
// ring `own`. After inlining and unrolling, `rel`, the offsets and so every address are constants.
struct Cmq2dAccess {
  const real* ring;  // the level's shared ring, at the thread's column, slot 0
  const real* own;   // the level's register ring (TB_RRS)
  int rel;
  __device__ __forceinline__ real operator()(int dx, int dy, int) const {
    if (TB_RRS && dx == 0) return own[cmq2d_slot(rel + dy)];
    return ring[cmq2d_slot(rel + dy) * TB_PITCH + dx];
  }
};

// What one thread of one block needs in every iteration.
struct Cmq2dThread {
  real* col;              // this thread's column in the shared ring of level 0
  const real* in_col;     // this thread's column of the input
  real* out_col;          // and of the output
  int nx, ny;
  int ys, ye, y0, y1;     // streamed rows [ys, ye), output rows [y0, y1)
  bool col_in, col_interior, col_out;
};

// One iteration k = k0 + PH. CHECK_ROWS: test every row against the domain and the segment
// (the first and last iterations of a segment); otherwise only the thread's column is tested.
template <int DEPTH, int PH, bool CHECK_ROWS>
__device__ __forceinline__ void cmq2d_iteration(const Cmq2dThread& t, int k0, real (&own)[DEPTH][TB_RING],
                                                real (&cur)[TB_ILP]) {
  constexpr int R = TB_RADIUS, ILP = TB_ILP;
  const int k = k0 + PH;
  const int base = t.ys + k0 * ILP;  // the row in ring slot 0 during this round

  real ahead[ILP];
#pragma unroll
  for (int j = 0; j < ILP; ++j) {
    const int gy = t.ys + (k + 1) * ILP + j;
    const bool ok = t.col_in && (!CHECK_ROWS || gy < t.ye);
    ahead[j] = ok ? __ldg(t.in_col + (long)gy * t.nx) : real(0);
  }

  // Levels DEPTH .. 1, top down, so each level reads the register ring of the level below
  // before that level overwrites the oldest rows in it.
#pragma unroll
  for (int s = DEPTH; s >= 1; --s) {
    const int rel0 = (PH - s) * ILP - s * R;  // ring row of the first row computed now
    const real* below = t.col + (s - 1) * TB_RING * TB_PITCH;
    // The ILP rows at once (each input read once), then boundary cells keep their value.
    const Cmq2dAccess u{below, own[s - 1], rel0};
    real v[ILP];
    TbStencil::apply_rows<ILP>(u, v);
#pragma unroll
    for (int j = 0; j < ILP; ++j) {
      const int gy = base + rel0 + j;
      const bool interior = t.col_interior && (!CHECK_ROWS || (gy >= R && gy < t.ny - R));
      if (!interior) v[j] = u(0, j, 0);
    }
    if (s < DEPTH) {
      real* level = t.col + s * TB_RING * TB_PITCH;
#pragma unroll
      for (int j = 0; j < ILP; ++j) {
        level[cmq2d_slot(rel0 + j) * TB_PITCH] = v[j];
        if (TB_RRS) own[s][cmq2d_slot(rel0 + j)] = v[j];
      }
    } else if (t.col_out) {
#pragma unroll
      for (int j = 0; j < ILP; ++j) {
        const int gy = base + rel0 + j;
        if (!CHECK_ROWS || (gy >= t.y0 && gy < t.y1)) t.out_col[(long)gy * t.nx] = v[j];
      }
    }
  }

  // Level 0: this iteration's input rows.
#pragma unroll
  for (int j = 0; j < ILP; ++j) {
    t.col[cmq2d_slot(PH * ILP + j) * TB_PITCH] = cur[j];
    if (TB_RRS) own[0][cmq2d_slot(PH * ILP + j)] = cur[j];
    cur[j] = ahead[j];
  }
  __syncthreads();
}

// Unrolls the TB_PHASES iterations of one round, each with or without row checks.
template <int DEPTH, int PH>
__device__ __forceinline__ void cmq2d_round(const Cmq2dThread& t, int k0, real (&own)[DEPTH][TB_RING],
                                            real (&cur)[TB_ILP]) {
  if constexpr (PH < TB_PHASES) {
    constexpr int R = TB_RADIUS, ILP = TB_ILP;
    const int k = k0 + PH;
    const int done = t.ys + (k - DEPTH) * ILP - DEPTH * R;  // first row level DEPTH finishes
    const int top = t.ys + (k - 1) * ILP - R + ILP;         // past the last row level 1 computes
    const bool steady = done >= t.y0 && done + ILP <= t.y1 && top <= t.ny - R &&
                        t.ys + (k + 2) * ILP <= t.ye;
    if (steady)
      cmq2d_iteration<DEPTH, PH, false>(t, k0, own, cur);
    else
      cmq2d_iteration<DEPTH, PH, true>(t, k0, own, cur);
    cmq2d_round<DEPTH, PH + 1>(t, k0, own, cur);
  }
}

template <int DEPTH>
__device__ __forceinline__ void cmq2d_pass(const real* __restrict__ in, real* __restrict__ out,
                                           int nx, int ny) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  real* rings = reinterpret_cast<real*>(tb_smem);
  constexpr int R = TB_RADIUS, ILP = TB_ILP;
  constexpr int VALID_X = TB_TILE_X - 2 * DEPTH * R;

  Cmq2dThread t;
  t.nx = nx;
  t.ny = ny;
  // Columns: this thread's global column and the block's valid output columns [c0, c1).
  const int lx = threadIdx.x;
  const int c0 = R + blockIdx.x * VALID_X;
  const int c1 = min(c0 + VALID_X, nx - R);
  const int gx = c0 - DEPTH * R + lx;
  t.col_in = gx >= 0 && gx < nx;
  t.col_interior = gx >= R && gx < nx - R;
  t.col_out = gx >= c0 && gx < c1;

  // Rows: the block's output rows [y0, y1) and the input rows it streams [ys, ye).
  const int interior_y = ny - 2 * R;
  const int seg = (interior_y + gridDim.y - 1) / gridDim.y;
  t.y0 = R + blockIdx.y * seg;
  t.y1 = min(t.y0 + seg, ny - R);
  if (t.y0 >= t.y1) return;
  t.ys = max(0, t.y0 - DEPTH * R);
  t.ye = min(ny, t.y1 + DEPTH * R);
  // Enough iterations for level DEPTH to pass y1, rounded up to whole rounds; the extra
  // iterations read nothing (checked loads) and write nothing (checked stores).
  const int needed = (t.y1 - t.ys + DEPTH * R + ILP - 1) / ILP + DEPTH;
  const int iterations = (needed + TB_PHASES - 1) / TB_PHASES * TB_PHASES;

  t.col = rings + lx + R;
  t.in_col = in + gx;
  t.out_col = out + gx;

  // Register rings, zeroed: their first rows are read before they are written, and an
  // uninitialised read would be undefined behaviour the compiler may exploit.
  real own[DEPTH][TB_RING];
#pragma unroll
  for (int s = 0; s < DEPTH; ++s)
#pragma unroll
    for (int i = 0; i < TB_RING; ++i) own[s][i] = real(0);

  // Input rows of iteration k, loaded during iteration k - 1.
  real cur[ILP];
#pragma unroll
  for (int j = 0; j < ILP; ++j) {
    const int gy = t.ys + j;
    cur[j] = (t.col_in && gy < t.ye) ? __ldg(t.in_col + (long)gy * nx) : real(0);
  }

  for (int k0 = 0; k0 < iterations; k0 += TB_PHASES) cmq2d_round<DEPTH, 0>(t, k0, own, cur);
}

extern "C" __global__ void __launch_bounds__(TB_TILE_X, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  cmq2d_pass<TB_DEPTH>(in, out, nx, ny);
}

extern "C" __global__ void __launch_bounds__(TB_TILE_X, TB_BPS)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  cmq2d_pass<1>(in, out, nx, ny);
}
