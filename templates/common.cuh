// templates/common.cuh: device helpers shared by every kernel template.
// Included after `real`, TB_DIMS and TB_RADIUS are defined, before the generated TbStencil.
// No host headers: NVRTC compiles this as it is.

// Whitelisted math functions of the spec language, overloaded so float stays float.
__device__ __forceinline__ float tb_sqrt(float x) { return sqrtf(x); }
__device__ __forceinline__ double tb_sqrt(double x) { return sqrt(x); }
__device__ __forceinline__ float tb_exp(float x) { return expf(x); }
__device__ __forceinline__ double tb_exp(double x) { return exp(x); }
__device__ __forceinline__ float tb_log(float x) { return logf(x); }
__device__ __forceinline__ double tb_log(double x) { return log(x); }
__device__ __forceinline__ float tb_sin(float x) { return sinf(x); }
__device__ __forceinline__ double tb_sin(double x) { return sin(x); }
__device__ __forceinline__ float tb_cos(float x) { return cosf(x); }
__device__ __forceinline__ double tb_cos(double x) { return cos(x); }
__device__ __forceinline__ float tb_tanh(float x) { return tanhf(x); }
__device__ __forceinline__ double tb_tanh(double x) { return tanh(x); }
__device__ __forceinline__ float tb_abs(float x) { return fabsf(x); }
__device__ __forceinline__ double tb_abs(double x) { return fabs(x); }
__device__ __forceinline__ float tb_min(float a, float b) { return fminf(a, b); }
__device__ __forceinline__ double tb_min(double a, double b) { return fmin(a, b); }
__device__ __forceinline__ float tb_max(float a, float b) { return fmaxf(a, b); }
__device__ __forceinline__ double tb_max(double a, double b) { return fmax(a, b); }
__device__ __forceinline__ float tb_pow(float a, float b) { return powf(a, b); }
__device__ __forceinline__ double tb_pow(double a, double b) { return pow(a, b); }
// Fused multiply-add, for the generated affine stencils (one rounding per term, in a fixed order).
__device__ __forceinline__ float tb_fma(float a, float b, float c) { return fmaf(a, b, c); }
__device__ __forceinline__ double tb_fma(double a, double b, double c) { return fma(a, b, c); }

// Linear index of (x, y, z) in an nx * ny * nz array, x contiguous.
__device__ __forceinline__ long tb_index(int x, int y, int z, int nx, int ny) {
  return x + (long)nx * (y + (long)ny * z);
}

// Reads a global array around one cell through the read-only path.
struct TbGlobalAccess {
  const real* __restrict__ center;
  long sy, sz;
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const {
    return __ldg(center + dx + dy * sy + dz * sz);
  }
};

// An accessor seen `rows` rows further along y, for evaluating a stencil at several rows.
template <class U>
struct TbRowShift {
  const U& u;
  int rows;
  __device__ __forceinline__ real operator()(int dx, int dy, int dz) const { return u(dx, dy + rows, dz); }
};
