// templates/wpipe2d.cuh: register-tiled, warp-pipelined temporal blocking for 2D stencils.
//
// A block owns a tile of WP_COLS = 32 * TB_RX columns: lane l of every warp holds the TB_RX
// contiguous cells l*TB_RX .. l*TB_RX + TB_RX - 1 of a row in registers; the R cells beyond each
// end of its strip come from the neighbouring lanes by warp shuffle. The block streams its rows
// [ys, ...) along y, TB_ROWS rows per iteration (G below): more rows per barrier, and rows whose
// levels are independent for the scheduler to overlap.
//
// Time is pipelined across the block's W warps: warp w advances TW steps (levels w*TW + 1 ..
// (w+1)*TW) in its registers and hands each row it finishes to warp w + 1 through a two-row
// ring in shared memory; warp 0 reads the input rows, which cp.async prefetches TB_PF rows ahead
// into a ring of TB_PF + 1 groups of G rows; warp W - 1 writes the valid part of its rows to
// global memory. So a row passes W*TW = DEPTH steps per pass, and only the input and the output
// touch global memory. One __syncthreads() per iteration orders the rings.
//
// Within a warp a level's output row o is complete when input row o + R has arrived, so each
// level lags R rows behind the one below, and each warp one iteration (G rows) behind the one
// before.
//   sum mode (TB_SUM, affine stencils): a level keeps partial sums of the 2R output rows in
//     flight; each arriving row is added to every output it reaches (TbStencil::row_sums).
//   window mode: a level keeps its last 2R + 1 input rows (halo included) and evaluates the
//     stencil (TbStencil::apply) at the output row when the newest arrives. Any stencil.
// The register slots of both are indexed by the row modulo their count; the main loop is
// unrolled by that count (WP_SLOTS iterations), so every register index is a compile-time
// constant.
//
// Columns: the tile overlaps its neighbours by DEPTH*R columns per side (each level's strip ends
// read the neighbour lane's garbage one radius further in); the valid output is the middle
// WP_COLS - 2*DEPTH*R columns. Rows: a y segment [y0, y1) streams DEPTH*R rows before and after.
// Cells of the boundary ring keep their initial value at every level: they are read back from
// `in` (whose boundary equals the original one in every pass). Cells outside the domain hold 0.

#define WP_COLS (32 * TB_RX)
#define WP_G TB_ROWS                               // rows per iteration
#define WP_S0 (TB_PF + 1)                          // input ring groups (of WP_G rows)
#define WP_SLOTS (TB_SUM ? 2 * TB_RADIUS : 2 * TB_RADIUS + 1)  // register rows per level
#define WP_EXT (TB_RX + 2 * TB_RADIUS)              // a strip with its halo

__device__ __forceinline__ unsigned wp_shared_address(const void* p) {
  unsigned a;
  asm("{ .reg .u64 t; cvta.to.shared.u64 t, %1; cvt.u32.u64 %0, t; }" : "=r"(a) : "l"(p));
  return a;
}

