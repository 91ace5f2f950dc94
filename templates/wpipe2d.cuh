// templates/wpipe2d.cuh: register-tiled, warp-pipelined temporal blocking for 2D stencils.
//
// A block owns a tile of WP_COLS = 32 * TB_RX columns: lane l of every warp holds the TB_RX
// contiguous cells l*TB_RX .. l*TB_RX + TB_RX - 1 of a row in registers; the R cells beyond each
// end of its strip come from the neighbouring lanes by warp shuffle. The block streams its rows
// along y, G = TB_ROWS rows per iteration and one __syncthreads() per iteration.
//
// Time is pipelined across the block's W warps through one shared-memory ring of row groups,
// a conveyor: in iteration k, warp w takes group k - w from the ring, advances its rows TW
// steps in registers (levels w*TW + 1 .. (w+1)*TW) and writes them back into the same group,
// where warp w + 1 takes them in iteration k + 1. cp.async fills group k + PF (wp_prefetch) with input
// rows; after warp W - 1 has written group k - W, the whole block copies its valid part to
// global memory, coalesced. So a row passes DEPTH = W*TW steps per pass and only the input and
// the output touch global memory.
//
// Within a warp, each level keeps a window of its last 2R + G input rows in registers. A level's output row
// o is complete when input row o + R arrives, so each level lags R rows behind the one below.
// For an affine stencil the terms that read rows already held (TbStencil::head) are summed
// before the barrier, all of them or (`late`) the oldest row's; after it the rest
// (TbStencil::part) and the newest rows' terms (TbStencil::tail). Any other stencil is
// evaluated whole after the barrier.
// A separable stencil (TbRows, `sep`) keeps in the window each row's sums across x instead of
// its cells: a row arriving at a level is summed across once (its halo by shuffle), and an
// output is the sum down y of the sums it reads, so a (2R+1) x (2R+1) box costs 2 x (2R + 1)
// multiply-adds per cell instead of (2R + 1)^2, in every loop: the boundary ring's cells, whose
// own values the window then no longer holds, are read again from the input (WpInitial).
// A stencil symmetric in y (TbFold, `fold`) sums each output's mirrored rows first, row d above
// plus row d below (more generally, row d below plus the rows above in the weights that make
// them: TbFold::row; j3d27pt's planes in 3D), and evaluates the stencil over those R + 1
// folded rows: a (2R+1) x (2R+1) box costs R adds and (R + 1) x (2R + 1) multiply-adds per
// cell, and R + 1 rows' halos are shuffled instead of 2R + 1. The window still holds the rows'
// cells, so every loop, the ring's too, can do so.
// The window's register slots are indexed by the row modulo their count; the main loop is
// unrolled over one period of that index (kWpPeriod iterations), so every register
// index is a compile-time constant and no row is ever moved between registers.
//
// Columns: the tile overlaps its neighbours by DEPTH*R columns per side (each level's strip ends
// read the neighbour lane's garbage one radius further in); the valid output is the middle
// WP_COLS - 2*DEPTH*R columns. Rows: a y segment [y0, y1) streams DEPTH*R rows before and after.
// Cells of the boundary ring keep their initial value at every level (each level copies them
// from its input); what cells outside the domain hold does not matter, as no interior cell
// reads them. The input ring's copies outside the domain are zero-filled.
//
// The boundary ring without per-cell selects: the first tile starts its valid columns at R and
// the last ends them at nx - R (tiles in between are clamped so that none reaches a ring
// column), so the ring's columns sit at the same lanes and cells in every first and every last
// tile, known at compile time: a few predicated copies per row, not a select per cell. A ring
// row is the same for every lane (one uniform branch per row). The host keeps the interior at
// least one tile wide, so no tile holds both sides. Only the blocks that meet the ring run
// these tests, with split in a kernel of their own (tb_edge, below).

// wp_mod, wp_gcd and wp_cell come from templates/wpipe.cuh, assembled before this.

// TB_WP_OPS, the loop's multiply-adds per cell (the host's loop_ops), is for host code that
// includes this source: the timing executable sizes the pass's grid with it, as the tuner does
// (wpipe2d_grid).

#define WP_COLS (32 * TB_RX)
// Float strips of even length move between registers and the ring in pairs (tb_shared_load_strip);
// double ones cell by cell: in pairs they ran 2% slower (j2d9pt rx 14, H200, docs/bench-2d.md).
constexpr bool WP_PAIRS = sizeof(real) == 4;
#define WP_G TB_ROWS                          // rows per iteration
#define WP_WIN (2 * TB_RADIUS + WP_G)          // window rows per level

// Iterations until the window's slot pattern repeats: G rows arrive per iteration into WP_WIN slots.
constexpr int kWpPeriod = WP_WIN / wp_gcd(WP_G, WP_WIN);

