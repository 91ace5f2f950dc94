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
// already held (TbStencil::head, split on dz) are summed before the barrier, all of them or
// (`late`) the oldest plane's; after it the rest (TbStencil::part) and the newest plane's
// (TbStencil::tail). A stencil symmetric in z (TbFold, `fold`) sums each output's mirrored
// planes first, plane d after plus plane d before (more generally plane d after plus the planes
// before in their weights: TbFold::row), and evaluates the stencil over those R + 1
// folded planes (wpipe2d.cuh says why). The main loop is unrolled over one period of
// the slots, so every register index is a constant.
//
// Overlap: each level's outer cells read garbage one radius further in (beyond the warp's
// lanes in x, beyond the tile's rows in y), so the valid output is the middle W3_COLS - 2*DEPTH*R
// columns and W3_ROWS - 2*DEPTH*R rows. A z segment [z0, z1) streams DEPTH*R planes before and
// after. Cells of the boundary ring keep their initial value at every level (w3_keep_ring): a
// plane test per output plane in every tile, and row and cell tests in the tiles that reach the
// ring. Those tiles run as a kernel of their own (tb_edge, beside tb_full, which takes the
// others without the tests: they cost registers). The input ring's copies outside the domain
// are zero-filled.

#define W3_COLS (32 * TB_RX)
#define W3_ROWS (TB_WY * TB_CY + 2 * TB_RADIUS)  // rows of a plane in the ring
#define W3_PLANE (W3_ROWS * W3_COLS)
#define W3_IN (TB_CY + 2 * TB_RADIUS)  // rows of a plane a lane holds
#define W3_WIN (2 * TB_RADIUS + 1)     // planes in a level's window

// Planes in the conveyor ring of W stages: one per stage, TB_PF_MIN in flight from global memory
// and the one being stored (the host's smem_bytes counts alike).
__device__ __forceinline__ constexpr int w3_ring_planes(int w) { return w + TB_PF_MIN + 1; }

// The barrier of one stage's TB_WY warps: named barrier 1 + stage (0 is __syncthreads()). The
// id goes in a register, so ptxas reserves all 16 barriers of the block. An immediate id per
// stage needs a branch on the stage at every exchange, and those branches cut the unrolled
// period into blocks that ptxas allocated worse: FastStencil's j3d7pt shape spilled 192 bytes
// with them and 52 without, its j3d13pt shape 484 and none, the j3d7pt default's shape took
// 246 registers and now 208 (NVRTC, sm_90).
__device__ __forceinline__ void w3_stage_sync(int stage) {
#ifdef __CUDA_ARCH__
  asm volatile("bar.sync %0, %1;" ::"r"(stage + 1), "n"(TB_WY * 32) : "memory");
#else
  tb_named_sync(stage + 1);  // the CPU emulator (scripts/emulate/shim.hpp)
#endif
}

// What every thread of a block needs.
struct W3Block {
  const real* in;
  int nx, ny, nz;
  int gx0, gy0;           // the tile's first column and row
  int xlo, xhi, ylo, yhi;  // the columns and rows it writes
  int zs, z0, z1;          // first streamed plane, output planes [z0, z1)
  int xin, xout;           // per lane: which of its cells lane + 32 i are in the domain, are output
  unsigned yring, xring;   // bit c: the warp's row c is a ring row; bit i: the lane's cell i is in a ring column
  int lane, warp, yw, stage;
  real* ring;  // the conveyor: w3_ring_planes(W) planes of W3_ROWS x W3_COLS cells
  real* xch;   // the stages' exchange areas
  // The ring's traffic with global memory (w3_load_plane, w3_store_plane), worked out once per
  // pass: recomputed for every plane, its 64-bit addresses and tests took about a quarter of
  // the j3d7pt winner's stall samples (ncu, H100, docs/bench-3d.md).
  const real* src;     // `in` at this thread's first ring row and cell in plane 0
  real* dst;           // `out` alike
  int plane, rowstep;  // cells per plane of the domain, between this thread's ring rows
  unsigned yin, yout;  // per ring row n of this thread: bit n set if the row is in the domain, is output
  unsigned ring_lane;  // shared address of this thread's first ring row and cell in ring plane 0
  unsigned mine;       // shared address of this lane's strip in ring plane 0
  int back;            // ring planes this warp's stage lags behind stage 0, modulo the ring
};

