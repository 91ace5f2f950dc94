// Tests of the stencil IR: derived properties, canonical form and hash, problems.
#include "tuner/spec/stencil.hpp"

#include <gtest/gtest.h>

#include <cstdio>
#include <string>

namespace tbtune {
namespace {

Spec spec_of(const std::string& body, int dims = 2) {
  const std::string domain = dims == 2 ? "[20, 30]" : "[20, 30, 40]";
  return parse_spec("name: t\ndims: " + std::to_string(dims) + "\ndtype: double\n" + body +
                        "domain: " + domain + "\nsteps: 3\n",
                    "mem.yaml");
}
Stencil stencil_of(const std::string& expr, int dims = 2) {
  return make_stencil(spec_of("expr: \"" + expr + "\"\n", dims));
}

std::string g17(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

const char* kJ2d5pt = "(5*u[0,-1] + 12*u[-1,0] + 15*u[0,0] + 12*u[1,0] + 5*u[0,1]) / 118";

TEST(Stencil, DerivedProperties) {
  const Stencil s = stencil_of(kJ2d5pt);
  EXPECT_EQ(s.name, "t");
  EXPECT_EQ(s.radius, 1);
  EXPECT_EQ(s.flops, 10);  // 5 *, 4 +, 1 /  (the thesis' "2d5pt (1,10)")
  EXPECT_EQ(s.shape, Shape::Star);
  ASSERT_EQ(s.points.size(), 5u);
  // Sorted by (z, y, x).
  EXPECT_EQ(s.points[0], (Offset{0, -1, 0}));
  EXPECT_EQ(s.points[1], (Offset{-1, 0, 0}));
  EXPECT_EQ(s.points[2], (Offset{0, 0, 0}));
  EXPECT_EQ(s.points[3], (Offset{1, 0, 0}));
  EXPECT_EQ(s.points[4], (Offset{0, 1, 0}));
  EXPECT_EQ(s.hash.size(), 16u);
}

TEST(Stencil, FlopsCountCallsAndNegation) {
  EXPECT_EQ(stencil_of("-sqrt(u[0,0]) + max(u[1,0], 2)").flops, 4);
  EXPECT_EQ(stencil_of("u[0,0]").flops, 0);
}

TEST(Stencil, Shapes) {
  EXPECT_EQ(stencil_of("u[0,0] + u[0,2] + u[-2,0]").shape, Shape::Star);
  EXPECT_EQ(stencil_of("u[-1,-1]+u[0,-1]+u[1,-1]+u[-1,0]+u[0,0]+u[1,0]+u[-1,1]+u[0,1]+u[1,1]").shape,
            Shape::Box);
  EXPECT_EQ(stencil_of("u[-1,-1]+u[0,0]+u[1,1]").shape, Shape::General);
  // A box without its centre is not a box.
  EXPECT_EQ(stencil_of("u[-1,-1]+u[0,-1]+u[1,-1]+u[-1,0]+u[1,0]+u[-1,1]+u[0,1]+u[1,1]").shape,
            Shape::General);
  EXPECT_STREQ(shape_name(Shape::Star), "star");
  EXPECT_STREQ(shape_name(Shape::Box), "box");
  EXPECT_STREQ(shape_name(Shape::General), "general");
}

TEST(Canonical, AffineForm) {
  const Stencil s = stencil_of("1 + 0.5*u[1,0] - u[0,-1] + u[1,0]/4 - u[0,0] + u[0,0]");
  // u[0,0] cancels but stays, with weight 0: the radius counts it (limits_test.cpp says why).
  EXPECT_EQ(s.canonical, "dims=2;0,-1,0:-1;0,0,0:0;1,0,0:0.75;const:1;");
  EXPECT_EQ(s.hash, hex64(fnv1a64(s.canonical)));
  // 3D offsets keep their z.
  EXPECT_EQ(stencil_of("2*u[0,0,1] + u[0,0,-1]", 3).canonical, "dims=3;0,0,-1:1;0,0,1:2;");
}

TEST(Canonical, ExprAndPointsHashTheSame) {
  const Stencil from_expr = stencil_of(kJ2d5pt);
  // The same weights as a points list, each written as the expression's value with %.17g.
  const std::string c5 = g17(5.0 / 118), c12 = g17(12.0 / 118), c15 = g17(15.0 / 118);
  const Stencil from_points = make_stencil(spec_of(
      "points:\n  - {at: [0, 1], c: " + c5 + "}\n  - {at: [1, 0], c: " + c12 +
      "}\n  - {at: [0, 0], c: " + c15 + "}\n  - {at: [-1, 0], c: " + c12 +
      "}\n  - {at: [0, -1], c: " + c5 + "}\n"));
  EXPECT_EQ(from_points.canonical, from_expr.canonical);
  EXPECT_EQ(from_points.hash, from_expr.hash);
  EXPECT_EQ(from_expr.canonical, "dims=2;0,-1,0:" + c5 + ";-1,0,0:" + c12 + ";0,0,0:" + c15 +
                                     ";1,0,0:" + c12 + ";0,1,0:" + c5 + ";");
}

TEST(Canonical, TermOrderAndSpellingDoNotMatter) {
  const std::string h = stencil_of(kJ2d5pt).hash;
  EXPECT_EQ(stencil_of("(5*u[0,1] + 12*u[1,0] + 15*u[0,0] + 5*u[0,-1] + 12*u[-1,0]) / 118").hash, h);
  EXPECT_EQ(stencil_of("5*u[0,1]/118 + (12*u[1,0] + 12*u[-1,0] + 15*u[0,0])/118 + u[0,-1]*5/118").hash,
            h);
  EXPECT_NE(stencil_of("(5*u[0,-1] + 12*u[-1,0] + 15*u[0,0] + 12*u[1,0] + 6*u[0,1]) / 118").hash, h);
  EXPECT_NE(stencil_of(kJ2d5pt, 2).hash, make_stencil(spec_of("expr: \"(5*u[0,-1,0] + "
                                                              "12*u[-1,0,0] + 15*u[0,0,0] + "
                                                              "12*u[1,0,0] + 5*u[0,1,0]) / 118\"\n",
                                                              3)).hash);
}

TEST(Canonical, NonlinearPrintsTheTreeWithParamValues) {
  const Stencil a = make_stencil(spec_of("params: {k: 0.5}\nexpr: \"sqrt(k*u[0,0]) - u[1,0]*u[0,1]\"\n"));
  EXPECT_EQ(a.canonical, "dims=2;expr=(sqrt((0.5*u[0,0,0]))-(u[1,0,0]*u[0,1,0]))");
  const Stencil b = make_stencil(spec_of("params: {q: 0.5}\nexpr: \"sqrt(q*u[0,0]) - u[1,0]*u[0,1]\"\n"));
  EXPECT_EQ(a.hash, b.hash);  // parameter names do not matter, their values do
  EXPECT_EQ(stencil_of("1/u[0,0]").canonical, "dims=2;expr=(1/u[0,0,0])");
}

TEST(Hash, Fnv1aKnownValues) {
  EXPECT_EQ(fnv1a64(""), 0xcbf29ce484222325ULL);
  EXPECT_EQ(fnv1a64("a"), 0xaf63dc4c8601ec8cULL);
  EXPECT_EQ(fnv1a64("foobar"), 0x85944171f73967e8ULL);
  EXPECT_EQ(hex64(0x00ab), "00000000000000ab");
  EXPECT_EQ(hex64(0xaf63dc4c8601ec8cULL), "af63dc4c8601ec8c");
}

TEST(Problem, FromSpec2D) {
  const Problem p = make_problem(spec_of("expr: \"u[0,-2] + u[0,2]\"\n"));
  EXPECT_EQ(p.dims(), 2);
  EXPECT_EQ(p.domain, (std::array<long, 3>{20, 30, 1}));
  EXPECT_EQ(p.steps, 3);
  EXPECT_EQ(p.dtype, DType::Double);
  EXPECT_EQ(p.total_cells(), 600);
  EXPECT_DOUBLE_EQ(p.interior_cells(), 16.0 * 26.0);  // the z axis is not trimmed in 2D
}

TEST(Problem, FromSpec3D) {
  const Problem p = make_problem(spec_of("expr: \"u[0,0,1]\"\n", 3));
  EXPECT_EQ(p.domain, (std::array<long, 3>{20, 30, 40}));
  EXPECT_DOUBLE_EQ(p.interior_cells(), 18.0 * 28.0 * 38.0);
}

}  // namespace
}  // namespace tbtune
