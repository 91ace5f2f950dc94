// Tests of the separable-stencil analysis (tuner/spec/row_factors.hpp): which stencils factor
// as a(dy) x b(dx), and that the factors give back every coefficient.
#include "tuner/spec/row_factors.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "tests/test_util.hpp"

namespace tbtune {
namespace {

using test::stencil_of;

// a(dy) x b(dx) for every (dx, dy) of the box, 0 where a factor has no term.
double product(const RowFactors& f, int dx, int dy) {
  double a = 0, b = 0;
  for (const auto& t : f.down.terms)
    if (t.at[1] == dy) a = t.coef;
  for (const auto& t : f.across.terms)
    if (t.at[0] == dx) b = t.coef;
  return a * b;
}

// The binomial 7 x 7 blur of configs/j2d49pt.yaml: 7 + 7 multiply-adds instead of 49, and the
// products are its coefficients (folded with the / 4096).
TEST(RowFactors, BinomialBoxFactors) {
  const Stencil s = make_stencil(load_spec(test::source_dir() + "/configs/j2d49pt.yaml"));
  const auto f = row_factors(s);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->ops(), 14);
  EXPECT_EQ(f->across.terms.size(), 7u);
  EXPECT_EQ(f->down.constant, 0);
  for (const auto& t : f->across.terms) EXPECT_EQ(t.at[1], 0);
  for (const auto& t : f->down.terms) EXPECT_EQ(t.at[0], 0);
  for (const auto& t : s.linear->terms) EXPECT_NEAR(product(*f, t.at[0], t.at[1]), t.coef, 1e-16) << t.at[0] << " " << t.at[1];
}

// Rows that are not multiples of one row (the other 2D configs: j2d25pt's box has rank 3, the
// stars and j2d9pt's box rank 2 or 3) do not factor.
TEST(RowFactors, OtherConfigsDoNot) {
  for (const char* name : {"j2d5pt", "j2d9pt", "j2ds9pt", "j2d25pt", "j3d7pt", "j3d27pt", "poisson"}) {
    const Stencil s = make_stencil(load_spec(test::source_dir() + "/configs/" + name + ".yaml"));
    EXPECT_FALSE(row_factors(s).has_value()) << name;
  }
}

TEST(RowFactors, ConstantGoesDown) {
  const auto f = row_factors(stencil_of("0.0625*(u[-1,-1] + 2*u[0,-1] + u[1,-1] + 2*u[-1,0] + 4*u[0,0] + 2*u[1,0] + "
                                        "u[-1,1] + 2*u[0,1] + u[1,1]) + 0.5"));
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->ops(), 6);
  EXPECT_EQ(f->down.constant, 0.5);
  EXPECT_EQ(f->across.constant, 0);
  EXPECT_NEAR(product(*f, -1, 1), 0.0625, 1e-17);
  EXPECT_NEAR(product(*f, 0, 0), 0.25, 1e-17);
}

// A row of zeros inside the box (a(0) = 0), negative weights and a largest coefficient off the
// centre factor too; a box one part in 1e10 away from rank 1 does not.
TEST(RowFactors, ZeroRowsNegativeWeightsAndNearMisses) {
  const auto hollow = row_factors(stencil_of("0.125*(u[-1,-1] + 2*u[0,-1] + u[1,-1] + u[-1,1] + 2*u[0,1] + u[1,1])"));
  ASSERT_TRUE(hollow.has_value());
  EXPECT_EQ(hollow->ops(), 5);
  EXPECT_EQ(product(*hollow, 0, 0), 0);
  EXPECT_NEAR(product(*hollow, 0, 1), 0.25, 1e-17);
  const auto signed_box = row_factors(stencil_of("0.0625*(u[-1,-1] + 2*u[0,-1] + u[1,-1] - 2*u[-1,0] - 4*u[0,0] - "
                                                 "2*u[1,0] + u[-1,1] + 2*u[0,1] + u[1,1])"));
  ASSERT_TRUE(signed_box.has_value());
  EXPECT_NEAR(product(*signed_box, 1, 0), -0.125, 1e-17);
  const auto corner = row_factors(stencil_of("(u[-1,-1] + u[0,-1] + 4*u[1,-1] + 2*u[-1,0] + 2*u[0,0] + 8*u[1,0] + "
                                             "u[-1,1] + u[0,1] + 4*u[1,1]) / 24"));
  ASSERT_TRUE(corner.has_value());
  EXPECT_NEAR(product(*corner, 1, 0), 8.0 / 24, 1e-16);
  EXPECT_NEAR(product(*corner, -1, 1), 1.0 / 24, 1e-16);
  EXPECT_FALSE(row_factors(stencil_of("0.0625*(u[-1,-1] + 2*u[0,-1] + u[1,-1] + 2*u[-1,0] + 4*u[0,0] + 2*u[1,0] + "
                                      "u[-1,1] + 2*u[0,1] + 1.0000000001*u[1,1])"))
                   .has_value());
}

// A factored sum rounds differently from the naive kernel's, which a stencil that amplifies
// would turn into a visible difference: the same box at twice the weights does not factor.
TEST(RowFactors, AmplifyingStencilDoesNot) {
  EXPECT_FALSE(row_factors(stencil_of("0.125*(u[-1,-1] + 2*u[0,-1] + u[1,-1] + 2*u[-1,0] + 4*u[0,0] + 2*u[1,0] + "
                                      "u[-1,1] + 2*u[0,1] + u[1,1])"))
                   .has_value());
}

// A missing corner breaks the factoring; a single row gains nothing (3 terms either way); 3D
// and stencils that are not affine are not factored.
TEST(RowFactors, NotWhereItGainsNothingOrDoesNotHold) {
  EXPECT_FALSE(row_factors(stencil_of("0.0625*(2*u[0,-1] + u[1,-1] + 2*u[-1,0] + 4*u[0,0] + 2*u[1,0] + u[-1,1] + "
                                      "2*u[0,1] + u[1,1])"))
                   .has_value());
  EXPECT_FALSE(row_factors(stencil_of("0.25*u[-1,0] + 0.5*u[0,0] + 0.25*u[1,0]")).has_value());
  EXPECT_FALSE(row_factors(stencil_of("0.125*(u[-1,0,0] + u[1,0,0]) + 0.125*(u[0,-1,0] + u[0,1,0])", 3)).has_value());
  EXPECT_FALSE(row_factors(stencil_of("0.1*u[-1,-1]*u[1,1] + 0.1*u[0,0]")).has_value());
}

}  // namespace
}  // namespace tbtune
