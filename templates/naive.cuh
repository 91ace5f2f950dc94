// templates/naive.cuh: one thread per interior cell, one launch per time step (step.cuh's
// tb_naive_step, assembled before this): the correctness reference on the GPU and the speed
// floor.

extern "C" __global__ void __launch_bounds__(TB_STEP_BX * TB_STEP_BY * TB_STEP_BZ)
tb_full(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tb_naive_step(in, out, nx, ny, nz);
}

extern "C" __global__ void __launch_bounds__(TB_STEP_BX * TB_STEP_BY * TB_STEP_BZ)
tb_step(const real* __restrict__ in, real* __restrict__ out, int nx, int ny, int nz, real* scratch) {
  tb_naive_step(in, out, nx, ny, nz);
}
