// templates/tile3d.cuh: temporal blocking for 3D stencils, streaming in z. Two strategies share
// this template and differ only in how a block gets the halo of its x-y tile:
//   TB_DEVTILE 0 (smtile3d): overlapped tiling. A block computes a TB_TX x TB_TY tile at every
//     level; level 0 also has the R-wide frame around it (from the input), the higher levels'
//     frames are never written, so level s is valid (s-1)*R cells in from the tile edge and the
//     output is the middle (TB_TX - 2*(DEPTH-1)*R) x (TB_TY - 2*(DEPTH-1)*R). Tiles overlap by
//     that halo, recomputed redundantly; no inter-block communication.
//   TB_DEVTILE 1 (devtile3d): device tiling. The tiles partition the x-y plane without overlap and
//     all blocks are resident at once (cooperative launch). After every group of TB_Z planes each
//     block writes the border of its new planes to global scratch, the grid synchronises once
//     (lazy streaming), and each block reads its halo frame from its neighbours' borders.
//     Scratch: per block, parity of the iteration, level 1 .. DEPTH-1 and new plane 0 .. Z-1, one
//     plane laid out like the shared-memory planes (only the border cells written), so every
//     scratch address is a constant offset from one per-thread pointer too.
//
// Per block and time level s = 0 .. DEPTH-1, a circular queue of x-y planes lives in shared
// memory (each plane has an R-wide halo frame): TB_RING0 planes for level 0, TB_RING for the
// others. In iteration k, level 0 receives input planes [k*Z, k*Z + Z) (counted from zoff, see z
// segments) and level s computes planes g(k, s) = (k - s)*Z - s*R .. + Z from level s-1, reading
// planes g - R .. g + Z - 1 + R, all finished in earlier iterations, while level s-1 writes
// g + Z + R .. g + 2*Z + R - 1. A ring of at least 2*Z + 2*R planes keeps those in distinct
// slots, so one barrier per iteration suffices; the host makes each ring the least multiple of Z
// that does. After TB_PHASES iterations every level has advanced a multiple of its ring, so the
// main loop, unrolled TB_PHASES times, sees every ring slot as a compile-time constant and every
// shared-memory access is a fixed offset from one per-thread pointer (no wrap arithmetic).
// Level DEPTH goes to global memory. Cells of the boundary ring keep their value at every level.
//
// TB_SUM 1 (affine stencils): partial sums instead of a ring. Level s consumes level s-1's plane
// g + R in the iteration where the ring version computes plane g: TbStencil::plane_sums adds that
// plane's contributions to the 2R + 1 output planes g .. g + 2R it reaches, kept per thread in
// registers (Tile3dRegs), and plane g is then complete. Only the planes being written and the
// ones being read are needed, so both rings are 2 * Z: a level's shared memory shrinks from
// ring_slots(Z, R) planes to 2 * Z, and each plane cell is read once per (dx, dy) column instead
// of once per point. Boundary cells are copied from the input (their value at every level).
//
// TB_REGQ 1 (the ring, any stencil): each thread also keeps its own cells of every level below
// DEPTH in registers, a queue of the Z + 2R planes the level above reads next (Tile3dRegs), so
// the terms at its own column and rows (dx = 0 and dy inside its TB_CY rows: the z neighbours
// of a star stencil) come from registers instead of shared memory. Level s computes its planes
// into its queue; level 0's own cells were stored by other threads, so level 1 reads them once
// per plane from the ring. A level's queue moves up Z planes after the level above consumed it,
// before the level itself adds its new ones. The other threads need level s's plane only for the
// terms off the own column, at most D = TB_RADIUS - TB_LAG planes away in z (0 for a star), so
// the plane enters shared memory (and device tiling's scratch) from the queue TB_LAG planes
// after it was computed, one iteration before those reads: levels 1 .. DEPTH-1 hold 2*Z + 2*D
// planes instead of 2*Z + 2*R (rounded up to a multiple of Z that divides level 0's ring, so
// that TB_PHASES stays level 0's).
//
// Threads: TB_TX x TB_THREADS_Y; thread (tx, ty) owns the TB_CY consecutive rows ty*CY .. + CY - 1
// of column tx, so TbStencil::apply_rows evaluates them reading each input once. A warp spans
// x (TB_TX is a multiple of 32), so its shared-memory accesses are consecutive: no conflicts.
//
// Input planes are loaded into registers one iteration ahead (stored to shared memory at the
// start of the next iteration), so global latency overlaps the computation. Each thread loads
// the fixed set of plane cells tid + l*NT, whose global offsets it computes once.
//
// z segments (smtile3d): blockIdx.z picks a segment [z0, z1) of the output planes, so that a
// grid of few x-y tiles still fills every SM in whole waves (the host chooses the count, as
// cmq2d splits rows). A segment's block streams from plane zoff = z0 - DEPTH * R (0 for the
// first), the lowest input plane its outputs depend on, and writes only [z0, z1): the planes
// its levels compute below z0 - (DEPTH - s) * R miss inputs and are never used. Device tiling
// runs one segment, the whole z range.
//
// Most iterations are "steady": the tile and its frame lie inside the domain, every plane they
// compute is interior and every plane they load exists. Those run a copy of the body without
// per-cell checks; only the first and last iterations and the edge tiles check.
#if TB_DEVTILE
#include <cooperative_groups.h>
#endif

