// Code generation and NVRTC: every shipped config, every strategy that supports it, compiled for
// sm_80 and sm_90 without a GPU; the expression printer; that spec text never reaches the source.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <set>

#include "model/device_profile.hpp"
#include "tests/test_util.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/codegen/strategies/strategies.hpp"
#include "tuner/codegen/strategies/wpipe2d_grid.hpp"
#include "tuner/codegen/strategies/wpipe_model.hpp"
#include "tuner/codegen/strategy.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/fold_rows.hpp"
#include "tuner/spec/row_factors.hpp"

namespace tbtune {
namespace {

Problem problem_from(const std::string& yaml) { return make_problem(parse_spec(yaml, "<test>")); }

TEST(Codegen, PrintsTreeWithValuesNotNames) {
  const Problem p = problem_from(
      "name: t\ndims: 2\ndtype: float\nparams: {alpha: 0.25}\n"
      "expr: \"alpha * (u[-1,0] + u[1,0]) + sqrt(u[0,0])\"\ndomain: [16, 16]\nsteps: 1\n");
  const std::string e = cuda_expr(p.stencil.expr);
  EXPECT_EQ(e.find("alpha"), std::string::npos) << e;
  EXPECT_NE(e.find("real(0.25)"), std::string::npos) << e;
  EXPECT_NE(e.find("u(-1, 0, 0)"), std::string::npos) << e;
  EXPECT_NE(e.find("tb_sqrt("), std::string::npos) << e;
}

TEST(Codegen, AffineStencilFoldsCoefficientsInColumnOrder) {
  // Written (z, y, x)-first and divided: printed without the division, as one accumulation by
  // column (dx) then dy, the order apply_rows sums in too (candidates and naive round alike).
  const Problem p = problem_from(
      "name: t\ndims: 2\ndtype: double\nexpr: \"(4*u[0,-1] + 2*u[1,0] + 8*u[-1,0] + 1*u[0,1]) / 8\"\n"
      "domain: [16, 16]\nsteps: 1\n");
  const std::string src = find_strategy("naive")->source(p, {});
  const auto apply = src.substr(src.find("static real apply("));
  const auto body = apply.substr(0, apply.find("apply_rows"));
  EXPECT_EQ(body.find(" / "), std::string::npos) << body;
  // The first term a product, the others explicit FMAs (no contraction choice left to NVRTC).
  const auto left = body.find("real(1) * u(-1, 0, 0)"), below = body.find("tb_fma(real(0.5), u(0, -1, 0), acc)"),
             above = body.find("tb_fma(real(0.125), u(0, 1, 0), acc)"),
             right = body.find("tb_fma(real(0.25), u(1, 0, 0), acc)");
  ASSERT_NE(left, std::string::npos) << body;
  ASSERT_NE(below, std::string::npos) << body;
  ASSERT_NE(above, std::string::npos) << body;
  ASSERT_NE(right, std::string::npos) << body;
  EXPECT_LT(left, below);
  EXPECT_LT(below, above);
  EXPECT_LT(above, right);
  // A stencil that is not affine keeps its tree and evaluates apply_rows row by row.
  const Problem q = problem_from(
      "name: q\ndims: 2\ndtype: double\nexpr: \"u[0,0] * u[1,0]\"\ndomain: [16, 16]\nsteps: 1\n");
  const std::string qsrc = find_strategy("naive")->source(q, {});
  EXPECT_NE(qsrc.find("TbRowShift<U>{u, j}"), std::string::npos);
}

TEST(Codegen, PlaneSumsForAffine3dOnly) {
  // Sum mode (templates/tile3d.cuh): a plane's cell at dx goes to the partial sum of plane
  // -dz, index R - dz; every term is an FMA so sums started at zero round like `apply`.
  const Problem p = problem_from(
      "name: t\ndims: 3\ndtype: double\nexpr: \"0.5*u[0,0,-1] + 0.25*u[1,0,0] + 0.125*u[0,0,1] + 1\"\n"
      "domain: [16, 16, 16]\nsteps: 1\n");
  const Strategy* sm = find_strategy("smtile3d");
  const std::string src = sm->source(p, sm->complete(p, {{"sum", 1}}));
  const auto sums = src.substr(src.find("static void plane_sums("));
  EXPECT_NE(sums.find("acc[2][row - (0)] = tb_fma(real(0.5), x, acc[2][row - (0)])"), std::string::npos) << sums;
  EXPECT_NE(sums.find("acc[0][row - (0)] = tb_fma(real(0.125), x, acc[0][row - (0)])"), std::string::npos) << sums;
  EXPECT_NE(sums.find("acc[1][row - (0)] = tb_fma(real(0.25), x, acc[1][row - (0)])"), std::string::npos) << sums;
  EXPECT_NE(sums.find("return sum + real(1);"), std::string::npos) << sums;
  const Problem q = problem_from(
      "name: q\ndims: 3\ndtype: double\nexpr: \"u[0,0,0] * u[1,0,0]\"\ndomain: [16, 16, 16]\nsteps: 1\n");
  EXPECT_EQ(sm->source(q, sm->complete(q, {})).find("static void plane_sums("), std::string::npos);
}

// wpipe2d's split stencil: head sums the terms with dy below the split, tail the rest and the
// constant, both by (dy, dx); a stencil that is not affine is evaluated whole in tail. 3D
// stencils split on dz (StreamSplitFor3dStencilsIsOnZ).
TEST(Codegen, RowSplitFor2dStencils) {
  const Problem p = problem_from(
      "name: s\ndims: 2\ndtype: double\nexpr: \"0.5*u[0,1] + 0.25*u[-1,0] + 0.125*u[0,-1] + 1\"\n"
      "domain: [64, 16]\nsteps: 1\n");
  const Strategy* w = find_strategy("wpipe2d");
  const std::string src = w->source(p, w->complete(p, {}));
  const auto head = src.find("static real head(");
  const auto tail = src.find("static real tail(");
  ASSERT_NE(head, std::string::npos) << src;
  ASSERT_NE(tail, std::string::npos) << src;
  const std::string h = src.substr(head, tail - head), t = src.substr(tail);
  const auto a = h.find("if (-1 < split) acc = tb_fma(real(0.125), u(0, -1, 0), acc);");
  const auto b = h.find("if (0 < split) acc = tb_fma(real(0.25), u(-1, 0, 0), acc);");
  const auto c = h.find("if (1 < split) acc = tb_fma(real(0.5), u(0, 1, 0), acc);");
  ASSERT_NE(a, std::string::npos) << h;
  ASSERT_NE(b, std::string::npos) << h;
  ASSERT_NE(c, std::string::npos) << h;
  EXPECT_LT(a, b);
  EXPECT_LT(b, c);
  EXPECT_NE(t.find("if (1 >= split) acc = tb_fma(real(0.5), u(0, 1, 0), acc);"), std::string::npos) << t;
  EXPECT_NE(t.find("acc += real(1);"), std::string::npos) << t;
  EXPECT_EQ(h.find("real(1)"), std::string::npos) << h;
  const Problem q =
      test::small_problem(test::source_dir() + "/tests/specs/good/nonlinear.yaml", DType::Double, {64, 17, 1}, 1);
  const std::string nl = w->source(q, w->complete(q, {}));
  EXPECT_NE(nl.find("return apply(u);"), std::string::npos);
}

// wpipe3d streams z, so its split is on dz: head takes the terms of the planes held before the
// newest (dz < split), tail the rest, both in apply's order (dz, dx, dy), so that the kernel
// rounds as the naive one does.
TEST(Codegen, StreamSplitFor3dStencilsIsOnZ) {
  const Problem p = problem_from(
      "name: s\ndims: 3\ndtype: double\nexpr: \"0.5*u[0,0,1] + 0.25*u[0,1,0] + 0.125*u[0,0,-1]\"\n"
      "domain: [64, 32, 16]\nsteps: 1\n");
  const Strategy* w = find_strategy("wpipe3d");
  const std::string src = w->source(p, w->complete(p, {}));
  const auto head = src.find("static real head(");
  const auto tail = src.find("static real tail(");
  ASSERT_NE(head, std::string::npos) << src;
  ASSERT_NE(tail, std::string::npos) << src;
  const std::string h = src.substr(head, tail - head), t = src.substr(tail);
  const auto a = h.find("if (-1 < split) acc = tb_fma(real(0.125), u(0, 0, -1), acc);");
  const auto b = h.find("if (0 < split) acc = tb_fma(real(0.25), u(0, 1, 0), acc);");
  ASSERT_NE(a, std::string::npos) << h;
  ASSERT_NE(b, std::string::npos) << h;
  EXPECT_LT(a, b);
  EXPECT_NE(t.find("if (1 >= split) acc = tb_fma(real(0.5), u(0, 0, 1), acc);"), std::string::npos) << t;
  const std::string apply = src.substr(src.find("static real apply("), head);
  EXPECT_LT(apply.find("u(0, 0, -1)"), apply.find("u(0, 1, 0)")) << apply;
  EXPECT_LT(apply.find("u(0, 1, 0)"), apply.find("u(0, 0, 1)")) << apply;
}

// wpipe2d keeps the boundary ring at fixed cells of the first and last tile, so the interior must
// be at least one tile (32 x rx columns) wide: narrower problems are not supported, a hand-given
// rx that is too wide is refused with the reason, and the defaults shrink to fit.
TEST(Codegen, Wpipe2dTileFitsTheInterior) {
  const Strategy* w = find_strategy("wpipe2d");
  const auto star = [](long nx) {
    return problem_from("name: s\ndims: 2\ndtype: double\nexpr: \"0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])\"\n"
                        "domain: [" + std::to_string(nx) + ", 40]\nsteps: 1\n");
  };
  EXPECT_FALSE(w->supports(star(33)));  // interior 31 columns
  EXPECT_TRUE(w->supports(star(34)));
  EXPECT_EQ(w->complete(star(34), {}).at("rx"), 1);
  EXPECT_EQ(w->complete(star(34 + 5 * 32), {}).at("rx"), 6);
  EXPECT_EQ(w->complete(star(5000), {}).at("rx"), 7);
  try {
    (void)w->complete(star(100), {{"rx", 4}});  // 128 columns in an interior of 98
    FAIL() << "rx 4 accepted for 98 interior columns";
  } catch (const UsageError& e) {
    EXPECT_NE(std::string(e.what()).find("at least one tile (32 x rx = 128) wide"), std::string::npos) << e.what();
  }
  // The defaults' depth (8 warps x 2 steps) would leave rx 1 no valid columns: tw, then warps drop.
  const Params narrow = w->complete(star(34), {});
  EXPECT_GE(32 - 2 * narrow.at("warps") * narrow.at("tw"), narrow.at("warps") * narrow.at("tw"));
  // Every point of the space fits its domain.
  const Problem p = star(300);
  for (const Params& k : w->space(p, *builtin_profile("h100"))) EXPECT_LE(32 * k.at("rx"), 298);
}

// A wpipe2d pass is one wave of blocks that share the tiles' rows (tb_share). With split 1
// tb_edge's blocks take the first and last tiles (their loop tests for the ring's columns) and the
// bands of every tile near the top and bottom rows (tests for the ring's rows too, a slower loop),
// in as many of the SMs' slots as end with tb_full's, which take the rest; with two tiles tb_edge
// takes them all.
TEST(Codegen, Wpipe2dSplitsAPassInTwoGrids) {
  const auto launch = [](long nx, long ny, int split, int bps = 1) {
    const Problem p = problem_from("name: s\ndims: 2\ndtype: double\nexpr: \"0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])\"\n"
                                   "domain: [" + std::to_string(nx) + ", " + std::to_string(ny) + "]\nsteps: 1000\n");
    const Strategy* w = find_strategy("wpipe2d");
    return w->launch(p, w->complete(p, {{"rx", 13}, {"warps", 8}, {"tw", 4}, {"bps", bps}, {"split", split}}), true,
                     {132, bps});
  };
  // 11616 columns: 33 tiles of 416 - 64 valid columns. tb_edge's work is the first and last
  // tiles' 11552 rows between the bands, at full speed, and 66 bands of 31 rows, at 0.53 of it
  // (4 points), each piece with a segment's 96 rows of overhead: 13 of the 132 slots.
  const Launch two = launch(11616, 11616, 1);
  EXPECT_EQ(blocks(two.grid) + blocks(two.edge_grid), 132);
  EXPECT_GE(blocks(two.edge_grid), 11);
  EXPECT_LE(blocks(two.edge_grid), 15);
  EXPECT_EQ(two.grid[1] * two.edge_grid[1], 1u);
  EXPECT_EQ(blocks(launch(11616, 11616, 1, 2).grid) + blocks(launch(11616, 11616, 1, 2).edge_grid), 264);
  const Launch one = launch(11616, 11616, 0);
  EXPECT_EQ(blocks(one.grid), 132);
  EXPECT_EQ(blocks(one.edge_grid), 0);
  // Two tiles (nothing between): tb_full has no blocks.
  EXPECT_EQ(blocks(launch(600, 4000, 1).grid), 0);
  EXPECT_EQ(blocks(launch(600, 4000, 1).edge_grid), 132);
}

// tb_edge runs the first and last tiles away from the ring's rows in a loop of their own, with
// the column tests only, where the ring's loop is slow: small stencils (j2d5pt's 5 points), not
// large ones (a 25-point box), whose tests cost little.
TEST(Codegen, Wpipe2dEdgeTestsColumnsApartForSmallStencils) {
  EXPECT_TRUE(edge_columns_apart(ring_loop_speed(5)));
  EXPECT_TRUE(edge_columns_apart(ring_loop_speed(9)));
  EXPECT_FALSE(edge_columns_apart(ring_loop_speed(25)));
  const Strategy* w = find_strategy("wpipe2d");
  const auto defines = [&](const std::string& expr) {
    const Problem p = problem_from("name: s\ndims: 2\ndtype: double\nexpr: \"" + expr + "\"\ndomain: [2000, 500]\nsteps: 8\n");
    return w->source(p, w->complete(p, {}));
  };
  EXPECT_NE(defines("0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])").find("#define TB_WP_EDGE_BY_ROWS 1\n"), std::string::npos);
  std::string box;
  for (int y = -2; y <= 2; ++y)
    for (int x = -2; x <= 2; ++x) box += fmt::format("{}u[{},{}]", box.empty() ? "" : "+", x, y);
  EXPECT_NE(defines("0.04*(" + box + ")").find("#define TB_WP_EDGE_BY_ROWS 0\n"), std::string::npos);
}

// Heads after the tail (TB_WP_EAGER) where a head shuffles and a 2D iteration takes one row:
// j2d5pt's late head (the oldest row's centre) shuffles nothing, its late 0 head (its own row's
// neighbours) does; j2d9pt's late head (a row of three) does; wpipe3d alike along z; a
// stencil that is not affine has no head.
TEST(Codegen, WpipeHeadsAfterTheTailWhereTheyShuffle) {
  const Problem star = make_problem(load_spec(test::source_dir() + "/configs/j2d5pt.yaml"));
  const Problem box = make_problem(load_spec(test::source_dir() + "/configs/j2d9pt.yaml"));
  const Problem star3 = make_problem(load_spec(test::source_dir() + "/configs/j3d7pt.yaml"));
  const Problem nonlinear = make_problem(load_spec(test::source_dir() + "/tests/specs/good/nonlinear.yaml"));
  EXPECT_FALSE(wpipe_eager_heads(star, {{"late", 1}, {"rows", 1}}));
  EXPECT_TRUE(wpipe_eager_heads(star, {{"late", 0}, {"rows", 1}}));
  EXPECT_FALSE(wpipe_eager_heads(star, {{"late", 0}, {"rows", 2}}));
  EXPECT_TRUE(wpipe_eager_heads(box, {{"late", 1}, {"rows", 1}}));
  EXPECT_FALSE(wpipe_eager_heads(box, {{"late", 1}, {"rows", 2}}));
  EXPECT_FALSE(wpipe_eager_heads(star3, {{"late", 1}}));
  EXPECT_TRUE(wpipe_eager_heads(star3, {{"late", 0}}));
  EXPECT_FALSE(wpipe_eager_heads(nonlinear, {{"late", 0}, {"rows", 1}}));
  // The generated source carries the choice.
  const Strategy* w = find_strategy("wpipe2d");
  const auto eager = [&](const Problem& p, const Params& given) {
    const std::string src = w->source(p, w->complete(p, given));
    return src.find("#define TB_WP_EAGER 1\n") != std::string::npos;
  };
  EXPECT_TRUE(eager(box, {{"late", 1}, {"rows", 1}}));
  EXPECT_FALSE(eager(star, {{"late", 1}, {"rows", 1}}));
}

// The time of the slowest block sharing padded pieces: its share and one pad, at its speed.
TEST(Codegen, ShareTimeIsAShareAndAPad) {
  EXPECT_DOUBLE_EQ(share_time(110, 1, 10, 1.0), 120.0);
  EXPECT_DOUBLE_EQ(share_time(220, 3, 10, 1.0), 74.0 + 10.0);
  EXPECT_DOUBLE_EQ(share_time(440, 4, 10, 0.5), (110.0 + 10.0) / 0.5);
}

// A tile that overhangs the domain costs a whole one: wpipe2d's model counts the useful share of
// its tiles across x. FastStencil's j2d5pt shape (rx 13, 8 warps x 4 steps: 352 valid columns)
// fills 33 tiles with 11616 interior columns; one column more needs a 34th tile, 1/352 used, and
// the model's useful share drops by about 1/34.
TEST(Codegen, PartialLastTileCostsAWholeOne) {
  EXPECT_DOUBLE_EQ(whole_tiles_share(33 * 352, 352, 33), 1.0);
  EXPECT_DOUBLE_EQ(whole_tiles_share(33 * 352 + 1, 352, 34), (33.0 * 352 + 1) / (34.0 * 352));
  const auto valid = [](const std::string& domain) {
    const Problem p = problem_from("name: s\ndims: 2\ndtype: double\nexpr: \"0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])\"\n"
                                   "domain: " + domain + "\nsteps: 1000\n");
    const Strategy* s = find_strategy("wpipe2d");
    const Params fs{{"rx", 13}, {"warps", 8}, {"tw", 4}, {"rows", 1}, {"bps", 1}, {"split", 1}};
    return s->model_terms(p, s->complete(p, fs), *builtin_profile("h100")).valid;
  };
  const double whole = valid("[11618, 11618]"), over = valid("[11619, 11618]");
  EXPECT_NEAR(over / whole, (33.0 * 352 + 1) / (34.0 * 352), 0.005) << whole << " " << over;
}

// Strips whose ring accesses the banks serialise more than 32 bytes deep are not in the space:
// double rx 8, 16 and 24 (8 and 16 ways of 8 bytes), float rx 16 (paired: 8 ways of 8 bytes);
// float rx 8 and 24 (paired: 4 ways) and double rx 12 (4 ways of 8 bytes) stay.
TEST(Codegen, Wpipe2dSpaceLeavesOutDeeplyConflictedStrips) {
  const auto widths = [](const std::string& dtype) {
    const Problem p = problem_from("name: s\ndims: 2\ndtype: " + dtype +
                                   "\nexpr: \"0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])\"\ndomain: [4000, 4000]\nsteps: 8\n");
    std::set<int> rx;
    for (const Params& k : find_strategy("wpipe2d")->space(p, *builtin_profile("h100"))) rx.insert(k.at("rx"));
    return rx;
  };
  const std::set<int> d = widths("double"), f = widths("float");
  for (int rx : {8, 16, 24}) EXPECT_EQ(d.count(rx), 0u) << rx;
  for (int rx : {7, 9, 12, 15, 17, 23}) EXPECT_EQ(d.count(rx), 1u) << rx;
  EXPECT_EQ(f.count(16), 0u);
  for (int rx : {8, 12, 15, 17, 24}) EXPECT_EQ(f.count(rx), 1u) << rx;
}

// The banks serve 8-byte accesses by half warps and 16-byte ones by quarter warps: pairing an
// even strip halves the ways of one twice an odd number long. wpipe3d pairs in double, wpipe2d
// in float only.
TEST(Codegen, PairedStripsHalveTheirBankWays) {
  const auto prob = [](const std::string& dtype) {
    return problem_from("name: s\ndims: 2\ndtype: " + dtype +
                        "\nexpr: \"0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])\"\ndomain: [4000, 4000]\nsteps: 8\n");
  };
  const Problem d = prob("double"), f = prob("float");
  EXPECT_EQ(wpipe_bank_conflicts(d, 2, false), 2);
  EXPECT_EQ(wpipe_bank_conflicts(d, 2, true), 1);
  EXPECT_EQ(wpipe_bank_conflicts(d, 6, true), 1);
  EXPECT_EQ(wpipe_bank_conflicts(d, 4, false), 4);
  EXPECT_EQ(wpipe_bank_conflicts(d, 4, true), 2);
  EXPECT_EQ(wpipe_bank_conflicts(d, 13, true), 1);
  EXPECT_EQ(wpipe_bank_conflicts(f, 16, false), 16);
  EXPECT_EQ(wpipe_bank_conflicts(f, 16, true), 8);
  EXPECT_EQ(wpipe_bank_conflicts(f, 22, true), 1);
  EXPECT_TRUE(wpipe_pairs(d, 3));
  EXPECT_FALSE(wpipe_pairs(d, 2));
  EXPECT_TRUE(wpipe_pairs(f, 2));
}

// fold (a y-symmetric stencil's mirrored rows summed first, in every loop) is in the space of
// j2d25pt with late 0 and sep 0 only, and has no late variant; the one-step and rest kernels
// keep it. Asked for where the weights are not symmetric, or with late 1 or sep 1, it is an
// error. The model charges its 17 operations per cell instead of 25 points.
TEST(Codegen, Wpipe2dFoldForSymmetricStencilsOnly) {
  const Strategy* w = find_strategy("wpipe2d");
  const DeviceProfile d = *builtin_profile("h100");
  Problem box = make_problem(load_spec(test::source_dir() + "/configs/j2d25pt.yaml"));
  box.domain = {8448, 8448, 1};
  int folds = 0;
  for (const Params& k : w->space(box, d))
    if (k.at("fold")) {
      ++folds;
      EXPECT_EQ(k.at("late"), 0) << params_text(k);
      EXPECT_EQ(k.at("sep"), 0) << params_text(k);
      EXPECT_FALSE(w->primary_of(box, d, k).has_value()) << params_text(k);
    }
  EXPECT_GT(folds, 0);
  const Params shape{{"rx", 10}, {"warps", 12}, {"tw", 1}, {"rows", 2}, {"late", 0}};
  Params with = shape;
  with["fold"] = 1;
  const Params folded = w->complete(box, {{"rx", 10}, {"warps", 12}, {"tw", 1}, {"rows", 2}, {"fold", 1}});
  EXPECT_EQ(folded.at("late"), 0);
  const ModelTerms plain = w->model_terms(box, w->complete(box, shape), d);
  const ModelTerms fold = w->model_terms(box, folded, d);
  EXPECT_LT(fold.a_cmp, plain.a_cmp - 2.0 * (25 - 17) + 1e-9);
  EXPECT_LT(fold.a_sm, plain.a_sm);
  EXPECT_GT(fold.regs_per_thread, plain.regs_per_thread);
  const std::string src = w->source(box, folded);
  EXPECT_NE(src.find("#define TB_WP_FOLD 1"), std::string::npos);
  EXPECT_NE(src.find("struct TbFold {"), std::string::npos);
  const Problem odd = test::small_problem(test::source_dir() + "/configs/j2d25pt.yaml", DType::Double, {1037, 389, 1}, 11);
  EXPECT_EQ(w->rest_params(odd, w->complete(odd, {{"rx", 5}, {"warps", 4}, {"tw", 1}, {"fold", 1}}))->at("fold"), 1);
  with["late"] = 1;
  EXPECT_THROW(w->complete(box, with), UsageError);
  with["late"] = 0;
  with["sep"] = 1;
  EXPECT_THROW(w->complete(box, with), UsageError);

  const Problem star = make_problem(load_spec(test::source_dir() + "/configs/j2d5pt.yaml"));
  for (const Params& k : w->space(star, d)) ASSERT_EQ(k.at("fold"), 0) << params_text(k);
  EXPECT_THROW(w->complete(star, {{"fold", 1}}), UsageError);
  const std::string plain_src = w->source(star, w->complete(star, {}));
  EXPECT_NE(plain_src.find("struct TbFold;"), std::string::npos);
  EXPECT_EQ(plain_src.find("struct TbFold {"), std::string::npos);
}

// sep (a separable stencil's rows summed across once, in every kernel) is in the space of the
// separable j2d49pt alone, as one kernel (split 0, its default with sep; split 1 ran slower);
// asked for elsewhere it is an error. The model charges its
// factors' 14 multiply-adds per cell instead of 49 points, the ring's loop slower for it (so
// tb_edge's first and last tiles run the column tests in a loop of their own), and the source
// of every other stencil only declares TbRows. A run's rest pass sums rows too.
TEST(Codegen, Wpipe2dSepForSeparableStencilsOnly) {
  const Strategy* w = find_strategy("wpipe2d");
  const DeviceProfile d = *builtin_profile("h100");
  Problem blur = make_problem(load_spec(test::source_dir() + "/configs/j2d49pt.yaml"));
  blur.domain = {9504, 9504, 1};
  int split[2] = {0, 0};
  for (const Params& k : w->space(blur, d))
    if (k.at("sep")) ++split[k.at("split")];
  EXPECT_GT(split[0], 0);
  EXPECT_EQ(split[1], 0);
  EXPECT_EQ(w->complete(blur, {{"sep", 1}}).at("split"), 0);
  const Params shape{{"rx", 9}, {"warps", 12}, {"tw", 1}, {"rows", 2}, {"split", 1}};
  Params with = shape;
  with["sep"] = 1;
  const ModelTerms plain = w->model_terms(blur, w->complete(blur, shape), d);
  const ModelTerms sep = w->model_terms(blur, w->complete(blur, with), d);
  EXPECT_LT(sep.a_cmp, plain.a_cmp - 2.0 * (49 - 14) + 1e-9);
  const std::string source = w->source(blur, w->complete(blur, with));
  EXPECT_NE(source.find("#define TB_WP_SEP 1"), std::string::npos);
  EXPECT_NE(source.find("#define TB_WP_EDGE_BY_ROWS 1"), std::string::npos);
  EXPECT_NE(w->source(blur, w->complete(blur, shape)).find("#define TB_WP_EDGE_BY_ROWS 0"), std::string::npos);
  LaunchContext ctx;
  ctx.sm_count = 132;
  ctx.resident_blocks_per_sm = 1;
  const Launch with_sep = w->launch(blur, w->complete(blur, with), true, ctx);
  EXPECT_EQ(with_sep.grid[0] + with_sep.edge_grid[0], 132u);
  with["split"] = 0;
  EXPECT_EQ(w->complete(blur, with).at("sep"), 1);
  Problem odd = blur;
  odd.steps = 1001;
  const auto rest = w->rest_params(odd, w->complete(odd, with));
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(rest->at("sep"), 1);

  const Problem star = make_problem(load_spec(test::source_dir() + "/configs/j2d5pt.yaml"));
  for (const Params& k : w->space(star, d)) ASSERT_EQ(k.at("sep"), 0) << params_text(k);
  EXPECT_THROW(w->complete(star, {{"sep", 1}}), UsageError);
  const std::string src = w->source(star, w->complete(star, {}));
  EXPECT_NE(src.find("struct TbRows;"), std::string::npos);
  EXPECT_EQ(src.find("struct TbRows {"), std::string::npos);
}

// wpipe2d runs a run's last steps % depth steps as one shallower pass where it can: the deepest
// warps' x tw' within the remainder, warps' <= warps and tw' <= tw, more warps first, as one
// kernel (no split); single steps take what is left. Nothing for a remainder of 0 or 1.
TEST(Codegen, Wpipe2dRestPassTakesTheRemainder) {
  const Strategy* w = find_strategy("wpipe2d");
  const auto rest = [&](long steps, int warps, int tw) -> std::optional<Params> {
    const Problem p = problem_from("name: s\ndims: 2\ndtype: double\nexpr: \"0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])\"\n"
                                   "domain: [11616, 11616]\nsteps: " + std::to_string(steps) + "\n");
    return w->rest_params(p, w->complete(p, {{"rx", 13}, {"warps", warps}, {"tw", tw}}));
  };
  const auto shape = [&](const std::optional<Params>& k) {
    return k ? std::to_string(k->at("warps")) + "x" + std::to_string(k->at("tw")) + "/" + std::to_string(k->at("split"))
             : std::string("none");
  };
  EXPECT_EQ(shape(rest(1000, 8, 4)), "8x1/0");   // 31 passes of 32, then 8
  EXPECT_EQ(shape(rest(1000, 12, 2)), "8x2/0");  // 41 passes of 24, then 16
  EXPECT_EQ(shape(rest(1001, 12, 2)), "8x2/0");  // 17 left: 16 in the pass, 1 single step
  EXPECT_EQ(shape(rest(1003, 12, 2)), "9x2/0");   // 19 left: 18 in the pass, 1 single step
  EXPECT_EQ(shape(rest(996, 12, 2)), "12x1/0");   // 12 left: 12 x 1 or 6 x 2; more warps first
  EXPECT_EQ(shape(rest(960, 8, 4)), "none");      // no remainder
  EXPECT_EQ(shape(rest(961, 8, 4)), "none");      // one step: the step kernel
}

// wpipe3d's rest pass runs like its step kernel, every tile with the ring's tests in one grid,
// at the rest's own depth and stages: FastStencil's j3d7pt shape (depth 6) at 100 steps leaves 4.
// wpipe3d's fold (a z-symmetric stencil's mirrored planes summed first, in every loop) is in
// the space of poisson, with late 0 and no variant; asked for where the weights are not
// symmetric, or with late 1, it is an error. The model charges its 14 folded terms and an add
// per folded plane's cell instead of 19 points. j3d17pt's planes fold in a ratio, j3d27pt's
// as a combination.
TEST(Codegen, Wpipe3dFoldForZSymmetricStencils) {
  const Strategy* w = find_strategy("wpipe3d");
  const DeviceProfile d = *builtin_profile("h100");
  Problem poisson = make_problem(load_spec(test::source_dir() + "/configs/poisson.yaml"));
  int folds = 0;
  for (const Params& k : w->space(poisson, d))
    if (k.at("fold")) {
      ++folds;
      EXPECT_EQ(k.at("late"), 0) << params_text(k);
      EXPECT_FALSE(w->primary_of(poisson, d, k).has_value()) << params_text(k);
    }
  EXPECT_GT(folds, 0);
  const Params shape{{"rx", 3}, {"cy", 7}, {"wy", 4}, {"warps", 2}, {"tw", 1}, {"late", 0}};
  Params with = shape;
  with["fold"] = 1;
  const ModelTerms plain = w->model_terms(poisson, w->complete(poisson, shape), d);
  const ModelTerms fold = w->model_terms(poisson, w->complete(poisson, with), d);
  EXPECT_NEAR(plain.a_cmp - fold.a_cmp, 2.0 * (19 - 14 - 9.0 / 7), 1e-9);
  EXPECT_NE(w->source(poisson, w->complete(poisson, with)).find("#define TB_WP_FOLD 1"), std::string::npos);
  EXPECT_EQ(w->complete(poisson, {{"fold", 1}}).at("late"), 0);
  with["late"] = 1;
  EXPECT_THROW(w->complete(poisson, with), UsageError);
  const Problem odd = test::small_problem(test::source_dir() + "/configs/poisson.yaml", DType::Float, {97, 71, 45}, 11);
  EXPECT_EQ(w->rest_params(odd, w->complete(odd, {{"warps", 2}, {"tw", 2}, {"fold", 1}}))->at("fold"), 1);
  const Problem star = make_problem(load_spec(test::source_dir() + "/configs/j3d7pt.yaml"));
  EXPECT_THROW(w->complete(star, {{"fold", 1}}), UsageError);
  // j3d17pt's corner planes weigh 0.50 before and 0.52 after: folded with a multiply-add.
  const Problem corners = make_problem(load_spec(test::source_dir() + "/configs/j3d17pt.yaml"));
  const std::string src = w->source(corners, w->complete(corners, {{"fold", 1}}));
  EXPECT_NE(src.find("if (d == 1) return tb_fma(real(0.9615384615384"), std::string::npos);
  EXPECT_NE(w->source(poisson, w->complete(poisson, {{"fold", 1}})).find("if (d == 1) return p(1) + p(-1);"),
            std::string::npos);
  // j3d27pt's plane before is twice its own plane minus the plane after: both folded planes take it.
  const Problem box = make_problem(load_spec(test::source_dir() + "/configs/j3d27pt.yaml"));
  const std::string box_src = w->source(box, w->complete(box, {{"fold", 1}}));
  EXPECT_NE(box_src.find("if (d == 0) return tb_fma(real(2), p(-1), p(0));"), std::string::npos);
  EXPECT_NE(box_src.find("if (d == 1) return tb_fma(real(-1), p(-1), p(1));"), std::string::npos);
}

TEST(Codegen, Wpipe3dRestPassIsOneGridOfEveryTile) {
  const Strategy* w = find_strategy("wpipe3d");
  Problem p = make_problem(load_spec(test::source_dir() + "/configs/j3d7pt.yaml"));
  p.domain = {572, 216, 2560};
  p.steps = 100;
  const Params k = w->complete(p, {{"rx", 2}, {"cy", 7}, {"wy", 4}, {"warps", 2}, {"tw", 3}});
  const auto rest = w->rest_params(p, k);
  ASSERT_TRUE(rest.has_value());
  EXPECT_EQ(w->depth(*rest), 4);
  EXPECT_EQ(rest->at("warps"), 2);
  const Launch full = w->launch(p, k, true, {132, 1}), pass = w->launch(p, *rest, true, {132, 1});
  EXPECT_GT(blocks(full.edge_grid), 0);
  EXPECT_EQ(blocks(pass.edge_grid), 0);
  EXPECT_EQ(pass.block[0], 2u * 4 * 32);
  EXPECT_GT(long(pass.grid[0]) * pass.grid[1], long(full.grid[0]) * full.grid[1]);  // the frame too
  p.steps = 96;  // a multiple of 6: no rest
  EXPECT_FALSE(w->rest_params(p, k).has_value());
}

// wpipe2d's and wpipe3d's step kernel is the cell kernel of templates/step.cuh, under its own
// name, launched and modelled as the naive kernel: their loops are not built again for one
// step, and a CUBIN with the earlier one-warp step kernel (named tb_step) is never launched
// with the cell kernel's geometry.
TEST(Codegen, WpipeStepKernelIsTheCellKernel) {
  const Problem flat = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Double, {1037, 389, 1}, 11);
  const Problem deep = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double, {200, 90, 40}, 7);
  const Strategy* naive = find_strategy("naive");
  const DeviceProfile d = *builtin_profile("h100");
  const LaunchContext ctx{132, 1};
  for (const Problem* p : {&flat, &deep}) {
    const Strategy* w = find_strategy(p->dims() == 2 ? "wpipe2d" : "wpipe3d");
    SCOPED_TRACE(w->name());
    const Params k = w->complete(*p, {});
    EXPECT_STREQ(w->step_kernel(), kCellStepKernel);
    const std::string src = w->source(*p, k);
    EXPECT_NE(src.find(std::string("tb_cell_step(")), std::string::npos);
    EXPECT_EQ(src.find("tb_step("), std::string::npos);
    const Launch step = w->launch(*p, k, false, ctx), cells = naive->launch(*p, {}, true, ctx);
    EXPECT_EQ(step.grid, cells.grid);
    EXPECT_EQ(step.block, cells.block);
    EXPECT_EQ(step.dynamic_smem, 0u);
    const ModelTerms t = w->step_terms(*p, k, d), n = naive->model_terms(*p, {}, d);
    EXPECT_EQ(t.depth, 1);
    EXPECT_EQ(t.a_gm, n.a_gm);
    EXPECT_EQ(t.threads, n.threads);
  }
  EXPECT_STREQ(naive->step_kernel(), kStepKernel);
  EXPECT_STREQ(find_strategy("cmq2d")->step_kernel(), kStepKernel);
}

