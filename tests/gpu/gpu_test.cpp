// GPU tests (CTest label `gpu`): the naive kernel against the CPU reference, every strategy at
// several parameter points against the naive kernel (odd sizes, steps not a multiple of the
// depth, float and double), and a tune that stores a winner that a lookup finds.
// Every test skips when no GPU is usable.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <future>
#include <map>
#include <set>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

#include <unistd.h>

#include "db/cache.hpp"
#include "tbtune/tbtune.hpp"
#include "tests/test_util.hpp"
#include "tuner/gpu/device_compare.hpp"
#include "tuner/gpu/reference.hpp"
#include "tuner/gpu/runner.hpp"
#include "tuner/gpu/verify.hpp"
#include "tuner/search/thread_pool.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

const TimingOptions kOnce{0.0, 1, 1};

class Gpu : public ::testing::Test {
 protected:
  void SetUp() override {
    try {
      device_ = open_device(0);
    } catch (const NoGpuError& e) {
      GTEST_SKIP() << "no GPU: " << e.what();
    }
  }
  std::string arch() const { return arch_for(device_.cc_major, device_.cc_minor); }
  DeviceInfo device_;
};

std::array<long, 3> odd_domain(int dims, bool large) {
  if (dims == 2) return large ? std::array<long, 3>{1037, 389, 1} : std::array<long, 3>{53, 41, 1};
  return large ? std::array<long, 3>{97, 71, 45} : std::array<long, 3>{29, 23, 19};
}

std::vector<unsigned char> cpu_reference(const Problem& p) {
  std::vector<unsigned char> bytes;
  auto take = [&](auto v) {
    reference_run(p, v, p.steps);
    bytes.resize(v.size() * sizeof(v[0]));
    std::memcpy(bytes.data(), v.data(), bytes.size());
  };
  if (p.dtype == DType::Float) take(make_input<float>(p));
  else take(make_input<double>(p));
  return bytes;
}

std::vector<unsigned char> run_naive(const Problem& p, Runner& runner, const std::string& arch) {
  const Strategy& naive = *find_strategy("naive");
  const CompiledModule m = compile_cuda(naive.source(p, {}), arch);
  std::vector<unsigned char> out;
  (void)runner.measure(naive, {}, m, nullptr, kOnce, &out);
  return out;
}

DeviceBuffer on_device(const std::vector<unsigned char>& bytes) {
  DeviceBuffer b(bytes.size());
  b.upload(bytes.data(), bytes.size());
  return b;
}

// Where two results differ by more than the tolerance: how many cells, the first and the last
// (x, y, z) with both values. Printed on a failure so a wrong kernel can be located.
std::string describe_mismatch(const Problem& p, const std::vector<unsigned char>& got,
                              const std::vector<unsigned char>& want) {
  const long n = p.total_cells();
  auto value = [&](const std::vector<unsigned char>& v, long i) {
    if (p.dtype == DType::Float) return double(reinterpret_cast<const float*>(v.data())[i]);
    return reinterpret_cast<const double*>(v.data())[i];
  };
  long count = 0, first = -1, last = -1;
  for (long i = 0; i < n; ++i) {
    const double a = value(got, i), b = value(want, i);
    if (!(std::fabs(a - b) / std::max(std::fabs(b), 1.0) <= tolerance(p.dtype))) {
      ++count;
      if (first < 0) first = i;
      last = i;
    }
  }
  auto where = [&](long i) {
    const long nx = p.domain[0], ny = p.domain[1];
    return fmt::format("({}, {}, {}) got {} want {}", i % nx, i / nx % ny, i / (nx * ny), value(got, i),
                       value(want, i));
  };
  if (count == 0) return "no cell differs";
  std::set<long> xs, ys;
  for (long i = 0; i < n; ++i) {
    const double a = value(got, i), b = value(want, i);
    if (!(std::fabs(a - b) / std::max(std::fabs(b), 1.0) <= tolerance(p.dtype))) {
      if (xs.size() < 12) xs.insert(i % p.domain[0]);
      if (ys.size() < 12) ys.insert(i / p.domain[0] % p.domain[1]);
    }
  }
  return fmt::format("{} of {} cells differ; first {}, last {}; columns {}, rows {}", count, n,
                     where(first), where(last), fmt::join(xs, " "), fmt::join(ys, " "));
}

