#pragma once
/// @file device_compare.hpp
/// Verification on the GPU: the largest relative error of a result against a reference that
/// are both in device memory, with the rule of max_error (tuner/verify.hpp). The tuner checks
/// every candidate this way, so a multi-GB result is neither downloaded nor walked on the host.
#include <cstddef>
#include <memory>
#include <string>

#include "tuner/gpu/gpu.hpp"
#include "tuner/spec/spec.hpp"

namespace tbtune {

class DeviceComparer {
 public:
  /// Compiles templates/compare.cuh for `device` (reusing `compile_cache_dir` if not empty) and
  /// loads it into the current context.
  DeviceComparer(const DeviceInfo& device, const std::string& compile_cache_dir);
  ~DeviceComparer();
  DeviceComparer(const DeviceComparer&) = delete;
  DeviceComparer& operator=(const DeviceComparer&) = delete;

  /// max_error(dtype, result, reference, n) computed on the device; both point to `n` values of
  /// `dtype` in device memory. Waits for the result; throws CudaError when a launch fails.
  [[nodiscard]] double max_error(DType dtype, const void* result, const void* reference,
                                 std::size_t n);

 private:
  std::unique_ptr<LoadedModule> module_;
  DeviceBuffer worst_;  ///< one unsigned long long: the bits of the largest error
  unsigned grid_ = 0;   ///< blocks of kThreads that fill the device
};

}  // namespace tbtune