#define TB_PX (TB_TX + 2 * TB_RADIUS)  // plane pitch in x (tile plus halo)
#define TB_PY (TB_TY + 2 * TB_RADIUS)
#define TB_PLANE (TB_PX * TB_PY)
#define TB_THREADS_Y (TB_TY / TB_CY)
#define TB_NT (TB_TX * TB_THREADS_Y)                    // threads per block
#define TB_LOADS ((TB_PLANE + TB_NT - 1) / TB_NT)      // plane cells each thread loads
#define TB_FRAME (TB_PLANE - TB_TX * TB_TY)             // halo frame cells of a plane
#define TB_FLOADS ((TB_FRAME + TB_NT - 1) / TB_NT)     // frame cells each thread refills (devtile)

// Level 0 has TB_RING0 slots, every level above TB_RING (fewer where the register queue lets a
// level's planes enter shared memory late, see TB_LAG). A round of TB_PHASES iterations advances
// every level by a multiple of both, so each slot is the same constant in every round.
__device__ __forceinline__ constexpr int tile3d_gcd(int a, int b) { return b ? tile3d_gcd(b, a % b) : a; }
constexpr int TB_PHASES = TB_RING0 / tile3d_gcd(TB_RING0, TB_RING) * TB_RING / TB_Z;
__device__ __forceinline__ constexpr int tile3d_ring(int level) { return level ? TB_RING : TB_RING0; }
// Level s's ring, in reals from the first.
__device__ __forceinline__ constexpr int tile3d_level(int s) {
  return s ? (TB_RING0 + (s - 1) * TB_RING) * TB_PLANE : 0;
}
// (v mod ring) in 0 .. ring-1 for any int v; folds to a constant when v is one.
__device__ __forceinline__ constexpr int tile3d_slot(int v, int ring) { return ((v % ring) + ring) % ring; }

// Reads level s-1 around the thread's first cell, ring plane `rel` (before the mod); dy counts
// rows from that cell. After inlining and unrolling every address is a constant offset.
struct Tile3dAccess {
  const real* cell;  // the level's ring, at the thread's first cell, slot 0
  int ring;          // its slots
  int rel;
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const {
    return cell[tile3d_slot(rel + dz, ring) * TB_PLANE + dy * TB_PX + dx];
  }
};