// Row groups in the conveyor ring of W warps: one per warp, at least TB_PF_MIN in flight from
// global memory and the one being stored, rounded up to a power of two so that a group's slot
// is one AND (the host's smem_bytes rounds alike).
__device__ __forceinline__ constexpr int wp_ring_groups(int w) {
  int m = 1;
  while (m < w + TB_PF_MIN + 1) m *= 2;
  return m;
}

// Row groups cp.async loads ahead of the one warp 0 takes: every slot the rounding left spare,
// so the loads have as many iterations as the ring can give to arrive, at no cost in shared
// memory.
__device__ __forceinline__ constexpr int wp_prefetch(int w) { return wp_ring_groups(w) - w - 1; }

// What every thread of a block needs.
struct WpBlock {
  const real* in;
  real* out;
  int nx, ny;
  int gx0;           // the tile's first column
  int ys, y0, y1;    // first streamed row, output rows [y0, y1)
  bool left, right;  // the first tile (the ring's left columns) or the last (its right ones)
  int lane;
  real* ring;        // the conveyor: M groups of G rows of WP_COLS cells
};

// What a segment's levels keep of the boundary ring (wp_keep_ring): nothing (none of its cells
// matter to the segment), its columns (rows [DEPTH*R, ny - DEPTH*R) of the first and last
// tiles), or its rows and columns. kWpRingByRows: a pass chooses per segment (wp_shared_pass).
constexpr int kWpRingNone = 0, kWpRingColumns = 1, kWpRingAll = 2, kWpRingByRows = 3;

// Where a level's ring cells get their initial value, for wp_keep_ring: a ring cell's output
// is its input, which the level holds in its window (WpHeld, output row o's own cells), so no
// load is needed; but a separable stencil's window (`sep`) holds the rows' sums across, not
// their cells, so there it is read again from `in` (WpInitial), which holds the ring as every
// buffer does (no pass writes it). wpipe3d's ring planes are read alike. `row` and `column` set
// v, cell i, where `ring` holds, for a ring row's cells and a ring column's: from the window by
// a select, not a branch (a branch per level and row split the loop body where ptxas schedules
// the levels together, and the kernel spilled more: docs/bench-2d.md, version 12); from `in`
// by a read issued only where it is kept.
struct WpHeld {
  const real (&cells)[TB_RX];
  __device__ __forceinline__ void row(bool ring, int i, real& v) const { v = ring ? cells[i] : v; }
  __device__ __forceinline__ void column(bool ring, int i, real& v) const { v = ring ? cells[i] : v; }
};
// Row o clamped into the domain (the pipeline's rows before and after it, values no
// interior cell reads). A ring column's cells lie in the domain; a ring row's lanes may reach
// beyond it, so their reads are clamped into the array, after the row so that no offset is the
// same in every iteration: offsets hoisted out of the loop, one register each, spilled j2d49pt's
// tb_edge (rx 10, 8 warps, 2 rows: 68 bytes).
struct WpInitial {
  const real* in;
  long at, last;  // the lane's first cell of row o, the array's last cell
  __device__ __forceinline__ WpInitial(const WpBlock& b, int o)
      : in(b.in), at((long)min(max(o, 0), b.ny - 1) * b.nx + b.gx0 + b.lane * TB_RX), last((long)b.nx * b.ny - 1) {}
  __device__ __forceinline__ void row(bool ring, int i, real& v) const {
    if (ring) v = __ldg(in + min(max(at + i, 0l), last));
  }
  __device__ __forceinline__ void column(bool ring, int i, real& v) const {
    if (ring) v = __ldg(in + at + i);
  }
};

// Keeps the boundary ring at its initial value for output row o of a level (`initial`: WpHeld
// or WpInitial). Rows outside the domain are treated alike and columns outside it are left as
// computed: an interior cell never reads them. The ring's columns are at tile offsets
// DEPTH*R - R .. DEPTH*R - 1 in the first tile and WP_COLS - DEPTH*R .. + R - 1 in the last
// (wp_tile_c0), so each is one constant cell of one lane.
template <int DEPTH, int RING, class Initial>
__device__ __forceinline__ void wp_keep_ring(const WpBlock& b, int o, const Initial& initial, real (&v)[TB_RX]) {
  constexpr int R = TB_RADIUS, RX = TB_RX;
  if constexpr (RING == kWpRingNone) return;
  if constexpr (RING == kWpRingAll) {
    const bool ring_row = o < R || o >= b.ny - R;
#pragma unroll
    for (int i = 0; i < RX; ++i) initial.row(ring_row, i, v[i]);
  }
#pragma unroll
  for (int c = DEPTH * R - R; c < DEPTH * R; ++c) initial.column(b.left && b.lane == c / RX, c % RX, v[c % RX]);
#pragma unroll
  for (int c = WP_COLS - DEPTH * R; c < WP_COLS - DEPTH * R + R; ++c)
    initial.column(b.right && b.lane == c / RX, c % RX, v[c % RX]);
}