TEST(Codegen, SourceDefinesBothKernelsAndDtype) {
  const Problem p = problem_from(
      "name: t\ndims: 2\ndtype: float\nexpr: \"0.5 * (u[-1,0] + u[1,0])\"\ndomain: [16, 16]\nsteps: 1\n");
  const std::string src = find_strategy("naive")->source(p, {});
  EXPECT_NE(src.find("typedef float real;"), std::string::npos);
  EXPECT_NE(src.find(kFullKernel), std::string::npos);
  EXPECT_NE(src.find(kStepKernel), std::string::npos);
}

TEST(Nvrtc, ParsesPtxasReport) {
  const std::string log =
      "ptxas info    : 0 bytes gmem\n"
      "ptxas info    : Compiling entry function 'tb_full' for 'sm_90'\n"
      "ptxas info    : Function properties for tb_full\n"
      "    8 bytes stack frame, 4 bytes spill stores, 12 bytes spill loads\n"
      "ptxas info    : Used 40 registers, used 1 barriers, 8192 bytes smem, 400 bytes cmem[0]\n"
      "ptxas info    : Compiling entry function 'tb_step' for 'sm_90'\n"
      "ptxas info    : Function properties for tb_step\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 12 registers, used 0 barriers, 400 bytes cmem[0]\n";
  const auto k = parse_ptxas_log(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k.at("tb_full").registers, 40);
  EXPECT_EQ(k.at("tb_full").spill_bytes(), 16);
  EXPECT_EQ(k.at("tb_full").stack_bytes, 8);
  EXPECT_EQ(k.at("tb_full").smem_bytes, 8192);
  EXPECT_EQ(k.at("tb_step").registers, 12);
  EXPECT_EQ(k.at("tb_step").smem_bytes, 0);
}