// What one thread needs in every iteration, computed once before the main loop.
struct Tile3dThread {
  real* cell;            // the thread's first cell in level 0, slot 0
  real* load;            // where its first loaded plane cell goes in level 0, slot 0
  real* rings;           // all rings (the devtile frame refill)
  const real* in;
  real* out;
  real* scratch;
  int nx, nz;
  int zoff, z0, z1;      // the plane that local plane 0 is; this block's output planes [z0, z1)
  long plane_cells;
  long cell_off;         // in-plane global offset of the first cell
  long sblock;           // devtile: the thread's first cell in its block's scratch
  int goff[TB_LOADS];    // in-plane global offset of each loaded cell, -1 outside plane or domain
  unsigned interior;     // bit c: cell c is inside the domain's interior in x-y
  unsigned outmask;      // bit c: cell c is output of this block (x-y)
  unsigned inside;       // bit c: cell c is inside the domain (x-y)
  bool tile_interior;    // the tile and its frame lie inside the domain
#if TB_DEVTILE
  unsigned border;       // bit c: cell c is within R of the tile edge and in the domain
  int foff[TB_FLOADS];   // frame cells this thread refills: offset in the plane, -1 if none
  long fsrc[TB_FLOADS];  // and the owning cell in the neighbour's scratch
#endif
};

// What a thread carries in registers from one iteration to the next. Sum mode: per level
// 1 .. DEPTH, the partial sums of the 2R + 1 planes it is accumulating; acc[s - 1][i][c] belongs
// to plane (the one completed next) + i, row c. Register queue: per level 0 .. DEPTH - 1, its own
// cells of TB_QUEUE planes; q[s][i][c] is plane g - R + i, row c, where g is the first plane
// level s + 1 computes in the iteration.
#define TB_QUEUE (TB_Z + 2 * TB_RADIUS)
template <int DEPTH>
struct Tile3dRegs {
#if TB_SUM
  real acc[DEPTH][2 * TB_RADIUS + 1][TB_CY];
#elif TB_REGQ
  real q[DEPTH][TB_QUEUE][TB_CY];
#endif
};

// The ring read through the queue: level s-1 around the thread's first cell at ring plane
// rel = g + j; its own column and rows come from q (plane g + j + dz is q[R + j + dz]).
struct Tile3dQueueAccess {
  Tile3dAccess ring;
  const real (&q)[TB_QUEUE][TB_CY];
  int j;
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const {
    if (dx == 0 && dy >= 0 && dy < TB_CY) return q[TB_RADIUS + j + dz][dy];
    return ring(dx, dy, dz);
  }
};

// Device tiling's scratch: per block, 2 parities x (DEPTH-1) levels x Z planes of TB_PLANE cells.
// The offset of (level, plane j) within one parity, a constant.
__device__ __forceinline__ constexpr int tile3d_scratch_plane(int level, int j) {
  return ((level - 1) * TB_Z + j) * TB_PLANE;
}
#define TB_SCRATCH_HALF ((DEPTH > 1 ? DEPTH - 1 : 1) * TB_Z * TB_PLANE)  // one parity of one block

// Level s (1 .. DEPTH-1) plane `rel`, the j-th of the iteration k's Z new ones in shared memory:
// the thread's cells, and device tiling's border cells to scratch for the neighbours' frames.
template <int DEPTH>
__device__ __forceinline__ void tile3d_publish(const Tile3dThread& t, int s, int rel, int j, int k,
                                               const real (&v)[TB_CY]) {
  real* level = t.cell + tile3d_level(s) + tile3d_slot(rel, TB_RING) * TB_PLANE;
#pragma unroll
  for (int c = 0; c < TB_CY; ++c) level[c * TB_PX] = v[c];
#if TB_DEVTILE
  if (t.border) {
    real* sp = t.scratch + t.sblock + (k & 1) * TB_SCRATCH_HALF + tile3d_scratch_plane(s, j);
#pragma unroll
    for (int c = 0; c < TB_CY; ++c)
      if ((t.border >> c) & 1u) __stcg(sp + c * TB_PX, v[c]);
  }
#endif
}