// The registers of one warp's TW levels: each level's window of input rows (slot = row modulo
// WP_WIN) and the partial sums of the G output rows it completes next.
template <int TW>
struct WpLevels {
  real win[TW][WP_WIN][TB_RX];
  real acc[TW][WP_G][TB_RX];
};

// The window of one level seen from an output row whose own row sits in slot `row`, at cell i.
// Both are constants once the loops around are unrolled; cells beyond the strip by shuffle,
// once per evaluation (`halo`, one for every cell and output row of a level's head or tail).
struct WpWindow {
  const real (&win)[WP_WIN][TB_RX];
  WpHalo<WP_WIN>& halo;
  int row, i;
  __device__ __forceinline__ real operator()(int dx, int dy, int) const {
    const int slot = wp_mod(row + dy, WP_WIN);
    return halo(win[slot], slot, i + dx);
  }
};

// A separable stencil's window (`sep`): an output's row sum dy rows away, in the lane's own
// cell i; the sums across need no halo.
struct WpColumn {
  const real (&win)[WP_WIN][TB_RX];
  int row, i;
  __device__ __forceinline__ real operator()(int, int dy, int) const { return win[wp_mod(row + dy, WP_WIN)][i]; }
};

// An arriving row's cell i + dx, for its sum across: the cells beyond the strip by shuffle,
// once per row (`halo`).
struct WpAcross {
  const real (&row)[TB_RX];
  WpHalo<WP_G>& halo;
  int g, i;
  __device__ __forceinline__ real operator()(int dx, int, int) const { return halo(row, g, i + dx); }
};

// Cell i of the window's row at offset e from slot `row`, for TbFold::row.
struct WpRowAt {
  const real (&win)[WP_WIN][TB_RX];
  int row, i;
  __device__ __forceinline__ real operator()(int e) const { return win[wp_mod(row + e, WP_WIN)][i]; }
};

// One folded row (`fold`), its cells formed for the strip and those beyond it by shuffle, once
// (`halo`).
struct WpFoldedRow {
  const real (&q)[TB_RX];
  WpHalo<1>& halo;
  int i;
  __device__ __forceinline__ real operator()(int dx, int, int) const { return halo(q, 0, i + dx); }
};

// Adds the terms of folded rows d, lo <= d < hi, of the outputs whose own row sits in slot `row`
// to acc: folded row d is row d below plus the rows above in their weights (TbFold::row). A
// row at a time (formed once, then its terms at every cell, in TbFold's order), so that a thread holds one
// folded row beside its sums.
template <class Fold>
__device__ __forceinline__ void wp_fold_sum(const real (&win)[WP_WIN][TB_RX], int row, int lo, int hi,
                                            real (&acc)[TB_RX]) {
#pragma unroll
  for (int d = 0; d <= TB_RADIUS; ++d) {
    if (d < lo || d >= hi) continue;
    real q[TB_RX];
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      q[i] = Fold::row(d, WpRowAt{win, row, i});
    WpHalo<1> halo;
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) acc[i] = Fold::part(WpFoldedRow{q, halo, i}, d, d + 1, acc[i]);
  }
}

// Row numbers are local to a level: in iteration k a level takes input rows k*G .. k*G + G - 1
// into slots (k*G + g) mod WP_WIN and completes output rows k*G + g - R. With k = PH modulo
// the period, both slots are constants.
__device__ __forceinline__ constexpr int wp_in_slot(int ph, int g) { return wp_mod(ph * WP_G + g, WP_WIN); }
__device__ __forceinline__ constexpr int wp_out_slot(int ph, int g) { return wp_mod(ph * WP_G + g - TB_RADIUS, WP_WIN); }

// Output g reads the new rows from dy = R - g on. Before the barrier a level sums the terms of
// the rows it holds, dy < R - g, or with TB_WP_LATE (the `late` parameter) those of the oldest
// row alone, dy = -R: the rest of the held rows' terms then wait until after the barrier, where
// they give each warp independent work beside its levels' chain of tails. That ran 1-4% faster
// where the registers allow it (H100: j2d9pt, j2ds9pt, j2d49pt; docs/bench-2d.md), but spilled
// FastStencil's j2d5pt shape, whose candidates the search then times without it.
__device__ __forceinline__ constexpr int wp_early_split(int g) {
  return TB_WP_LATE && 1 - TB_RADIUS < TB_RADIUS - g ? 1 - TB_RADIUS : TB_RADIUS - g;
}

