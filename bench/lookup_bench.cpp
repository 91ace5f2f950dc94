// GPU benchmarks of the application lookup, on a cache a tune has filled:
//   TBTUNE_DB=cache.db build/bench/lookup_bench SPEC NXxNY[xNZ]
// SPEC must be tuned in the cache at that domain with its own steps. The CUDA context is created
// before timing starts, as an application has it when it looks up. Without a GPU or a winner,
// each benchmark skips and says why. BM_LookupHitFirst is a process's first hit of the cache (it
// opens the file), BM_LookupHit every later one (the process keeps the connection: CacheReader).
#include <benchmark/benchmark.h>

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "db/cache.hpp"  // CacheReader::close_idle(): a first lookup again
#include "tbtune/tbtune.hpp"

namespace {

std::string g_spec;
std::array<long, 3> g_domain{1, 1, 1};

tbtune::LookupOptions options(tbtune::MissPolicy policy) {
  tbtune::LookupOptions o;
  o.domain = g_domain;
  o.policy = policy;
  return o;
}

/// Whether the cache holds a winner for the spec at g_domain; otherwise the benchmark skips.
bool hit_or_skip(benchmark::State& state, const tbtune::StencilSpec& spec) {
  if (tbtune::lookup(spec, options(tbtune::MissPolicy::Fail)).hit()) return true;
  state.SkipWithError("no winner for this spec and domain in the cache");
  return false;
}

/// A later hit, as every lookup after a process's first of the cache: find the winner through
/// the process's pooled read-only connection (CacheReader), load its CUBIN. No NVRTC. (The name
/// is the one scripts/app-gpu-check.sh reads.)
void BM_LookupHit(benchmark::State& state) {
  const auto spec = tbtune::StencilSpec::from_file(g_spec);
  if (!hit_or_skip(state, spec)) return;
  for (auto _ : state) {
    auto l = tbtune::lookup(spec, options(tbtune::MissPolicy::Fail));
    benchmark::DoNotOptimize(l.kernel);
  }
}
BENCHMARK(BM_LookupHit)->Unit(benchmark::kMicrosecond);

/// A process's first hit of the cache: the pooled connection is closed before each lookup
/// (outside the timing), so each one opens the cache read-only (schema read, WAL index), then
/// finds the winner and loads its CUBIN. A read-only connection leaves the -wal and -shm
/// behind when it closes, so only the process's first iteration creates them; a start just
/// after a tune (whose close removed them) creates them too, which this does not time.
void BM_LookupHitFirst(benchmark::State& state) {
  const auto spec = tbtune::StencilSpec::from_file(g_spec);
  if (!hit_or_skip(state, spec)) return;
  for (auto _ : state) {
    state.PauseTiming();
    tbtune::CacheReader::close_idle();
    state.ResumeTiming();
    auto l = tbtune::lookup(spec, options(tbtune::MissPolicy::Fail));
    benchmark::DoNotOptimize(l.kernel);
  }
}
BENCHMARK(BM_LookupHitFirst)->Unit(benchmark::kMicrosecond);

/// A miss under the fail policy (another domain): the reason and nothing loaded.
void BM_LookupMiss(benchmark::State& state) {
  const auto spec = tbtune::StencilSpec::from_file(g_spec);
  auto o = options(tbtune::MissPolicy::Fail);
  (*o.domain)[0] += 2;
  for (auto _ : state) {
    auto l = tbtune::lookup(spec, o);
    benchmark::DoNotOptimize(l.reason);
  }
}
BENCHMARK(BM_LookupMiss)->Unit(benchmark::kMicrosecond);

/// The nearest fallback for another domain, compiled with NVRTC each time: each iteration works
/// on a fresh copy of the cache (copied outside the timing) and an empty CUBIN folder, so it is
/// the first start's cost, store included.
void BM_LookupNearest(benchmark::State& state) {
  const auto spec = tbtune::StencilSpec::from_file(g_spec);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tbtune_bench_nearest";
  const char* db = std::getenv("TBTUNE_DB");
  if (!db || !std::filesystem::exists(db)) {
    state.SkipWithError("set TBTUNE_DB to the tuned cache");
    return;
  }
  auto o = options(tbtune::MissPolicy::Nearest);
  (*o.domain)[0] += 2;
  o.db = (dir / "copy.db").string();
  o.compile_cache_dir = (dir / "cubins").string();
  for (auto _ : state) {
    state.PauseTiming();
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::filesystem::copy_file(db, o.db);
    state.ResumeTiming();
    auto l = tbtune::lookup(spec, o);
    if (l.source != tbtune::KernelSource::Nearest) {
      state.SkipWithError(l.message.c_str());
      break;  // a skipped benchmark must not pause or resume its timer again
    }
  }
  std::filesystem::remove_all(dir);
}
BENCHMARK(BM_LookupNearest)->Unit(benchmark::kMillisecond)->Iterations(5);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (argc != 3) {
    std::fprintf(stderr, "usage: TBTUNE_DB=cache.db lookup_bench SPEC NXxNY[xNZ] [--benchmark_...]\n");
    return 2;
  }
  g_spec = argv[1];
  if (std::sscanf(argv[2], "%ldx%ldx%ld", &g_domain[0], &g_domain[1], &g_domain[2]) < 2) {
    std::fprintf(stderr, "lookup_bench: domain '%s': expected NXxNY[xNZ]\n", argv[2]);
    return 2;
  }
  // The context up front: an application has one before it looks up.
  if (cudaFree(nullptr) != cudaSuccess) std::fprintf(stderr, "lookup_bench: no usable GPU\n");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
