// templates/wpipe3d.cuh: register-tiled, warp-pipelined temporal blocking for 3D stencils; the
// 2D template's design (wpipe2d.cuh) with planes in place of rows.
//
// A block owns a tile of W3_COLS = 32 * TB_RX columns by W3_ROWS = TB_WY * TB_CY + 2R rows and
// streams it along z, one plane per iteration and one __syncthreads() per iteration. Its warps
// are TB_WARPS stages in time of TB_WY warps each. Lane l of warp yw of a stage holds, of every
// plane, the TB_RX contiguous cells from column l*TB_RX of the TB_CY + 2R rows from yw*TB_CY:
// TB_CY rows it computes and R rows above and below them. x halos come from the neighbouring
// lanes by shuffle (wp_cell), y halos are in the lane's own rows.
//
// Time is pipelined across the stages through one shared-memory ring of planes, a conveyor as
// in 2D: in iteration k, stage s takes plane k - s from the ring, advances it TW steps in
// registers (levels s*TW + 1 .. (s+1)*TW) and writes its rows back into the same plane, where
// stage s + 1 takes it in iteration k + 1. cp.async fills plane k + TB_PF_MIN with input; after
// the last stage has written plane k - W, the block copies its valid part to global memory. So
// a plane passes DEPTH = W*TW steps per pass and only the input and the output touch global
// memory. Between two levels of a warp, its rows' y halos are its y neighbours' newest rows:
// each warp leaves its first and last R rows in a small exchange area of its stage and takes
// the neighbours' after a barrier of the stage's warps alone (a named barrier).
//
// Within a warp, each level keeps a window of its last 2R + 1 input planes in registers, slot =
// plane modulo 2R + 1; an output plane o is complete when input plane o + R arrives, so each
// level lags R planes behind the one below. For an affine stencil the terms that read planes
// already held (TbStencil::head, split on dz) are summed before the barrier; after it only the
// newest plane's terms remain (TbStencil::tail). The main loop is unrolled over one period of
// the slots, so every register index is a constant.
//
// Overlap: each level's outer cells read garbage one radius further in (beyond the warp's
// lanes in x, beyond the tile's rows in y), so the valid output is the middle W3_COLS - 2*DEPTH*R
// columns and W3_ROWS - 2*DEPTH*R rows. A z segment [z0, z1) streams DEPTH*R planes before and
// after. Cells of the boundary ring keep their initial value at every level (each level copies
// them from its input): a plane test per output plane, and row and cell tests only in the tiles
// that reach the ring in y or in x (block-uniform flags). The input ring's copies outside the
// domain are zero-filled.

#define W3_COLS (32 * TB_RX)
#define W3_ROWS (TB_WY * TB_CY + 2 * TB_RADIUS)  // rows of a plane in the ring
#define W3_PLANE (W3_ROWS * W3_COLS)
#define W3_IN (TB_CY + 2 * TB_RADIUS)  // rows of a plane a lane holds
#define W3_WIN (2 * TB_RADIUS + 1)     // planes in a level's window

// Planes in the conveyor ring of W stages: one per stage, TB_PF_MIN in flight from global memory
// and the one being stored (the host's smem_bytes counts alike).
__device__ __forceinline__ constexpr int w3_ring_planes(int w) { return w + TB_PF_MIN + 1; }

// The barrier of one stage's TB_WY warps: named barrier 1 + stage (0 is __syncthreads()). Each
// id is an immediate, so ptxas reserves W + 1 barriers, not all 16 as for an id in a register.
template <int W, int S = 0>
__device__ __forceinline__ void w3_stage_sync(int stage) {
#ifdef __CUDA_ARCH__
  if constexpr (S < W) {
    if (stage == S) {
      asm volatile("bar.sync %0, %1;" ::"n"(S + 1), "n"(TB_WY * 32) : "memory");
      return;
    }
    w3_stage_sync<W, S + 1>(stage);
  }
#else
  tb_named_sync(stage + 1);  // the CPU emulator (scripts/emulate/shim.hpp)
#endif
}

// What every thread of a block needs.
struct W3Block {
  const real* in;
  real* out;
  int nx, ny, nz;
  int gx0, gy0;           // the tile's first column and row
  int xlo, xhi, ylo, yhi;  // the columns and rows it writes
  int zs, z0, z1;          // first streamed plane, output planes [z0, z1)
  bool xedge, yedge;       // whether the tile reaches the boundary ring in x, in y
  int lane, yw, stage;
  real* ring;  // the conveyor: w3_ring_planes(W) planes of W3_ROWS x W3_COLS cells
  real* xch;   // the stages' exchange areas
};