// Before the barrier: the terms of level j's next G outputs (iteration PH's) that read rows it
// already holds.
template <int TW, int PH>
__device__ __forceinline__ void wp_head(WpLevels<TW>& s, int j) {
  WpHalo<WP_WIN> halo;
#pragma unroll
  for (int g = 0; g < WP_G; ++g)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      s.acc[j][g][i] = TbStencil::head(WpWindow{s.win[j], halo, wp_out_slot(PH, g), i}, wp_early_split(g));
}

// wp_head for a separable stencil: the sums down y of the row sums held.
template <class Rows, int TW, int PH>
__device__ __forceinline__ void wp_sep_head(WpLevels<TW>& s, int j) {
#pragma unroll
  for (int g = 0; g < WP_G; ++g)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      s.acc[j][g][i] = Rows::head(WpColumn{s.win[j], wp_out_slot(PH, g), i}, wp_early_split(g));
}

// wp_tail for a separable stencil: the new rows' sums across go into the window, then the
// outputs' sums down y are completed, and the ring's cells read again (WpInitial).
template <class Rows, int DEPTH, int TW, int PH, int RING>
__device__ __forceinline__ void wp_sep_tail(const WpBlock& b, WpLevels<TW>& s, int j, real (&x)[WP_G][TB_RX], int o) {
  WpHalo<WP_G> halo;
#pragma unroll
  for (int g = 0; g < WP_G; ++g)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.win[j][wp_in_slot(PH, g)][i] = Rows::across(WpAcross{x[g], halo, g, i});
#pragma unroll
  for (int g = 0; g < WP_G; ++g)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) {
      const WpColumn c{s.win[j], wp_out_slot(PH, g), i};
      x[g][i] = Rows::tail(c, TB_RADIUS - g, Rows::part(c, wp_early_split(g), TB_RADIUS - g, s.acc[j][g][i]));
    }
#pragma unroll
  for (int g = 0; g < WP_G; ++g) wp_keep_ring<DEPTH, RING>(b, o + g, WpInitial(b, o + g), x[g]);
}

// wp_head for a y-symmetric stencil: output g's folded rows d < R - g read rows the level
// already holds (`late` does not apply: every folded row but the newest reads the oldest rows
// with newer ones). The sums start at zero, as TbStencil::head's do.
template <class Fold, int TW, int PH>
__device__ __forceinline__ void wp_fold_head(WpLevels<TW>& s, int j) {
#pragma unroll
  for (int g = 0; g < WP_G; ++g) {
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.acc[j][g][i] = real(0);
    wp_fold_sum<Fold>(s.win[j], wp_out_slot(PH, g), 0, TB_RADIUS - g, s.acc[j][g]);
  }
}

// Level j's heads of iteration PH, the stencil's way: a separable one's sums of row sums, a
// y-symmetric one's folded rows, or its terms.
template <int TW, int PH>
__device__ __forceinline__ void wp_level_head(WpLevels<TW>& s, int j) {
  if constexpr (TB_WP_SEP)
    wp_sep_head<TbRows, TW, PH>(s, j);
  else if constexpr (TB_WP_FOLD)
    wp_fold_head<TbFold, TW, PH>(s, j);
  else
    wp_head<TW, PH>(s, j);
}

// wp_tail for a y-symmetric stencil: the folded rows that pair a new row, the constant
// (Fold::tail past the last row), then the ring as wp_tail.
template <class Fold, int DEPTH, int TW, int PH, int RING>
__device__ __forceinline__ void wp_fold_tail(const WpBlock& b, WpLevels<TW>& s, int j, real (&x)[WP_G][TB_RX], int o) {
#pragma unroll
  for (int g = 0; g < WP_G; ++g)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.win[j][wp_in_slot(PH, g)][i] = x[g][i];
#pragma unroll
  for (int g = 0; g < WP_G; ++g) {
    wp_fold_sum<Fold>(s.win[j], wp_out_slot(PH, g), TB_RADIUS - g, TB_RADIUS + 1, s.acc[j][g]);
    WpHalo<1> none;
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) x[g][i] = Fold::tail(WpFoldedRow{x[g], none, i}, TB_RADIUS + 1, s.acc[j][g][i]);
    wp_keep_ring<DEPTH, RING>(b, o + g, WpHeld{s.win[j][wp_out_slot(PH, g)]}, x[g]);
  }
}

// After the barrier: level j takes its G new input rows from x and leaves its G output rows
// there; o: the level's first output row in this iteration.
template <int DEPTH, int TW, int PH, int RING>
__device__ __forceinline__ void wp_tail(const WpBlock& b, WpLevels<TW>& s, int j, real (&x)[WP_G][TB_RX], int o) {
#pragma unroll
  for (int g = 0; g < WP_G; ++g)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.win[j][wp_in_slot(PH, g)][i] = x[g][i];
  WpHalo<WP_WIN> halo;
#pragma unroll
  for (int g = 0; g < WP_G; ++g) {
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) {
      const WpWindow w{s.win[j], halo, wp_out_slot(PH, g), i};
      x[g][i] = TbStencil::tail(w, TB_RADIUS - g, TbStencil::part(w, wp_early_split(g), TB_RADIUS - g, s.acc[j][g][i]));
    }
    wp_keep_ring<DEPTH, RING>(b, o + g, WpHeld{s.win[j][wp_out_slot(PH, g)]}, x[g]);
  }
}

