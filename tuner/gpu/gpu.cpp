#include "tuner/gpu/gpu.hpp"

#include <cuda_runtime.h>

#include <map>
#include <mutex>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

[[noreturn]] void fail(cudaError_t e, const char* call, int line) {
  // Reset the error state so a failed, non-sticky call (a bad launch configuration) does not
  // surface again at the next unrelated check; sticky errors stay.
  (void)cudaGetLastError();
  const std::string msg = fmt::format("CUDA error in {} (tuner/gpu.cpp:{}): {} ({})", call, line,
                                      cudaGetErrorString(e), cudaGetErrorName(e));
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver)
    throw NoGpuError(msg);
  throw CudaError(msg);
}

#define TB_CUDA(call)                                   \
  do {                                                  \
    const cudaError_t tb_err_ = (call);                 \
    if (tb_err_ != cudaSuccess) fail(tb_err_, #call, __LINE__); \
  } while (0)

}  // namespace

DeviceInfo open_device(int index) {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0))
    throw NoGpuError("no NVIDIA GPU is usable here (" +
                     std::string(e == cudaSuccess ? "no device" : cudaGetErrorString(e)) + ")");
  if (e != cudaSuccess) fail(e, "cudaGetDeviceCount", __LINE__);
  if (index < 0 || index >= count)
    throw UsageError(fmt::format("--device {}: this machine has {} GPU(s), numbered 0..{}", index,
                                 count, count - 1));
  TB_CUDA(cudaSetDevice(index));
  return describe_device(index);
}

DeviceInfo current_device() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e == cudaErrorNoDevice || e == cudaErrorInsufficientDriver || (e == cudaSuccess && count == 0))
    throw NoGpuError("no NVIDIA GPU is usable here (" +
                     std::string(e == cudaSuccess ? "no device" : cudaGetErrorString(e)) + ")");
  if (e != cudaSuccess) fail(e, "cudaGetDeviceCount", __LINE__);
  int index = 0;
  TB_CUDA(cudaGetDevice(&index));
  // A device's properties do not change while the process runs, and cudaGetDeviceProperties
  // (which queries every attribute) would otherwise be paid by every lookup.
  static std::mutex mutex;
  static std::map<int, DeviceInfo> known;
  const std::lock_guard<std::mutex> lock(mutex);
  auto it = known.find(index);
  if (it == known.end()) it = known.emplace(index, describe_device(index)).first;
  return it->second;
}

DeviceInfo describe_device(int index) {
  cudaDeviceProp p{};
  TB_CUDA(cudaGetDeviceProperties(&p, index));
  DeviceInfo d;
  d.index = index;
  d.name = p.name;
  d.cc_major = p.major;
  d.cc_minor = p.minor;
  d.sm_count = p.multiProcessorCount;
  d.memory_bytes = long(p.totalGlobalMem);
  TB_CUDA(cudaDriverGetVersion(&d.driver_version));
  d.smem_per_sm = long(p.sharedMemPerMultiprocessor);
  d.smem_per_block_optin = long(p.sharedMemPerBlockOptin);
  d.regs_per_sm = p.regsPerMultiprocessor;
  d.max_threads_per_sm = p.maxThreadsPerMultiProcessor;
  d.max_blocks_per_sm = p.maxBlocksPerMultiProcessor;
  d.l2_bytes = p.l2CacheSize;
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, index) == cudaSuccess) d.clock_ghz = khz / 1e6;
  return d;
}

std::optional<std::size_t> device_bytes_after(const void* ptr) {
  // CUresult cuMemGetAddressRange_v2(CUdeviceptr* base, size_t* size, CUdeviceptr ptr), typed
  // here so that this layer needs nothing else from cuda.h. Looked up once per process.
  using AddressRange = int (*)(unsigned long long*, std::size_t*, unsigned long long);
  static const AddressRange range = [] {
    void* fn = nullptr;
    cudaDriverEntryPointQueryResult found{};
    if (cudaGetDriverEntryPointByVersion("cuMemGetAddressRange", &fn, 12000, cudaEnableDefault, &found) !=
            cudaSuccess ||
        found != cudaDriverEntryPointSuccess) {
      (void)cudaGetLastError();  // not sticky, but not this caller's error either
      return AddressRange{};
    }
    return reinterpret_cast<AddressRange>(fn);
  }();
  if (!range || !ptr) return std::nullopt;
  const auto p = reinterpret_cast<unsigned long long>(ptr);
  unsigned long long base = 0;
  std::size_t size = 0;
  if (range(&base, &size, p) != 0 || p < base || p - base >= size) return std::nullopt;
  return std::size_t(base + size - p);
}

