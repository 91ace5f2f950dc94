// templates/stream.cuh: spatial blocking, one step per launch. A block of TB_BX x TB_BY threads
// covers an x-y tile; each thread updates TB_PPT cells along the outermost axis (2D: rows TB_BY
// apart, so a warp's rows stay coalesced; 3D: consecutive planes, so reads of the planes above
// and below hit L1), which gives each thread several independent loads in flight. The kernels
// are built for the occupancy the model assumes (TB_MIN_BLOCKS blocks per SM): a thread that
// needs more registers spills and is pruned, rather than running at an occupancy nobody
// predicted.

__device__ __forceinline__ void stream_step(const real* __restrict__ in, real* __restrict__ out,
                                            int nx, int ny, int nz) {
  const int x = blockIdx.x * TB_BX + threadIdx.x + TB_RADIUS;
  if (x >= nx - TB_RADIUS) return;
  const long sy = nx, sz = (long)nx * ny;
#if TB_DIMS == 2
  const int y0 = blockIdx.y * TB_BY * TB_PPT + threadIdx.y + TB_RADIUS;
#pragma unroll
  for (int k = 0; k < TB_PPT; ++k) {
    const int y = y0 + k * TB_BY;
    if (y < ny - TB_RADIUS) {
      const long i = tb_index(x, y, 0, nx, ny);
      out[i] = TbStencil::apply(TbGlobalAccess{in + i, sy, sz});
    }
  }
#else
  const int y = blockIdx.y * TB_BY + threadIdx.y + TB_RADIUS;
  if (y >= ny - TB_RADIUS) return;
  const int z0 = blockIdx.z * TB_PPT + TB_RADIUS;
#pragma unroll
  for (int k = 0; k < TB_PPT; ++k) {
    const int z = z0 + k;
    if (z < nz - TB_RADIUS) {
      const long i = tb_index(x, y, z, nx, ny);
      out[i] = TbStencil::apply(TbGlobalAccess{in + i, sy, sz});
    }
  }
#endif
}

extern "C" __global__ void __launch_bounds__(TB_BX * TB_BY, TB_MIN_BLOCKS)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  stream_step(in, out, nx, ny, nz);
}

extern "C" __global__ void __launch_bounds__(TB_BX * TB_BY, TB_MIN_BLOCKS)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  stream_step(in, out, nx, ny, nz);
}