// ptxas' report for a kernel calling a double sin (CUDA 13, sm_90): the slow path's own
// properties come last and are not the kernel's.
TEST(Nvrtc, CalledFunctionsDoNotOverwriteTheKernelsFigures) {
  const std::string log =
      "ptxas info    : 272 bytes gmem\n"
      "ptxas info    : Compiling entry function 'tb_step' for 'sm_90'\n"
      "ptxas info    : Function properties for tb_step\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n"
      "ptxas info    : Used 10 registers, used 0 barriers\n"
      "ptxas info    : Compiling entry function 'tb_full' for 'sm_90'\n"
      "ptxas info    : Function properties for tb_full\n"
      "    40 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n"
      "ptxas info    : Used 30 registers, used 0 barriers, 40 bytes cumulative stack size\n"
      "ptxas info    : Function properties for __internal_trig_reduction_slowpathd\n"
      "    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n";
  const auto k = parse_ptxas_log(log);
  ASSERT_EQ(k.size(), 2u);
  EXPECT_EQ(k.at("tb_full").stack_bytes, 40);
  EXPECT_EQ(k.at("tb_full").spill_bytes(), 8);
  EXPECT_EQ(k.at("tb_full").registers, 30);
  EXPECT_EQ(k.at("tb_step").stack_bytes, 0);
  EXPECT_EQ(k.at("tb_step").registers, 10);
}

