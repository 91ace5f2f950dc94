#pragma once
/// @file gpu.hpp
/// A thin layer over the CUDA runtime (linked statically; it opens the driver at run time, so
/// the binary starts on machines without one): device discovery, buffers, CUBIN loading,
/// occupancy, launches and event timing. Every failing call throws CudaError naming the call
/// and the source line; no driver or no device throws NoGpuError.
#include <cstddef>
#include <mutex>
#include <optional>
#include <string>

#include "tuner/codegen/strategy.hpp"

namespace tbtune {

struct DeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long memory_bytes = 0;
  int driver_version = 0;
  long smem_per_sm = 0;
  long smem_per_block_optin = 0;
  int regs_per_sm = 0;
  int max_threads_per_sm = 0;
  int max_blocks_per_sm = 0;
  long l2_bytes = 0;
  double clock_ghz = 0;
};

/// Selects device `index` and describes it. Throws NoGpuError when there is no driver or device.
[[nodiscard]] DeviceInfo open_device(int index);
/// Describes the calling thread's current device without changing it (an application's MPI rank
/// has chosen its GPU). Throws NoGpuError when there is no driver or device.
[[nodiscard]] DeviceInfo current_device();
/// Describes device `index` without selecting it.
[[nodiscard]] DeviceInfo describe_device(int index);

/// How many bytes of the device allocation that holds `ptr` lie at and after it, as the driver
/// records the allocation (cuMemGetAddressRange, reached through the runtime so that libcuda
/// is not linked); nullopt when the driver cannot say: memory it did not allocate (host
/// memory, which some systems let kernels read), or a driver without the entry point. Lets
/// a run refuse arrays smaller than its domain instead of writing past them.
[[nodiscard]] std::optional<std::size_t> device_bytes_after(const void* ptr);

/// Device memory, freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(std::size_t bytes);
  ~DeviceBuffer();
  DeviceBuffer(DeviceBuffer&& o) noexcept;
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept;
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  [[nodiscard]] void* get() const { return ptr_; }
  [[nodiscard]] std::size_t bytes() const { return bytes_; }
  void upload(const void* host, std::size_t bytes);
  void download(void* host, std::size_t bytes) const;
  void copy_from(const DeviceBuffer& other);

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// A CUBIN loaded into the current context; kernels are looked up by name.
class LoadedModule {
 public:
  explicit LoadedModule(const std::string& cubin);
  ~LoadedModule();
  LoadedModule(const LoadedModule&) = delete;
  LoadedModule& operator=(const LoadedModule&) = delete;
  /// Opaque kernel handle for launch(); throws CudaError if there is no such kernel.
  [[nodiscard]] const void* kernel(const char* name) const;
  /// The kernel called `name`, or nullptr when the module has none.
  [[nodiscard]] const void* find_kernel(const char* name) const;

 private:
  void* lib_ = nullptr;
};

/// Blocks of `kernel` that fit on one SM with `launch`'s block size and dynamic shared memory;
/// also raises the kernel's dynamic shared-memory limit when it needs more than 48 KiB.
[[nodiscard]] int resident_blocks_per_sm(const void* kernel, const Launch& launch);

/// Launches `kernel` with the standard arguments (in, out, nx, ny, nz, scratch) on `stream`
/// (a cudaStream_t; nullptr: the default stream).
void launch_kernel(const void* kernel, const Launch& launch, const void* in, void* out, int nx,
                   int ny, int nz, void* scratch, void* stream = nullptr);

/// Launches `kernel` with any argument list: `args[i]` points at the i-th argument's value, as
/// for cudaLaunchKernel. Cooperative when `launch.cooperative`.
void launch_kernel_args(const void* kernel, const Launch& launch, void** args, void* stream = nullptr);

/// A second stream whose work runs beside a caller's stream (a cudaStream_t; nullptr: the
/// default stream).
class SideStream {
 public:
  SideStream();
  ~SideStream();
  SideStream(const SideStream&) = delete;
  SideStream& operator=(const SideStream&) = delete;
  /// Calls `queue(side)`, where work queued on `side` starts after what `stream` had queued
  /// before and what `stream` queues next waits for it. One call at a time across threads:
  /// the two events are shared.
  template <class F>
  void beside(void* stream, F&& queue) {
    const std::lock_guard<std::mutex> lock(mutex_);
    fork(stream);
    queue(stream_);
    join(stream);
  }

 private:
  void fork(void* stream);
  void join(void* stream);
  std::mutex mutex_;
  void* stream_ = nullptr;
  void* forked_ = nullptr;  // events
  void* done_ = nullptr;
};

/// Waits for the device and throws CudaError for any error a kernel raised.
void synchronize();

/// Times device work between start() and stop() with CUDA events, in seconds.
class EventTimer {
 public:
  EventTimer();
  ~EventTimer();
  EventTimer(const EventTimer&) = delete;
  EventTimer& operator=(const EventTimer&) = delete;
  void start();
  [[nodiscard]] double stop();

 private:
  void* begin_ = nullptr;
  void* end_ = nullptr;
};

}  // namespace tbtune
