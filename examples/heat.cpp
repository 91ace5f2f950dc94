// A heat-equation application in C++: look the tuned kernel up at start-up (with a miss policy),
// run the time loop, print GCells/s, and check the result against the naive kernel.
//   heat_cpp SPEC [fail|naive|nearest|model] [--no-check]
// --no-check skips the comparison (which compiles the naive kernel with NVRTC): a run that hits
// then needs no NVRTC at all. Exit: 0 matches the naive kernel, 1 differs, 2 error, 3 no kernel (a miss under fail, no GPU).
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "tbtune/tbtune.h"  // device memory helpers: this application does not use CUDA itself
#include "tbtune/tbtune.hpp"

namespace {

void check(tbtune_status s) {
  if (s != TBTUNE_OK) throw tbtune::ApiError(static_cast<tbtune::ErrorCode>(s), tbtune_last_message());
}

/// Runs `kernel` for `steps` from `init`; returns the final field and the seconds it took.
std::vector<double> simulate(tbtune::TunedKernel& kernel, const std::vector<double>& init, long steps,
                             double& seconds) {
  const std::size_t bytes = init.size() * sizeof(double);
  void *a = nullptr, *b = nullptr;
  check(tbtune_device_alloc(bytes, &a));
  check(tbtune_device_alloc(bytes, &b));
  check(tbtune_copy_to_device(a, init.data(), bytes));
  check(tbtune_copy_to_device(b, init.data(), bytes));  // both hold the fixed boundary ring
  const auto start = std::chrono::steady_clock::now();
  void* result = kernel.run(a, b, steps, /*stream=*/nullptr);
  check(tbtune_synchronize());
  seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::vector<double> out(init.size());
  check(tbtune_copy_to_host(out.data(), result, bytes));
  check(tbtune_device_free(a));
  check(tbtune_device_free(b));
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: heat_cpp SPEC [fail|naive|nearest|model] [--no-check]\n");
    return 2;
  }
  try {
    const auto spec = tbtune::StencilSpec::from_file(argv[1]);
    tbtune::LookupOptions options;
    if (argc > 2) options.policy = tbtune::parse_policy(argv[2]);
    options.on_fallback = [](const tbtune::FallbackEvent& e) {
      std::printf("fallback: %s\n", e.message.c_str());
    };
    tbtune::Lookup found = tbtune::lookup(spec, options);
    std::printf("lookup: %s\n", found.message.c_str());
    if (!found.kernel) return 3;

    const auto [nx, ny, nz] = found.kernel->domain();
    std::vector<double> field(std::size_t(nx * ny * nz));
    for (long y = 0; y < ny; ++y)  // a hot square in a cold plate
      for (long x = 0; x < nx; ++x)
        field[std::size_t(y * nx + x)] = (std::abs(x - nx / 2) < nx / 8 && std::abs(y - ny / 2) < ny / 8) ? 1.0 : 0.0;

    double seconds = 0, naive_seconds = 0;
    const long steps = spec.steps();
    const auto tuned = simulate(*found.kernel, field, steps, seconds);
    const long r = spec.radius();
    const double cells = double(nx - 2 * r) * double(ny - 2 * r);
    std::printf("%s: %s, %ld steps of %ldx%ld in %.3f s: %.1f GCells/s\n", spec.name().c_str(),
                found.kernel->strategy().c_str(), steps, nx, ny, seconds, cells * double(steps) / seconds / 1e9);

    if (argc > 3 && std::string(argv[3]) == "--no-check") return 0;

    tbtune::LookupOptions same;
    same.domain = found.kernel->domain();
    auto naive = tbtune::naive_kernel(spec, same);
    const auto expected = simulate(naive, field, steps, naive_seconds);
    double worst = 0;
    for (std::size_t i = 0; i < tuned.size(); ++i)
      worst = std::max(worst, std::abs(tuned[i] - expected[i]) / std::max(std::abs(expected[i]), 1.0));
    const bool same_result = worst <= 1e-9;
    std::printf("%s: max relative difference to the naive kernel %.3g (naive: %.1f GCells/s)\n",
                same_result ? "PASS" : "FAIL", worst, cells * double(steps) / naive_seconds / 1e9);
    return same_result ? 0 : 1;
  } catch (const tbtune::ApiError& e) {
    std::fprintf(stderr, "heat_cpp: %s\n", e.what());
    return 2;
  }
}
