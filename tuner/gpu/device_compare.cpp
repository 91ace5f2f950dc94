#include "tuner/gpu/device_compare.hpp"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "tuner/codegen/templates.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

constexpr unsigned kThreads = 256;

Launch launch_of(unsigned blocks) {
  Launch l;
  l.grid = {blocks, 1, 1};
  l.block = {kThreads, 1, 1};
  return l;
}

}  // namespace

DeviceComparer::DeviceComparer(const DeviceInfo& device, const std::string& compile_cache_dir)
    : worst_(sizeof(std::uint64_t)) {
  const std::string* source = embedded_template("compare.cuh");
  if (!source) throw Error("the template compare.cuh is not embedded in this build");
  const CompiledModule compiled =
      compile_cuda(*source, arch_for(device.cc_major, device.cc_minor), compile_cache_dir);
  module_ = std::make_unique<LoadedModule>(compiled.cubin);
  // A grid-stride loop over the whole array: enough blocks to fill every SM, no more.
  const int per_sm = resident_blocks_per_sm(module_->kernel("tb_max_error_double"), launch_of(1));
  grid_ = unsigned(std::max(per_sm, 1) * std::max(device.sm_count, 1));
}

DeviceComparer::~DeviceComparer() = default;

double DeviceComparer::max_error(DType dtype, const void* result, const void* reference,
                                 std::size_t n) {
  const std::uint64_t zero = 0;
  worst_.upload(&zero, sizeof zero);
  const void* kernel =
      module_->kernel(dtype == DType::Float ? "tb_max_error_float" : "tb_max_error_double");
  auto count = static_cast<long long>(n);
  void* worst = worst_.get();
  void* args[] = {&result, &reference, &count, &worst};
  launch_kernel_args(kernel, launch_of(grid_), args);
  std::uint64_t bits = 0;
  worst_.download(&bits, sizeof bits);  // waits for the kernel (a synchronous copy)
  synchronize();                        // and surfaces any error it raised
  double e = 0;
  std::memcpy(&e, &bits, sizeof e);
  return e;
}

}  // namespace tbtune
