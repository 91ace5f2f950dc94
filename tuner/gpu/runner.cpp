#include "tuner/gpu/runner.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tuner/gpu/kernel_set.hpp"
#include "tuner/gpu/reference.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

namespace {

std::vector<unsigned char> input_bytes(const Problem& p, std::uint64_t seed) {
  std::vector<unsigned char> bytes;
  if (p.dtype == DType::Float) {
    const auto v = make_input<float>(p, seed);
    bytes.assign(reinterpret_cast<const unsigned char*>(v.data()),
                 reinterpret_cast<const unsigned char*>(v.data() + v.size()));
  } else {
    const auto v = make_input<double>(p, seed);
    bytes.assign(reinterpret_cast<const unsigned char*>(v.data()),
                 reinterpret_cast<const unsigned char*>(v.data() + v.size()));
  }
  return bytes;
}

}  // namespace

Runner::Runner(const Problem& problem, const DeviceInfo& device, std::uint64_t seed,
               const std::string& compile_cache_dir)
    : problem_(problem), device_(device),
      bytes_(std::size_t(problem.total_cells()) * std::size_t(dtype_bytes(problem.dtype))),
      input_(bytes_), a_(bytes_), b_(bytes_), comparer_(device, compile_cache_dir) {
  const auto host = input_bytes(problem, seed);
  input_.upload(host.data(), bytes_);
}

void Runner::reset() {
  // Both buffers start as the input, so the boundary ring, which no kernel writes, is right in
  // whichever buffer ends up holding the result.
  a_.copy_from(input_);
  b_.copy_from(input_);
}

Measurement Runner::measure(const Strategy& strategy, const Params& params,
                            const CompiledModule& module, const DeviceBuffer* reference,
                            const TimingOptions& timing, std::vector<unsigned char>* output) {
  KernelSet kernels(strategy, params, problem_, module.cubin, device_);

  Measurement m;
  if (auto it = module.kernels.find(kFullKernel); it != module.kernels.end()) {
    m.registers = it->second.registers;
    m.spill_bytes = it->second.spill_bytes();
    m.smem_bytes = it->second.smem_bytes + long(kernels.full_launch().dynamic_smem);
  }

  // First run: checked, and it warms up caches and the module.
  reset();
  const void* result = kernels.run(a_.get(), b_.get(), problem_.steps);
  synchronize();
  if (reference)
    m.max_error = comparer_.max_error(problem_.dtype, result, reference->get(),
                                      std::size_t(problem_.total_cells()));
  if (output) {
    output->resize(bytes_);
    (result == a_.get() ? a_ : b_).download(output->data(), bytes_);
  }

  std::vector<double> times;
  double total = 0;
  EventTimer timer;
  while (int(times.size()) < timing.max_reps &&
         (int(times.size()) < timing.min_reps || total < timing.min_seconds)) {
    reset();
    timer.start();
    (void)kernels.run(a_.get(), b_.get(), problem_.steps);
    const double s = timer.stop();
    times.push_back(s);
    total += s;
  }
  synchronize();
  std::sort(times.begin(), times.end());
  m.repetitions = int(times.size());
  m.seconds_min = times.front();
  m.seconds_median = times[times.size() / 2];
  return m;
}

}  // namespace tbtune
