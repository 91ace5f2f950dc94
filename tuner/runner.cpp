#include "tuner/runner.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "tuner/error.hpp"
#include "tuner/reference.hpp"
#include "tuner/verify.hpp"

namespace tbtune {

// The two kernels of a candidate with their launch geometry, resolved once per measurement.
struct Runner::Kernels {
  const void* full = nullptr;
  const void* step = nullptr;
  Launch full_launch, step_launch;
  int depth = 1;
};

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

// Occupancy from the kernel's real resource use, then the strategy's geometry for it.
Launch resolve(const Strategy& s, const Problem& p, const Params& params, bool full,
               const void* kernel, const DeviceInfo& d) {
  LaunchContext ctx{d.sm_count, 1};
  Launch l = s.launch(p, params, full, ctx);  // block size and smem do not depend on ctx
  ctx.resident_blocks_per_sm = resident_blocks_per_sm(kernel, l);
  if (ctx.resident_blocks_per_sm == 0)
    throw Error(fmt::format("{} kernel cannot run: {} threads with {} bytes of dynamic shared memory "
                            "do not fit on one SM", full ? "full" : "step",
                            l.block[0] * l.block[1] * l.block[2], l.dynamic_smem));
  l = s.launch(p, params, full, ctx);
  const long blocks = long(l.grid[0]) * l.grid[1] * l.grid[2];
  if (l.cooperative && blocks > long(ctx.resident_blocks_per_sm) * d.sm_count)
    throw Error(fmt::format("{} kernel needs {} co-resident blocks but only {} x {} SMs fit",
                            full ? "full" : "step", blocks, ctx.resident_blocks_per_sm, d.sm_count));
  return l;
}

}  // namespace

Runner::Runner(const Problem& problem, const DeviceInfo& device, std::uint64_t seed)
    : problem_(problem), device_(device),
      bytes_(std::size_t(problem.total_cells()) * std::size_t(dtype_bytes(problem.dtype))),
      input_(bytes_), a_(bytes_), b_(bytes_) {
  const auto host = input_bytes(problem, seed);
  input_.upload(host.data(), bytes_);
}

void Runner::reset() {
  // Both buffers start as the input, so the boundary ring, which no kernel writes, is right in
  // whichever buffer ends up holding the result.
  a_.copy_from(input_);
  b_.copy_from(input_);
}

void Runner::run_steps(const Kernels& k) {
  const int nx = int(problem_.domain[0]), ny = int(problem_.domain[1]), nz = int(problem_.domain[2]);
  DeviceBuffer* cur = &a_;
  DeviceBuffer* next = &b_;
  const long full_launches = problem_.steps / k.depth;
  const long rest = problem_.steps % k.depth;
  for (long i = 0; i < full_launches + rest; ++i) {
    const bool full = i < full_launches;
    launch_kernel(full ? k.full : k.step, full ? k.full_launch : k.step_launch, cur->get(),
                  next->get(), nx, ny, nz, scratch_.get());
    std::swap(cur, next);
  }
  result_in_a_ = cur == &a_;
}

Measurement Runner::measure(const Strategy& strategy, const Params& params,
                            const CompiledModule& module,
                            const std::vector<unsigned char>* reference,
                            const TimingOptions& timing) {
  LoadedModule loaded(module.cubin);
  Kernels k;
  k.depth = strategy.depth(params);
  k.full = loaded.kernel(kFullKernel);
  k.step = loaded.kernel(kStepKernel);
  k.full_launch = resolve(strategy, problem_, params, true, k.full, device_);
  k.step_launch = resolve(strategy, problem_, params, false, k.step, device_);
  const std::size_t scratch_bytes = std::max(k.full_launch.scratch_elems, k.step_launch.scratch_elems) *
                                    std::size_t(dtype_bytes(problem_.dtype));
  if (scratch_bytes > scratch_.bytes()) scratch_ = DeviceBuffer(scratch_bytes);

  Measurement m;
  if (auto it = module.kernels.find(kFullKernel); it != module.kernels.end()) {
    m.registers = it->second.registers;
    m.spill_bytes = it->second.spill_bytes();
    m.smem_bytes = it->second.smem_bytes + long(k.full_launch.dynamic_smem);
  }

  // First run: checked, and it warms up caches and the module.
  reset();
  run_steps(k);
  synchronize();
  output_.resize(bytes_);
  (result_in_a_ ? a_ : b_).download(output_.data(), bytes_);
  if (reference)
    m.max_error = max_error(problem_.dtype, output_.data(), reference->data(),
                            std::size_t(problem_.total_cells()));

  std::vector<double> times;
  double total = 0;
  EventTimer timer;
  while (int(times.size()) < timing.max_reps &&
         (int(times.size()) < timing.min_reps || total < timing.min_seconds)) {
    reset();
    timer.start();
    run_steps(k);
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