// Keeps the boundary ring at its initial value in output plane o of a level: a ring cell's
// output is its input, which the level holds in its window (`held`, plane o). Planes, rows and
// columns outside the domain are treated alike or left as computed: an interior cell never
// reads them.
__device__ __forceinline__ void w3_keep_ring(const W3Block& b, int o, const real (&held)[W3_IN][TB_RX],
                                             real (&v)[TB_CY][TB_RX]) {
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY;
  if (o < R || o >= b.nz - R) {
#pragma unroll
    for (int c = 0; c < CY; ++c)
#pragma unroll
      for (int i = 0; i < RX; ++i) v[c][i] = held[c + R][i];
    return;
  }
  if (b.yedge) {
#pragma unroll
    for (int c = 0; c < CY; ++c) {
      const int gy = b.gy0 + b.yw * CY + R + c;
      if (gy < R || gy >= b.ny - R)
#pragma unroll
        for (int i = 0; i < RX; ++i) v[c][i] = held[c + R][i];
    }
  }
  if (b.xedge) {
#pragma unroll
    for (int i = 0; i < RX; ++i) {
      const int gx = b.gx0 + b.lane * RX + i;
      if (gx < R || gx >= b.nx - R)
#pragma unroll
        for (int c = 0; c < CY; ++c) v[c][i] = held[c + R][i];
    }
  }
}

// The registers of one warp's TW levels: each level's window of input planes and the partial
// sums of the output plane it completes next.
template <int TW>
struct W3Levels {
  real win[TW][W3_WIN][W3_IN][TB_RX];
  real acc[TW][TB_CY][TB_RX];
};

// The window of one level seen from an output plane in slot `slot`, at row c and cell i of the
// lane's strip (constants once the loops around are unrolled).
struct W3Window {
  const real (&win)[W3_WIN][W3_IN][TB_RX];
  int slot, c, i;
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const {
    return wp_cell(win[wp_mod(slot + dz, W3_WIN)][c + TB_RADIUS + dy], i + dx);
  }
};

// Plane numbers are local to a level: in iteration k = PH modulo the period it takes its input
// into slot PH and completes the output R planes behind.
__device__ __forceinline__ constexpr int w3_out_slot(int ph) { return wp_mod(ph - TB_RADIUS, W3_WIN); }

// Before the barrier: the terms of each level's next output plane that read planes it holds.
template <int TW, int PH>
__device__ __forceinline__ void w3_heads(W3Levels<TW>& s) {
#pragma unroll
  for (int j = 0; j < TW; ++j)
#pragma unroll
    for (int c = 0; c < TB_CY; ++c)
#pragma unroll
      for (int i = 0; i < TB_RX; ++i)
        s.acc[j][c][i] = TbStencil::head(W3Window{s.win[j], w3_out_slot(PH), c, i}, TB_RADIUS);
}

// After the barrier: level j takes its new input plane x and completes output plane o into v.
template <int TW, int PH>
__device__ __forceinline__ void w3_level(const W3Block& b, W3Levels<TW>& s, int j, const real (&x)[W3_IN][TB_RX],
                                         real (&v)[TB_CY][TB_RX], int o) {
#pragma unroll
  for (int r = 0; r < W3_IN; ++r)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.win[j][PH][r][i] = x[r][i];
#pragma unroll
  for (int c = 0; c < TB_CY; ++c)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      v[c][i] = TbStencil::tail(W3Window{s.win[j], w3_out_slot(PH), c, i}, TB_RADIUS, s.acc[j][c][i]);
  w3_keep_ring(b, o, s.win[j][w3_out_slot(PH)], v);
}

// The next level's input from this level's output v: v's rows in the middle, the y halos from
// the stage's neighbouring warps (exchange area j of the stage: per warp its first R rows, then
// its last R). The tile's outermost warps keep stale halo rows, absorbed by the overlap.
template <int W, int TW>
__device__ __forceinline__ void w3_exchange(const W3Block& b, int j, const real (&v)[TB_CY][TB_RX],
                                            real (&x)[W3_IN][TB_RX]) {
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY, EDGE = 2 * R * W3_COLS;
#pragma unroll
  for (int c = 0; c < CY; ++c)
#pragma unroll
    for (int i = 0; i < RX; ++i) x[c + R][i] = v[c][i];
  if constexpr (TB_WY > 1) {
    real* area = b.xch + (b.stage * (TW - 1) + j) * TB_WY * EDGE;
    real* mine = area + b.yw * EDGE + b.lane * RX;
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int i = 0; i < RX; ++i) {
        mine[r * W3_COLS + i] = v[r][i];
        mine[(R + r) * W3_COLS + i] = v[CY - R + r][i];
      }
    w3_stage_sync<W>(b.stage);
    if (b.yw > 0) {
      const real* above = area + (b.yw - 1) * EDGE + b.lane * RX;
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int i = 0; i < RX; ++i) x[r][i] = above[(R + r) * W3_COLS + i];
    }
    if (b.yw < TB_WY - 1) {
      const real* below = area + (b.yw + 1) * EDGE + b.lane * RX;
#pragma unroll
      for (int r = 0; r < R; ++r)
#pragma unroll
        for (int i = 0; i < RX; ++i) x[CY + R + r][i] = below[r * W3_COLS + i];
    }
  }
}