TEST(Nvrtc, CompileErrorCarriesLog) {
  try {
    (void)compile_cuda("extern \"C\" __global__ void k() { undefined_thing(); }", "sm_90");
    FAIL() << "expected a CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(e.log().find("undefined_thing"), std::string::npos) << e.log();
  }
}

// Every config x strategy x dtype, default parameters, for the two architectures we support.
TEST(Nvrtc, EveryConfigCompilesForEveryStrategy) {
  int compiled = 0;
  for (const std::string& path : test::config_paths()) {
    for (DType dtype : {DType::Double, DType::Float}) {
      Problem p = make_problem(load_spec(path));
      p.dtype = dtype;
      for (const auto& s : strategies()) {
        if (!s->supports(p)) continue;
        const Params params = s->complete(p, {});
        const std::string src = s->source(p, params);
        for (const char* arch : {"sm_80", "sm_90"}) {
          if (dtype == DType::Float && std::string(arch) == "sm_80") continue;  // keeps CI short
          SCOPED_TRACE(path + " " + s->name() + " " + dtype_name(dtype) + " " + arch);
          const CompiledModule m = compile_cuda(src, arch);
          EXPECT_FALSE(m.cubin.empty());
          ASSERT_TRUE(m.kernels.count(kFullKernel));
          ASSERT_TRUE(m.kernels.count(s->step_kernel()));
          EXPECT_GT(m.kernels.at(kFullKernel).registers, 0);
          EXPECT_EQ(m.kernels.at(kFullKernel).spill_bytes(), 0) << m.log;
          ++compiled;
        }
      }
    }
  }
  EXPECT_GE(compiled, 40);
}

