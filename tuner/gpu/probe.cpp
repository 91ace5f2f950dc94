// The microbenchmarks of `tbtune probe`. Each one launches a kernel of templates/probe.cuh that
// does a known amount of work, times it with CUDA events and turns the median time into a rate.
// Sizes are fixed so that on an H100 every launch takes about 1-3 ms: long against the event
// resolution (~0.5 us) and launch overhead, short enough that the whole probe stays well under
// a second of GPU time.
#include "tuner/gpu/probe.hpp"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>

#include "tuner/codegen/templates.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

constexpr unsigned kThreads = 256;
constexpr std::size_t kMiB = 1024 * 1024;
// Copy buffers: each far larger than any L2 (50-60 MB on H100/H200), so the copy runs from HBM.
constexpr std::size_t kCopyBytes = 512 * kMiB;
// Must match PROBE_SMEM_LOADS and PROBE_FMA_CHAINS in templates/probe.cuh.
constexpr double kSmemLoadsPerIter = 8, kFmaChains = 8;
constexpr int kSmemIters = 4096, kFma64Iters = 8192, kFma32Iters = 16384;
constexpr int kSyncsShort = 200, kSyncsLong = 2200;
// Pointer chase: slots 256 B apart (own cache line and sector), 256 MiB in all; every timed
// repetition walks its own stretch of the cycle, so no hop finds its line already cached.
constexpr unsigned kChaseStrideWords = 64;
constexpr unsigned kChaseSlots = 1u << 20;
constexpr int kChaseSteps = 2000;

Launch grid_of(unsigned blocks, bool cooperative = false) {
  Launch l;
  l.grid = {blocks, 1, 1};
  l.block = {kThreads, 1, 1};
  l.cooperative = cooperative;
  return l;
}

/// Blocks that fill the device with `kernel` at kThreads threads: occupancy x SMs.
unsigned full_grid(const void* kernel, const DeviceInfo& d) {
  const int per_sm = resident_blocks_per_sm(kernel, grid_of(1));
  if (per_sm < 1) throw CudaError("probe: a probe kernel cannot be resident on an SM");
  return unsigned(per_sm * d.sm_count);
}

/// Times `run` once as a warm-up, then `reps` times; returns the median, adds all to `total`.
template <class F>
double median_time(F&& run, int reps, double& total) {
  EventTimer timer;
  std::vector<double> times;
  for (int r = 0; r <= reps; ++r) {
    timer.start();
    run();
    const double s = timer.stop();
    total += s;
    if (r > 0) times.push_back(s);  // run 0 is the warm-up
  }
  synchronize();  // surfaces any error a kernel raised
  return median_of(std::move(times));
}

struct Context {
  const DeviceInfo& device;
  const LoadedModule& module;
  int reps;
  double gpu_seconds = 0;
};

double measure_copy(Context& c, const DeviceBuffer& in, DeviceBuffer& out) {
  const void* k = c.module.kernel("probe_copy");
  const Launch l = grid_of(full_grid(k, c.device));
  const void* src = in.get();
  void* dst = out.get();
  long long n = static_cast<long long>(in.bytes() / 16);
  void* args[] = {&src, &dst, &n};
  const double s = median_time([&] { launch_kernel_args(k, l, args); }, c.reps, c.gpu_seconds);
  return 2.0 * double(n) * 16.0 / s;
}

double measure_smem(Context& c) {
  const void* k = c.module.kernel("probe_smem");
  const Launch l = grid_of(full_grid(k, c.device));
  DeviceBuffer out(std::size_t(l.grid[0]) * kThreads * sizeof(float));
  void* o = out.get();
  int iters = kSmemIters;
  void* args[] = {&o, &iters};
  const double s = median_time([&] { launch_kernel_args(k, l, args); }, c.reps, c.gpu_seconds);
  return double(l.grid[0]) * kThreads * iters * kSmemLoadsPerIter * 4.0 / s;
}

template <class T>
double measure_fma(Context& c, const char* name, int iters) {
  const void* k = c.module.kernel(name);
  const Launch l = grid_of(full_grid(k, c.device));
  DeviceBuffer out(std::size_t(l.grid[0]) * kThreads * sizeof(T));
  void* o = out.get();
  // a = a * b + c converges to c / (1 - b) = 1: no overflow, no denormals, nothing constant.
  T b = T(0.999), add = T(0.001);
  void* args[] = {&o, &iters, &b, &add};
  const double s = median_time([&] { launch_kernel_args(k, l, args); }, c.reps, c.gpu_seconds);
  return double(l.grid[0]) * kThreads * double(iters) * kFmaChains * 2.0 / s;
}

double measure_grid_sync(Context& c) {
  const void* k = c.module.kernel("probe_grid_sync");
  (void)full_grid(k, c.device);  // checks that one block fits on an SM
  const Launch l = grid_of(unsigned(c.device.sm_count), true);
  DeviceBuffer out(sizeof(int));
  void* o = out.get();
  auto time_with = [&](int n) {
    void* args[] = {&n, &o};
    return median_time([&] { launch_kernel_args(k, l, args); }, c.reps, c.gpu_seconds);
  };
  // The difference cancels the cooperative launch's own cost.
  const double t_short = time_with(kSyncsShort);
  const double t_long = time_with(kSyncsLong);
  return std::max(t_long - t_short, 0.0) / (kSyncsLong - kSyncsShort);
}