// Level S of iteration k = k0 + PH, then the levels below it. S is a template argument, not a
// loop counter, so that the level's registers (Tile3dRegs) and ring slots are compile-time
// indices whether or not the compiler would unroll a loop over the levels (a rolled loop puts
// them in local memory).
template <int DEPTH, int PH, bool CHECK, int S>
__device__ __forceinline__ void tile3d_levels(const Tile3dThread& t, int k0, Tile3dRegs<DEPTH>& regs) {
  constexpr int R = TB_RADIUS, Z = TB_Z, s = S;
  const int k = k0 + PH;
  const int base = k0 * Z;  // the plane in ring slot 0 during this round
  const int rel0 = (PH - s) * Z - s * R;  // ring plane of the first plane computed now
  const int g = t.zoff + base + rel0;     // and its z
  const Tile3dAccess below{t.cell + tile3d_level(s - 1), tile3d_ring(s - 1), 0};
#if TB_REGQ
  // Level 0's planes stored last iteration (rel0 + R ..) join its queue, read from the ring.
  if constexpr (s == 1) {
#pragma unroll
    for (int j = 0; j < Z; ++j)
#pragma unroll
      for (int c = 0; c < TB_CY; ++c)
        regs.q[0][2 * R + j][c] = t.cell[tile3d_slot(rel0 + R + j, TB_RING0) * TB_PLANE + c * TB_PX];
  }
#endif
#pragma unroll
  for (int j = 0; j < Z; ++j) {
    const int gz = g + j;
    const bool z_interior = gz >= R && gz < t.nz - R;
    real v[TB_CY];
#if TB_SUM
    // Level s-1's plane g + j + R completes plane g + j; the sums move up one plane.
    real (&acc)[2 * R + 1][TB_CY] = regs.acc[s - 1];
    TbStencil::plane_sums<TB_CY>(Tile3dAccess{below.cell, below.ring, rel0 + j + R}, acc);
#pragma unroll
    for (int c = 0; c < TB_CY; ++c) {
      v[c] = TbStencil::finish(acc[0][c]);
#pragma unroll
      for (int i = 0; i < 2 * R; ++i) acc[i][c] = acc[i + 1][c];
      acc[2 * R][c] = real(0);
    }
    if (CHECK) {
      const bool z_inside = gz >= 0 && gz < t.nz;
#pragma unroll
      for (int c = 0; c < TB_CY; ++c)
        if (!z_interior || !((t.interior >> c) & 1u))
          v[c] = z_inside && ((t.inside >> c) & 1u) ? __ldg(t.in + (long)gz * t.plane_cells + t.cell_off + (long)c * t.nx)
                                                   : real(0);
    }
#else
#if TB_REGQ
    const Tile3dQueueAccess u{Tile3dAccess{below.cell, below.ring, rel0 + j}, regs.q[s - 1], j};
#else
    const Tile3dAccess u{below.cell, below.ring, rel0 + j};
#endif
#pragma unroll
    for (int c = 0; c < TB_CY; ++c) v[c] = real(0);
    TbStencil::apply_rows<TB_CY>(u, v);
    if (CHECK) {
#pragma unroll
      for (int c = 0; c < TB_CY; ++c)
        if (!z_interior || !((t.interior >> c) & 1u)) v[c] = u(0, c, 0);
    }
#endif
    if constexpr (s < DEPTH) {
#if TB_REGQ
      // Level s's queue moved up already (level s + 1 came first); its planes 2R + j are new.
#pragma unroll
      for (int c = 0; c < TB_CY; ++c) regs.q[s][2 * R + j][c] = v[c];
#else
      tile3d_publish<DEPTH>(t, s, rel0 + j, j, k, v);
#endif
    } else if (!CHECK || (gz >= t.z0 && gz < t.z1)) {
      real* op = t.out + (long)gz * t.plane_cells + t.cell_off;
#pragma unroll
      for (int c = 0; c < TB_CY; ++c)
        if ((t.outmask >> c) & 1u) op[(long)c * t.nx] = v[c];
    }
  }
#if TB_REGQ
  // Level s's planes enter shared memory TB_LAG planes after they were computed.
  if constexpr (s < DEPTH) {
#pragma unroll
    for (int j = 0; j < Z; ++j) tile3d_publish<DEPTH>(t, s, rel0 - TB_LAG + j, j, k, regs.q[s][2 * R - TB_LAG + j]);
  }
  // Level s consumed the level below's planes g - R .. g + Z - 1 - R: the queue moves up Z.
#pragma unroll
  for (int i = 0; i + Z < TB_QUEUE; ++i)
#pragma unroll
    for (int c = 0; c < TB_CY; ++c) regs.q[s - 1][i][c] = regs.q[s - 1][i + Z][c];
#endif
  if constexpr (S > 1) tile3d_levels<DEPTH, PH, CHECK, S - 1>(t, k0, regs);
}

