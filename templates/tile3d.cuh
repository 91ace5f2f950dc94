// templates/tile3d.cuh: temporal blocking for 3D stencils, streaming in z. Two strategies share
// this template and differ only in how a block gets the halo of its x-y tile:
//   TB_DEVTILE 0 (smtile3d): overlapped tiling. A block's TB_TX x TB_TY tile overlaps its
//     neighbours by DEPTH*R on each side; the halo is recomputed redundantly, the valid output is
//     the middle (TB_TX - 2*DEPTH*R) x (TB_TY - 2*DEPTH*R). No inter-block communication.
//   TB_DEVTILE 1 (devtile3d): device tiling. The tiles partition the x-y plane without overlap and
//     all blocks are resident at once (cooperative launch). After every group of TB_Z planes each
//     block writes the border of its new planes to global scratch, the grid synchronises once
//     (lazy streaming), and each block reads its halo from its neighbours' borders.
//
// Per block and time level s = 0 .. DEPTH-1, a circular queue of TB_RING x-y planes lives in
// shared memory (each plane has an R-wide halo frame). In iteration k, level 0 receives input
// planes [k*Z, k*Z + Z) and level s computes planes g(k, s) = (k - s)*Z - s*R .. + Z from level
// s-1, reading only planes finished in earlier iterations; TB_RING = 2*Z + 2*R keeps the planes
// being read and the planes being written in distinct slots, so one barrier per iteration
// suffices. Level DEPTH goes to global memory. Cells of the boundary ring keep their value at
// every level. Each thread owns TB_CY cells of one x-y column group (ILP in y).
#if TB_DEVTILE
#include <cooperative_groups.h>
#endif

#define TB_PX (TB_TX + 2 * TB_RADIUS)   // plane pitch in x (tile plus halo)
#define TB_PY (TB_TY + 2 * TB_RADIUS)
#define TB_PLANE (TB_PX * TB_PY)
#define TB_THREADS_Y (TB_TY / TB_CY)

struct Tile3dAccess {
  const real* level;  // the level below, at this thread's cell in plane slot 0
  const int* slot;    // slot[o] * TB_PLANE = offset of the plane at z offset o - R
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const {
    return level[slot[dz + TB_RADIUS] * TB_PLANE + dy * TB_PX + dx];
  }
};

__device__ __forceinline__ int tile3d_wrap(int v) { return v >= TB_RING ? v - TB_RING : v; }

// Halo exchange of device tiling: scratch holds, per parity of the iteration, level (1..DEPTH-1)
// and new plane (0..Z-1), a full nx*ny plane of which only tile borders are written.
__device__ __forceinline__ long tile3d_scratch_plane(int parity, int level, int j, int depth,
                                                     long plane_cells) {
  return ((long)(parity * (depth - 1) + (level - 1)) * TB_Z + j) * plane_cells;
}