// Keeps the boundary ring at its initial value in output plane o of a level: a ring cell's
// output is its input. Cells outside the domain are left as computed: an interior cell never
// reads them. A ring plane, in the periods that may output one (PLANES, w3_meets_ring_planes:
// a segment's first and last), is read again from `in`: selected from the level's window
// instead, the held plane cost registers in every period: FastStencil's j3d27pt shape stored
// 272 bytes of spills in tb_edge and 152 in tb_full instead of 84 and 32, and ran 5.9% slower
// (H100, docs/bench-3d.md). The ring's rows and columns, only in tiles that reach them (RING:
// the edge kernel), are a select per cell from the window (`held`, plane o) under the pass's bit
// masks yring and xring: each row's and cell's test worked out at every level took
// FastStencil's j3d7pt shape 196 bytes of spill stores where the masks take 116, and 0.79 of
// the masks' speed (same page). Reading those cells from
// `in` or from a shared-memory table of the ring's cells took more registers than the selects.
template <bool RING, bool PLANES>
__device__ __forceinline__ void w3_keep_ring(const W3Block& b, int o, const real (&held)[W3_IN][TB_RX],
                                             real (&v)[TB_CY][TB_RX]) {
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY;
  if (PLANES && (o < R || o >= b.nz - R)) {
    if (o < 0 || o >= b.nz) return;
    const int gy = b.gy0 + b.yw * CY + R, gx = b.gx0 + b.lane * RX;
    const long at = (long)o * b.plane + (long)gy * b.nx + gx;
#pragma unroll
    for (int c = 0; c < CY; ++c)
#pragma unroll
      for (int i = 0; i < RX; ++i)
        if (!RING || (gy + c >= 0 && gy + c < b.ny && gx + i >= 0 && gx + i < b.nx))
          v[c][i] = __ldg(b.in + at + (long)c * b.nx + i);
    return;
  }
  if constexpr (!RING) return;
#pragma unroll
  for (int c = 0; c < CY; ++c)
    if (b.yring >> c & 1)
#pragma unroll
      for (int i = 0; i < RX; ++i) v[c][i] = held[c + R][i];
#pragma unroll
  for (int i = 0; i < RX; ++i)
    if (b.xring >> i & 1)
#pragma unroll
      for (int c = 0; c < CY; ++c) v[c][i] = held[c + R][i];
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
  WpHalo<W3_WIN * W3_IN>& halo;  // shuffles once per evaluation (wpipe.cuh)
  int slot, c, i;
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const {
    const int p = wp_mod(slot + dz, W3_WIN), r = c + TB_RADIUS + dy;
    return halo(win[p][r], p * W3_IN + r, i + dx);
  }
};

// Cell i of row r of the window's plane at offset e from slot `slot`, for TbFold::row.
struct W3PlaneAt {
  const real (&win)[W3_WIN][W3_IN][TB_RX];
  int slot, r, i;
  __device__ __forceinline__ real operator()(int e) const { return win[wp_mod(slot + e, W3_WIN)][r][i]; }
};

// One folded plane of a stencil symmetric in z (`fold`, TbFold): the lane's rows of it, the
// cells beyond its strip by shuffle, once per row (`halo`).
struct W3FoldedPlane {
  const real (&q)[W3_IN][TB_RX];
  WpHalo<W3_IN>& halo;
  int c, i;
  __device__ __forceinline__ real operator()(int dx, int dy, int) const {
    const int r = c + TB_RADIUS + dy;
    return halo(q[r], r, i + dx);
  }
};

