// templates/step.cuh: one step of the stencil at one interior cell per thread, the naive
// strategy's kernels' body and the shared one-step kernel of the strategies whose own loop
// would cost as much to build again for a single step as for their full pass (wpipe.cuh's
// tb_cell_step). Block: TB_STEP_BX x TB_STEP_BY x TB_STEP_BZ threads over the interior (the
// host's naive_step_launch).

__device__ __forceinline__ void tb_naive_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny,
                                              int nz) {
  const int x = blockIdx.x * TB_STEP_BX + threadIdx.x + TB_RADIUS;
  const int y = blockIdx.y * TB_STEP_BY + threadIdx.y + TB_RADIUS;
  const int z = TB_DIMS == 3 ? blockIdx.z * TB_STEP_BZ + threadIdx.z + TB_RADIUS : 0;
  if (x >= nx - TB_RADIUS || y >= ny - TB_RADIUS) return;
  if (TB_DIMS == 3 && z >= nz - TB_RADIUS) return;
  const long i = tb_index(x, y, z, nx, ny);
  TbGlobalAccess u{in + i, nx, (long)nx * ny};
  out[i] = TbStencil::apply(u);
}
