// Tests of the CPU reference executor and the input generator.
#include "tuner/gpu/reference.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "tests/test_util.hpp"
#include "tuner/codegen/templates.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/gpu/verify.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

Problem problem_of(const std::string& expr, int dims, std::array<long, 3> domain,
                   DType dtype = DType::Double) {
  std::string d = std::to_string(domain[0]) + ", " + std::to_string(domain[1]);
  if (dims == 3) d += ", " + std::to_string(domain[2]);
  return make_problem(parse_spec("name: t\ndims: " + std::to_string(dims) + "\ndtype: " +
                                     dtype_name(dtype) + "\nexpr: \"" + expr + "\"\ndomain: [" +
                                     d + "]\nsteps: 1\n",
                                 "mem.yaml"));
}

TEST(Input, DeterministicSplitmixInUnitInterval) {
  const Problem p = problem_of("u[0,0]", 2, {7, 5, 1});
  const auto a = make_input<double>(p, 0);
  ASSERT_EQ(a.size(), 35u);
  // splitmix64's first output for state 0 is 0xe220a8397b1dcdaf (the published test value).
  EXPECT_EQ(a[0], double(0xe220a8397b1dcdafULL >> 11) * 0x1p-53);
  EXPECT_EQ(make_input<double>(p, 0), a);
  EXPECT_NE(make_input<double>(p), a);  // default seed 20231
  for (double v : make_input<double>(p)) {
    EXPECT_GE(v, 0.0);
    EXPECT_LT(v, 1.0);
  }
  const auto f = make_input<float>(p, 0);
  for (std::size_t i = 0; i < f.size(); ++i) EXPECT_EQ(f[i], static_cast<float>(a[i]));
}

TEST(Reference, HandComputedStepOn5x5) {
  const Problem p = problem_of("(5*u[0,-1] + 12*u[-1,0] + 15*u[0,0] + 12*u[1,0] + 5*u[0,1]) / 118",
                               2, {5, 5, 1});
  std::vector<double> g(25);
  for (std::size_t i = 0; i < g.size(); ++i) g[i] = double(i * i % 7);
  const auto in = g;
  reference_run(p, g, 1);
  auto at = [&](long x, long y) { return in[static_cast<std::size_t>(x + 5 * y)]; };
  for (long y = 0; y < 5; ++y)
    for (long x = 0; x < 5; ++x) {
      const bool ring = x == 0 || y == 0 || x == 4 || y == 4;
      const double want =
          ring ? at(x, y)
               : (5 * at(x, y - 1) + 12 * at(x - 1, y) + 15 * at(x, y) + 12 * at(x + 1, y) +
                  5 * at(x, y + 1)) / 118;
      EXPECT_EQ(g[static_cast<std::size_t>(x + 5 * y)], want) << x << "," << y;
    }
}

TEST(Reference, ConstantFieldStaysConstantUnderANormalisedStencil) {
  const Problem p = problem_of("(u[-1,0] + u[1,0] + u[0,-1] + u[0,1] + 4*u[0,0]) / 8", 2,
                               {9, 8, 1});
  std::vector<double> g(72, 0.375);
  reference_run(p, g, 25);
  for (double v : g) EXPECT_NEAR(v, 0.375, 1e-15);
}

TEST(Reference, DirichletRingIsUntouched) {
  const Problem p = problem_of("0.2*(u[-2,0] + u[2,0] + u[0,-2] + u[0,2] + u[0,0]) + 1", 2,
                               {11, 9, 1});
  auto g = make_input<double>(p);
  const auto before = g;
  reference_run(p, g, 10);
  std::size_t changed = 0;
  for (long y = 0; y < 9; ++y)
    for (long x = 0; x < 11; ++x) {
      const std::size_t i = static_cast<std::size_t>(x + 11 * y);
      if (x < 2 || y < 2 || x >= 9 || y >= 7) {
        EXPECT_EQ(g[i], before[i]) << x << "," << y;
      } else {
        changed += g[i] != before[i];
      }
    }
  EXPECT_EQ(changed, 7u * 5u);  // every interior cell moved (+1 per step)
}