// Adds the terms of folded planes d, lo <= d < hi, of the output plane in slot `slot` to acc:
// folded plane d is plane d after plus the planes before in their weights (TbFold::row). A
// plane at a time (formed once, then its terms at every cell, in TbFold's order), as wpipe2d's
// wp_fold_sum; the rows no term reads are never formed once the loops are unrolled.
template <class Fold>
__device__ __forceinline__ void w3_fold_sum(const real (&win)[W3_WIN][W3_IN][TB_RX], int slot, int lo, int hi,
                                            real (&acc)[TB_CY][TB_RX]) {
#pragma unroll
  for (int d = 0; d <= TB_RADIUS; ++d) {
    if (d < lo || d >= hi) continue;
    real q[W3_IN][TB_RX];
#pragma unroll
    for (int r = 0; r < W3_IN; ++r)
#pragma unroll
      for (int i = 0; i < TB_RX; ++i)
        q[r][i] = Fold::row(d, W3PlaneAt{win, slot, r, i});
    WpHalo<W3_IN> halo;
#pragma unroll
    for (int c = 0; c < TB_CY; ++c)
#pragma unroll
      for (int i = 0; i < TB_RX; ++i) acc[c][i] = Fold::part(W3FoldedPlane{q, halo, c, i}, d, d + 1, acc[c][i]);
  }
}

// Plane numbers are local to a level: in iteration k = PH modulo the period it takes its input
// into slot PH and completes the output R planes behind.
__device__ __forceinline__ constexpr int w3_out_slot(int ph) { return wp_mod(ph - TB_RADIUS, W3_WIN); }

// Before the barrier: the terms of level j's next output plane (iteration PH's) that read planes
// it holds, dz < R, or with TB_WP_LATE (the `late` parameter) those of the oldest plane alone,
// the rest after the barrier beside the chain of tails (wpipe2d.cuh's wp_early_split says why).
#define W3_EARLY_SPLIT (TB_WP_LATE ? 1 - TB_RADIUS : TB_RADIUS)
template <int TW, int PH>
__device__ __forceinline__ void w3_head(W3Levels<TW>& s, int j) {
  WpHalo<W3_WIN * W3_IN> halo;
#pragma unroll
  for (int c = 0; c < TB_CY; ++c)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i)
      s.acc[j][c][i] = TbStencil::head(W3Window{s.win[j], halo, w3_out_slot(PH), c, i}, W3_EARLY_SPLIT);
}

// w3_head for a stencil symmetric in z: the folded planes d < R read planes the level holds
// (`late` does not apply). The sums start at zero, as TbStencil::head's do.
template <class Fold, int TW, int PH>
__device__ __forceinline__ void w3_fold_head(W3Levels<TW>& s, int j) {
#pragma unroll
  for (int c = 0; c < TB_CY; ++c)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.acc[j][c][i] = real(0);
  w3_fold_sum<Fold>(s.win[j], w3_out_slot(PH), 0, TB_RADIUS, s.acc[j]);
}

// Level j's heads of iteration PH, the stencil's way: a z-symmetric one's folded planes, or its
// terms.
template <int TW, int PH>
__device__ __forceinline__ void w3_level_head(W3Levels<TW>& s, int j) {
  if constexpr (TB_WP_FOLD)
    w3_fold_head<TbFold, TW, PH>(s, j);
  else
    w3_head<TW, PH>(s, j);
}

// w3_level's sums for a stencil symmetric in z: folded plane R, which pairs the new plane, then
// the constant (Fold::tail past the last plane).
template <class Fold, int TW, int PH>
__device__ __forceinline__ void w3_fold_tail(W3Levels<TW>& s, int j, const real (&x)[W3_IN][TB_RX],
                                             real (&v)[TB_CY][TB_RX]) {
  w3_fold_sum<Fold>(s.win[j], w3_out_slot(PH), TB_RADIUS, TB_RADIUS + 1, s.acc[j]);
  WpHalo<W3_IN> none;
#pragma unroll
  for (int c = 0; c < TB_CY; ++c)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) v[c][i] = Fold::tail(W3FoldedPlane{x, none, c, i}, TB_RADIUS + 1, s.acc[j][c][i]);
}