// The shipped configs plus 3D specs that the configs do not cover: radius 4 with an affine
// constant, and a non-affine expression (no partial sums).
std::vector<std::string> spec_paths() {
  std::vector<std::string> out;
  try {
    out = test::config_paths();
  } catch (const std::filesystem::filesystem_error& e) {
    // Called while the tests are registered: no source tree means no spec tests, not a crash.
    std::fprintf(stderr, "gpu_test: no configs (%s); set TBTUNE_SOURCE_DIR\n", e.what());
    return out;
  }
  for (const char* name :
       {"box3d_r4.yaml", "nonlinear3d.yaml", "general2d_r4.yaml", "nonlinear.yaml", "folded2d.yaml"})
    out.push_back(test::source_dir() + "/tests/specs/good/" + name);
  return out;
}

// The tuner verifies on the GPU (tuner/device_compare.hpp); it must give max_error's figure to
// the bit, for ordinary differences and for the special cases (a non-finite result, a
// non-finite reference), in both precisions, over a size no block count divides.
template <class T>
void expect_device_compare_matches_host(DeviceComparer& comparer, DType dtype) {
  const std::size_t n = 1000003;
  std::vector<T> ref(n), got(n);
  for (std::size_t i = 0; i < n; ++i) ref[i] = got[i] = T(std::sin(double(i)) * 3.0 * double(i % 7));
  const std::size_t bytes = n * sizeof(T);
  DeviceBuffer ref_dev(bytes), got_dev(bytes);
  ref_dev.upload(ref.data(), bytes);
  auto both = [&] {
    got_dev.upload(got.data(), bytes);
    const double device = comparer.max_error(dtype, got_dev.get(), ref_dev.get(), n);
    EXPECT_EQ(device, max_error(dtype, got.data(), ref.data(), n));
    return device;
  };
  EXPECT_EQ(both(), 0.0);
  got[n - 1] += T(0.25);  // the last cell: the grid-stride loop's tail
  got[17] *= T(1.001);
  EXPECT_GT(both(), 0.0);
  ref[5] = std::numeric_limits<T>::infinity();  // an overflowed reference is skipped
  ref_dev.upload(ref.data(), bytes);
  got[5] = std::numeric_limits<T>::infinity();  // an infinite error, were the cell not skipped
  EXPECT_LT(both(), 1.0);
  got[9] = std::numeric_limits<T>::quiet_NaN();  // a non-finite result is an infinite error
  EXPECT_EQ(both(), std::numeric_limits<double>::infinity());
}

TEST_F(Gpu, DeviceCompareMatchesHostRule) {
  DeviceComparer comparer(device_, "");
  expect_device_compare_matches_host<double>(comparer, DType::Double);
  expect_device_compare_matches_host<float>(comparer, DType::Float);
}

// With a driver present NVRTC may serve a CUBIN from the driver's compute cache without running
// ptxas; compile_cuda turns that off, so a second compile of the same source still reports the
// registers that post-compile pruning needs.
TEST_F(Gpu, RecompileStillReportsRegisters) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Double,
                                        {53, 41, 1}, 3);
  const std::string source = find_strategy("naive")->source(p, {});
  for (int i = 0; i < 2; ++i) {
    const CompiledModule m = compile_cuda(source, arch());
    ASSERT_TRUE(m.kernels.count(kFullKernel)) << "compile " << i << ", log:\n" << m.log;
    EXPECT_GT(m.kernels.at(kFullKernel).registers, 0) << "compile " << i;
  }
}

TEST_F(Gpu, NaiveMatchesCpuReference) {
  for (const std::string& path : spec_paths())
    for (DType dtype : {DType::Double, DType::Float}) {
      const Problem p0 = make_problem(load_spec(path));
      const Problem p = test::small_problem(path, dtype, odd_domain(p0.dims(), false), 5);
      SCOPED_TRACE(path + " " + dtype_name(dtype));
      Runner runner(p, device_, kDefaultSeed);
      const auto gpu = run_naive(p, runner, arch());
      const auto cpu = cpu_reference(p);
      ASSERT_EQ(gpu.size(), cpu.size());
      EXPECT_LE(max_error(dtype, gpu.data(), cpu.data(), std::size_t(p.total_cells())), tolerance(dtype));
    }
}