// The block's cp.async copies of input plane zs + q into the ring, one commit group.
template <int W>
__device__ __forceinline__ void w3_load_plane(const W3Block& b, int q) {
  constexpr int THREADS = W * TB_WY * 32, PER_THREAD = (W3_PLANE + THREADS - 1) / THREADS;
  real* dst = b.ring + wp_mod(q, w3_ring_planes(W)) * W3_PLANE;
  const int z = b.zs + q;
  const long zoff = (long)b.nx * b.ny * z;
#pragma unroll
  for (int n = 0; n < PER_THREAD; ++n) {
    const int c = threadIdx.x + n * THREADS;
    if (c < W3_PLANE) {
      const int gy = b.gy0 + c / W3_COLS, gx = b.gx0 + c % W3_COLS;
      const bool ok = z < b.nz && gy >= 0 && gy < b.ny && gx >= 0 && gx < b.nx;
      wp_load_async(dst + c, ok ? b.in + zoff + (long)gy * b.nx + gx : b.in, ok);
    }
  }
  __pipeline_commit();
}

// The block copies ring plane q, output plane z, to `out`: the tile's valid rows and columns.
template <int W>
__device__ __forceinline__ void w3_store_plane(const W3Block& b, int q, int z) {
  constexpr int THREADS = W * TB_WY * 32, PER_THREAD = (W3_PLANE + THREADS - 1) / THREADS;
  if (z < b.z0 || z >= b.z1) return;
  const real* src = b.ring + wp_mod(q, w3_ring_planes(W)) * W3_PLANE;
  const long zoff = (long)b.nx * b.ny * z;
#pragma unroll
  for (int n = 0; n < PER_THREAD; ++n) {
    const int c = threadIdx.x + n * THREADS;
    const int gy = b.gy0 + c / W3_COLS, gx = b.gx0 + c % W3_COLS;
    if (c < W3_PLANE && gy >= b.ylo && gy < b.yhi && gx >= b.xlo && gx < b.xhi)
      b.out[zoff + (long)gy * b.nx + gx] = src[c];
  }
}

// One iteration k = k0 + PH.
template <int W, int TW, int PH>
__device__ __forceinline__ void w3_iteration(const W3Block& b, W3Levels<TW>& s, int k0) {
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY, DEPTH = W * TW;
  const int k = k0 + PH;
  w3_heads<TW, PH>(s);
  // Plane k (stage 0's input) has landed; every stage has written the plane it had.
  __pipeline_wait_prior(TB_PF_MIN - 1);
  __syncthreads();
  w3_load_plane<W>(b, k + TB_PF_MIN);
  w3_store_plane<W>(b, k - W, b.zs + (k - W) - DEPTH * R);
  // This stage's plane: in through its levels and back into the ring.
  real* plane = b.ring + wp_mod(k - b.stage, w3_ring_planes(W)) * W3_PLANE + b.yw * CY * W3_COLS + b.lane * RX;
  real x[W3_IN][RX], v[CY][RX];
#pragma unroll
  for (int r = 0; r < W3_IN; ++r)
#pragma unroll
    for (int i = 0; i < RX; ++i) x[r][i] = plane[r * W3_COLS + i];
  // Level j of this stage is level stage*TW + j + 1 of the pass, R planes behind the one below.
  const int o = b.zs + (k - b.stage) - (b.stage * TW + 1) * R;
#pragma unroll
  for (int j = 0; j < TW; ++j) {
    w3_level<TW, PH>(b, s, j, x, v, o - j * R);
    if (j + 1 < TW) w3_exchange<W, TW>(b, j, v, x);
  }
  // The stage's warps read rows that their neighbours write back: with one level there was no
  // exchange barrier between, so one here.
  if constexpr (TW == 1 && TB_WY > 1) w3_stage_sync<W>(b.stage);
#pragma unroll
  for (int c = 0; c < CY; ++c)
#pragma unroll
    for (int i = 0; i < RX; ++i) plane[(c + R) * W3_COLS + i] = v[c][i];
}