TEST(Reference, OddSized3DMatchesADirectLoop) {
  const char* expr = "0.4*u[0,0,0] + 0.1*(u[-1,0,0] + u[1,0,0] + u[0,-1,0] + u[0,1,0] + "
                     "u[0,0,-1] + u[0,0,1])";
  const long nx = 7, ny = 5, nz = 6;
  const Problem p = problem_of(expr, 3, {nx, ny, nz});
  auto g = make_input<double>(p);
  auto want = g;
  for (int s = 0; s < 3; ++s) {
    auto next = want;
    auto u = [&](long x, long y, long z) { return want[static_cast<std::size_t>(x + nx * (y + ny * z))]; };
    for (long z = 1; z < nz - 1; ++z)
      for (long y = 1; y < ny - 1; ++y)
        for (long x = 1; x < nx - 1; ++x)
          next[static_cast<std::size_t>(x + nx * (y + ny * z))] =
              0.4 * u(x, y, z) + 0.1 * (u(x - 1, y, z) + u(x + 1, y, z) + u(x, y - 1, z) +
                                        u(x, y + 1, z) + u(x, y, z - 1) + u(x, y, z + 1));
    want = next;
  }
  reference_run(p, g, 3);
  EXPECT_EQ(g, want);
}

TEST(Reference, NonlinearFunctions) {
  const Problem p = problem_of("sqrt(abs(u[0,0])) + max(u[-1,0], u[1,0]) - pow(u[0,1], 2)", 2,
                               {3, 3, 1});
  std::vector<double> g = {0.1, 0.2, 0.3, 0.4, 0.25, 0.6, 0.7, 0.8, 0.9};
  reference_run(p, g, 1);
  EXPECT_DOUBLE_EQ(g[4], std::sqrt(0.25) + 0.6 - 0.8 * 0.8);
  EXPECT_EQ(g[0], 0.1);
}

TEST(Reference, FloatCloseToDouble) {
  const std::string path = test::source_dir() + "/configs/j2d9pt.yaml";
  const Problem pd = test::small_problem(path, DType::Double, {33, 17, 1}, 20);
  const Problem pf = test::small_problem(path, DType::Float, {33, 17, 1}, 20);
  auto d = make_input<double>(pd);
  auto f = make_input<float>(pf);
  reference_run(pd, d, 20);
  reference_run(pf, f, 20);
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(f[i], d[i], 1e-5) << i;
}

TEST(Reference, EveryConfigRunsOnASmallGrid) {
  for (const std::string& path : test::config_paths()) {
    SCOPED_TRACE(path);
    Problem p = test::small_problem(path, DType::Double, {19, 14, 11}, 3);
    auto g = make_input<double>(p);
    reference_run(p, g, 3);
    for (double v : g) ASSERT_TRUE(std::isfinite(v));
  }
}

TEST(Reference, ZeroStepsAndWrongSize) {
  const Problem p = problem_of("u[1,0]", 2, {4, 4, 1});
  auto g = make_input<double>(p);
  const auto before = g;
  reference_run(p, g, 0);
  EXPECT_EQ(g, before);
  std::vector<double> wrong(3);
  EXPECT_THROW(reference_run(p, wrong, 1), Error);
}

TEST(Verify, MaxErrorRule) {
  const double inf = std::numeric_limits<double>::infinity();
  const double ref[] = {0.5, 100.0, inf, 2.0};
  double got[] = {0.5, 100.0, 7.0, 2.0};
  EXPECT_EQ(max_error(DType::Double, got, ref, 4), 0.0);
  got[0] = 0.75;  // |reference| under 1: an absolute error
  EXPECT_DOUBLE_EQ(max_error(DType::Double, got, ref, 4), 0.25);
  got[1] = 101.0;  // over 1: relative
  EXPECT_DOUBLE_EQ(max_error(DType::Double, got, ref, 4), 0.25);
  got[3] = std::nan("");  // a non-finite result against a finite reference fails outright
  EXPECT_EQ(max_error(DType::Double, got, ref, 4), inf);
}

TEST(Verify, DeviceCompareTemplateCompilesWithoutGpu) {
  // The tuner checks candidates with templates/compare.cuh on the GPU (the GPU test compares
  // its figures with max_error's); NVRTC needs no GPU, so it is compiled here.
  const std::string* source = embedded_template("compare.cuh");
  ASSERT_NE(source, nullptr);
  const CompiledModule m = compile_cuda(*source, "sm_90");
  for (const char* k : {"tb_max_error_float", "tb_max_error_double"}) {
    ASSERT_TRUE(m.kernels.count(k)) << k << " missing; log:\n" << m.log;
    EXPECT_EQ(m.kernels.at(k).spill_bytes(), 0) << k;
  }
}

}  // namespace
}  // namespace tbtune