// One iteration k = k0 + PH. CHECK: test cells against the domain (first and last iterations,
// edge tiles); otherwise only the output mask (the overlapped halo of smtile) is tested.
template <int DEPTH, int PH, bool CHECK>
__device__ __forceinline__ void tile3d_iteration(const Tile3dThread& t, int k0, real (&cur)[TB_Z][TB_LOADS],
                                                 Tile3dRegs<DEPTH>& regs) {
  constexpr int R = TB_RADIUS, Z = TB_Z;
  const int k = k0 + PH;

  // Level 0: store this iteration's planes (no level reads their slots now), then load the next
  // iteration's into the same registers; the loads complete while the levels compute.
#pragma unroll
  for (int j = 0; j < Z; ++j) {
    real* slot = t.load + tile3d_slot(PH * Z + j, TB_RING0) * TB_PLANE;
#pragma unroll
    for (int l = 0; l < TB_LOADS; ++l)
      if (l + 1 < TB_LOADS || t.goff[l] != -2) slot[l * TB_NT] = cur[j][l];
  }
#pragma unroll
  for (int j = 0; j < Z; ++j) {
    const int gz = t.zoff + (k + 1) * Z + j;
    const real* plane = t.in + (long)gz * t.plane_cells;
#pragma unroll
    for (int l = 0; l < TB_LOADS; ++l) {
      // Steady: the tile's frame is in the domain, so only the last load can fall off the plane.
      const bool ok = (!CHECK && l + 1 < TB_LOADS) || (t.goff[l] >= 0 && (!CHECK || gz < t.nz));
      cur[j][l] = ok ? __ldg(plane + t.goff[l]) : real(0);
    }
  }

  // Levels DEPTH .. 1, in that order: a level reads only planes finished before, but with the
  // register queue level s + 1 must move level s's queue up before level s adds its new planes.
  tile3d_levels<DEPTH, PH, CHECK, DEPTH>(t, k0, regs);

#if TB_DEVTILE
  if constexpr (DEPTH > 1) {
    // One grid-wide barrier per group of Z planes, then every level's new planes get their halo
    // frame from the neighbours' borders.
    cooperative_groups::this_grid().sync();
#pragma unroll
    for (int s = 1; s < DEPTH; ++s)
#pragma unroll
      for (int j = 0; j < Z; ++j) {
        real* plane = t.rings + tile3d_level(s) + tile3d_slot((PH - s) * Z - s * R - TB_LAG + j, TB_RING) * TB_PLANE;
        const real* sp = t.scratch + (k & 1) * TB_SCRATCH_HALF + tile3d_scratch_plane(s, j);
#pragma unroll
        for (int l = 0; l < TB_FLOADS; ++l)
          if (t.foff[l] >= 0) plane[t.foff[l]] = __ldcg(sp + t.fsrc[l]);
      }
  }
#endif
  __syncthreads();
}