DeviceBuffer::DeviceBuffer(std::size_t bytes) : bytes_(bytes) {
  TB_CUDA(cudaMalloc(&ptr_, bytes));
}
DeviceBuffer::~DeviceBuffer() {
  if (ptr_) cudaFree(ptr_);
}
DeviceBuffer::DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) {
  o.ptr_ = nullptr;
  o.bytes_ = 0;
}
DeviceBuffer& DeviceBuffer::operator=(DeviceBuffer&& o) noexcept {
  if (this != &o) {
    if (ptr_) cudaFree(ptr_);
    ptr_ = o.ptr_;
    bytes_ = o.bytes_;
    o.ptr_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}
void DeviceBuffer::upload(const void* host, std::size_t bytes) {
  TB_CUDA(cudaMemcpy(ptr_, host, bytes, cudaMemcpyHostToDevice));
}
void DeviceBuffer::download(void* host, std::size_t bytes) const {
  TB_CUDA(cudaMemcpy(host, ptr_, bytes, cudaMemcpyDeviceToHost));
}
void DeviceBuffer::copy_from(const DeviceBuffer& other) {
  TB_CUDA(cudaMemcpy(ptr_, other.ptr_, std::min(bytes_, other.bytes_), cudaMemcpyDeviceToDevice));
}

LoadedModule::LoadedModule(const std::string& cubin) {
  cudaLibrary_t lib = nullptr;
  TB_CUDA(cudaLibraryLoadData(&lib, cubin.data(), nullptr, nullptr, 0, nullptr, nullptr, 0));
  lib_ = lib;
}
LoadedModule::~LoadedModule() {
  if (lib_) cudaLibraryUnload(static_cast<cudaLibrary_t>(lib_));
}
const void* LoadedModule::kernel(const char* name) const {
  cudaKernel_t k = nullptr;
  TB_CUDA(cudaLibraryGetKernel(&k, static_cast<cudaLibrary_t>(lib_), name));
  return reinterpret_cast<const void*>(k);
}

const void* LoadedModule::find_kernel(const char* name) const {
  cudaKernel_t k = nullptr;
  if (cudaLibraryGetKernel(&k, static_cast<cudaLibrary_t>(lib_), name) != cudaSuccess) {
    (void)cudaGetLastError();  // a missing symbol is not an error of the context; clear it
    return nullptr;
  }
  return reinterpret_cast<const void*>(k);
}

int resident_blocks_per_sm(const void* kernel, const Launch& launch) {
  if (launch.dynamic_smem > 48 * 1024)
    TB_CUDA(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                 int(launch.dynamic_smem)));
  int blocks = 0;
  const int threads = int(launch.block[0] * launch.block[1] * launch.block[2]);
  TB_CUDA(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&blocks, kernel, threads, launch.dynamic_smem));
  return blocks;
}

void launch_kernel(const void* kernel, const Launch& l, const void* in, void* out, int nx, int ny,
                   int nz, void* scratch, void* stream) {
  void* args[] = {&in, &out, &nx, &ny, &nz, &scratch};
  launch_kernel_args(kernel, l, args, stream);
}

void launch_kernel_args(const void* kernel, const Launch& l, void** args, void* stream) {
  const dim3 grid(l.grid[0], l.grid[1], l.grid[2]);
  const dim3 block(l.block[0], l.block[1], l.block[2]);
  const auto s = static_cast<cudaStream_t>(stream);
  if (l.cooperative)
    TB_CUDA(cudaLaunchCooperativeKernel(kernel, grid, block, args, l.dynamic_smem, s));
  else
    TB_CUDA(cudaLaunchKernel(kernel, grid, block, args, l.dynamic_smem, s));
}

SideStream::SideStream() {
  cudaStream_t s = nullptr;
  cudaEvent_t a = nullptr, b = nullptr;
  TB_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
  stream_ = s;
  TB_CUDA(cudaEventCreateWithFlags(&a, cudaEventDisableTiming));
  forked_ = a;
  TB_CUDA(cudaEventCreateWithFlags(&b, cudaEventDisableTiming));
  done_ = b;
}
SideStream::~SideStream() {
  if (done_) cudaEventDestroy(static_cast<cudaEvent_t>(done_));
  if (forked_) cudaEventDestroy(static_cast<cudaEvent_t>(forked_));
  cudaStreamDestroy(static_cast<cudaStream_t>(stream_));
}
void SideStream::fork(void* stream) {
  TB_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(forked_), static_cast<cudaStream_t>(stream)));
  TB_CUDA(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream_), static_cast<cudaEvent_t>(forked_), 0));
}
void SideStream::join(void* stream) {
  TB_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(done_), static_cast<cudaStream_t>(stream_)));
  TB_CUDA(cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(done_), 0));
}

void synchronize() {
  TB_CUDA(cudaGetLastError());
  TB_CUDA(cudaDeviceSynchronize());
}

EventTimer::EventTimer() {
  cudaEvent_t a = nullptr, b = nullptr;
  TB_CUDA(cudaEventCreate(&a));
  TB_CUDA(cudaEventCreate(&b));
  begin_ = a;
  end_ = b;
}
EventTimer::~EventTimer() {
  cudaEventDestroy(static_cast<cudaEvent_t>(begin_));
  cudaEventDestroy(static_cast<cudaEvent_t>(end_));
}
void EventTimer::start() { TB_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(begin_), nullptr)); }
double EventTimer::stop() {
  TB_CUDA(cudaEventRecord(static_cast<cudaEvent_t>(end_), nullptr));
  TB_CUDA(cudaEventSynchronize(static_cast<cudaEvent_t>(end_)));
  float ms = 0;
  TB_CUDA(cudaEventElapsedTime(&ms, static_cast<cudaEvent_t>(begin_), static_cast<cudaEvent_t>(end_)));
  return ms / 1e3;
}

}  // namespace tbtune
