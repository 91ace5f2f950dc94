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

// Shared memory by 32-bit address. NVRTC addresses shared memory through 64-bit pointers where
// nvcc uses 32-bit offsets into the shared window: two registers per address and 64-bit adds,
// which made FastStencil's j2d5pt shape (wpipe2d, rx 13, tw 4) spill 88 bytes under NVRTC and
// none under nvcc. The templates that keep many values in registers (wpipe2d.cuh, wpipe3d.cuh)
// load and store shared memory through these: an offset in one register, constant parts as
// immediates. `volatile` and "memory" keep each access in place against the barriers and the
// other accesses, as an ordinary access is; ptxas still schedules the machine code.
// Bytes of a cell, unsigned so that address arithmetic with it stays 32-bit.
constexpr unsigned kTbCellBytes = sizeof(real);
#ifdef __CUDACC__
__device__ __forceinline__ unsigned tb_shared_addr(const void* p) {
  return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void tb_shared_load(unsigned a, double& v) {
  asm volatile("ld.shared.f64 %0, [%1];" : "=d"(v) : "r"(a) : "memory");
}
__device__ __forceinline__ void tb_shared_load(unsigned a, float& v) {
  asm volatile("ld.shared.f32 %0, [%1];" : "=f"(v) : "r"(a) : "memory");
}
__device__ __forceinline__ real tb_shared_load(unsigned a) {
  real v;
  tb_shared_load(a, v);
  return v;
}
__device__ __forceinline__ void tb_shared_store(unsigned a, double v) {
  asm volatile("st.shared.f64 [%0], %1;" ::"r"(a), "d"(v) : "memory");
}
__device__ __forceinline__ void tb_shared_store(unsigned a, float v) {
  asm volatile("st.shared.f32 [%0], %1;" ::"r"(a), "f"(v) : "memory");
}
// cp.async of one cell to shared address a; a cell outside the domain is not read and becomes 0
// (part of the same commit groups as __pipeline_memcpy_async's copies).
__device__ __forceinline__ void tb_copy_async(unsigned a, const real* src, bool inside) {
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;" ::"r"(a), "l"(src), "n"(sizeof(real)),
               "r"(inside ? int(sizeof(real)) : 0)
               : "memory");
}
// A pair of cells in one shared access: 8 bytes for float, 16 for double.
__device__ __forceinline__ void tb_shared_load_pair(unsigned a, float& v0, float& v1) {
  asm volatile("ld.shared.v2.f32 {%0, %1}, [%2];" : "=f"(v0), "=f"(v1) : "r"(a) : "memory");
}
__device__ __forceinline__ void tb_shared_load_pair(unsigned a, double& v0, double& v1) {
  asm volatile("ld.shared.v2.f64 {%0, %1}, [%2];" : "=d"(v0), "=d"(v1) : "r"(a) : "memory");
}
__device__ __forceinline__ void tb_shared_store_pair(unsigned a, float v0, float v1) {
  asm volatile("st.shared.v2.f32 [%0], {%1, %2};" ::"r"(a), "f"(v0), "f"(v1) : "memory");
}
__device__ __forceinline__ void tb_shared_store_pair(unsigned a, double v0, double v1) {
  asm volatile("st.shared.v2.f64 [%0], {%1, %2};" ::"r"(a), "d"(v0), "d"(v1) : "memory");
}
// A lane's strip of N contiguous cells between registers and shared address a; with PAIRS and
// an even N two cells per access (the wpipe strategies' strips then start aligned to a pair:
// every row is 32 x N cells and each lane's strip N cells on). That halves the instructions
// and, since the banks serve a pair access by quarter (double) or half (float) warps, halves
// the bank conflicts of strips twice an odd number long (tuner's wpipe_bank_conflicts). Each
// strategy says where it pairs: where it was measured to pay.
template <bool PAIRS, int N>
__device__ __forceinline__ void tb_shared_load_strip(unsigned a, real (&v)[N]) {
  if constexpr (PAIRS && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) tb_shared_load_pair(a + i * kTbCellBytes, v[i], v[i + 1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) tb_shared_load(a + i * kTbCellBytes, v[i]);
  }
}
template <bool PAIRS, int N>
__device__ __forceinline__ void tb_shared_store_strip(unsigned a, const real (&v)[N]) {
  if constexpr (PAIRS && N % 2 == 0) {
#pragma unroll
    for (int i = 0; i < N; i += 2) tb_shared_store_pair(a + i * kTbCellBytes, v[i], v[i + 1]);
  } else {
#pragma unroll
    for (int i = 0; i < N; ++i) tb_shared_store(a + i * kTbCellBytes, v[i]);
  }
}
#else  // the CPU emulator (scripts/emulate/shim.hpp): offsets into the block's shared memory
// An access beyond the block's shared memory traps: on a GPU it would fault or overwrite another
// block's, here the host's heap, which showed as a hang or as wrong cells far from the cause.
inline void tb_shared_check(unsigned a) {
  if (a + sizeof(real) <= tb_block_smem_bytes) return;
  std::fprintf(stderr, "emulator: shared memory access at byte %u, past the block's %zu\n", a, tb_block_smem_bytes);
  std::abort();
}
inline unsigned tb_shared_addr(const void* p) { return unsigned(static_cast<const unsigned char*>(p) - tb_block_smem); }
inline real tb_shared_load(unsigned a) {
  tb_shared_check(a);
  return *reinterpret_cast<const real*>(tb_block_smem + a);
}
inline void tb_shared_store(unsigned a, real v) {
  tb_shared_check(a);
  *reinterpret_cast<real*>(tb_block_smem + a) = v;
}
inline void tb_copy_async(unsigned a, const real* src, bool inside) {
  tb_shared_check(a);
  __pipeline_memcpy_async(tb_block_smem + a, src, sizeof(real), inside ? 0 : sizeof(real));
}
// The strips cell by cell; a paired access must be aligned to the pair, which is checked here.
template <bool PAIRS, int N>
inline void tb_shared_load_strip(unsigned a, real (&v)[N]) {
  if (PAIRS && N % 2 == 0 && a % (2 * sizeof(real)) != 0) __builtin_trap();
  for (int i = 0; i < N; ++i) v[i] = tb_shared_load(a + i * kTbCellBytes);
}
template <bool PAIRS, int N>
inline void tb_shared_store_strip(unsigned a, const real (&v)[N]) {
  if (PAIRS && N % 2 == 0 && a % (2 * sizeof(real)) != 0) __builtin_trap();
  for (int i = 0; i < N; ++i) tb_shared_store(a + i * kTbCellBytes, v[i]);
}
#endif

