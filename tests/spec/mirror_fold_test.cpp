// Tests of the y-symmetry analysis (tuner/spec/mirror_fold.hpp): which stencils fold, and that
// the folded form gives back every coefficient.
#include "tuner/spec/mirror_fold.hpp"

#include <cmath>
#include <string>

#include <gtest/gtest.h>

#include "tests/test_util.hpp"

namespace tbtune {
namespace {

using test::stencil_of;

// The folded coefficient at (dx, d), 0 where the form has no term.
double folded(const MirrorFold& f, int dx, int d) {
  for (const auto& t : f.rows.terms)
    if (t.at[0] == dx && t.at[1] == d) return t.coef;
  return 0;
}

// configs/j2d25pt.yaml's 5 x 5 box is symmetric in y: 15 folded terms and 2 adds instead of 25
// multiply-adds, each folded term the coefficient of both rows it stands for.
TEST(MirrorFold, SymmetricBoxFolds) {
  const Stencil s = make_stencil(load_spec(test::source_dir() + "/configs/j2d25pt.yaml"));
  const auto f = mirror_fold(s);
  ASSERT_TRUE(f.has_value());
  EXPECT_EQ(f->rows.terms.size(), 15u);
  EXPECT_EQ(f->pairs, 2);
  EXPECT_EQ(f->ops(), 17);
  for (const auto& t : s.linear->terms) EXPECT_EQ(folded(*f, t.at[0], t.at[1] < 0 ? -t.at[1] : t.at[1]), t.coef);
  for (const auto& t : f->rows.terms) {
    EXPECT_GE(t.at[1], 0);
    EXPECT_EQ(t.at[2], 0);
  }
}

// j2d49pt's binomial blur folds too (28 + 3 instead of 49; sep does better), and in 3D, along
// z, poisson (9 + 5 terms and 1 add instead of 19, each folded term at the offsets across of the
// two it stands for) and j3d17pt, whose corner planes weigh 0.50 and 0.52 (9 + 4 terms and one
// multiply-add instead of 17); the stars and j2d9pt's and j3d27pt's boxes have rows (planes)
// whose weights differ by more than a ratio, and j3d13pt's equal ones gain nothing (13 either
// way).
TEST(MirrorFold, WhichConfigsFold) {
  const auto config = [](const char* name) {
    return make_stencil(load_spec(test::source_dir() + "/configs/" + name + ".yaml"));
  };
  EXPECT_EQ(mirror_fold(config("j2d49pt"))->ops(), 31);
  for (const char* name : {"poisson", "j3d17pt"}) {
    const Stencil s = config(name);
    const auto f = mirror_fold(s);
    ASSERT_TRUE(f.has_value()) << name;
    EXPECT_EQ(f->pairs, 1) << name;
    EXPECT_EQ(f->ops(), std::string(name) == "poisson" ? 15 : 14) << name;
    // Every term is given back: at d >= 0 its own coefficient, at -d the folded one times the ratio.
    for (const auto& t : s.linear->terms) {
      Offset folded_at = t.at;
      folded_at[2] = t.at[2] < 0 ? -t.at[2] : t.at[2];
      int found = 0;
      for (const auto& u : f->rows.terms)
        if (u.at == folded_at) found += std::fabs((t.at[2] < 0 ? f->ratio[1] : 1) * u.coef - t.coef) <= 1e-15 * std::fabs(t.coef);
      EXPECT_EQ(found, 1) << name;
    }
  }
  EXPECT_EQ(mirror_fold(config("poisson"))->ratio[1], 1.0);
  EXPECT_NEAR(mirror_fold(config("j3d17pt"))->ratio[1], 0.50 / 0.52, 1e-15);
  for (const char* name : {"j2d5pt", "j2d9pt", "j2ds9pt", "j3d7pt", "j3d13pt", "j3d27pt"})
    EXPECT_FALSE(mirror_fold(config(name))) << name;
}

// Rows present on one side only, or one weight a part in 1e10 away from the ratio the others
// keep, do not fold; a row before that weighs twice the row after folds with ratio 2; the
// constant stays; terms without a row above or below (dy = 0) may have any weight.
TEST(MirrorFold, MirroredRowsMustBeInOneRatio) {
  const std::string middle = "4*u[-1,0] + 5*u[0,0] + 6*u[1,0] + ";
  const auto box = mirror_fold(stencil_of("(u[-1,-1] + 2*u[0,-1] + 3*u[1,-1] + " + middle +
                                          "u[-1,1] + 2*u[0,1] + 3*u[1,1]) / 64 + 0.25"));
  ASSERT_TRUE(box.has_value());
  EXPECT_EQ(box->ops(), 7);
  EXPECT_EQ(box->rows.constant, 0.25);
  EXPECT_EQ(box->ratio[1], 1.0);
  EXPECT_EQ(folded(*box, 1, 0), 6.0 / 64);
  EXPECT_EQ(folded(*box, 1, 1), 3.0 / 64);
  const auto scaled = mirror_fold(stencil_of("(2*u[-1,-1] + 4*u[0,-1] + 6*u[1,-1] + " + middle +
                                             "u[-1,1] + 2*u[0,1] + 3*u[1,1]) / 128"));
  ASSERT_TRUE(scaled.has_value());
  EXPECT_EQ(scaled->ops(), 7);
  EXPECT_DOUBLE_EQ(scaled->ratio[1], 2.0);
  EXPECT_DOUBLE_EQ(folded(*scaled, -1, 1), 1.0 / 128);
  EXPECT_FALSE(mirror_fold(stencil_of("(u[-1,-1] + 2*u[0,-1] + 3*u[1,-1] + " + middle +
                                      "u[-1,1] + 2*u[0,1] + 3.0000000003*u[1,1]) / 64")));
  EXPECT_FALSE(mirror_fold(stencil_of("(2*u[-1,-1] + 4*u[0,-1] + 6*u[1,-1] + " + middle +
                                      "u[-1,1] + 2*u[0,1] + 3.0000000003*u[1,1]) / 128")));
  EXPECT_FALSE(mirror_fold(stencil_of("(u[-1,-1] + 2*u[0,-1] + 3*u[1,-1] + " + middle + "u[-1,1] + 2*u[0,1]) / 64")));
}

// A folded sum rounds differently from the naive kernel's, which a stencil that amplifies would
// turn into a visible difference: the same box at twice the weights does not fold. A 5-point
// star gains nothing (1 add and 4 multiply-adds against 5), nor does a 3D star of radius 1 (its
// planes folded along z); stencils that are not affine are not folded.
TEST(MirrorFold, NotWhereItGainsNothingOrDoesNotHold) {
  const std::string box = "(u[-1,-1] + 2*u[0,-1] + u[1,-1] + 2*u[-1,0] + 4*u[0,0] + 2*u[1,0] + u[-1,1] + "
                          "2*u[0,1] + u[1,1])";
  EXPECT_TRUE(mirror_fold(stencil_of(box + " / 16")));
  EXPECT_FALSE(mirror_fold(stencil_of(box + " / 8")));
  EXPECT_FALSE(mirror_fold(stencil_of("0.1*u[0,-1] + 0.2*u[-1,0] + 0.3*u[0,0] + 0.2*u[1,0] + 0.1*u[0,1]")));
  EXPECT_FALSE(mirror_fold(stencil_of("0.125*(u[0,0,-1] + u[0,0,1]) + 0.125*(u[0,-1,0] + u[0,1,0])", 3)));
  EXPECT_FALSE(mirror_fold(stencil_of("0.1*u[0,-1]*u[0,1] + 0.1*u[0,0]")));
}

}  // namespace
}  // namespace tbtune