// stream is built for the occupancy its model assumes (a full SM of threads): the widest stencils
// at 8 cells per thread in blocks of 64 threads fit it without spilling, where ptxas took 38-40
// registers before and the tunes pruned them as too large for their 32 blocks per SM.
TEST(Nvrtc, StreamFitsTheBlocksItsModelAssumes) {
  const Strategy* s = find_strategy("stream");
  const DeviceProfile d = *builtin_profile("h100");
  for (const char* name : {"j2d49pt", "j3d27pt", "j3d17pt"}) {
    const Problem p = make_problem(load_spec(test::source_dir() + "/configs/" + name + ".yaml"));
    const Params k = s->complete(p, {{"bx", 32}, {"by", 2}, {"ppt", 8}});
    const CompiledModule m = compile_cuda(s->source(p, k), "sm_90");
    ModelTerms t = s->model_terms(p, k, d);
    EXPECT_EQ(t.blocks_per_sm, 32);
    t.regs_per_thread = m.kernels.at(kFullKernel).registers;
    EXPECT_EQ(resource_check(t, d), "") << name << ": " << t.regs_per_thread << " registers";
    EXPECT_EQ(m.kernels.at(kFullKernel).spill_bytes(), 0) << m.log;
  }
}

// The 3D modes besides the default ring, for every 3D config (sm_90, double): the register
// queue and, for affine stencils, partial sums, in both 3D strategies.
TEST(Nvrtc, EveryThreeDModeCompiles) {
  int compiled = 0;
  for (const std::string& path : test::config_paths()) {
    const Problem p = make_problem(load_spec(path));
    if (p.dims() != 3) continue;
    for (const char* name : {"smtile3d", "devtile3d"})
      for (const Params& mode : {Params{{"rq", 1}}, Params{{"sum", 1}}}) {
        if (mode.count("sum") && !p.stencil.linear) continue;
        const Strategy* s = find_strategy(name);
        SCOPED_TRACE(path + " " + name + " " + params_text(mode));
        const CompiledModule m = compile_cuda(s->source(p, s->complete(p, mode)), "sm_90");
        ASSERT_TRUE(m.kernels.count(kFullKernel));
        EXPECT_GT(m.kernels.at(kFullKernel).registers, 0);
        ++compiled;
      }
  }
  EXPECT_GE(compiled, 20);
}

