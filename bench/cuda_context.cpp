// Creates the CUDA context on device 0 and exits: what scripts/app-gpu-check.sh times as the
// floor of an application's start-up, next to a `tbtune lookup` process.
#include <cuda_runtime.h>

#include <cstdio>

int main() {
  const cudaError_t e = cudaFree(nullptr);
  if (e != cudaSuccess) {
    std::fprintf(stderr, "cuda_context: %s\n", cudaGetErrorString(e));
    return 1;
  }
  return 0;
}
