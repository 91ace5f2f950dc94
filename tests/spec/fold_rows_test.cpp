// Tests of the folding analysis (tuner/spec/fold_rows.hpp): which stencils fold, and that the
// folded form gives back every coefficient.
#include "tuner/spec/fold_rows.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <string>

#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace tbtune {
namespace {

using test::stencil_of;

// The folded coefficient at (dx, d), 0 where the form has no term.
double folded(const FoldedRows& f, int dx, int d) {
  for (const auto& t : f.rows.terms)
    if (t.at[0] == dx && t.at[1] == d) return t.coef;
  return 0;
}

// Every coefficient of the stencil, given back by the folded form: at e >= 0 along the streamed
// axis the folded term's own, at e < 0 the sum over folded rows d of weight[d][R + e] times row
// d's coefficient at the same offsets across; to 1e-15 of the largest coefficient.
void expect_given_back(const Stencil& s, const FoldedRows& f) {
  const int axis = s.dims - 1, r = s.radius;
  std::map<Offset, double> want, got;
  double largest = 0;
  for (const auto& t : s.linear->terms) want[t.at] += t.coef, largest = std::max(largest, std::fabs(t.coef));
  for (const auto& t : f.rows.terms) {
    EXPECT_GE(t.at[axis], 0);
    for (int e = -r; e <= r; ++e) {
      Offset at = t.at;
      at[axis] = e;
      if (e >= 0) got[at] += e == t.at[axis] ? t.coef : 0;
      else got[at] += f.weight[std::size_t(t.at[axis])][std::size_t(r + e)] * t.coef;
    }
  }
  for (const auto& [at, v] : want) EXPECT_NEAR(got[at], v, 1e-15 * largest);
  for (const auto& [at, v] : got) EXPECT_NEAR(want[at], v, 1e-15 * largest);
}

// configs/j2d25pt.yaml's 5 x 5 box is symmetric in y: 15 folded terms and 2 adds instead of 25
// multiply-adds, each folded term the coefficient of both rows it stands for.
TEST(FoldedRows, SymmetricBoxFolds) {
  const Stencil s = make_stencil(load_spec(test::source_dir() + "/configs/j2d25pt.yaml"));
  const auto f = fold_rows(s);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->rows.terms.size(), 15u);
  EXPECT_EQ(f->combines, 2);
  EXPECT_EQ(f->ops(), 17);
  for (const auto& t : s.linear->terms) EXPECT_EQ(folded(*f, t.at[0], t.at[1] < 0 ? -t.at[1] : t.at[1]), t.coef);
  EXPECT_EQ(f->weight[1][1], 1.0);  // row 1 below plus row 1 above
  EXPECT_EQ(f->weight[2][0], 1.0);
  expect_given_back(s, *f);
}

// j2d49pt's binomial blur folds too (28 + 3 instead of 49; sep does better). In 3D, along z:
// poisson's mirrored planes (14 terms and 1 add instead of 19); j3d17pt's corner planes, which
// weigh 0.50 before and 0.52 after (13 terms and a multiply-add instead of 17); j3d27pt, whose
// planes differ by a constant added to every weight, so the plane before is twice the output's
// own plane minus the plane after (18 terms and 2 multiply-adds instead of 27). The stars and
// j2d9pt's box (its three rows independent) do not fold, and j3d13pt's equal planes gain
// nothing (13 either way).
TEST(FoldedRows, WhichConfigsFold) {
  const auto config = [](const char* name) {
    return make_stencil(load_spec(test::source_dir() + "/configs/" + name + ".yaml"));
  };
  const std::map<std::string, int> ops{{"j2d49pt", 31}, {"poisson", 15}, {"j3d17pt", 14}, {"j3d27pt", 20}};
  for (const auto& [name, n] : ops) {
    const Stencil s = config(name.c_str());
    const auto f = fold_rows(s);
    ASSERT_TRUE(f.has_value()) << name;
    EXPECT_EQ(f->ops(), n) << name;
    expect_given_back(s, *f);
  }
  const int r = 1;
  EXPECT_EQ(fold_rows(config("poisson"))->weight[1][r - 1], 1.0);
  EXPECT_NEAR(fold_rows(config("j3d17pt"))->weight[1][r - 1], 0.50 / 0.52, 1e-15);
  const auto box = fold_rows(config("j3d27pt"));
  EXPECT_EQ(box->weight[0][r - 1], 2.0);   // snapped to the weights the spec means
  EXPECT_EQ(box->weight[1][r - 1], -1.0);
  EXPECT_EQ(box->combines, 2);
  for (const char* name : {"j2d5pt", "j2d9pt", "j2ds9pt", "j3d7pt", "j3d13pt"})
    EXPECT_FALSE(fold_rows(config(name))) << name;
}