// wpipe2d for every 2D config (sm_90, double) at two points besides the defaults, and the nonlinear
// 2D spec, whose stencil is evaluated whole after the barrier.
TEST(Nvrtc, EveryWpipe2dSpecCompiles) {
  int compiled = 0;
  std::vector<std::string> paths = test::config_paths();
  paths.push_back(test::source_dir() + "/tests/specs/good/nonlinear.yaml");
  const Strategy* s = find_strategy("wpipe2d");
  for (const std::string& path : paths) {
    // Wide enough for rx 9 (288 columns) whatever the spec's own domain.
    const Problem p = test::small_problem(path, DType::Double, {1037, 389, 1}, 11);
    if (p.dims() != 2) continue;
    SCOPED_TRACE(path);
    // split 1 (the default): tb_full and tb_edge, run beside it; split 0: tb_full alone.
    for (const Params& given : {Params{{"rx", 5}, {"warps", 4}, {"tw", 1}, {"rows", 2}},
                                Params{{"rx", 9}, {"warps", 8}, {"tw", 1}, {"rows", 1}, {"split", 0}}}) {
      const Params k = s->complete(p, given);
      const CompiledModule m = compile_cuda(s->source(p, k), "sm_90");
      ASSERT_TRUE(m.kernels.count(kFullKernel));
      EXPECT_GT(m.kernels.at(kFullKernel).registers, 0);
      EXPECT_EQ(m.kernels.count(kEdgeKernel), std::size_t(k.at("split")));
      // 11 steps at depth 4 or 8 leave 3: one pass of 3 warps, named for its depth.
      const auto rest = s->rest_params(p, k);
      ASSERT_TRUE(rest.has_value());
      EXPECT_EQ(s->depth(*rest), 3);
      EXPECT_TRUE(m.kernels.count(rest_kernel_name(3))) << m.log;
      ++compiled;
    }
    // A y-symmetric stencil (j2d25pt, j2d49pt) also with its mirrored rows summed first (fold),
    // in tb_full, tb_edge and the rest pass; the one-step kernel beside them.
    if (fold_rows(p.stencil)) {
      const CompiledModule m =
          compile_cuda(s->source(p, s->complete(p, {{"rx", 5}, {"warps", 4}, {"tw", 1}, {"rows", 2}, {"fold", 1}})), "sm_90");
      ASSERT_TRUE(m.kernels.count(kFullKernel) && m.kernels.count(kEdgeKernel) && m.kernels.count(rest_kernel_name(3)) &&
                  m.kernels.count(kCellStepKernel))
          << m.log;
      EXPECT_EQ(m.kernels.at(kFullKernel).spill_bytes(), 0) << m.log;
      ++compiled;
    }
    // A separable stencil (j2d49pt) also with its rows summed across once in every kernel (sep),
    // split 1 here (its default with sep is one kernel).
    if (row_factors(p.stencil)) {
      const CompiledModule m = compile_cuda(
          s->source(p, s->complete(p, {{"rx", 5}, {"warps", 4}, {"tw", 1}, {"rows", 2}, {"sep", 1}, {"split", 1}})),
          "sm_90");
      ASSERT_TRUE(m.kernels.count(kFullKernel) && m.kernels.count(kEdgeKernel)) << m.log;
      EXPECT_EQ(m.kernels.at(kEdgeKernel).spill_bytes(), 0) << m.log;
      EXPECT_EQ(m.kernels.at(kFullKernel).spill_bytes(), 0) << m.log;
      ++compiled;
    }
  }
  EXPECT_EQ(compiled, 15);
}

