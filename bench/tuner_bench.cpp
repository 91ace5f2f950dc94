// CPU benchmarks of what an application's start-up or a fallback costs besides the GPU: parsing a
// spec and hashing its canonical form, ranking a config's whole space with the model, and one
// NVRTC compile. No GPU needed.
//   build/bench/tuner_bench [--benchmark_filter=...]
#include <benchmark/benchmark.h>

#include "model/device_profile.hpp"
#include "tbtune/tbtune.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/search/search.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

namespace {

std::string config(const char* name) { return std::string(TBTUNE_SOURCE_DIR) + "/configs/" + name + ".yaml"; }

/// The public parse (YAML, validation, IR, canonical form and its FNV-1a hash) from text in memory.
void BM_SpecParseAndHash(benchmark::State& state) {
  const std::string text = tbtune::load_spec(config("j3d27pt")).text;
  for (auto _ : state) {
    auto spec = tbtune::StencilSpec::from_text(text);
    benchmark::DoNotOptimize(spec.hash());
  }
}
BENCHMARK(BM_SpecParseAndHash);

/// The model's ranking of every strategy's space, as the `model` miss policy runs it.
void BM_ModelRanking(benchmark::State& state, const char* name) {
  const tbtune::Problem p = tbtune::make_problem(tbtune::load_spec(config(name)));
  const tbtune::DeviceProfile h100 = *tbtune::builtin_profile("h100");
  for (auto _ : state) {
    auto ranked = tbtune::rank_candidates(p, h100);
    benchmark::DoNotOptimize(ranked.data());
    state.counters["candidates"] = double(ranked.size());
  }
}
BENCHMARK_CAPTURE(BM_ModelRanking, j2d5pt, "j2d5pt")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ModelRanking, j3d7pt, "j3d7pt")->Unit(benchmark::kMillisecond);

/// One NVRTC compile of the model's best j2d5pt candidate for sm_90, no compile cache.
void BM_NvrtcCompile(benchmark::State& state) {
  const tbtune::Problem p = tbtune::make_problem(tbtune::load_spec(config("j2d5pt")));
  const auto ranked = tbtune::rank_candidates(p, *tbtune::builtin_profile("h100"));
  const std::string source = ranked.front().strategy->source(p, ranked.front().params);
  for (auto _ : state) {
    auto m = tbtune::compile_cuda(source, "sm_90");
    benchmark::DoNotOptimize(m.cubin.data());
  }
}
BENCHMARK(BM_NvrtcCompile)->Unit(benchmark::kMillisecond)->Iterations(3);

}  // namespace