// Unrolls the TB_PHASES iterations of one round, each with or without checks.
template <int DEPTH, int PH>
__device__ __forceinline__ void tile3d_round(const Tile3dThread& t, int k0, real (&cur)[TB_Z][TB_LOADS],
                                             Tile3dRegs<DEPTH>& regs) {
  if constexpr (PH < TB_PHASES) {
    constexpr int R = TB_RADIUS, Z = TB_Z;
    const int k = k0 + PH;
    // Steady: level DEPTH's planes are in [z0, z1) (hence interior), level 1's last plane
    // (zoff + k*Z - R - 1) is interior (< nz - R), and the planes loaded for iteration k + 1 exist.
    const int first = t.zoff + (k - DEPTH) * Z - DEPTH * R;  // level DEPTH's first plane now
    const bool steady = t.tile_interior && first >= t.z0 && first + Z <= t.z1 && t.zoff + (k + 2) * Z <= t.nz;
    if (steady)
      tile3d_iteration<DEPTH, PH, false>(t, k0, cur, regs);
    else
      tile3d_iteration<DEPTH, PH, true>(t, k0, cur, regs);
    tile3d_round<DEPTH, PH + 1>(t, k0, cur, regs);
  }
}

template <int DEPTH>
__device__ __forceinline__ void tile3d_pass(const real* __restrict__ in, real* __restrict__ out,
                                            int nx, int ny, int nz, real* scratch) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  real* rings = reinterpret_cast<real*>(tb_smem);
  constexpr int R = TB_RADIUS, Z = TB_Z;

  // The tile's origin in the domain and this block's output region [ox0, ox1) x [oy0, oy1).
#if TB_DEVTILE
  const int x0 = blockIdx.x * TB_TX, y0 = blockIdx.y * TB_TY;
  const int ox0 = max(x0, R), oy0 = max(y0, R);
  const int ox1 = min(x0 + TB_TX, nx - R), oy1 = min(y0 + TB_TY, ny - R);
#else
  constexpr int VX = TB_TX - 2 * (DEPTH - 1) * R, VY = TB_TY - 2 * (DEPTH - 1) * R;
  const int ox0 = R + blockIdx.x * VX, oy0 = R + blockIdx.y * VY;
  const int x0 = ox0 - (DEPTH - 1) * R, y0 = oy0 - (DEPTH - 1) * R;
  const int ox1 = min(ox0 + VX, nx - R), oy1 = min(oy0 + VY, ny - R);
#endif
  const int tx = threadIdx.x, ly0 = threadIdx.y * TB_CY;  // the thread's column and first row
  const int tid = threadIdx.y * TB_TX + tx;
  const int gx = x0 + tx, gy0 = y0 + ly0;

  Tile3dThread t;
  t.cell = rings + (ly0 + R) * TB_PX + tx + R;
  t.load = rings + tid;
  t.rings = rings;
  t.in = in;
  t.out = out;
  t.scratch = scratch;
  t.nx = nx;
  t.nz = nz;
  {
    const int seg = (nz - 2 * R + gridDim.z - 1) / gridDim.z;
    t.z0 = R + blockIdx.z * seg;
    t.z1 = min(t.z0 + seg, nz - R);
    t.zoff = max(0, t.z0 - DEPTH * R);
  }
  t.plane_cells = (long)nx * ny;
  t.cell_off = (long)gy0 * nx + gx;
  t.tile_interior = x0 >= R && x0 + TB_TX + R <= nx && y0 >= R && y0 + TB_TY + R <= ny;
  t.interior = t.outmask = t.inside = 0;
#if TB_DEVTILE
  t.border = 0;
#endif
#pragma unroll
  for (int c = 0; c < TB_CY; ++c) {
    const int gy = gy0 + c;
    if (gx >= R && gx < nx - R && gy >= R && gy < ny - R) t.interior |= 1u << c;
    if (gx >= 0 && gx < nx && gy >= 0 && gy < ny) t.inside |= 1u << c;
    if (gx >= ox0 && gx < ox1 && gy >= oy0 && gy < oy1) t.outmask |= 1u << c;
#if TB_DEVTILE
    const int ly = ly0 + c;
    if ((tx < R || tx >= TB_TX - R || ly < R || ly >= TB_TY - R) && gx < nx && gy < ny) t.border |= 1u << c;
#endif
  }
  // Plane cells tid + l*NT: -2 past the plane (only the last l can be), -1 outside the domain.