template <int DEPTH>
__device__ __forceinline__ void tile3d_pass(const real* __restrict__ in, real* __restrict__ out,
                                            int nx, int ny, int nz, real* scratch) {
  extern __shared__ __align__(16) unsigned char tb_smem[];
  real* rings = reinterpret_cast<real*>(tb_smem);
  constexpr int R = TB_RADIUS, Z = TB_Z, LAG = TB_Z + TB_RADIUS;
  constexpr int LEVEL = TB_RING * TB_PLANE;  // one level's ring

  // The tile's origin in the domain and this block's output region [ox0, ox1) x [oy0, oy1).
#if TB_DEVTILE
  const int x0 = blockIdx.x * TB_TX, y0 = blockIdx.y * TB_TY;
  const int ox0 = max(x0, R), oy0 = max(y0, R);
  const int ox1 = min(x0 + TB_TX, nx - R), oy1 = min(y0 + TB_TY, ny - R);
#else
  constexpr int VX = TB_TX - 2 * DEPTH * R, VY = TB_TY - 2 * DEPTH * R;
  const int ox0 = R + blockIdx.x * VX, oy0 = R + blockIdx.y * VY;
  const int x0 = ox0 - DEPTH * R, y0 = oy0 - DEPTH * R;
  const int ox1 = min(ox0 + VX, nx - R), oy1 = min(oy0 + VY, ny - R);
#endif
  const int tx = threadIdx.x, ty = threadIdx.y;
  const int gx = x0 + tx;
  const long plane_cells = (long)nx * ny;
  const int iterations = (nz + DEPTH * R + Z - 1) / Z + DEPTH;

  // Level 0 planes are loaded with their halo frame straight from the input, which is complete.
  // Every thread loads its cells, threads near the tile edge also the frame cells beside them.
  auto load_input_plane = [&](int gz, int slot) {
    for (int i = threadIdx.y * TB_TX + tx; i < TB_PLANE; i += TB_TX * TB_THREADS_Y) {
      const int px = i % TB_PX, py = i / TB_PX;
      const int x = x0 + px - R, y = y0 + py - R;
      real v = real(0);
      if (gz < nz && x >= 0 && x < nx && y >= 0 && y < ny) v = __ldg(in + gz * plane_cells + (long)y * nx + x);
      rings[slot * TB_PLANE + i] = v;
    }
  };

  int base = 0;  // ring slot of plane k*Z
  for (int k = 0; k < iterations; ++k) {
#pragma unroll
    for (int j = 0; j < Z; ++j) load_input_plane(k * Z + j, tile3d_wrap(base + j));

#pragma unroll
    for (int s = 1; s <= DEPTH; ++s) {
      const int g = (k - s) * Z - s * R;  // first plane this level computes now
      int slot[Z + 2 * R];
#pragma unroll
      for (int o = 0; o < Z + 2 * R; ++o)
        slot[o] = tile3d_wrap(base + ((o - R - s * LAG) % TB_RING + 2 * TB_RING) % TB_RING);
      const real* below = rings + (s - 1) * LEVEL;
#pragma unroll
      for (int c = 0; c < TB_CY; ++c) {
        const int ly = ty + c * TB_THREADS_Y;
        const int gy = y0 + ly;
        const bool interior_xy = gx >= R && gx < nx - R && gy >= R && gy < ny - R;
        const int cell = (ly + R) * TB_PX + tx + R;
        real v[Z];
#pragma unroll
        for (int j = 0; j < Z; ++j) {
          const Tile3dAccess u{below + cell, slot + j};
          const int gz = g + j;
          v[j] = (interior_xy && gz >= R && gz < nz - R) ? TbStencil::apply(u) : u(0, 0, 0);
        }
        if (s < DEPTH) {
          real* level = rings + s * LEVEL + cell;
#pragma unroll
          for (int j = 0; j < Z; ++j) level[slot[j + R] * TB_PLANE] = v[j];
#if TB_DEVTILE
          // Border cells (within R of the tile edge) go to scratch for the neighbours.
          if (tx < R || tx >= TB_TX - R || ly < R || ly >= TB_TY - R) {
            if (gx < nx && gy < ny) {
#pragma unroll
              for (int j = 0; j < Z; ++j)
                __stcg(scratch + tile3d_scratch_plane(k & 1, s, j, DEPTH, plane_cells) + (long)gy * nx + gx, v[j]);
            }
          }
#endif
        } else if (gx >= ox0 && gx < ox1 && gy >= oy0 && gy < oy1) {
#pragma unroll
          for (int j = 0; j < Z; ++j) {
            const int gz = g + j;
            if (gz >= R && gz < nz - R) out[gz * plane_cells + (long)gy * nx + gx] = v[j];
          }
        }
      }
    }

#if TB_DEVTILE
    // One grid-wide barrier per group of Z planes, then every level's new planes get their halo
    // frame from the neighbours' borders.
    cooperative_groups::this_grid().sync();
    for (int i = threadIdx.y * TB_TX + tx; i < TB_PLANE; i += TB_TX * TB_THREADS_Y) {
      const int px = i % TB_PX, py = i / TB_PX;
      if (px >= R && px < TB_TX + R && py >= R && py < TB_TY + R) continue;  // own cell
      const int x = x0 + px - R, y = y0 + py - R;
      if (x < 0 || x >= nx || y < 0 || y >= ny) continue;
#pragma unroll
      for (int s = 1; s < DEPTH; ++s) {
#pragma unroll
        for (int j = 0; j < Z; ++j) {
          const int slot = tile3d_wrap(base + ((j - s * LAG) % TB_RING + 2 * TB_RING) % TB_RING);
          rings[s * LEVEL + slot * TB_PLANE + i] =
              __ldcg(scratch + tile3d_scratch_plane(k & 1, s, j, DEPTH, plane_cells) + (long)y * nx + x);
        }
      }
    }
#endif
    base = tile3d_wrap(base + Z % TB_RING);
    __syncthreads();
  }
}

// Low occupancy by design: give the compiler the whole register file of a lone block.
#define TB_BOUNDS __launch_bounds__(TB_TX * TB_THREADS_Y, 1)

extern "C" __global__ void TB_BOUNDS
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tile3d_pass<TB_DEPTH>(in, out, nx, ny, nz, scratch);
}

extern "C" __global__ void TB_BOUNDS
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tile3d_pass<1>(in, out, nx, ny, nz, scratch);
}