// A pass's work for one wave of blocks: runs of `count` tiles from tile `first`, `stride`
// apart, each over the lines [y0, y0 + lines) (none if lines <= 0). Each piece (one tile's lines)
// takes `pad` lines more in the layout, standing for what a segment costs beyond its own lines
// (the lines it streams before and after them, its pipeline's fill), so that equal shares of
// the layout take about equal time. Block blockIdx.x of gridDim.x takes an equal share and runs
// f(tile, l0, l1) for the lines of each piece the share reaches: usually one, two where it
// crosses into the next, more where pieces are short. The host sizes the grid alike
// (share_time), one block per resident slot, so that every block ends at once, whatever the
// tile count.
struct TbRun {
  int first, stride, count, y0, lines;
};

// The block's index, read where it is used: the share below is worked out again for each
// piece, in the loop, rather than held in registers across the pass that runs it.
__device__ __forceinline__ unsigned tb_block_x() {
#ifdef __CUDACC__
  unsigned b;
  asm volatile("mov.u32 %0, %%ctaid.x;" : "=r"(b));
  return b;
#else
  return blockIdx.x;
#endif
}

// Piece j of this block's share (0: the one its share starts in): its tile and lines [l0, l1);
// false past the share's end.
template <int N>
__device__ __forceinline__ bool tb_share_piece(const TbRun (&runs)[N], int pad, int j, int& tile, int& l0, int& l1) {
  long work = 0;
  for (int i = 0; i < N; ++i)
    if (runs[i].lines > 0) work += long(runs[i].count) * (pad + runs[i].lines);
  const unsigned b = tb_block_x();
  const long lo = work * b / gridDim.x, hi = work * (b + 1) / gridDim.x;
  long at = 0;     // the place of run i's first piece
  int skip = -1;   // pieces still to pass once the share's first is found
  for (int i = 0; i < N; ++i) {
    const TbRun& r = runs[i];
    if (r.lines <= 0) continue;
    const long size = pad + r.lines;
    int k = 0;
    if (skip < 0) {
      if (lo >= at + r.count * size) {
        at += r.count * size;
        continue;
      }
      k = int((lo - at) / size);
      skip = j;
    }
    if (k + skip < r.count) {
      k += skip;
      const long start = at + k * size + pad;  // the place of the piece's first line
      if (start - pad >= hi) return false;
      tile = r.first + k * r.stride;
      l0 = r.y0 + int(lo > start ? lo - start : 0);
      l1 = r.y0 + int(hi < start + r.lines ? hi - start : r.lines);
      return true;
    }
    skip -= r.count - k;
    at += r.count * size;
  }
  return false;
}

template <int N, class F>
__device__ __forceinline__ void tb_share(const TbRun (&runs)[N], int pad, F&& f) {
  int tile, l0, l1;
  for (int j = 0; tb_share_piece(runs, pad, j, tile, l0, l1); ++j)
    if (l1 > l0) f(tile, l0, l1);
}

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