// Rows present on one side only, or one weight a part in 1e10 away from the combination the
// others keep, do not fold; a row before that weighs twice the row after folds with weight 2,
// and one that is twice the output's own row minus the row after (tests/specs/good/folded2d.yaml)
// with both; the constant stays; terms without a row above or below (dy = 0) may have any weight.
TEST(FoldedRows, RowsBeforeMustBeCombinationsOfTheOthers) {
  const std::string middle = "4*u[-1,0] + 5*u[0,0] + 6*u[1,0] + ";
  const auto box = fold_rows(stencil_of("(u[-1,-1] + 2*u[0,-1] + 3*u[1,-1] + " + middle +
                                        "u[-1,1] + 2*u[0,1] + 3*u[1,1]) / 64 + 0.25"));
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->ops(), 7);
  EXPECT_EQ(box->rows.constant, 0.25);
  EXPECT_EQ(box->weight[1][0], 1.0);
  EXPECT_EQ(box->weight[0][0], 0.0);
  EXPECT_EQ(folded(*box, 1, 0), 6.0 / 64);
  EXPECT_EQ(folded(*box, 1, 1), 3.0 / 64);
  const auto scaled = fold_rows(stencil_of("(2*u[-1,-1] + 4*u[0,-1] + 6*u[1,-1] + " + middle +
                                           "u[-1,1] + 2*u[0,1] + 3*u[1,1]) / 128"));
  ASSERT_TRUE(scaled.has_value());
  EXPECT_EQ(scaled->ops(), 7);
  EXPECT_EQ(scaled->weight[1][0], 2.0);
  EXPECT_DOUBLE_EQ(folded(*scaled, -1, 1), 1.0 / 128);
  const Stencil two = make_stencil(load_spec(test::source_dir() + "/tests/specs/good/folded2d.yaml"));
  const auto both = fold_rows(two);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->ops(), 8);
  EXPECT_EQ(both->weight[0][0], 2.0);
  EXPECT_EQ(both->weight[1][0], -1.0);
  expect_given_back(two, *both);
  EXPECT_FALSE(fold_rows(stencil_of("(u[-1,-1] + 2*u[0,-1] + 3*u[1,-1] + " + middle +
                                    "u[-1,1] + 2*u[0,1] + 3.0000000003*u[1,1]) / 64")));
  EXPECT_FALSE(fold_rows(stencil_of("(2*u[-1,-1] + 4*u[0,-1] + 6*u[1,-1] + " + middle +
                                    "u[-1,1] + 2*u[0,1] + 3.0000000003*u[1,1]) / 128")));
  EXPECT_FALSE(fold_rows(stencil_of("(u[-1,-1] + 2*u[0,-1] + 3*u[1,-1] + " + middle + "u[-1,1] + 2*u[0,1]) / 64")));
}

// A folded sum rounds differently from the naive kernel's, which a stencil that amplifies would
// turn into a visible difference: the same box at twice the weights does not fold, nor one whose
// folded sums could grow past the stencil's own magnitudes. A 5-point
// star gains nothing (1 add and 4 multiply-adds against 5), nor does a 3D star of radius 1 (its
// planes folded along z); stencils that are not affine are not folded.
TEST(FoldedRows, NotWhereItGainsNothingOrDoesNotHold) {
  const std::string box = "(u[-1,-1] + 2*u[0,-1] + u[1,-1] + 2*u[-1,0] + 4*u[0,0] + 2*u[1,0] + u[-1,1] + "
                          "2*u[0,1] + u[1,1])";
  EXPECT_TRUE(fold_rows(stencil_of(box + " / 16")));
  EXPECT_FALSE(fold_rows(stencil_of(box + " / 8")));
  // folded2d's box at /40: its magnitudes sum to 0.9, but its folded rows' weights (2 + 1 and
  // 1 + 1) times their rows' magnitudes to 1.2.
  const std::string two = "(7*u[-1,-1] + 8*u[0,-1] + 3*u[1,-1] + 4*u[-1,0] + 5*u[0,0] + 3*u[1,0] + u[-1,1] + "
                          "2*u[0,1] + 3*u[1,1])";
  EXPECT_TRUE(fold_rows(stencil_of(two + " / 64")));
  EXPECT_FALSE(fold_rows(stencil_of(two + " / 40")));
  EXPECT_FALSE(fold_rows(stencil_of("0.1*u[0,-1] + 0.2*u[-1,0] + 0.3*u[0,0] + 0.2*u[1,0] + 0.1*u[0,1]")));
  EXPECT_FALSE(fold_rows(stencil_of("0.125*(u[0,0,-1] + u[0,0,1]) + 0.125*(u[0,-1,0] + u[0,1,0])", 3)));
  EXPECT_FALSE(fold_rows(stencil_of("0.1*u[0,-1]*u[0,1] + 0.1*u[0,0]")));
}

}  // namespace
}  // namespace tbtune