template <int W, int TW, int PH>
__device__ __forceinline__ void w3_period(const W3Block& b, W3Levels<TW>& s, int k0) {
  if constexpr (PH < W3_WIN) {
    w3_iteration<W, TW, PH>(b, s, k0);
    w3_period<W, TW, PH + 1>(b, s, k0);
  }
}

// One block's pass over tile (tx, ty) and output planes [z0, z1).
template <int W, int TW>
__device__ __forceinline__ void w3_pass(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz,
                                        int tx, int ty, int z0, int z1) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY, DEPTH = W * TW;
  constexpr int VX = W3_COLS - 2 * DEPTH * R, VY = W3_ROWS - 2 * DEPTH * R;
  if (z0 >= z1) return;

  W3Block b;
  b.in = in;
  b.out = out;
  b.nx = nx;
  b.ny = ny;
  b.nz = nz;
  b.xlo = R + tx * VX;
  b.xhi = min(b.xlo + VX, nx - R);
  b.gx0 = b.xlo - DEPTH * R;
  b.ylo = R + ty * VY;
  b.yhi = min(b.ylo + VY, ny - R);
  b.gy0 = b.ylo - DEPTH * R;
  b.xedge = b.gx0 < R || b.gx0 + W3_COLS > nx - R;
  b.yedge = b.gy0 < R || b.gy0 + W3_ROWS > ny - R;
  b.z0 = z0;
  b.z1 = z1;
  b.zs = max(0, z0 - DEPTH * R);
  const int warp = threadIdx.x >> 5;
  b.lane = threadIdx.x & 31;
  b.stage = warp / TB_WY;
  b.yw = warp % TB_WY;
  b.ring = reinterpret_cast<real*>(tb_smem);
  b.xch = b.ring + w3_ring_planes(W) * W3_PLANE;
  // Iteration k stores plane zs + k - W - DEPTH*R: run until plane z1 - 1 is stored, in whole
  // periods.
  const int needed = W + z1 - b.zs + DEPTH * R;
  const int iterations = (needed + W3_WIN - 1) / W3_WIN * W3_WIN;

  // The registers start at zero: the first planes of each level read slots before they are
  // written (their outputs are discarded), and an uninitialised read would be undefined.
  W3Levels<TW> s;
#pragma unroll
  for (int j = 0; j < TW; ++j) {
#pragma unroll
    for (int p = 0; p < W3_WIN; ++p)
#pragma unroll
      for (int r = 0; r < W3_IN; ++r)
#pragma unroll
        for (int i = 0; i < RX; ++i) s.win[j][p][r][i] = real(0);
#pragma unroll
    for (int c = 0; c < CY; ++c)
#pragma unroll
      for (int i = 0; i < RX; ++i) s.acc[j][c][i] = real(0);
  }

  for (int q = 0; q < TB_PF_MIN; ++q) w3_load_plane<W>(b, q);
  for (int k0 = 0; k0 < iterations; k0 += W3_WIN) w3_period<W, TW, 0>(b, s, k0);
  __pipeline_wait_prior(0);
}

// Segment s of n equal parts of the planes [lo, hi).
__device__ __forceinline__ void w3_segment(int lo, int hi, int s, int n, int& z0, int& z1) {
  const int seg = (hi - lo + n - 1) / n;
  z0 = lo + s * seg;
  z1 = min(z0 + seg, hi);
}

// Tiles in x (gridDim.x) and y (gridDim.y), z segments of the interior (gridDim.z).
extern "C" __global__ void __launch_bounds__(TB_WARPS * TB_WY * 32, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  int z0, z1;
  w3_segment(TB_RADIUS, nz - TB_RADIUS, blockIdx.z, gridDim.z, z0, z1);
  w3_pass<TB_WARPS, TB_TW>(in, out, nx, ny, nz, blockIdx.x, blockIdx.y, z0, z1);
}

// One stage of one level: a step.
extern "C" __global__ void __launch_bounds__(TB_WY * 32)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  int z0, z1;
  w3_segment(TB_RADIUS, nz - TB_RADIUS, blockIdx.z, gridDim.z, z0, z1);
  w3_pass<1, 1>(in, out, nx, ny, nz, blockIdx.x, blockIdx.y, z0, z1);
}