// After the barrier: level j takes its new input plane x and completes output plane o into v.
template <int TW, int PH, bool RING, bool PLANES>
__device__ __forceinline__ void w3_level(const W3Block& b, W3Levels<TW>& s, int j, const real (&x)[W3_IN][TB_RX],
                                         real (&v)[TB_CY][TB_RX], int o) {
#pragma unroll
  for (int r = 0; r < W3_IN; ++r)
#pragma unroll
    for (int i = 0; i < TB_RX; ++i) s.win[j][PH][r][i] = x[r][i];
  if constexpr (TB_WP_FOLD) {
    w3_fold_tail<TbFold, TW, PH>(s, j, x, v);
  } else {
    WpHalo<W3_WIN * W3_IN> halo;
#pragma unroll
    for (int c = 0; c < TB_CY; ++c)
#pragma unroll
      for (int i = 0; i < TB_RX; ++i) {
        const W3Window w{s.win[j], halo, w3_out_slot(PH), c, i};
        v[c][i] = TbStencil::tail(w, TB_RADIUS, TbStencil::part(w, W3_EARLY_SPLIT, TB_RADIUS, s.acc[j][c][i]));
      }
  }
  w3_keep_ring<RING, PLANES>(b, o, s.win[j][w3_out_slot(PH)], v);
}

// The next level's input from this level's output v: v's rows in the middle, the y halos from
// the stage's neighbouring warps (exchange area j of the stage: per warp its first R rows, then
// its last R). The tile's outermost warps take their own rows there (with one warp along y,
// v's): garbage, which the overlap absorbs, but read unconditionally, so that no earlier halo
// row stays live in registers through the level (kept, they made FastStencil's j3d7pt shape
// spill).
template <int TW>
__device__ __forceinline__ void w3_exchange(const W3Block& b, int j, const real (&v)[TB_CY][TB_RX],
                                            real (&x)[W3_IN][TB_RX]) {
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY, EDGE = 2 * R * W3_COLS;
#pragma unroll
  for (int c = 0; c < CY; ++c)
#pragma unroll
    for (int i = 0; i < RX; ++i) x[c + R][i] = v[c][i];
  if constexpr (TB_WY > 1) {
    constexpr unsigned B = kTbCellBytes;
    const unsigned area = tb_shared_addr(b.xch + (b.stage * (TW - 1) + j) * TB_WY * EDGE + b.lane * RX);
    const unsigned mine = area + b.yw * EDGE * B;
    // Paired strips row by row; odd ones the two rows cell by cell, interleaved: each order is
    // the one that was timed (docs/bench-3d.md, "Double strips in pairs").
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if constexpr (RX % 2 == 0) {
        tb_shared_store_strip<true>(mine + r * W3_COLS * B, v[r]);
        tb_shared_store_strip<true>(mine + (R + r) * W3_COLS * B, v[CY - R + r]);
      } else {
#pragma unroll
        for (int i = 0; i < RX; ++i) {
          tb_shared_store(mine + (r * W3_COLS + i) * B, v[r][i]);
          tb_shared_store(mine + ((R + r) * W3_COLS + i) * B, v[CY - R + r][i]);
        }
      }
    }
    w3_stage_sync(b.stage);
    const unsigned above = area + max(b.yw - 1, 0) * EDGE * B;
    const unsigned below = area + min(b.yw + 1, TB_WY - 1) * EDGE * B;
#pragma unroll
    for (int r = 0; r < R; ++r) {
      if constexpr (RX % 2 == 0) {
        tb_shared_load_strip<true>(above + (R + r) * W3_COLS * B, x[r]);
        tb_shared_load_strip<true>(below + r * W3_COLS * B, x[CY + R + r]);
      } else {
#pragma unroll
        for (int i = 0; i < RX; ++i) {
          x[r][i] = tb_shared_load(above + ((R + r) * W3_COLS + i) * B);
          x[CY + R + r][i] = tb_shared_load(below + (r * W3_COLS + i) * B);
        }
      }
    }
  } else {
#pragma unroll
    for (int r = 0; r < R; ++r)
#pragma unroll
      for (int i = 0; i < RX; ++i) {
        x[r][i] = v[r][i];
        x[CY + R + r][i] = v[CY - R + r][i];
      }
  }
}