// A group of rows wider than 32 cells per thread in a one-warp full pass (rows x rx = 64; the
// one-warp step kernel of earlier versions had them at rows x rx = 40): the ring's traffic then
// tests each cell's column as it goes instead of holding the tests as bits of one word
// (templates/wpipe2d.cuh, WpTraffic::kMasks). Every kernel of both modules compiles; the float
// tune of j2d5pt had lost 19 candidates to a compile error here.
TEST(Nvrtc, Wpipe2dWideGroupsCompile) {
  const Strategy* s = find_strategy("wpipe2d");
  const Problem p = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Float, {2049, 389, 1}, 11);
  for (const Params& given : {Params{{"rx", 20}, {"warps", 12}, {"tw", 3}, {"rows", 2}, {"late", 0}},
                              Params{{"rx", 16}, {"warps", 1}, {"tw", 2}, {"rows", 4}}}) {
    const Params k = s->complete(p, given);
    SCOPED_TRACE(params_text(k));
    const CompiledModule m = compile_cuda(s->source(p, k), "sm_90");
    EXPECT_TRUE(m.kernels.count(kFullKernel) && m.kernels.count(kEdgeKernel) && m.kernels.count(kCellStepKernel)) << m.log;
  }
}

// wpipe3d for every 3D config and the nonlinear and general 3D specs (sm_90, double) at two
// shapes besides the defaults: several levels per stage (the y halo exchange between them) and
// one warp along y (none); tb_full without spilling, and tb_edge beside it.
TEST(Nvrtc, EveryWpipe3dSpecCompiles) {
  int compiled = 0;
  std::vector<std::string> paths = test::config_paths();
  paths.push_back(test::source_dir() + "/tests/specs/good/nonlinear3d.yaml");
  paths.push_back(test::source_dir() + "/tests/specs/good/points3d.yaml");
  const Strategy* s = find_strategy("wpipe3d");
  for (const std::string& path : paths) {
    const Problem p = test::small_problem(path, DType::Double, {200, 90, 40}, 7);
    if (p.dims() != 3) continue;
    SCOPED_TRACE(path);
    const int r = p.stencil.radius;
    for (const Params& given : {Params{{"rx", 1}, {"cy", std::max(4, r)}, {"wy", 4}, {"warps", 2}, {"tw", 2}},
                                Params{{"rx", 2}, {"cy", std::max(4, 3 * r)}, {"wy", 1}, {"warps", 2}, {"tw", 1}}}) {
      const Params k = s->complete(p, given);
      const CompiledModule m = compile_cuda(s->source(p, k), "sm_90");
      ASSERT_TRUE(m.kernels.count(kFullKernel));
      ASSERT_TRUE(m.kernels.count(kCellStepKernel));
      ASSERT_TRUE(m.kernels.count(kEdgeKernel));  // the tiles that reach the ring, beside tb_full
      // 7 steps: depth 4 leaves 3, a rest pass of 2 stages x 1 level and a single step;
      // depth 2 leaves 1, the step kernel's.
      const auto rest = s->rest_params(p, k);
      EXPECT_EQ(rest.has_value(), k.at("tw") == 2);
      EXPECT_EQ(m.kernels.count(rest_kernel_name(2)), std::size_t(k.at("tw") == 2)) << m.log;
      EXPECT_GT(m.kernels.at(kFullKernel).registers, 0);
      EXPECT_EQ(m.kernels.at(kFullKernel).spill_bytes(), 0) << m.log;
      ++compiled;
    }
    // A stencil that folds along z (poisson's mirrored planes; j3d17pt's in a ratio; j3d27pt's
    // plane before as a combination of the others) also with its folded planes (fold), in
    // every kernel.
    if (fold_rows(p.stencil)) {
      const Params k = s->complete(p, {{"rx", 1}, {"cy", std::max(4, r)}, {"wy", 4}, {"warps", 2}, {"tw", 2}, {"fold", 1}});
      const CompiledModule m = compile_cuda(s->source(p, k), "sm_90");
      ASSERT_TRUE(m.kernels.count(kFullKernel) && m.kernels.count(kEdgeKernel) && m.kernels.count(rest_kernel_name(2)) &&
                  m.kernels.count(kCellStepKernel))
          << m.log;
      EXPECT_EQ(m.kernels.at(kFullKernel).spill_bytes(), 0) << m.log;
      ++compiled;
    }
  }
  EXPECT_EQ(compiled, 17);
}

}  // namespace
}  // namespace tbtune