// A 3D point without `sum` once per mode the stencil allows: the ring (any stencil), the ring
// with the register queue (rq) and partial sums (affine stencils only). Other points as they are.
std::vector<Params> with_sum_modes(const Problem& p, const std::string& strategy, const Params& given) {
  if ((strategy != "smtile3d" && strategy != "devtile3d") || given.count("sum")) return {given};
  std::vector<Params> out;
  for (int mode = 0; mode <= (p.stencil.linear ? 2 : 1); ++mode) {
    Params k = given;
    k["sum"] = mode == 2;
    k["rq"] = mode == 1;
    out.push_back(k);
  }
  return out;
}

// Parameter points per strategy: defaults plus shapes that stress tile edges and remainders.
std::vector<Params> points_for(const std::string& strategy) {
  if (strategy == "stream") return {{{"bx", 32}, {"by", 4}, {"ppt", 4}}, {{"bx", 64}, {"by", 2}, {"ppt", 8}}};
  if (strategy == "cmq2d")
    return {{{"t", 3}, {"tile_x", 128}, {"ilp", 4}, {"bps", 1}, {"rrs", 0}},
            {{"t", 5}, {"tile_x", 256}, {"ilp", 2}, {"bps", 2}, {"rrs", 1}},
            {{"t", 1}, {"tile_x", 128}, {"ilp", 1}, {"bps", 1}, {"rrs", 1}},
            {{"t", 4}, {"tile_x", 256}, {"ilp", 8}, {"bps", 1}, {"rrs", 1}},
            {{"t", 7}, {"tile_x", 512}, {"ilp", 3}, {"bps", 1}, {"rrs", 1}}};
  if (strategy == "wpipe2d")
    // Depths 4, 4, 6, 8, 3, 4 and 6 leave remainders of 3, 3, 5, 3, 2, 3 and 5 steps of the 11;
    // rx = 1 and 2 take halos from lanes two or more away at radius > rx, an even rx has bank
    // conflicts but must still be right, 2 rows per iteration make the window's period differ
    // from its size, and bps 2 runs two blocks per SM. Every loop body stays within the space's
    // 6000 multiply-adds for j2d49pt (body rows x tw x rx x 49 points: at most 7 x 13 here).
    // Late 1 by default; two points sum every held row's terms before the barrier (late 0).
    // Three sum a separable stencil's rows across once (sep, in every kernel, the ring's cells
    // read again from the input: split 1 and 0), the last two a y-symmetric stencil's mirrored
    // rows first (fold, in every kernel, split 1 and 0); they are skipped for the other stencils
    // (complete throws).
    return {{{"rx", 3}, {"warps", 2}, {"tw", 2}, {"rows", 2}},
            {{"rx", 1}, {"warps", 4}, {"tw", 1}, {"rows", 1}, {"late", 0}},
            {{"rx", 5}, {"warps", 3}, {"tw", 2}, {"rows", 2}, {"bps", 2}},
            {{"rx", 7}, {"warps", 8}, {"tw", 1}, {"rows", 1}},
            {{"rx", 2}, {"warps", 1}, {"tw", 3}, {"rows", 2}},
            {{"rx", 13}, {"warps", 4}, {"tw", 1}, {"rows", 1}, {"late", 0}},
            {{"rx", 9}, {"warps", 6}, {"tw", 1}, {"rows", 1}},
            {{"rx", 5}, {"warps", 3}, {"tw", 2}, {"rows", 2}, {"split", 1}, {"sep", 1}},
            {{"rx", 11}, {"warps", 4}, {"tw", 1}, {"rows", 1}, {"split", 1}, {"sep", 1}, {"late", 0}},
            {{"rx", 7}, {"warps", 3}, {"tw", 1}, {"rows", 2}, {"split", 0}, {"sep", 1}},
            {{"rx", 5}, {"warps", 3}, {"tw", 2}, {"rows", 2}, {"fold", 1}},
            {{"rx", 7}, {"warps", 2}, {"tw", 1}, {"rows", 1}, {"split", 0}, {"fold", 1}}};
  if (strategy == "smtile3d" || strategy == "devtile3d")
    // Remainders of 11 steps: 1, 2, 0, 1, 3, 2; z = 3 gives an odd number of ring phases for the
    // ring without the queue (the scratch parity then differs between rounds). 512-thread points
    // at bps 1 (bps 2 caps them at 64 registers: spills). Points without `sum` run with the ring
    // of planes, with the ring and the register queue (rq=1) and, for affine stencils, with
    // partial sums (sum=1) as well (with_sum_modes).
    return {{{"t", 2}, {"tx", 32}, {"ty", 16}, {"cy", 4}, {"z", 1}},
            {{"t", 3}, {"tx", 32}, {"ty", 32}, {"cy", 2}, {"z", 2}, {"bps", 1}},
            {{"t", 1}, {"tx", 64}, {"ty", 16}, {"cy", 4}, {"z", 1}},
            {{"t", 5}, {"tx", 32}, {"ty", 32}, {"cy", 4}, {"z", 3}, {"bps", 1}},
            {{"t", 4}, {"tx", 64}, {"ty", 32}, {"cy", 4}, {"z", 1}, {"bps", 1}},
            {{"t", 3}, {"tx", 32}, {"ty", 16}, {"cy", 2}, {"z", 2}, {"sum", 0}}};
  if (strategy == "wpipe3d")
    // Depths 6, 4, 2, 3 and 4 leave remainders of 5, 3, 1, 2 and 3 steps of the 11; the tiles
    // overhang the 97 x 71 domain in x and y; 3 levels per stage swap y halos twice per plane,
    // one warp along y swaps none, bps 2 runs two blocks per SM, an even rx moves cells in pairs.
    // A point whose tile has no valid cells at a stencil's radius is skipped (complete throws);
    // the last is the one that fits radius 4. Late 1 by default, late 0 at two points. The two
    // after it sum a z-symmetric stencil's mirrored planes first (fold; skipped for the others).
    return {{{"rx", 2}, {"cy", 7}, {"wy", 4}, {"warps", 2}, {"tw", 3}},
            {{"rx", 1}, {"cy", 4}, {"wy", 2}, {"warps", 4}, {"tw", 1}, {"late", 0}},
            {{"rx", 3}, {"cy", 3}, {"wy", 8}, {"warps", 1}, {"tw", 2}, {"bps", 2}},
            {{"rx", 2}, {"cy", 5}, {"wy", 1}, {"warps", 3}, {"tw", 1}},
            {{"rx", 4}, {"cy", 4}, {"wy", 4}, {"warps", 2}, {"tw", 2}, {"late", 0}},
            {{"rx", 1}, {"cy", 4}, {"wy", 4}, {"warps", 1}, {"tw", 1}},
            {{"rx", 3}, {"cy", 3}, {"wy", 4}, {"warps", 2}, {"tw", 2}, {"fold", 1}},
            {{"rx", 2}, {"cy", 5}, {"wy", 1}, {"warps", 3}, {"tw", 1}, {"fold", 1}}};
  return {{}};
}

