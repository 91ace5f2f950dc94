// The C API's device memory helpers (tbtune.h), for applications that do not call the CUDA
// runtime themselves, and the thread-local last message.
#include <cuda_runtime.h>

#include <string>

#include "tuner/api/c_status.hpp"

namespace tbtune::capi {
namespace {

thread_local std::string g_message;

tbtune_status cuda(cudaError_t e, const char* call) {
  if (e == cudaSuccess) {
    set_message("");
    return TBTUNE_OK;
  }
  (void)cudaGetLastError();  // a failed, non-sticky call must not surface at the next check
  set_message(std::string(call) + ": " + cudaGetErrorString(e));
  return TBTUNE_ERR_CUDA;
}

}  // namespace

void set_message(std::string text) { g_message = std::move(text); }
const char* message() { return g_message.c_str(); }

}  // namespace tbtune::capi

using tbtune::capi::cuda;

extern "C" {

tbtune_status tbtune_device_alloc(size_t bytes, void** ptr) {
  if (!ptr) {
    tbtune::capi::set_message("tbtune_device_alloc: ptr must not be NULL");
    return TBTUNE_ERR_BAD_ARGUMENT;
  }
  *ptr = nullptr;
  return cuda(cudaMalloc(ptr, bytes), "cudaMalloc");
}

tbtune_status tbtune_device_free(void* ptr) { return cuda(cudaFree(ptr), "cudaFree"); }

tbtune_status tbtune_copy_to_device(void* dst, const void* src, size_t bytes) {
  if (!dst || !src) {
    tbtune::capi::set_message("tbtune_copy_to_device: pointers must not be NULL");
    return TBTUNE_ERR_BAD_ARGUMENT;
  }
  return cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyHostToDevice), "cudaMemcpy");
}

tbtune_status tbtune_copy_to_host(void* dst, const void* src, size_t bytes) {
  if (!dst || !src) {
    tbtune::capi::set_message("tbtune_copy_to_host: pointers must not be NULL");
    return TBTUNE_ERR_BAD_ARGUMENT;
  }
  return cuda(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
}

tbtune_status tbtune_synchronize(void) { return cuda(cudaDeviceSynchronize(), "cudaDeviceSynchronize"); }

}  // extern "C"
