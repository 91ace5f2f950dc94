// Host emulation of the CUDA features the kernel templates use (tile3d.cuh, wpipe2d.cuh,
// wpipe3d.cuh): one std::thread per CUDA thread, a std::barrier per block (and per warp for
// shuffles, and per named barrier for the templates that use them), and
// cp.async copies that land only when waited for, so a read before the wait sees stale data.
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <memory>
#include <vector>
using std::max; using std::min;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __shared__
#define __align__(n)
struct U3 { unsigned x = 0, y = 0, z = 0; };
thread_local U3 threadIdx, blockIdx;
U3 gridDim, blockDim;
thread_local std::barrier<>* blk_bar;
std::barrier<>* grid_bar;
thread_local unsigned char* tb_block_smem;
thread_local std::size_t tb_block_smem_bytes;  // its size: the templates' accesses beyond it trap
inline void __syncthreads() { blk_bar->arrive_and_wait(); }
// Named barriers (bar.sync id, count): the driver sets one std::barrier per id it uses.
thread_local std::barrier<>** tb_named;
inline void tb_named_sync(int id) { tb_named[id]->arrive_and_wait(); }

// Warp shuffles: each lane posts its value, the warp meets, each lane reads its source lane's.
struct Warp {
  std::barrier<> bar{32};
  unsigned char slot[32][16];
};
thread_local Warp* tb_warp;
inline int tb_lane() { return int(threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z)) & 31; }
template <class T> T tb_shfl_from(T v, int src) {
  const int l = tb_lane();
  std::memcpy(tb_warp->slot[l], &v, sizeof v);
  tb_warp->bar.arrive_and_wait();
  T r;
  std::memcpy(&r, tb_warp->slot[src >= 0 && src < 32 ? src : l], sizeof r);
  tb_warp->bar.arrive_and_wait();
  return r;
}
template <class T> T __shfl_up_sync(unsigned, T v, int d) { return tb_shfl_from(v, tb_lane() - d); }
template <class T> T __shfl_down_sync(unsigned, T v, int d) { return tb_shfl_from(v, tb_lane() + d); }

// cp.async: copies queue in commit groups and happen at the wait that covers them.
struct TbCopy { void* dst; const void* src; size_t bytes, zfill; };
thread_local std::vector<TbCopy> tb_open_group;
thread_local std::vector<std::vector<TbCopy>> tb_groups;
// The kernel's input array, where the driver sets it (the wpipe drivers): every copy's source
// must lie inside it, a zero-filling copy's too, as the templates give those a valid address.
thread_local std::uintptr_t tb_input_begin, tb_input_end;
inline void __pipeline_memcpy_async(void* dst, const void* src, size_t bytes, size_t zfill = 0) {
  const auto s = reinterpret_cast<std::uintptr_t>(src);
  if (tb_input_end && (s < tb_input_begin || s + bytes > tb_input_end)) {
    std::fprintf(stderr, "emulator: cp.async from byte %lld of the input array, outside its %llu\n",
                 (long long)(s - tb_input_begin), (unsigned long long)(tb_input_end - tb_input_begin));
    std::abort();
  }
  tb_open_group.push_back({dst, src, bytes, zfill});
}
inline void __pipeline_commit() { tb_groups.push_back(std::move(tb_open_group)); tb_open_group.clear(); }
inline void __pipeline_wait_prior(size_t n) {
  while (tb_groups.size() > n) {
    for (const TbCopy& c : tb_groups.front()) {
      std::memcpy(c.dst, c.src, c.bytes - c.zfill);
      std::memset(static_cast<unsigned char*>(c.dst) + (c.bytes - c.zfill), 0, c.zfill);
    }
    tb_groups.erase(tb_groups.begin());
  }
}
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> void __stcg(T* p, T v) { *p = v; }

// A kernel without barriers, shuffles or shared memory (the cell step kernel, templates/step.cuh)
// over a grid of blocks: its threads one after another on the calling thread.
template <class Kernel, class... Args>
void tb_run_plain(Kernel kernel, U3 grid, U3 block, Args... args) {
  gridDim = grid;
  blockDim = block;
  for (unsigned bz = 0; bz < grid.z; ++bz)
    for (unsigned by = 0; by < grid.y; ++by)
      for (unsigned bx = 0; bx < grid.x; ++bx)
        for (unsigned tz = 0; tz < block.z; ++tz)
          for (unsigned ty = 0; ty < block.y; ++ty)
            for (unsigned tx = 0; tx < block.x; ++tx) {
              blockIdx = {bx, by, bz};
              threadIdx = {tx, ty, tz};
              kernel(args...);
            }
}

namespace cooperative_groups {
struct G { void sync() { grid_bar->arrive_and_wait(); } };
inline G this_grid() { return {}; }
}

// The drivers' verdict: every cell of `got` against `want` (relative error over max(1, |want|),
// 1e-10 for double and 1e-4 for float), "OK" and the largest error or "FAIL" and the first bad
// cell (x, y, z) of an nx x ny x nz array; returns the exit status.
template <class T>
int tb_verdict(const std::vector<T>& got, const std::vector<T>& want, long nx, long ny) {
  const double tol = sizeof(T) == 8 ? 1e-10 : 1e-4;
  long bad = 0, first = -1;
  double err = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    const double e = std::fabs(double(got[i]) - double(want[i])) / std::max(1.0, std::fabs(double(want[i])));
    if (!(e <= tol)) { if (first < 0) first = long(i); ++bad; }
    err = std::isnan(e) ? INFINITY : std::max(err, e);
  }
  if (bad)
    std::printf("FAIL bad=%ld first=(%ld,%ld,%ld) got %g want %g\n", bad, first % nx, first / nx % ny, first / (nx * ny),
                double(got[first]), double(want[first]));
  else
    std::printf("OK max rel error %g\n", err);
  return bad != 0;
}

// The drivers' input: a fixed pseudo-random field in [0, 1), the same for every run.
template <class T>
std::vector<T> tb_random_input(long n) {
  std::vector<T> a(n);
  unsigned s = 12345;
  for (long i = 0; i < n; ++i) { s = s * 1664525u + 1013904223u; a[i] = T((s >> 8) % 1000) / 1000; }
  return a;
}

// The CPU reference: `steps` steps of Stencil::apply over the interior of an nx x ny x nz array
// (nz = 1 in 2D), the boundary ring of width R keeping its values.
struct TbHostAccess {
  template <class T>
  struct At {
    const T* c;
    long sy, sz;
    T operator()(int dx, int dy, int dz) const { return c[dx + dy * sy + dz * sz]; }
  };
};
template <class Stencil, class T>
std::vector<T> tb_reference(std::vector<T> u, long nx, long ny, long nz, int steps, int R) {
  const long z0 = nz > 1 ? R : 0, z1 = nz > 1 ? nz - R : 1;
  std::vector<T> next;
  for (int st = 0; st < steps; ++st) {
    next = u;
    for (long z = z0; z < z1; ++z)
      for (long y = R; y < ny - R; ++y)
        for (long x = R; x < nx - R; ++x) {
          const long i = x + nx * (y + ny * z);
          next[i] = Stencil::apply(TbHostAccess::At<T>{&u[i], nx, nx * ny});
        }
    u.swap(next);
  }
  return u;
}
