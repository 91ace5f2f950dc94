// Host emulation of the CUDA features the tile3d template uses: one std::thread per CUDA thread.
#include <algorithm>
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <memory>
#include <vector>
using std::max; using std::min;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(a, b)
#define __shared__
#define __align__(n)
struct U3 { unsigned x = 0, y = 0, z = 0; };
thread_local U3 threadIdx, blockIdx;
U3 gridDim, blockDim;
thread_local std::barrier<>* blk_bar;
std::barrier<>* grid_bar;
thread_local unsigned char* tb_block_smem;
inline void __syncthreads() { blk_bar->arrive_and_wait(); }
template <class T> T __ldg(const T* p) { return *p; }
template <class T> T __ldcg(const T* p) { return *p; }
template <class T> void __stcg(T* p, T v) { *p = v; }
namespace cooperative_groups {
struct G { void sync() { grid_bar->arrive_and_wait(); } };
inline G this_grid() { return {}; }
}