// The ring's traffic with global memory, worked out once per pass. A group's G rows go to the
// block's threads in equal shares, P = threads / G to a row: thread t copies row t / P of the
// group, columns t % P + m x P (m < N) of the tile. A thread's cells of a group then share one row
// test and one 64-bit address, their offsets from it constants. Handing the cells out in turn
// across the rows (cell n = t + n x threads) cost a row test, a division and a 64-bit address
// per cell, in branches right after the barrier, before the levels' chain could start: about a
// quarter of the stall samples of j2d5pt's winner (H200, ncu, docs/bench-2d.md), as the same
// work had of wpipe3d's (wpipe3d.cuh, W3Block::src).
template <int W>
struct WpTraffic {
  static constexpr int THREADS = W * 32, P = THREADS / WP_G, N = (WP_COLS + P - 1) / P, CELLS = WP_G * WP_COLS;
  static_assert(P >= 1, "a group has at most as many rows as the block has threads");
  // A thread's cells' column tests as bits of one word, or, where it has more cells than that
  // (the one-warp kernels' groups of rows x rx > 32 cells), worked out per cell.
  static constexpr bool kMasks = N <= 32;
  unsigned xin;   // with kMasks, bit m: cell m is this thread's and its column in the domain
  unsigned xout;  // with kMasks, bit m: cell m is this thread's and its column among those the tile writes
  int gx0, nx, lo, hi;  // without: the tile's first column, the domain's columns, the written ones [lo, hi)
  // This thread's row of a group and first column of the tile (a row of WP_G: none, where the
  // rows do not divide the threads). A few operations on threadIdx.x where they are needed,
  // rather than registers held through the loop (held, they made j2d5pt's winners spill more).
  __device__ __forceinline__ static int row() { return int(threadIdx.x) / P; }
  __device__ __forceinline__ static int col() { return int(threadIdx.x) % P; }
  // Whether cell m is this thread's: a constant but for the last cell where P does not divide
  // the row, and for the threads past the rows where the rows do not divide the threads.
  __device__ __forceinline__ static bool mine(int m) {
    return (THREADS % WP_G == 0 || row() < WP_G) && (m + 1 < N || WP_COLS % P == 0 || col() + m * P < WP_COLS);
  }
  // Whether cell m is this thread's and its column in the domain (in), among the written ones (out).
  __device__ __forceinline__ bool in(int m) const {
    if constexpr (kMasks) return xin >> m & 1;
    const int gx = gx0 + col() + m * P;
    return mine(m) && gx >= 0 && gx < nx;
  }
  __device__ __forceinline__ bool out(int m) const {
    if constexpr (kMasks) return xout >> m & 1;
    const int gx = gx0 + col() + m * P;
    return mine(m) && gx >= lo && gx < hi;
  }
  // This thread's first cell of group slot q of the ring, as a 32-bit shared address.
  __device__ __forceinline__ static unsigned slot(const real* ring, int q) {
    return tb_shared_addr(ring + q * CELLS + row() * WP_COLS + col());
  }
};

// The tile's columns [gx0, gx0 + WP_COLS), of which it writes [lo, hi).
template <int W>
__device__ __forceinline__ WpTraffic<W> wp_traffic(int nx, int gx0, int lo, int hi) {
  using T = WpTraffic<W>;
  T tr;
  tr.gx0 = gx0;
  tr.nx = nx;
  tr.lo = lo;
  tr.hi = hi;
  tr.xin = tr.xout = 0;
  if constexpr (T::kMasks) {
#pragma unroll
    for (int m = 0; m < T::N; ++m) {
      const int gx = gx0 + T::col() + m * T::P;
      tr.xin |= unsigned(T::mine(m) && gx >= 0 && gx < nx) << m;
      tr.xout |= unsigned(T::mine(m) && gx >= lo && gx < hi) << m;
    }
  }
  return tr;
}