// Copies one cell to shared memory asynchronously; a cell outside the domain becomes 0.
__device__ __forceinline__ void wp_load_async(real* dst, const real* src, bool inside) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(wp_shared_address(dst)), "l"(src),
               "n"((int)sizeof(real)), "r"(inside ? (int)sizeof(real) : 0)
               : "memory");
}
__device__ __forceinline__ void wp_load_commit() { asm volatile("cp.async.commit_group;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wp_load_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

__device__ __forceinline__ constexpr int wp_mod(int v, int m) { return ((v % m) + m) % m; }

// A strip extended by R halo cells per side from the neighbouring lanes (any R: cell p of the
// extension lives in lane l + floor(p / RX)). The warp's outer lanes get garbage, which the
// tile's overlap absorbs.
__device__ __forceinline__ void wp_extend(const real (&x)[TB_RX], real (&ext)[WP_EXT]) {
  constexpr int R = TB_RADIUS, RX = TB_RX;
#pragma unroll
  for (int p = -R; p < RX + R; ++p) {
    if (p >= 0 && p < RX) {
      ext[p + R] = x[p];
    } else {
      const int q = p < 0 ? -((-p + RX - 1) / RX) : p / RX;  // lanes away
      const int i = p - q * RX;                             // cell in that lane
      ext[p + R] = q < 0 ? __shfl_up_sync(0xffffffffu, x[i], -q) : __shfl_down_sync(0xffffffffu, x[i], q);
    }
  }
}

// What every thread of a block needs.
struct WpBlock {
  const real* in;
  real* out;
  int nx, ny;
  int gx;            // global column of this lane's cell 0
  int ys, y0, y1;    // first streamed row, output rows [y0, y1)
  unsigned interior;  // bit i: cell i is an interior column
  unsigned inside;    // bit i: cell i is inside the domain
  unsigned valid;     // bit i: cell i is a valid output column of the tile
  real* ring0;        // the input ring (WP_S0 groups of WP_G rows)
  real* hand;         // the hand-off rings: 2 groups of WP_G rows per warp boundary
};

// The value of cell i of row `o` at any level where it is not computed: a boundary cell keeps its
// value (read from `in`), a cell outside the domain is 0. EDGE: the tile has boundary columns;
// CHECK_ROWS: row o may be a boundary row (else the caller knows it is interior).
template <bool EDGE, bool CHECK_ROWS>
__device__ __forceinline__ void wp_fix_boundary(const WpBlock& b, int o, real (&v)[TB_RX]) {
  constexpr int R = TB_RADIUS;
  if (CHECK_ROWS && (o < R || o >= b.ny - R)) {  // a boundary row or outside: the same for the whole warp
    const bool row_inside = o >= 0 && o < b.ny;
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      v[i] = row_inside && ((b.inside >> i) & 1u) ? __ldg(b.in + (long)o * b.nx + b.gx + i) : real(0);
  } else if (EDGE) {
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      if (!((b.interior >> i) & 1u)) v[i] = ((b.inside >> i) & 1u) ? __ldg(b.in + (long)o * b.nx + b.gx + i) : real(0);
  }
}

// The register state of one warp's TW levels: each level's slots, and the rows each level below
// the top finished in the last iteration, which the level above takes in this one.
template <int TW>
struct WpLevels {
  real reg[TW][WP_SLOTS][TB_SUM ? TB_RX : WP_EXT];
  real pass[TW > 1 ? TW - 1 : 1][WP_G][TB_RX];
};

// Accumulators of one level in sum mode, seen from input row y (RR: its row in the round):
// acc(dy, i) is output row y - dy.
template <int RR>
struct WpSums {
  real (&reg)[WP_SLOTS][TB_SUM ? TB_RX : WP_EXT];
  __device__ __forceinline__ real& operator()(int dy, int i) const { return reg[wp_mod(RR - dy, WP_SLOTS)][i]; }
};

// The window of one level in window mode, seen from output row o = newest - R at cell i (RR: the
// newest row's row in the round).
template <int RR>
struct WpWindow {
  const real (&reg)[WP_SLOTS][TB_SUM ? TB_RX : WP_EXT];
  int i;
  __device__ __forceinline__ real operator()(int dx, int dy, int) const {
    return reg[wp_mod(RR - TB_RADIUS + dy, WP_SLOTS)][i + TB_RADIUS + dx];
  }
};

// Advances one row through level `j` of this warp: `x` holds the level's input row (row RR of the
// round) and becomes its output row `o`. CHECK: o may be a boundary row or the tile may have
// boundary columns (else both are known interior).
template <int TW, int RR, bool CHECK>
__device__ __forceinline__ void wp_level(const WpBlock& b, WpLevels<TW>& s, int j, int o, real (&x)[TB_RX]) {
  constexpr int RX = TB_RX;
  real ext[WP_EXT];
  wp_extend(x, ext);
#if TB_SUM
  real done[RX];
  TbStencil::row_sums<RX>(ext, WpSums<RR>{s.reg[j]}, done);
#pragma unroll
  for (int i = 0; i < RX; ++i) x[i] = TbStencil::finish(done[i]);
#else
#pragma unroll
  for (int c = 0; c < WP_EXT; ++c) s.reg[j][wp_mod(RR, WP_SLOTS)][c] = ext[c];
#pragma unroll
  for (int i = 0; i < RX; ++i) x[i] = TbStencil::apply(WpWindow<RR>{s.reg[j], i});
#endif
  wp_fix_boundary<CHECK, CHECK>(b, o, x);
}

// The output row of global level L (1 .. DEPTH) for row g of iteration k: level L works one
// iteration (G rows) and R rows behind level L - 1.
__device__ __forceinline__ int wp_out_row(const WpBlock& b, int L, int k, int g) {
  return b.ys + (k - L + 1) * WP_G + g - L * TB_RADIUS;
}

// Row g of level j of this warp in iteration k (row PH * G + g of the round): from the ring or
// from pass[j - 1], through the level, to pass[j] or to the next ring or the output.
template <int W, int TW, int PH, int J, int GR, bool CHECK>
__device__ __forceinline__ void wp_level_row(const WpBlock& b, WpLevels<TW>& s, int k) {
  constexpr int RX = TB_RX;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  real x[RX];
  if constexpr (J == 0) {
    const real* src = warp == 0 ? b.ring0 + ((k % WP_S0) * WP_G + GR) * WP_COLS
                                : b.hand + (((warp - 1) * 2 + ((k + 1) & 1)) * WP_G + GR) * WP_COLS;
#pragma unroll
    for (int i = 0; i < RX; ++i) x[i] = src[lane * RX + i];
  } else {
#pragma unroll
    for (int i = 0; i < RX; ++i) x[i] = s.pass[J - 1][GR][i];
  }
  const int o = wp_out_row(b, warp * TW + J + 1, k, GR);
  wp_level<TW, PH * WP_G + GR, CHECK>(b, s, J, o, x);
  if constexpr (J < TW - 1) {
#pragma unroll
    for (int i = 0; i < RX; ++i) s.pass[J][GR][i] = x[i];
  } else {
    // The next warp's ring, or for the last warp the output: the same strided layout, so one
    // store sequence with a per-cell predicate serves both.
    const bool last = warp == W - 1;
    real* dst = last ? b.out + (long)o * b.nx + (b.gx - lane * RX)
                     : b.hand + ((warp * 2 + (k & 1)) * WP_G + GR) * WP_COLS;
    const bool row_ok = !last || !CHECK || (o >= b.y0 && o < b.y1);
#pragma unroll
    for (int i = 0; i < RX; ++i)
      if (row_ok && (!last || ((b.valid >> i) & 1u))) dst[lane * RX + i] = x[i];
  }
}

// One iteration k (rows PH * G .. of the round): each of this warp's levels advances G rows.
// The levels are skewed by an iteration: level j takes the rows level j - 1 finished in the last
// iteration (pass[j - 1]; level 0 takes its ring), so the levels of one iteration do not wait for
// each other and their shuffles and multiply-adds overlap. Top level first, so each level reads
// pass[] before the level below overwrites it. Without CHECK the body has no branch.
template <int W, int TW, int PH, int J, int GR, bool CHECK>
__device__ __forceinline__ void wp_levels(const WpBlock& b, WpLevels<TW>& s, int k) {
  if constexpr (J >= 0) {
    if constexpr (GR < WP_G) {
      wp_level_row<W, TW, PH, J, GR, CHECK>(b, s, k);
      wp_levels<W, TW, PH, J, GR + 1, CHECK>(b, s, k);
    } else {
      wp_levels<W, TW, PH, J - 1, 0, CHECK>(b, s, k);
    }
  }
}

// Loads rows ys + G*q .. + G - 1 into group slot q % WP_S0 of the input ring, coalesced, as
// one cp.async group. A fixed number of copies per thread, so the loop unrolls.
template <int W>
__device__ __forceinline__ void wp_load_group(const WpBlock& b, int q) {
  constexpr int CELLS = WP_G * WP_COLS, PER_THREAD = (CELLS + W * 32 - 1) / (W * 32);
  const int gx0 = b.gx - (threadIdx.x & 31) * TB_RX;  // the tile's first column
  real* dst = b.ring0 + (q % WP_S0) * CELLS;
#pragma unroll
  for (int n = 0; n < PER_THREAD; ++n) {
    const int c = threadIdx.x + n * W * 32;
    if (c < CELLS) {
      const int y = b.ys + q * WP_G + c / WP_COLS, gx = gx0 + c % WP_COLS;
      const bool ok = y < b.ny && gx >= 0 && gx < b.nx;
      wp_load_async(dst + c, ok ? b.in + (long)y * b.nx + gx : b.in, ok);
    }
  }
  wp_load_commit();
}

// One iteration k = k0 + PH: the block loads the rows of iteration k + TB_PF, every warp advances
// its levels, then one barrier. Steady iterations (every row this warp computes is interior,
// every row it stores is in [y0, y1), the tile has no boundary column) skip all checks.
template <int W, int TW, int PH>
__device__ __forceinline__ void wp_iteration(const WpBlock& b, WpLevels<TW>& s, int k0, bool edge) {
  constexpr int R = TB_RADIUS;
  const int k = k0 + PH;
  wp_load_group<W>(b, k + TB_PF);
  const int warp = threadIdx.x >> 5;
  const int top = warp * TW + TW;  // this warp's highest level: its rows are the lowest
  const int lowest = wp_out_row(b, top, k, 0), highest = wp_out_row(b, warp * TW + 1, k, WP_G - 1);
  const bool stores_all = warp != W - 1 || (lowest >= b.y0 && wp_out_row(b, top, k, WP_G - 1) < b.y1);
  const bool steady = !edge && lowest >= R && highest < b.ny - R && stores_all;
  if (steady)
    wp_levels<W, TW, PH, TW - 1, 0, false>(b, s, k);
  else
    wp_levels<W, TW, PH, TW - 1, 0, true>(b, s, k);
  wp_load_wait<TB_PF - 1>();
  __syncthreads();
}

template <int W, int TW, int PH>
__device__ __forceinline__ void wp_round(const WpBlock& b, WpLevels<TW>& s, int k0, bool edge) {
  if constexpr (PH < WP_SLOTS) {
    wp_iteration<W, TW, PH>(b, s, k0, edge);
    wp_round<W, TW, PH + 1>(b, s, k0, edge);
  }
}

template <int W, int TW>
__device__ __forceinline__ void wp_pass(const real* __restrict__ in, real* __restrict__ out, int nx, int ny) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  constexpr int R = TB_RADIUS, RX = TB_RX, DEPTH = W * TW;
  constexpr int VALID_X = WP_COLS - 2 * DEPTH * R;
  const int lane = threadIdx.x & 31;

  WpBlock b;
  b.in = in;
  b.out = out;
  b.nx = nx;
  b.ny = ny;
  // Columns: the block's valid output columns [c0, c1) and this lane's strip.
  const int c0 = R + blockIdx.x * VALID_X;
  const int c1 = min(c0 + VALID_X, nx - R);
  b.gx = c0 - DEPTH * R + lane * RX;
  b.interior = b.inside = b.valid = 0;
#pragma unroll
  for (int i = 0; i < RX; ++i) {
    const int gx = b.gx + i;
    b.interior |= unsigned(gx >= R && gx < nx - R) << i;
    b.inside |= unsigned(gx >= 0 && gx < nx) << i;
    b.valid |= unsigned(gx >= c0 && gx < c1) << i;
  }
  // Rows: the block's output rows [y0, y1) and the first row it streams.
  const int interior_y = ny - 2 * R;
  const int seg = (interior_y + gridDim.y - 1) / gridDim.y;
  b.y0 = R + blockIdx.y * seg;
  b.y1 = min(b.y0 + seg, ny - R);
  if (b.y0 >= b.y1) return;
  b.ys = max(0, b.y0 - DEPTH * R);
  b.ring0 = reinterpret_cast<real*>(tb_smem);
  b.hand = b.ring0 + WP_S0 * WP_G * WP_COLS;
  // Iterations until the last level has finished row y1 - 1, in whole rounds.
  const int needed = (b.y1 - b.ys + DEPTH * R + WP_G - 1) / WP_G + DEPTH;
  const int iterations = (needed + WP_SLOTS - 1) / WP_SLOTS * WP_SLOTS;

  // The register state starts at zero: rows before the first are read (and discarded) before
  // they are written, and an uninitialised read would be undefined behaviour.
  WpLevels<TW> s;
#pragma unroll
  for (int j = 0; j < TW; ++j)
#pragma unroll
    for (int r = 0; r < WP_SLOTS; ++r)
#pragma unroll
      for (int c = 0; c < (TB_SUM ? RX : WP_EXT); ++c) s.reg[j][r][c] = real(0);
#pragma unroll
  for (int j = 0; j < (TW > 1 ? TW - 1 : 1); ++j)
#pragma unroll
    for (int g = 0; g < WP_G; ++g)
#pragma unroll
      for (int i = 0; i < RX; ++i) s.pass[j][g][i] = real(0);

  // The first TB_PF groups, then wait for the first.
  for (int q = 0; q < TB_PF; ++q) wp_load_group<W>(b, q);
  wp_load_wait<TB_PF - 1>();
  __syncthreads();

  const int gx0 = c0 - DEPTH * R;
  const bool edge = gx0 < R || gx0 + WP_COLS > nx - R;
  for (int k0 = 0; k0 < iterations; k0 += WP_SLOTS) wp_round<W, TW, 0>(b, s, k0, edge);
  wp_load_wait<0>();
}

extern "C" __global__ void __launch_bounds__(TB_WARPS * 32, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  wp_pass<TB_WARPS, TB_TW>(in, out, nx, ny);
}

extern "C" __global__ void __launch_bounds__(32)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  wp_pass<1, 1>(in, out, nx, ny);
}
