// templates/naive.cuh: one thread per interior cell, one launch per time step.
// The correctness reference on the GPU and the speed floor. Block: TB_BX x TB_BY x TB_BZ.

__device__ __forceinline__ void naive_step(const real* __restrict__ in, real* __restrict__ out,
                                           int nx, int ny, int nz) {
  const int x = blockIdx.x * TB_BX + threadIdx.x + TB_RADIUS;
  const int y = blockIdx.y * TB_BY + threadIdx.y + TB_RADIUS;
  const int z = TB_DIMS == 3 ? blockIdx.z * TB_BZ + threadIdx.z + TB_RADIUS : 0;
  if (x >= nx - TB_RADIUS || y >= ny - TB_RADIUS) return;
  if (TB_DIMS == 3 && z >= nz - TB_RADIUS) return;
  const long i = tb_index(x, y, z, nx, ny);
  TbGlobalAccess u{in + i, nx, (long)nx * ny};
  out[i] = TbStencil::apply(u);
}

extern "C" __global__ void __launch_bounds__(TB_BX * TB_BY * TB_BZ)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  naive_step(in, out, nx, ny, nz);
}

extern "C" __global__ void __launch_bounds__(TB_BX * TB_BY * TB_BZ)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  naive_step(in, out, nx, ny, nz);
}