// The block's cp.async copies of the input rows of group q into the ring, one commit group.
// A fixed number of copies per thread, so the loop unrolls; a copy outside the domain reads
// nothing and zero-fills. Rows past the domain's last (the pipeline's last groups) are
// zero-filled at the last row's addresses. tb_full's tiles (RING none) lie at least R columns
// inside the domain on either side (wp_tile_c0, with an interior at least one tile wide and
// valid columns at least the overlap: the host's checks), so their copies take the row's address
// and a constant offset; the others' cells outside it read from `in` instead.
template <int W, int M, int RING>
__device__ __forceinline__ void wp_load_group(const WpBlock& b, const WpTraffic<W>& tr, int q) {
  using T = WpTraffic<W>;
  const unsigned dst = T::slot(b.ring, q & (M - 1));
  const int y = b.ys + q * WP_G + T::row();
  const bool row_in = y < b.ny;
  const real* src = b.in + (long)min(y, b.ny - 1) * b.nx + b.gx0 + T::col();
#pragma unroll
  for (int m = 0; m < T::N; ++m)
    if (T::mine(m)) {
      const unsigned to = dst + m * T::P * kTbCellBytes;
      if constexpr (RING == kWpRingNone)
        tb_copy_async(to, src + m * T::P, row_in);
      else
        tb_copy_async(to, tr.in(m) ? src + m * T::P : b.in, row_in && tr.in(m));
    }
  __pipeline_commit();
}

// The block copies group q's rows (first output row `row0`) from the ring to `out`: the cells
// that are valid output columns of this tile and rows of its segment. Each cell is read from
// the ring whether or not it is written, so that only the store is predicated, not a branch.
template <int W, int M>
__device__ __forceinline__ void wp_store_group(const WpBlock& b, const WpTraffic<W>& tr, int q, int row0) {
  using T = WpTraffic<W>;
  const unsigned src = T::slot(b.ring, q & (M - 1));
  const int y = row0 + T::row();
  const bool row_out = y >= b.y0 && y < b.y1;
  real* dst = b.out + (long)y * b.nx + b.gx0 + T::col();
#pragma unroll
  for (int m = 0; m < T::N; ++m)
    if (T::mine(m)) {
      const real v = tb_shared_load(src + m * T::P * kTbCellBytes);
      if (row_out && tr.out(m)) dst[m * T::P] = v;
    }
}

// One iteration k = k0 + PH.
template <int W, int TW, int PH, int RING>
__device__ __forceinline__ void wp_iteration(const WpBlock& b, const WpTraffic<W>& tr, WpLevels<TW>& s, int k0) {
  constexpr int R = TB_RADIUS, RX = TB_RX, M = wp_ring_groups(W), PF = wp_prefetch(W), DEPTH = W * TW;
  const int k = k0 + PH, warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  // The heads of this iteration here, before the barrier, or (TB_WP_EAGER) each level's at the
  // end of the iteration before, as soon as its rows are in the window (below).
  if constexpr (!TB_WP_EAGER) {
#pragma unroll
    for (int j = 0; j < TW; ++j) wp_level_head<TW, PH>(s, j);
  }
  // Group k (warp 0's input) has landed; every warp has written the group it had.
  __pipeline_wait_prior(PF - 1);
  __syncthreads();
  wp_load_group<W, M, RING>(b, tr, k + PF);
  wp_store_group<W, M>(b, tr, k - W, b.ys + (k - W) * WP_G - DEPTH * R);
  // This warp's group: in through its levels and back into the ring.
  const unsigned group = tb_shared_addr(b.ring + ((k - warp) & (M - 1)) * (WP_G * WP_COLS) + lane * RX);
  real x[WP_G][RX];
#pragma unroll
  for (int g = 0; g < WP_G; ++g) tb_shared_load_strip<WP_PAIRS>(group + g * WP_COLS * kTbCellBytes, x[g]);
  // Level j of this warp is level warp*TW + j + 1 of the pass, R rows behind the one below.
  const int o = b.ys + (k - warp) * WP_G - (warp * TW + 1) * R;
  // TB_WP_EAGER: each level's heads of the next iteration right after its tail, where they can
  // fill the latency of the levels' chain (the host's wpipe_eager_heads says where).
  constexpr int NEXT = (PH + 1) % kWpPeriod;
#pragma unroll
  for (int j = 0; j < TW; ++j) {
    if constexpr (TB_WP_SEP)
      wp_sep_tail<TbRows, DEPTH, TW, PH, RING>(b, s, j, x, o - j * R);
    else if constexpr (TB_WP_FOLD)
      wp_fold_tail<TbFold, DEPTH, TW, PH, RING>(b, s, j, x, o - j * R);
    else
      wp_tail<DEPTH, TW, PH, RING>(b, s, j, x, o - j * R);
    if constexpr (TB_WP_EAGER) wp_level_head<TW, NEXT>(s, j);
  }
#pragma unroll
  for (int g = 0; g < WP_G; ++g) tb_shared_store_strip<WP_PAIRS>(group + g * WP_COLS * kTbCellBytes, x[g]);
}