// The ring's traffic with global memory goes by rows: warp w of the block takes rows w, w + the
// block's warps, ..., and lane l the cells l, l + 32, ... of each (coalesced, and a cell's
// address one add from its row's). Which of a lane's cells lie in the domain (xin) or among the
// tile's output columns (xout) is the same in every row and plane: bit i for cell l + 32 i.
template <int W>
__device__ __forceinline__ constexpr int w3_rows_per_warp() {
  return (W3_ROWS + W * TB_WY - 1) / (W * TB_WY);
}

// Ring plane numbers: those of one period are the first one's plus a constant, wrapped once.
template <int W>
__device__ __forceinline__ int w3_wrap(int slot) {
  return slot >= w3_ring_planes(W) ? slot - w3_ring_planes(W) : slot;
}

// Whether this thread's ring row n exists: only the last may lie beyond the plane's rows.
template <int W>
__device__ __forceinline__ bool w3_has_row(const W3Block& b, int n) {
  return n + 1 < w3_rows_per_warp<W>() || b.warp + n * W * TB_WY < W3_ROWS;
}

// The block's cp.async copies of input plane z into ring plane `slot`, one commit group. Cells
// outside the domain are zero-filled: a plane beyond it from plane nz - 1's addresses, cells
// outside it in x or y (only in tiles that reach the ring: RING) from `in`'s. (The rows read
// are a mask per plane: with the plane's test and the cell's as one condition, ptxas failed on
// the one-stage step kernel this template then built, "register allocation failed with
// register count of 7", CUDA 13.0.)
template <int W, bool RING>
__device__ __forceinline__ void w3_load_plane(const W3Block& b, int slot, int z) {
  constexpr int WARPS = W * TB_WY;
  const unsigned dst = b.ring_lane + slot * (W3_PLANE * kTbCellBytes);
  const unsigned rows = z < b.nz ? (RING ? b.yin : ~0u) : 0u;
  const real* src = b.src + (long)min(z, b.nz - 1) * b.plane;
#pragma unroll
  for (int n = 0; n < w3_rows_per_warp<W>(); ++n)
    if (w3_has_row<W>(b, n)) {
      const real* row = src + (long)n * b.rowstep;
#pragma unroll
      for (int i = 0; i < TB_RX; ++i) {
        const bool column = !RING || (b.xin >> i & 1);
        const bool inside = !RING || ((b.yin >> n & 1) && column);
        tb_copy_async(dst + (n * WARPS * W3_COLS + 32 * i) * kTbCellBytes, inside ? row + 32 * i : b.in,
                      (rows >> n & 1) && column);
      }
    }
  __pipeline_commit();
}

// The block copies ring plane `slot`, output plane z, to `out`: the tile's valid rows and
// columns.
template <int W>
__device__ __forceinline__ void w3_store_plane(const W3Block& b, int slot, int z) {
  constexpr int WARPS = W * TB_WY;
  if (z < b.z0 || z >= b.z1) return;
  const unsigned src = b.ring_lane + slot * (W3_PLANE * kTbCellBytes);
  real* dst = b.dst + (long)z * b.plane;
#pragma unroll
  for (int n = 0; n < w3_rows_per_warp<W>(); ++n)
    if (w3_has_row<W>(b, n) && (b.yout >> n & 1)) {
      real* row = dst + (long)n * b.rowstep;
#pragma unroll
      for (int i = 0; i < TB_RX; ++i)
        if (b.xout >> i & 1) row[32 * i] = tb_shared_load(src + (n * WARPS * W3_COLS + 32 * i) * kTbCellBytes);
    }
}