#pragma unroll
  for (int l = 0; l < TB_LOADS; ++l) {
    const int i = tid + l * TB_NT;
    const int x = x0 + i % TB_PX - R, y = y0 + i / TB_PX - R;
    t.goff[l] = i >= TB_PLANE ? -2 : (x >= 0 && x < nx && y >= 0 && y < ny) ? y * nx + x : -1;
  }
#if TB_DEVTILE
  constexpr long BLOCK_SCRATCH = 2L * TB_SCRATCH_HALF;
  t.sblock = (blockIdx.y * gridDim.x + blockIdx.x) * BLOCK_SCRATCH + (ly0 + R) * TB_PX + tx + R;
  // Frame cells f = tid + l*NT, numbered: the R top rows, the R bottom rows, then R cells on the
  // left and R on the right of each tile row.
#pragma unroll
  for (int l = 0; l < TB_FLOADS; ++l) {
    const int f = tid + l * TB_NT;
    int px, py;
    if (f < 2 * R * TB_PX) {
      px = f % TB_PX;
      py = f / TB_PX;
      if (py >= R) py += TB_TY;
    } else {
      const int h = f - 2 * R * TB_PX, side = h % (2 * R);
      py = R + h / (2 * R);
      px = side < R ? side : TB_TX + side;
    }
    const int x = x0 + px - R, y = y0 + py - R;
    const bool ok = f < TB_FRAME && x >= 0 && x < nx && y >= 0 && y < ny;
    // The tile that owns (x, y), and the cell's place in that block's scratch planes.
    const int bx = ok ? x / TB_TX : 0, by = ok ? y / TB_TY : 0;
    t.foff[l] = ok ? py * TB_PX + px : -1;
    t.fsrc[l] = (by * gridDim.x + bx) * BLOCK_SCRATCH + (y - by * TB_TY + R) * TB_PX + (x - bx * TB_TX + R);
  }
#endif

  // Enough iterations for level DEPTH to finish plane z1 - 1, rounded up to whole rounds; the
  // extra iterations write nothing (checked).
  const int needed = (t.z1 - t.zoff + DEPTH * R + Z - 1) / Z + DEPTH;
  const int iterations = (needed + TB_PHASES - 1) / TB_PHASES * TB_PHASES;

  // Input planes of iteration 0; those of iteration k + 1 are loaded during iteration k.
  real cur[Z][TB_LOADS];
#pragma unroll
  for (int j = 0; j < Z; ++j)
#pragma unroll
    for (int l = 0; l < TB_LOADS; ++l)
      cur[j][l] = (t.goff[l] >= 0 && t.zoff + j < nz)
                      ? __ldg(in + (long)(t.zoff + j) * t.plane_cells + t.goff[l]) : real(0);

  Tile3dRegs<DEPTH> regs;
#if TB_SUM
#pragma unroll
  for (int s = 0; s < DEPTH; ++s)
#pragma unroll
    for (int i = 0; i <= 2 * R; ++i)
#pragma unroll
      for (int c = 0; c < TB_CY; ++c) regs.acc[s][i][c] = real(0);
#elif TB_REGQ
  // Like the ring's slots, the queue's planes before the first ones computed are never used.
#pragma unroll
  for (int s = 0; s < DEPTH; ++s)
#pragma unroll
    for (int i = 0; i < TB_QUEUE; ++i)
#pragma unroll
      for (int c = 0; c < TB_CY; ++c) regs.q[s][i][c] = real(0);
#endif
  for (int k0 = 0; k0 < iterations; k0 += TB_PHASES) tile3d_round<DEPTH, 0>(t, k0, cur, regs);
}

// Low occupancy by design: the registers of TB_BPS blocks per SM (device tiling: all tiles resident).
#define TB_BOUNDS __launch_bounds__(TB_NT, TB_BPS)

extern "C" __global__ void TB_BOUNDS
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tile3d_pass<TB_DEPTH>(in, out, nx, ny, nz, scratch);
}

extern "C" __global__ void TB_BOUNDS
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tile3d_pass<1>(in, out, nx, ny, nz, scratch);
}