/// Links the chase buffer into one random cycle; returns the slot order (slot indices).
std::vector<unsigned> init_chase(Context& c, DeviceBuffer& buf, unsigned slots) {
  std::vector<unsigned> order(slots);
  std::iota(order.begin(), order.end(), 0u);
  std::mt19937_64 rng(20231);  // fixed: the same cycle on every run
  std::shuffle(order.begin(), order.end(), rng);
  DeviceBuffer d_order(order.size() * sizeof(unsigned));
  d_order.upload(order.data(), d_order.bytes());
  const void* k = c.module.kernel("probe_chase_init");
  void* b = buf.get();
  const void* ord = d_order.get();
  int n = int(slots);
  unsigned stride = kChaseStrideWords;
  void* args[] = {&b, &ord, &n, &stride};
  launch_kernel_args(k, grid_of(unsigned(4 * c.device.sm_count)), args);
  synchronize();
  return order;
}

double measure_latency(Context& c, const DeviceBuffer& buf, const std::vector<unsigned>& order) {
  const void* k = c.module.kernel("probe_chase");
  Launch one = grid_of(1);
  one.block = {1, 1, 1};
  DeviceBuffer out(sizeof(unsigned));
  const void* b = buf.get();
  void* o = out.get();
  // Each run (warm-up included) starts where the last stopped, on lines no run has touched.
  std::size_t pos = 0;
  auto time_with = [&](int steps) {
    return median_time(
        [&] {
          unsigned start = order[pos % order.size()] * kChaseStrideWords;
          pos += std::size_t(steps);
          void* args[] = {&b, &start, &steps, &o};
          launch_kernel_args(k, one, args);
        },
        c.reps, c.gpu_seconds);
  };
  const double t_empty = time_with(0);  // launch overhead, subtracted below
  const double t_chase = time_with(kChaseSteps);
  return std::max(t_chase - t_empty, 0.0) / kChaseSteps;
}

}  // namespace

double median_of(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t m = v.size() / 2;
  return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

DeviceProfile probed_profile(const DeviceProfile& builtin, const std::string& device_name,
                             const ProbeFigures& f) {
  DeviceProfile p = builtin;
  p.name = "probed:" + device_name;
  auto take = [](double& field, double measured) {
    if (measured > 0) field = measured;
  };
  take(p.gm_bw, f.gm_bw);
  take(p.sm_bw, f.sm_bw);
  take(p.fp64_flops, f.fp64_flops);
  take(p.fp32_flops, f.fp32_flops);
  take(p.grid_sync_s, f.grid_sync_s);
  take(p.gm_latency_s, f.gm_latency_s);
  return p;
}

ProbeResult probe_device(const DeviceInfo& device, const ProbeOptions& options) {
  const std::string* source = embedded_template("probe.cuh");
  if (!source) throw Error("probe: the template probe.cuh is not embedded in this build");
  const CompiledModule compiled =
      compile_cuda(*source, arch_for(device.cc_major, device.cc_minor), options.compile_cache_dir);
  const LoadedModule module(compiled.cubin);
  Context c{device, module, std::max(options.repetitions, 1)};

  // Smaller GPUs get smaller buffers: an eighth of the memory at most for each.
  const std::size_t cap = std::max<std::size_t>(std::size_t(device.memory_bytes) / 8, 16 * kMiB);
  const std::size_t copy_bytes = std::min(kCopyBytes, cap) / 16 * 16;
  const unsigned slots = unsigned(std::min<std::size_t>(
      kChaseSlots, cap / (kChaseStrideWords * sizeof(unsigned))));
  if (std::size_t(slots) < std::size_t(kChaseSteps) * std::size_t(2 * c.reps + 2))
    throw Error("probe: too little GPU memory for the latency benchmark");

  DeviceBuffer chase(std::size_t(slots) * kChaseStrideWords * sizeof(unsigned));
  const std::vector<unsigned> order = init_chase(c, chase, slots);

  ProbeResult r;
  r.device = device;
  r.builtin = profile_for(device);
  {
    // The contents do not matter to a copy, so the buffers are left as cudaMalloc gives them.
    DeviceBuffer in(copy_bytes), out(copy_bytes);
    // Runs right after init_chase on purpose: it also evicts the chase lines from L2.
    r.figures.gm_bw = measure_copy(c, in, out);
  }
  r.figures.sm_bw = measure_smem(c);
  r.figures.fp64_flops = measure_fma<double>(c, "probe_fma64", kFma64Iters);
  r.figures.fp32_flops = measure_fma<float>(c, "probe_fma32", kFma32Iters);
  r.figures.grid_sync_s = measure_grid_sync(c);
  r.figures.gm_latency_s = measure_latency(c, chase, order);
  r.profile = probed_profile(r.builtin, device.name, r.figures);
  r.gpu_seconds = c.gpu_seconds;
  return r;
}

DeviceProfile profile_for(const DeviceInfo& d) {
  std::string base = "h100";
  if (d.cc_major == 8) base = "a100";
  if (d.name.find("H200") != std::string::npos) base = "h200";
  DeviceProfile p = *builtin_profile(base);
  p.name = base + " (" + d.name + ")";
  p.cc_major = d.cc_major;
  p.cc_minor = d.cc_minor;
  p.sm_count = d.sm_count;
  p.smem_per_sm = d.smem_per_sm;
  p.smem_per_block = d.smem_per_block_optin;
  p.regs_per_sm = d.regs_per_sm;
  p.max_threads_per_sm = d.max_threads_per_sm;
  p.max_blocks_per_sm = d.max_blocks_per_sm;
  p.l2_bytes = d.l2_bytes;
  return p;
}

}  // namespace tbtune