// One test per spec file (Specs/EveryStrategyMatchesNaive.Run/j3d7pt ...), so that a GPU run
// can take a part with --gtest_filter.
class EveryStrategyMatchesNaive : public Gpu, public ::testing::WithParamInterface<std::string> {};

TEST_P(EveryStrategyMatchesNaive, Run) {
  const long steps = 11;  // not a multiple of 3, 4 or 5: the remainder kernel runs too
  // NVRTC takes seconds per 3D candidate: every point of a problem is compiled on a thread pool
  // (all cores) before the GPU runs them one after the other.
  ThreadPool pool;
  const std::string path = GetParam();
  for (DType dtype : {DType::Double, DType::Float}) {
    const Problem p0 = make_problem(load_spec(path));
    const Problem p = test::small_problem(path, dtype, odd_domain(p0.dims(), true), steps);
    struct Point {
      const Strategy* strategy;
      Params params;
      std::string what;
      std::future<CompiledModule> module;
    };
    std::vector<Point> points;
    std::map<std::string, int> ran;
    for (const auto& s : strategies()) {
      if (s->name() == "naive" || !s->supports(p)) continue;
      ran[s->name()] = 0;
      for (const Params& point : points_for(s->name()))
        for (const Params& given : with_sum_modes(p, s->name(), point)) {
          Point pt{s.get(), {}, path + " " + dtype_name(dtype) + " " + s->name(), {}};
          try {
            pt.params = s->complete(p, given);
          } catch (const Error& e) {
            std::printf("  skipped %s %s: %s\n", pt.what.c_str(), params_text(given).c_str(), e.what());
            continue;
          }
          pt.what += " " + params_text(pt.params);
          const std::string source = s->source(p, pt.params);
          pt.module = pool.submit([source, arch = arch()] { return compile_cuda(source, arch); });
          points.push_back(std::move(pt));
        }
    }
    Runner runner(p, device_, kDefaultSeed);
    const auto reference = run_naive(p, runner, arch());
    const DeviceBuffer reference_dev = on_device(reference);
    for (Point& pt : points) {
      SCOPED_TRACE(pt.what);
      try {
        const CompiledModule m = pt.module.get();
        std::printf("  running %s\n", pt.what.c_str());  // a GPU log then names a point that hangs
        std::fflush(stdout);
        std::vector<unsigned char> got;
        const Measurement r = runner.measure(*pt.strategy, pt.params, m, &reference_dev, kOnce, &got);
        EXPECT_LE(r.max_error, tolerance(dtype)) << describe_mismatch(p, got, reference);
        // The GPU comparison the tuner uses agrees with the host one.
        EXPECT_EQ(r.max_error, max_error(dtype, got.data(), reference.data(), std::size_t(p.total_cells())));
        if (r.max_error > tolerance(dtype)) {
          // Locate the fault: one full pass only, run twice (a race or an uninitialised read
          // shows as two different results).
          Problem one = p;
          one.steps = pt.strategy->depth(pt.params);
          Runner r1(one, device_, kDefaultSeed);
          const auto ref1 = run_naive(one, r1, arch());
          std::vector<unsigned char> first, second;
          (void)r1.measure(*pt.strategy, pt.params, m, nullptr, kOnce, &first);
          (void)r1.measure(*pt.strategy, pt.params, m, nullptr, kOnce, &second);
          ADD_FAILURE() << "one pass: " << describe_mismatch(one, first, ref1)
                        << (first == second ? "; repeatable" : "; NOT repeatable");
        }
        ++ran[pt.strategy->name()];
      } catch (const CudaError& e) {
        ADD_FAILURE() << pt.what << ": " << e.what();
      } catch (const CompileError& e) {
        ADD_FAILURE() << pt.what << ": " << e.what();
      } catch (const Error& e) {
        // Too large for this device (shared memory, co-residency): a `resources` trial in a
        // tune, not a wrong kernel.
        std::printf("  skipped %s: %s\n", pt.what.c_str(), e.what());
      }
    }
    for (const auto& [name, count] : ran)
      EXPECT_GT(count, 0) << path << " " << dtype_name(dtype) << ": no point of " << name << " fits";
  }
}