// One iteration k = k0 + PH; ring plane k0 is `slot0`.
template <int W, int TW, int PH, bool RING, bool PLANES>
__device__ __forceinline__ void w3_iteration(const W3Block& b, W3Levels<TW>& s, int k0, int slot0) {
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY, DEPTH = W * TW, N = w3_ring_planes(W);
  const int k = k0 + PH;
  // The heads of this iteration here, before the barrier, or (TB_WP_EAGER) each level's at the
  // end of the iteration before, as soon as its plane is in the window (below).
  if constexpr (!TB_WP_EAGER) {
#pragma unroll
    for (int j = 0; j < TW; ++j) w3_level_head<TW, PH>(s, j);
  }
  // Plane k (stage 0's input) has landed; every stage has written the plane it had.
  __pipeline_wait_prior(TB_PF_MIN - 1);
  __syncthreads();
  w3_load_plane<W, RING>(b, w3_wrap<W>(slot0 + wp_mod(PH + TB_PF_MIN, N)), b.zs + k + TB_PF_MIN);
  w3_store_plane<W>(b, w3_wrap<W>(slot0 + wp_mod(PH - W, N)), b.zs + (k - W) - DEPTH * R);
  // This stage's plane (k - stage): in through its levels and back into the ring.
  const unsigned plane = b.mine + w3_wrap<W>(w3_wrap<W>(slot0 + b.back) + PH % N) * (W3_PLANE * kTbCellBytes);
  real x[W3_IN][RX], v[CY][RX];
#pragma unroll
  for (int r = 0; r < W3_IN; ++r) tb_shared_load_strip<true>(plane + r * W3_COLS * kTbCellBytes, x[r]);
  // Level j of this stage is level stage*TW + j + 1 of the pass, R planes behind the one below.
  const int o = b.zs + (k - b.stage) - (b.stage * TW + 1) * R;
  // TB_WP_EAGER: each level's head of the next iteration right after its tail, so that it can
  // fill the latency of the level's chain up to the next barrier, the exchange's or the next
  // iteration's (at the iteration's top, the heads of the levels after the first waited for
  // the exchanges: a named barrier is a fence to the scheduler).
  constexpr int NEXT = (PH + 1) % W3_WIN;
#pragma unroll
  for (int j = 0; j < TW; ++j) {
    w3_level<TW, PH, RING, PLANES>(b, s, j, x, v, o - j * R);
    if constexpr (TB_WP_EAGER) w3_level_head<TW, NEXT>(s, j);
    if (j + 1 < TW) w3_exchange<TW>(b, j, v, x);
  }
  // The stage's warps read rows that their neighbours write back: with one level there was no
  // exchange barrier between, so one here.
  if constexpr (TW == 1 && TB_WY > 1) w3_stage_sync(b.stage);
#pragma unroll
  for (int c = 0; c < CY; ++c) tb_shared_store_strip<true>(plane + (c + R) * W3_COLS * kTbCellBytes, v[c]);
}

template <int W, int TW, int PH, bool RING, bool PLANES>
__device__ __forceinline__ void w3_period(const W3Block& b, W3Levels<TW>& s, int k0, int slot0) {
  if constexpr (PH < W3_WIN) {
    w3_iteration<W, TW, PH, RING, PLANES>(b, s, k0, slot0);
    w3_period<W, TW, PH + 1, RING, PLANES>(b, s, k0, slot0);
  }
}

// Whether some level of the period from iteration k0 outputs a plane of the boundary ring (or
// beyond the domain): in iteration k, level j of stage st outputs plane
// zs + k - st - (st*TW + 1 + j)*R, lowest at the last stage's last level in iteration k0,
// highest at the first stage's first level in the period's last. Only the first and last
// periods of a segment that reaches z = 0 or nz do.
template <int W, int TW>
__device__ __forceinline__ bool w3_meets_ring_planes(const W3Block& b, int k0) {
  constexpr int R = TB_RADIUS;
  const int lowest = b.zs + k0 - (W - 1) - W * TW * R, highest = b.zs + k0 + W3_WIN - 1 - R;
  return lowest < R || highest >= b.nz - R;
}