template <int W, int TW, int PH, int RING>
__device__ __forceinline__ void wp_period(const WpBlock& b, const WpTraffic<W>& tr, WpLevels<TW>& s, int k0) {
  if constexpr (PH < kWpPeriod) {
    wp_iteration<W, TW, PH, RING>(b, tr, s, k0);
    wp_period<W, TW, PH + 1, RING>(b, tr, s, k0);
  }
}

// The first valid column of tile t of `tiles` (valid width VALID_X, overlap DEPTH*R per side):
// the first tile starts at R and the last ends at nx - R, so the ring's columns are at fixed
// offsets in both; the ones between follow at VALID_X apart, clamped so that none reaches
// column nx - R. Tiles may overlap near the right end; each writes only from where the one
// before it ends.
template <int VALID_X, int DR>
__device__ __forceinline__ int wp_tile_c0(int t, int tiles, int nx) {
  constexpr int R = TB_RADIUS;
  if (t == tiles - 1) return nx - R - VALID_X;
  return t == 0 ? R : min(R + t * VALID_X, nx - R - DR - VALID_X);
}

// One block's pass over tile t of `tiles` and output rows [y0, y1), with the boundary ring's
// tests that RING names. The kernels below differ only in which tiles and rows their blocks
// share.
template <int W, int TW, int RING>
__device__ __forceinline__ void wp_pass(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int t,
                                        int tiles, int y0, int y1) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  constexpr int R = TB_RADIUS, RX = TB_RX, DEPTH = W * TW, M = wp_ring_groups(W);
  constexpr int VALID_X = WP_COLS - 2 * DEPTH * R;
  if (y0 >= y1) return;

  WpBlock b;
  b.in = in;
  b.out = out;
  b.nx = nx;
  b.ny = ny;
  // Columns: the tile's valid columns from c0, of which it writes [lo, c1).
  const int c0 = wp_tile_c0<VALID_X, DEPTH * R>(t, tiles, nx), c1 = c0 + VALID_X;
  const int lo = t == 0 ? c0 : wp_tile_c0<VALID_X, DEPTH * R>(t - 1, tiles, nx) + VALID_X;
  b.gx0 = c0 - DEPTH * R;
  b.left = t == 0;
  b.right = t == tiles - 1;
  b.lane = threadIdx.x & 31;
  b.y0 = y0;
  b.y1 = y1;
  b.ys = max(0, y0 - DEPTH * R);
  b.ring = reinterpret_cast<real*>(tb_smem);
  // Iteration k stores the rows from ys + (k - W)*G - DEPTH*R: run until row y1 - 1 is stored,
  // in whole periods.
  const int needed = W + (b.y1 - b.ys + DEPTH * R + WP_G - 1) / WP_G;
  const int iterations = (needed + kWpPeriod - 1) / kWpPeriod * kWpPeriod;

  // The registers start at zero: the first rows of each level read slots before they are
  // written (their outputs are discarded), and an uninitialised read would be undefined. With
  // TB_WP_EAGER the sums' zero is also the first iteration's heads, those of a window of zeros.
  WpLevels<TW> s;
#pragma unroll
  for (int j = 0; j < TW; ++j) {
#pragma unroll
    for (int r = 0; r < WP_WIN; ++r)
#pragma unroll
      for (int i = 0; i < RX; ++i) s.win[j][r][i] = real(0);
#pragma unroll
    for (int g = 0; g < WP_G; ++g)
#pragma unroll
      for (int i = 0; i < RX; ++i) s.acc[j][g][i] = real(0);
  }

  const WpTraffic<W> tr = wp_traffic<W>(nx, b.gx0, lo, c1);
  for (int q = 0; q < wp_prefetch(W); ++q) wp_load_group<W, M, RING>(b, tr, q);
  for (int k0 = 0; k0 < iterations; k0 += kWpPeriod) wp_period<W, TW, 0, RING>(b, tr, s, k0);
  // The block's next segment (tb_share) fills the ring again: every copy into it has landed and
  // every warp is done with it first.
  __pipeline_wait_prior(0);
  __syncthreads();
}

// Tiles of a pass of DEPTH steps across the interior's columns (the host counts them alike).
template <int DEPTH>
__device__ __forceinline__ int wp_tiles(int nx) {
  constexpr int VALID_X = WP_COLS - 2 * DEPTH * TB_RADIUS;
  return (nx - 2 * TB_RADIUS + VALID_X - 1) / VALID_X;
}