INSTANTIATE_TEST_SUITE_P(Specs, EveryStrategyMatchesNaive, ::testing::ValuesIn(spec_paths()),
                         [](const ::testing::TestParamInfo<std::string>& spec) {
                           return std::filesystem::path(spec.param).stem().string();
                         });

TEST_F(Gpu, TuneStoresWinnerThatLookupFinds) {
  const auto dir = std::filesystem::temp_directory_path() / ("tbtune_gpu_test_" + std::to_string(::getpid()));
  const std::string db = (dir / "t.db").string();
  const std::string path = test::source_dir() + "/configs/j2d5pt.yaml";
  const Problem p = test::small_problem(path, DType::Double, {515, 387, 1}, 23);
  TuneOptions o;
  o.search.top = 4;
  o.search.within = 0;
  o.timing = kOnce;
  o.spec_text = load_spec(path).text;
  // This test binary has no `worker` subcommand: the tbtune binary runs the worker. TBTUNE_CLI
  // points at it when the build folder has moved (scripts/pack-gpu.sh).
  const char* cli = std::getenv("TBTUNE_CLI");
  o.worker_exe = cli ? cli : TBTUNE_CLI_PATH;
  {
    Cache cache(db, Cache::Mode::ReadWrite);
    const TuneResult r = tune(p, o, cache);
    ASSERT_TRUE(r.winner.has_value());
    EXPECT_EQ(r.winner->trial.status, TrialStatus::Ok);
    // The naive reference, the search's selection (the top 4 and each strategy's best few) and
    // at most one stand-in for each candidate passed over (not compiled, pruned after
    // compiling), nothing else.
    EXPECT_GE(r.record.selected, o.search.top);
    const auto passed_over = std::count_if(r.trials.begin(), r.trials.end(), [](const Trial& t) {
      return t.status == TrialStatus::Skipped || t.status == TrialStatus::Resources ||
             t.status == TrialStatus::CompileError;
    });
    EXPECT_GE(int(r.trials.size()), 1 + r.record.selected);
    EXPECT_LE(int(r.trials.size()), 1 + r.record.selected + int(passed_over));
    const Cache reader(db, Cache::Mode::ReadOnly);
    const auto w = reader.winner(r.key);
    ASSERT_TRUE(w.has_value());
    EXPECT_EQ(w->trial.strategy, r.winner->trial.strategy);
    EXPECT_EQ(w->trial.cubin, r.winner->trial.cubin);
    EXPECT_FALSE(w->trial.cubin.empty());
    EXPECT_EQ(reader.trials(r.key).size(), r.trials.size());

    // The application-facing lookup loads that winner and reproduces the naive result.
    LookupOptions lo;
    lo.db = db;
    lo.domain = p.domain;
    lo.policy = MissPolicy::Fail;
    lo.steps = p.steps;
    Lookup found = lookup(path, lo);
    ASSERT_TRUE(found.hit()) << found.message;
    auto& kernel = found.kernel;
    ASSERT_TRUE(kernel.has_value());
    EXPECT_EQ(kernel->strategy(), r.winner->trial.strategy);
    Runner runner(p, device_, kDefaultSeed);
    const auto expected = run_naive(p, runner, arch());
    const auto input = make_input<double>(p);
    const std::size_t bytes = input.size() * sizeof(double);
    DeviceBuffer a(bytes), b(bytes);
    a.upload(input.data(), bytes);
    b.upload(input.data(), bytes);
    void* result = kernel->run(a.get(), b.get(), p.steps);
    synchronize();
    std::vector<double> got(input.size());
    (result == a.get() ? a : b).download(got.data(), bytes);
    EXPECT_LE(max_error(DType::Double, got.data(), expected.data(), got.size()), tolerance(DType::Double));

    LookupOptions miss = lo;
    miss.steps = 5000;  // another step class
    const Lookup missed = lookup(path, miss);
    EXPECT_FALSE(missed.kernel.has_value());
    EXPECT_EQ(missed.reason, MissReason::OtherStepClass);

    // Another domain under `nearest`: the winner's parameters rebuilt for it and stored, so the
    // next lookup of that domain is a hit.
    LookupOptions other = lo;
    other.domain = std::array<long, 3>{p.domain[0] + 6, p.domain[1] + 4, 1};
    other.policy = MissPolicy::Nearest;
    other.compile_cache_dir = (dir / "cubins").string();
    const Lookup served = lookup(path, other);
    EXPECT_EQ(served.reason, MissReason::OtherDomain) << served.message;
    EXPECT_EQ(served.source, KernelSource::Nearest) << served.message;
    ASSERT_TRUE(served.kernel.has_value());
    EXPECT_EQ(served.kernel->strategy(), r.winner->trial.strategy);
    EXPECT_TRUE(lookup(path, other).hit());

    // A wpipe2d winner whose image an earlier tbtune built (its step kernel `tb_step`, of the
    // one-warp geometry) is a miss, stale_kernel, not a kernel launched wrongly; `nearest`
    // builds its parameters again and stores them, and the next lookup is a hit.
    const Strategy* wp = find_strategy("wpipe2d");
    Winner stale = *w;
    stale.trial.strategy = wp->name();
    stale.trial.params = wp->complete(p, {{"rx", 3}, {"warps", 2}, {"tw", 2}});
    std::string earlier = wp->source(p, stale.trial.params);
    for (std::size_t at; (at = earlier.find(kCellStepKernel)) != std::string::npos;)
      earlier.replace(at, std::strlen(kCellStepKernel), kStepKernel);
    stale.trial.cubin = compile_cuda(earlier, arch()).cubin;
    Cache(db, Cache::Mode::ReadWrite).put_winner(stale);
    const Lookup refused = lookup(path, lo);
    EXPECT_EQ(refused.reason, MissReason::StaleKernel) << refused.message;
    EXPECT_FALSE(refused.kernel.has_value());
    LookupOptions rebuild = lo;
    rebuild.policy = MissPolicy::Nearest;
    rebuild.compile_cache_dir = (dir / "cubins").string();
    const Lookup rebuilt = lookup(path, rebuild);
    EXPECT_EQ(rebuilt.reason, MissReason::StaleKernel) << rebuilt.message;
    EXPECT_EQ(rebuilt.source, KernelSource::Nearest) << rebuilt.message;
    ASSERT_TRUE(rebuilt.kernel.has_value());
    EXPECT_EQ(rebuilt.kernel->strategy(), "wpipe2d");
    EXPECT_TRUE(lookup(path, lo).hit());
  }
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace tbtune