// One block's pass over tile (tx, ty) and output planes [z0, z1), with the ring's row and cell
// tests (RING) or without (a tile that reaches no ring cell).
template <int W, int TW, bool RING>
__device__ __forceinline__ void w3_pass(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz,
                                        int tx, int ty, int z0, int z1) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  constexpr int R = TB_RADIUS, RX = TB_RX, CY = TB_CY, DEPTH = W * TW;
  constexpr int VX = W3_COLS - 2 * DEPTH * R, VY = W3_ROWS - 2 * DEPTH * R;
  if (z0 >= z1) return;

  W3Block b;
  b.in = in;
  b.nx = nx;
  b.ny = ny;
  b.nz = nz;
  b.xlo = R + tx * VX;
  b.xhi = min(b.xlo + VX, nx - R);
  b.gx0 = b.xlo - DEPTH * R;
  b.ylo = R + ty * VY;
  b.yhi = min(b.ylo + VY, ny - R);
  b.gy0 = b.ylo - DEPTH * R;
  b.z0 = z0;
  b.z1 = z1;
  b.zs = max(0, z0 - DEPTH * R);
  b.warp = threadIdx.x >> 5;
  b.lane = threadIdx.x & 31;
  b.stage = b.warp / TB_WY;
  b.yw = b.warp % TB_WY;
  b.xin = b.xout = 0;
  static_assert(CY <= 32 && RX <= 32, "a warp's rows and a lane's cells are bits of one word");
  b.yring = b.xring = 0;
#pragma unroll
  for (int c = 0; c < CY; ++c) {
    const int gy = b.gy0 + b.yw * CY + R + c;
    b.yring |= unsigned(RING && (gy < R || gy >= ny - R)) << c;
  }
#pragma unroll
  for (int i = 0; i < RX; ++i) {
    const int gx = b.gx0 + b.lane * RX + i;
    b.xring |= unsigned(RING && (gx < R || gx >= nx - R)) << i;
  }
#pragma unroll
  for (int i = 0; i < RX; ++i) {
    const int gx = b.gx0 + b.lane + 32 * i;
    b.xin |= (gx >= 0 && gx < nx) << i;
    b.xout |= (gx >= b.xlo && gx < b.xhi) << i;
  }
  b.ring = reinterpret_cast<real*>(tb_smem);
  b.xch = b.ring + w3_ring_planes(W) * W3_PLANE;
  b.plane = nx * ny;
  b.rowstep = W * TB_WY * nx;
  const long first = (long)(b.gy0 + b.warp) * nx + b.gx0 + b.lane;  // may lie outside the domain
  b.src = in + first;
  b.dst = out + first;
  static_assert(w3_rows_per_warp<W>() <= 32, "a thread's ring rows are bits of one word");
  b.yin = b.yout = 0;
#pragma unroll
  for (int n = 0; n < w3_rows_per_warp<W>(); ++n) {
    const int gy = b.gy0 + b.warp + n * W * TB_WY;
    b.yin |= unsigned(gy >= 0 && gy < ny) << n;
    b.yout |= unsigned(gy >= b.ylo && gy < b.yhi) << n;
  }
  b.ring_lane = tb_shared_addr(b.ring + b.warp * W3_COLS + b.lane);
  b.mine = tb_shared_addr(b.ring + b.yw * CY * W3_COLS + b.lane * RX);
  b.back = wp_mod(-b.stage, w3_ring_planes(W));
  // Iteration k stores plane zs + k - W - DEPTH*R: run until plane z1 - 1 is stored, in whole
  // periods.
  const int needed = W + z1 - b.zs + DEPTH * R;
  const int iterations = (needed + W3_WIN - 1) / W3_WIN * W3_WIN;

  // The registers start at zero: the first planes of each level read slots before they are
  // written (their outputs are discarded), and an uninitialised read would be undefined. With
  // TB_WP_EAGER the sums' zero is also the first iteration's heads, those of a window of zeros.
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

  for (int q = 0; q < TB_PF_MIN; ++q) w3_load_plane<W, RING>(b, q, b.zs + q);
  for (int k0 = 0; k0 < iterations; k0 += W3_WIN) {
    const int slot0 = k0 % w3_ring_planes(W);
    if (w3_meets_ring_planes<W, TW>(b, k0))
      w3_period<W, TW, 0, RING, true>(b, s, k0, slot0);
    else
      w3_period<W, TW, 0, RING, false>(b, s, k0, slot0);
  }
  __pipeline_wait_prior(0);
}

// Segment s of n equal parts of the planes [lo, hi).
__device__ __forceinline__ void w3_segment(int lo, int hi, int s, int n, int& z0, int& z1) {
  const int seg = (hi - lo + n - 1) / n;
  z0 = lo + s * seg;
  z1 = min(z0 + seg, hi);
}