// A pass over runs of tiles and rows, each tile's rows one segment (or more, where shares
// divide them): the blocks share the runs equally (tb_share), one wave of them (the host:
// wpipe2d_grid, with the same pad: a segment streams DEPTH*R rows more at each end and fills
// the pipeline).
template <int W, int TW, int RING, int N>
__device__ __forceinline__ void wp_shared_pass(const real* __restrict__ in, real* __restrict__ out, int nx, int ny,
                                               const TbRun (&runs)[N]) {
  constexpr int DEPTH = W * TW, PAD = 2 * DEPTH * TB_RADIUS + DEPTH * WP_G;
  const int tiles = wp_tiles<DEPTH>(nx);
  tb_share(runs, PAD, [=](int t, int y0, int y1) {
    if constexpr (RING == kWpRingByRows) {
      if (y0 >= DEPTH * TB_RADIUS && y1 <= ny - DEPTH * TB_RADIUS)
        wp_pass<W, TW, kWpRingColumns>(in, out, nx, ny, t, tiles, y0, y1);
      else
        wp_pass<W, TW, kWpRingAll>(in, out, nx, ny, t, tiles, y0, y1);
    } else {
      wp_pass<W, TW, RING>(in, out, nx, ny, t, tiles, y0, y1);
    }
  });
}

// Every tile over the rows [R, ny - R), with the ring's tests.
template <int W, int TW>
__device__ __forceinline__ void wp_every_tile(const real* __restrict__ in, real* __restrict__ out, int nx, int ny) {
  const TbRun runs[1] = {{0, 1, wp_tiles<W * TW>(nx), TB_RADIUS, ny - 2 * TB_RADIUS}};
  wp_shared_pass<W, TW, kWpRingAll>(in, out, nx, ny, runs);
}

// Where a pass's blocks meet the boundary ring. A level's outputs that a segment's valid rows
// depend on lie within (DEPTH - 1)*R rows of them, so a segment whose rows lie in [DR, ny - DR)
// (DR = DEPTH*R) never computes a ring row that matters, and only the first and last tiles hold
// ring columns. With TB_WP_SPLIT a pass is two kernels, run at once: tb_full's blocks share the
// tiles between the first and the last over the rows [a, b) = [DR, ny - DR), and run the loop
// without any test for the ring; tb_edge's blocks share the first and last tiles' rows [a, b),
// with the tests of the ring's columns only where TB_WP_EDGE_BY_ROWS (the host's
// edge_columns_apart: a second loop in tb_edge), and the bands [R, a) and [b, ny - R) of every
// tile, with the tests of its rows and columns. Their registers
// are counted apart: one kernel holding both loops cost 10% at FastStencil's j2d5pt shape, the
// loop with the tests spilling (docs/bench-2d.md, versions 8 and 9); so did the rows' test
// alone in tb_full, the level's input row held until its output is done. Without it, tb_full's
// blocks share every tile, with the tests (where they cost little, as with large bodies).
__device__ __forceinline__ void wp_plain_rows(int ny, int dr, int& a, int& b) {
  a = min(dr, ny - TB_RADIUS);
  b = max(a, ny - dr);
}

#if TB_WP_SPLIT
extern "C" __global__ void __launch_bounds__(TB_WARPS * 32, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  constexpr int DEPTH = TB_WARPS * TB_TW;
  int a, b;
  wp_plain_rows(ny, DEPTH * TB_RADIUS, a, b);
  const TbRun runs[1] = {{1, 1, max(wp_tiles<DEPTH>(nx) - 2, 0), a, b - a}};
  wp_shared_pass<TB_WARPS, TB_TW, kWpRingNone>(in, out, nx, ny, runs);
}

extern "C" __global__ void __launch_bounds__(TB_WARPS * 32, TB_BPS)
tb_edge(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  constexpr int R = TB_RADIUS, DEPTH = TB_WARPS * TB_TW;
  const int tiles = wp_tiles<DEPTH>(nx);
  int a, b;
  wp_plain_rows(ny, DEPTH * R, a, b);
  const TbRun runs[3] = {{0, tiles - 1, min(tiles, 2), a, b - a},  // the first and the last tiles' rows [a, b)
                         {0, 1, tiles, R, a - R},                  // the top band of every tile
                         {0, 1, tiles, b, ny - R - b}};            // the bottom band
  wp_shared_pass<TB_WARPS, TB_TW, TB_WP_EDGE_BY_ROWS ? kWpRingByRows : kWpRingAll>(in, out, nx, ny, runs);
}
#else
extern "C" __global__ void __launch_bounds__(TB_WARPS * 32, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  wp_every_tile<TB_WARPS, TB_TW>(in, out, nx, ny);
}
#endif

#ifdef TB_REST_WARPS
// The run's last steps, a pass of TB_REST_WARPS x TB_REST_TW < depth steps (the host's
// rest_params): every tile with the ring's tests, as tb_full without the split. Its name carries
// its depth (WP_REST_NAME).
extern "C" __global__ void __launch_bounds__(TB_REST_WARPS * 32, TB_BPS)
WP_REST_NAME(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  wp_every_tile<TB_REST_WARPS, TB_REST_TW>(in, out, nx, ny);
}
#endif
