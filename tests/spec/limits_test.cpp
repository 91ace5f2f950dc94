// Hostile and edge-case specs (issue 22): each is refused fast with one line that points at the
// right place, or accepted with a key that changes exactly when the kernel does.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "tuner/spec/error.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {
namespace {

const char* kHeader = "name: t\ndims: 2\ndtype: double\ndomain: [64, 64]\nsteps: 10\n";

std::string spec_with_expr(const std::string& expr) {
  return std::string(kHeader) + "expr: \"" + expr + "\"\n";
}

/// CPU seconds this thread spends in `fn`, divided by TBTUNE_TEST_TIME_SCALE (default 1). The
/// bounds below catch quadratic or worse work (which took seconds to hours), not a slow machine;
/// a sanitizer build, several times slower, sets the scale (scripts/sanitize.sh). The thread's
/// CPU time rather than the wall clock, so that other tests run beside it do not count: under an
/// 8-way parallel ctest on 2 cores the 4913-point box once took 2.8 s of wall time against its
/// 2 s bound.
template <class Fn>
double seconds(Fn&& fn) {
  const auto now = [] {
    timespec ts{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  };
  const double t0 = now();
  fn();
  const char* scale = std::getenv("TBTUNE_TEST_TIME_SCALE");
  const double s = scale ? std::max(1.0, std::atof(scale)) : 1.0;
  return (now() - t0) / s;
}

/// The SpecError that parsing `text` throws (fails the test if there is none).
SpecError error_of(const std::string& text) {
  try {
    (void)make_stencil(parse_spec(text, "t.yaml"));
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e;
  }
  ADD_FAILURE() << "accepted";
  return SpecError("none", 0, 0, "");
}

TEST(Limits, LongSumIsRefusedAtTheTermThatPassesTheLimit) {
  // 40000 terms once overflowed the stack of every recursive walk; now the parser stops at
  // kMaxExprHeight levels, at the '+' that goes past it.
  std::string expr = "u[0,0]";
  for (int i = 1; i < 40000; ++i) expr += "+u[0,0]";
  double t = seconds([&] {
    const SpecError e = error_of(spec_with_expr(expr));
    EXPECT_EQ(e.line(), 6);
    EXPECT_EQ(e.col(), 7 + 7 * kMaxExprHeight);  // `expr: "` then 7 characters a term
    EXPECT_NE(e.message().find("nested too deeply"), std::string::npos) << e.message();
  });
  EXPECT_LT(t, 1.0);
}

TEST(Limits, SumJustUnderTheLimitIsAccepted) {
  std::string expr = "u[0,0]";
  for (int i = 1; i < kMaxExprHeight; ++i) expr += "+u[" + std::to_string(i % 3) + ",0]";
  const Stencil s = make_stencil(parse_spec(spec_with_expr(expr), "t.yaml"));
  EXPECT_EQ(s.points.size(), 3u);
}

TEST(Limits, FullRadius8BoxOfPointsIsAccepted) {
  // The largest `points:` list the radius allows (17^3 distinct points) fits the height limit.
  std::string points;
  for (int z = -8; z <= 8; ++z)
    for (int y = -8; y <= 8; ++y)
      for (int x = -8; x <= 8; ++x)
        points += (points.empty() ? "" : ", ") + std::string("{at: [") + std::to_string(x) + "," +
                  std::to_string(y) + "," + std::to_string(z) + "], c: 0.001}";
  const std::string text =
      "name: box\ndims: 3\ndtype: double\ndomain: [64, 64, 64]\nsteps: 10\npoints: [" + points + "]\n";
  Stencil s;
  const double t = seconds([&] { s = make_stencil(parse_spec(text, "t.yaml")); });
  EXPECT_EQ(s.points.size(), 4913u);
  EXPECT_EQ(s.shape, Shape::Box);
  EXPECT_LT(t, 2.0);  // building the sum once copied it for every point: quadratic
}

TEST(Limits, LongRunOfBlanksIsLinear) {
  // Each blank once rescanned the rest of the run: 200 KB of them took 9.7 s.
  const std::string blanks(200000, ' ');
  for (const std::string& quote : {std::string("\""), std::string("'"), std::string()}) {
    const std::string text =
        std::string(kHeader) + "expr: " + quote + "u[0,0]" + blanks + "+ u[1,0]" + quote + "\n";
    double t = seconds([&] { EXPECT_EQ(make_stencil(parse_spec(text, "t.yaml")).points.size(), 2u); });
    EXPECT_LT(t, 0.5) << "quote " << quote;
  }
}

TEST(Limits, ErrorAfterLongBlanksPointsAtItsColumn) {
  const std::string text = std::string(kHeader) + "expr: \"u[0,0]" + std::string(100000, ' ') + "+ ?\"\n";
  const SpecError e = error_of(text);
  EXPECT_EQ(e.line(), 6);
  EXPECT_EQ(e.col(), 7 + 6 + 100000 + 3);
}

TEST(Limits, HugeFileIsRefusedBeforeItIsRead) {
  try {
    (void)load_spec("/dev/zero");
    ADD_FAILURE() << "accepted /dev/zero";
  } catch (const SpecError& e) {
    ADD_FAILURE() << "a size problem has no position: " << e.what();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("larger than 1048576 bytes"), std::string::npos) << e.what();
  }
}

TEST(Limits, FileAtTheSizeLimitIsRead) {
  const std::string path = ::testing::TempDir() + "limits_big.yaml";
  std::string text = spec_with_expr("u[0,0]");
  text += "#" + std::string(kMaxSpecBytes - text.size() - 2, 'x') + "\n";
  ASSERT_EQ(text.size(), kMaxSpecBytes);
  std::ofstream(path, std::ios::binary) << text;
  EXPECT_NO_THROW((void)load_spec(path));
  std::ofstream(path, std::ios::binary | std::ios::app) << "\n";
  EXPECT_THROW((void)load_spec(path), Error);
}

TEST(Canonical, ZeroWeightTermsChangeTheKeyWithTheRadius) {
  // Once `0*u[3,0]` made the kernel radius 3 but kept j2d5pt's key.
  const std::string base = "(5*u[0,-1] + 12*u[-1,0] + 15*u[0,0] + 12*u[1,0] + 5*u[0,1]) / 118";
  const Stencil plain = make_stencil(parse_spec(spec_with_expr(base), "t.yaml"));
  const Stencil zero = make_stencil(parse_spec(spec_with_expr(base + " + 0*u[3,0]"), "t.yaml"));
  const Stencil cancel =
      make_stencil(parse_spec(spec_with_expr(base + " + u[3,0] - u[3,0]"), "t.yaml"));
  const Stencil negzero = make_stencil(parse_spec(spec_with_expr(base + " + -0*u[3,0]"), "t.yaml"));
  EXPECT_EQ(plain.radius, 1);
  EXPECT_EQ(zero.radius, 3);
  EXPECT_NE(plain.hash, zero.hash);
  // Same kernel, same key: however the zero is written.
  EXPECT_EQ(zero.hash, cancel.hash);
  EXPECT_EQ(zero.hash, negzero.hash);
  EXPECT_NE(zero.canonical.find("3,0,0:0;"), std::string::npos) << zero.canonical;
  // The generated sum reads only the nonzero terms.
  ASSERT_TRUE(zero.linear);
  EXPECT_EQ(zero.linear->terms.size(), 5u);
}

TEST(Canonical, PointsWithZeroWeightMatchTheExpression) {
  const std::string points = std::string(kHeader) +
                             "points: [{at: [0,0], c: 0.5}, {at: [2,0], c: 0}]\n";
  const Stencil p = make_stencil(parse_spec(points, "t.yaml"));
  const Stencil e = make_stencil(parse_spec(spec_with_expr("0.5*u[0,0] + 0*u[2,0]"), "t.yaml"));
  EXPECT_EQ(p.radius, 2);
  EXPECT_EQ(p.hash, e.hash);
}

TEST(NonFinite, FoldedWeightsThatOverflowAreRefusedAtTheExpression) {
  for (const std::string expr : {"1e300*(1e300*u[0,0])", "u[0,0]/1e-320", "u[1,0] + 1e308*(1e308 + u[0,0])"}) {
    const SpecError e = error_of(spec_with_expr(expr));
    EXPECT_EQ(e.line(), 6) << expr;
    EXPECT_EQ(e.col(), 7) << expr;
    EXPECT_NE(e.message().find("must be finite"), std::string::npos) << e.message();
  }
}

TEST(NonFinite, ConstantsAreRefusedAtTheirOperator) {
  struct Case {
    const char* expr;
    int col;
    const char* message;
  };
  for (const Case& c : {Case{"u[0,0]/0", 14, "division by zero"},
                        Case{"u[0,0]/(1-1)", 14, "division by zero"},
                        Case{"sqrt(-1)*u[0,0]", 8, "evaluates to nan"},
                        Case{"log(0)*u[0,0]", 8, "evaluates to -inf"},
                        Case{"exp(1000)*u[0,0]", 8, "evaluates to inf"},
                        Case{"1e200*1e200*u[0,0]", 13, "evaluates to inf"},
                        Case{"sin(u[0,0])/0", 19, "division by zero"}}) {
    const SpecError e = error_of(spec_with_expr(c.expr));
    EXPECT_EQ(e.line(), 6) << c.expr;
    EXPECT_EQ(e.col(), c.col) << c.expr;
    EXPECT_NE(e.message().find(c.message), std::string::npos) << e.message();
  }
}

TEST(Limits, ExpressionWithTooManyNodesIsRefused) {
  // Shallow but wide: sums of sums stay under the height limit and pass the node limit.
  std::string group = "(u[0,0]";
  for (int i = 1; i < 100; ++i) group += "+u[0,0]";
  group += ")";
  std::string expr = group;
  for (int i = 1; i < 200; ++i) expr += "*" + group;
  const SpecError e = error_of(spec_with_expr(expr));
  EXPECT_NE(e.message().find("expression too large"), std::string::npos) << e.message();
}

TEST(Yaml, InputThatMadeLoadAllLoopForeverIsRefused) {
  // Found by tests/fuzz/spec_fuzz.cpp: yaml-cpp's LoadAll kept starting new documents on this
  // text without consuming any, allocating until memory ran out.
  const std::string text = "# @xpect: unknown fun (allowed: abs, cos, : 6:8\n, 1\xdc" "6]\nsteps: 10\n";
  double t = seconds([&] {
    const SpecError e = error_of(text);
    EXPECT_EQ(e.line(), 2);
    EXPECT_NE(e.message().find("more YAML after the end of the first document"), std::string::npos)
        << e.message();
  });
  EXPECT_LT(t, 1.0);
}

}  // namespace
}  // namespace tbtune