// The tiles of one axis (n cells, valid V per tile, EXT computed, overlap DR per side) and
// those whose whole extent lies between the ring's two sides, [lo, hi] (hi = lo - 1: none).
// The host counts alike (wpipe3d.cpp, plain_tiles).
struct W3Axis {
  int tiles, lo, hi;
};
__device__ __forceinline__ W3Axis w3_axis(int n, int V, int EXT, int DR) {
  constexpr int R = TB_RADIUS;
  W3Axis a;
  a.tiles = (n - 2 * R + V - 1) / V;
  a.lo = min((DR + V - 1) / V, a.tiles);
  const int last = n - 2 * R - EXT + DR;  // tile t ends inside iff t x V <= last
  a.hi = max(a.lo - 1, min(a.tiles - 1, last >= 0 ? last / V : -1));
  return a;
}

template <int DEPTH>
__device__ __forceinline__ void w3_axes(int nx, int ny, W3Axis& x, W3Axis& y) {
  constexpr int DR = DEPTH * TB_RADIUS;
  x = w3_axis(nx, W3_COLS - 2 * DR, W3_COLS, DR);
  y = w3_axis(ny, W3_ROWS - 2 * DR, W3_ROWS, DR);
}

// The tiles away from the ring ([x.lo, x.hi] x [y.lo, y.hi]: gridDim.x x gridDim.y), z segments
// of the interior (gridDim.z), without the ring's row and cell tests.
extern "C" __global__ void __launch_bounds__(TB_WARPS * TB_WY * 32, TB_BPS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  W3Axis x, y;
  w3_axes<TB_WARPS * TB_TW>(nx, ny, x, y);
  int z0, z1;
  w3_segment(TB_RADIUS, nz - TB_RADIUS, blockIdx.z, gridDim.z, z0, z1);
  w3_pass<TB_WARPS, TB_TW, false>(in, out, nx, ny, nz, x.lo + blockIdx.x, y.lo + blockIdx.y, z0, z1);
}

// The other tiles, a frame (gridDim.x of them: the rows of tiles above y.lo, then those of the
// rows between, left of x.lo and right of x.hi, then the rows below y.hi), z segments as above;
// run beside tb_full.
extern "C" __global__ void __launch_bounds__(TB_WARPS * TB_WY * 32, TB_BPS)
tb_edge(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  W3Axis x, y;
  w3_axes<TB_WARPS * TB_TW>(nx, ny, x, y);
  const int plain_x = x.hi - x.lo + 1, side = x.tiles - plain_x, middle = (y.hi - y.lo + 1) * side;
  int e = blockIdx.x, tx, ty;
  if (e < y.lo * x.tiles) {
    ty = e / x.tiles;
    tx = e % x.tiles;
  } else if ((e -= y.lo * x.tiles) < middle) {
    ty = y.lo + e / side;
    const int c = e % side;
    tx = c < x.lo ? c : x.hi + 1 + (c - x.lo);
  } else {
    e -= middle;
    ty = y.hi + 1 + e / x.tiles;
    tx = e % x.tiles;
  }
  int z0, z1;
  w3_segment(TB_RADIUS, nz - TB_RADIUS, blockIdx.z, gridDim.z, z0, z1);
  w3_pass<TB_WARPS, TB_TW, true>(in, out, nx, ny, nz, tx, ty, z0, z1);
}

#ifdef TB_REST_WARPS
// The run's last steps, a pass of TB_REST_WARPS stages of TB_REST_TW < depth steps (the host's
// rest_params): every tile (gridDim.x x gridDim.y) and z segment with the ring's tests. Its
// name carries its depth (WP_REST_NAME).
extern "C" __global__ void __launch_bounds__(TB_REST_WARPS * TB_WY * 32, TB_BPS)
WP_REST_NAME(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  int z0, z1;
  w3_segment(TB_RADIUS, nz - TB_RADIUS, blockIdx.z, gridDim.z, z0, z1);
  w3_pass<TB_REST_WARPS, TB_REST_TW, true>(in, out, nx, ny, nz, blockIdx.x, blockIdx.y, z0, z1);
}
#endif
