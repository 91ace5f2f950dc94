// Tests for tuner/search: which candidates the model and exhaustive searches choose.
#include "tuner/search/search.hpp"

#include <algorithm>
#include <map>

#include <gtest/gtest.h>

#include "model/device_profile.hpp"
#include "model/model.hpp"
#include "tests/test_util.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// Two steps deep for the strategies that block in time (cmq2d's t, wpipe2d's warps x tw).
RankedCandidate make(const char* strategy, int id, double pp, bool fits = true) {
  RankedCandidate c;
  c.strategy = find_strategy(strategy);
  c.params = {{"id", id}, {"t", 2}, {"warps", 2}, {"tw", 1}};
  c.prediction.PP_gcells = pp;
  c.prediction.fits = fits;
  return c;
}

// Sorted as rank_candidates sorts: fitting first, best PP first.
std::vector<RankedCandidate> space() {
  return {make("stream", 0, 100), make("naive", 99, 99.5), make("stream", 1, 99),
          make("stream", 2, 98), make("stream", 3, 97.5), make("stream", 4, 90),
          make("stream", 5, 80), make("stream", 6, 500, false)};
}

std::vector<int> ids(const std::vector<RankedCandidate>& cs) {
  std::vector<int> out;
  for (const auto& c : cs) out.push_back(c.params.at("id"));
  return out;
}

TEST(Search, DefaultsLiveInOnePlace) {
  const SearchOptions o;
  EXPECT_EQ(o.mode, SearchMode::Model);
  EXPECT_EQ(o.top, SearchDefaults::top);
  EXPECT_EQ(o.within, SearchDefaults::within);
  EXPECT_EQ(o.max_candidates, SearchDefaults::max_candidates);
  EXPECT_EQ(SearchDefaults::top, 8);
  EXPECT_DOUBLE_EQ(SearchDefaults::within, 0.03);
  EXPECT_EQ(SearchDefaults::max_candidates, 48);
}

TEST(Search, ModelTakesTopKOnlyWithoutMargin) {
  SearchOptions o;
  o.top = 5;  // more than the strategy's per_strategy, which would top a smaller K up
  o.within = 0;
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1, 2, 3, 4}));
}

TEST(Search, ModelAddsEverythingWithinTheMarginButNeverNaiveOrNonFitting) {
  SearchOptions o;
  o.top = 1;
  o.within = 0.03;  // PP >= 97
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1, 2, 3}));
  o.within = 0.5;  // PP >= 50: everything that fits, and still not the 500 that does not fit
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Search, ModelIsCappedByMaxCandidates) {
  SearchOptions o;
  o.top = 5;
  o.within = 0.5;
  o.max_candidates = 3;
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1, 2}));
  o.max_candidates = 0;
  EXPECT_TRUE(select_candidates(space(), o).empty());
}

// The model's error differs between strategies, so a model search also times the best few
// (per_strategy) of each strategy that blocks in time and the best of a one-step one (stream),
// if predicted at least 0.4 of the best; the stand-ins are the candidates not selected of the
// strategies selected, in rank order, a number of places for each selected one.
TEST(Search, ModelTopsUpEachStrategyAboveTheFloor) {
  ASSERT_EQ(SearchDefaults::per_strategy, 5);
  ASSERT_EQ(SearchDefaults::strategy_floor, 0.4);
  const std::vector<RankedCandidate> ranked = {
      make("cmq2d", 0, 100),  make("cmq2d", 1, 99),   make("cmq2d", 2, 98),    make("cmq2d", 3, 97),
      make("cmq2d", 4, 96),   make("cmq2d", 5, 95),   make("stream", 6, 60),   make("wpipe2d", 7, 59),
      make("stream", 8, 58),  make("wpipe2d", 9, 57), make("wpipe2d", 10, 35), make("cmq2d", 11, 30)};
  SearchOptions o;
  o.top = 2;
  o.within = 0;
  const auto chosen = select_candidates(ranked, o);
  // cmq2d topped up to 5, stream's best alone, wpipe2d's two above 40 (its 35 is below).
  EXPECT_EQ(ids(chosen), (std::vector<int>{0, 1, 2, 3, 4, 6, 7, 9}));
  // Five cmq2d places (5 and 11, skipping the others'), one stream place (8), two wpipe2d
  // places (10, then none left).
  EXPECT_EQ(ids(stand_ins(ranked, chosen, 1)), (std::vector<int>{5, 8, 10, 11}));
  EXPECT_EQ(ids(stand_ins(ranked, {ranked[6]}, 1)), (std::vector<int>{8}));
  EXPECT_EQ(ids(stand_ins(ranked, {ranked[6]}, 3)), (std::vector<int>{8}));  // stream has no more
  o.top = 7;  // six cmq2d and stream's best already: wpipe2d's two are added
  EXPECT_EQ(ids(select_candidates(ranked, o)), (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 9}));
  o.top = 2;
  o.max_candidates = 3;  // the cap holds
  EXPECT_EQ(ids(select_candidates(ranked, o)), (std::vector<int>{0, 1, 2}));
}

// A strategy whose register estimate overshoots (Strategy::register_estimate_slack) has its
// candidates over the cap by less than that chosen by their prediction, though rank_candidates
// puts them after every one that fits; stand-ins keep to the estimate.
TEST(Search, ModelChoosesWithinTheStrategysRegisterSlack) {
  auto ranked = space();
  ranked.back().may_fit_model_search = true;  // predicted 500, over the cap by the estimate
  SearchOptions o;
  o.top = 2;
  o.within = 0;
  EXPECT_EQ(ids(select_candidates(ranked, o)), (std::vector<int>{6, 0}));
  EXPECT_TRUE(may_be_chosen_by_model(ranked.back()));
  EXPECT_FALSE(is_feasible(ranked.back()));
  EXPECT_EQ(ids(stand_ins(ranked, {ranked.back()}, 1)), (std::vector<int>{0}));
  // Shown as the model search sees it: by prediction, the one over the estimate first, naive
  // in its place; a variant over the estimate (which no search chooses) after everything else.
  EXPECT_EQ(ids(in_model_search_order(ranked)), (std::vector<int>{6, 0, 99, 1, 2, 3, 4, 5}));
  ranked.back().primary = Params{{"id", 0}};
  EXPECT_EQ(ids(in_model_search_order(ranked)), (std::vector<int>{0, 99, 1, 2, 3, 4, 5, 6}));
}

TEST(Search, ExhaustiveTakesEveryFittingCandidate) {
  SearchOptions o;
  o.mode = SearchMode::Exhaustive;
  o.top = 1;
  o.within = 0;
  o.max_candidates = 1;  // model search only
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1, 2, 3, 4, 5}));
  // One that fits but for its register estimate: exhaustive search lets ptxas decide, after
  // the ones the estimate admits; a model search leaves it out.
  auto ranked = space();
  ranked.back().may_fit = true;
  EXPECT_EQ(ids(select_candidates(ranked, o)), (std::vector<int>{0, 1, 2, 3, 4, 5, 6}));
  EXPECT_FALSE(is_feasible(ranked.back()));
  EXPECT_TRUE(may_be_feasible(ranked.back()));
  o.mode = SearchMode::Model;
  o.top = 8;
  o.max_candidates = 48;
  EXPECT_EQ(ids(select_candidates(ranked, o)), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

// On a real space: the register estimate rules out shapes that ptxas fits (j3d7pt's wpipe3d
// rx 3, cy 6, tw 2 at two stages of four warps: estimated 288, compiled at 255 without spills,
// the fastest of its slice on the H200; docs/tuning.md, "Exhaustive slices"). Exhaustive search
// takes them, and nothing that the exact limits rule out.
TEST(Search, ExhaustiveLetsPtxasDecideTheRegisters) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                        {572, 216, 2560}, 100);
  const DeviceProfile d = *builtin_profile("h200");
  const auto ranked = rank_candidates(p, d, "wpipe3d");
  SearchOptions o;
  o.mode = SearchMode::Exhaustive;
  const auto chosen = select_candidates(ranked, o);
  int over_estimate = 0, feasible = 0;
  bool seen_over = false, in_order = true;
  for (const auto& c : chosen) {
    ModelTerms exact = c.terms;
    exact.regs_per_thread = 0;
    EXPECT_EQ(resource_check(exact, d), "") << params_text(c.params);
    if (!c.prediction.fits) ++over_estimate, seen_over = true;
    else if (seen_over) in_order = false;
  }
  for (const auto& c : ranked) feasible += is_feasible(c);
  EXPECT_EQ(int(chosen.size()), feasible + over_estimate);  // every feasible one, and more
  EXPECT_GT(over_estimate, 0);
  EXPECT_TRUE(in_order);  // those the estimate admits first, for a --budget
  // But not what no kernel of the slices and the survey fit: rx 3, cy 12, tw 3 is estimated at
  // 774 registers, and spilled 26 KB at 255.
  const Params huge{{"rx", 3}, {"cy", 12}, {"wy", 4}, {"warps", 2}, {"tw", 3}, {"bps", 1}, {"late", 1}, {"fold", 0}};
  const auto big = std::find_if(ranked.begin(), ranked.end(), [&](const RankedCandidate& c) { return c.params == huge; });
  ASSERT_NE(big, ranked.end());
  EXPECT_FALSE(may_be_feasible(*big));
  const Params shape{{"rx", 3}, {"cy", 6}, {"wy", 4}, {"warps", 2}, {"tw", 2}, {"bps", 1}, {"late", 1}, {"fold", 0}};
  const auto it = std::find_if(chosen.begin(), chosen.end(), [&](const RankedCandidate& c) { return c.params == shape; });
  ASSERT_NE(it, chosen.end());
  EXPECT_FALSE(it->prediction.fits);
  // A model search lets the estimate go over the cap by wpipe3d's slack, and no further: rx 3,
  // cy 6, tw 2 (288 registers estimated, 1.13 x the cap of 255) may be chosen as late 0, its
  // primary where the registers are tight (late 1 is its variant, which stands in for it only),
  // rx 3, cy 12, tw 1 (342, 1.34 x) may not.
  EXPECT_DOUBLE_EQ(find_strategy("wpipe3d")->register_estimate_slack(), 1.2);
  EXPECT_EQ(it->terms.regs_per_thread, 288);
  EXPECT_FALSE(may_be_chosen_by_model(*it));
  Params late0 = shape;
  late0["late"] = 0;
  const auto primary = std::find_if(ranked.begin(), ranked.end(), [&](const RankedCandidate& c) { return c.params == late0; });
  ASSERT_NE(primary, ranked.end());
  EXPECT_FALSE(primary->primary.has_value());
  EXPECT_TRUE(may_be_chosen_by_model(*primary));
  const Params wide{{"rx", 3}, {"cy", 12}, {"wy", 4}, {"warps", 2}, {"tw", 1}, {"bps", 1}, {"late", 0}, {"fold", 0}};
  const auto w = std::find_if(ranked.begin(), ranked.end(), [&](const RankedCandidate& c) { return c.params == wide; });
  ASSERT_NE(w, ranked.end());
  EXPECT_EQ(w->terms.regs_per_thread, 342);
  EXPECT_FALSE(may_be_chosen_by_model(*w));
  EXPECT_TRUE(may_be_feasible(*w));  // but an exhaustive search times it
  int over = 0;
  for (const auto& c : select_candidates(ranked, SearchOptions{})) over += !c.prediction.fits;
  EXPECT_GT(over, 0);  // on the H200 profile the default selection holds shapes over the estimate
  // Other strategies keep to their estimate.
  EXPECT_DOUBLE_EQ(find_strategy("wpipe2d")->register_estimate_slack(), 1.0);
}

TEST(Search, SpaceSizeLeavesOutNaiveAndCountsWhatFits) {
  const SpaceSize s = space_size(space());
  EXPECT_EQ(s.candidates, 7);  // 8 ranked, less naive
  EXPECT_EQ(s.feasible, 6);    // less the one that does not fit
  EXPECT_FALSE(is_feasible(make("naive", 0, 1)));
  EXPECT_FALSE(is_feasible(make("stream", 0, 1, false)));
  EXPECT_TRUE(is_feasible(make("stream", 0, 1)));
  // Exhaustive search selects exactly the feasible candidates here (none fits but for its registers).
  SearchOptions o;
  o.mode = SearchMode::Exhaustive;
  EXPECT_EQ(int(select_candidates(space(), o).size()), s.feasible);
  EXPECT_EQ(space_size({}).candidates, 0);
}

TEST(Search, RealSpaceIsRankedAndSelectedInOrder) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Double,
                                        {1024, 1024, 1}, 100);
  const auto ranked = rank_candidates(p, *builtin_profile("h100"));
  ASSERT_GT(ranked.size(), 10u);
  const auto chosen = select_candidates(ranked, SearchOptions{});
  ASSERT_GE(chosen.size(), std::size_t(SearchDefaults::top));
  EXPECT_LE(chosen.size(), std::size_t(SearchDefaults::max_candidates));
  for (std::size_t i = 1; i < chosen.size(); ++i)
    EXPECT_GE(chosen[i - 1].prediction.PP_gcells, chosen[i].prediction.PP_gcells);
  for (const auto& c : chosen) EXPECT_NE(c.strategy->name(), "naive");
}

// wpipe2d's model is fitted to H100 measurements (docs/bench-2d.md): on FastStencil's j2d5pt
// domain it ranks its own candidates above cmq2d's, so the default search times it, and its
// stand-ins are candidates it did not select, of the strategies it did, in rank order.
TEST(Search, ModelSearchTimesWpipe2dWhereTheModelRanksItFirst) {
  Problem p = make_problem(load_spec(test::source_dir() + "/configs/j2d5pt.yaml"));
  p.domain = {11616, 11616, 1};
  const auto ranked = rank_candidates(p, *builtin_profile("h100"));
  const auto selected = select_candidates(ranked, SearchOptions{});
  ASSERT_FALSE(selected.empty());
  EXPECT_EQ(selected.front().strategy->name(), "wpipe2d");
  // cmq2d's best comes in as the best of a strategy the ranking left out.
  EXPECT_TRUE(std::any_of(selected.begin(), selected.end(),
                          [](const RankedCandidate& c) { return c.strategy->name() == "cmq2d"; }));
  const auto more = stand_ins(ranked, selected, 3);
  ASSERT_EQ(more.size(), 3 * selected.size());
  for (std::size_t i = 0; i < more.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(more[i - 1].prediction.PP_gcells, more[i].prediction.PP_gcells);
    }
    for (const auto& c : selected) {
      EXPECT_FALSE(c.strategy == more[i].strategy && c.params == more[i].params);
    }
  }
  // The space keeps what measurement left in it: 4-12 warps, at most 2 blocks per SM, and for
  // a 5-point stencil both one kernel and two per pass.
  bool split0 = false, split1 = false;
  for (const auto& c : ranked) {
    if (c.strategy->name() != "wpipe2d") continue;
    EXPECT_GE(c.params.at("warps"), 4);
    EXPECT_LE(c.params.at("warps"), 12);
    EXPECT_LE(c.params.at("bps"), 2);
    (c.params.at("split") ? split1 : split0) = true;
  }
  EXPECT_TRUE(split0 && split1);
}

// Where the boundary ring's tests cost under 10% of the loop (j2d49pt's 49 points), a pass is
// one kernel; where they cost more, it may be two (its folded loop, 31 operations per cell, is
// just past the line: a ring loop speed of 0.896). Where the loop sums its separable rows (sep,
// 14 multiply-adds per cell) it is one kernel, as measured, though the tests cost more there.
TEST(Search, Wpipe2dSplitsAPassWhereTheRingCostsEnough) {
  const Problem p = make_problem(load_spec(test::source_dir() + "/configs/j2d49pt.yaml"));
  int plain = 0, sep[2] = {0, 0}, fold[2] = {0, 0};
  for (const Params& k : find_strategy("wpipe2d")->space(p, *builtin_profile("h100"))) {
    if (k.at("sep")) {
      ++sep[k.at("split")];
    } else if (k.at("fold")) {
      ++fold[k.at("split")];
    } else {
      EXPECT_EQ(k.at("split"), 0) << params_text(k);
      ++plain;
    }
  }
  EXPECT_GT(plain, 0);
  EXPECT_GT(sep[0], 0);
  EXPECT_EQ(sep[1], 0);
  EXPECT_GT(fold[0], 0);
  EXPECT_GT(fold[1], 0);
}

// The fitted model's two corrections (docs/bench-2d.md, "The model fitted"): a pass's own cost
// ranks a deep pipeline above a shallow one at the same warps per SM, as measured (j2d49pt rx 13:
// 8 warps 208 GCells/s, 4 warps at 2 blocks per SM 163), and a bank conflict of two ways (rx 10)
// costs little, while sixteen (rx 16) cost much (j2d5pt at tw 4: rx 10 1330, rx 11 1367; tw 2:
// rx 16 344, rx 15 1213).
TEST(Search, Wpipe2dModelFollowsTheCalibration) {
  const Strategy& s = *find_strategy("wpipe2d");
  const DeviceProfile d = *builtin_profile("h100");
  Problem big = make_problem(load_spec(test::source_dir() + "/configs/j2d49pt.yaml"));
  big.domain = {9504, 9504, 1};
  const auto pp = [&](const Problem& p, const Params& k) { return predict_candidate(s, p, k, d).PP_gcells; };
  const Params deep{{"rx", 13}, {"warps", 8}, {"tw", 1}, {"rows", 1}, {"bps", 1}, {"split", 0}};
  Params shallow = deep;
  shallow["warps"] = 4;
  shallow["bps"] = 2;
  EXPECT_GT(pp(big, deep), 1.1 * pp(big, shallow));

  Problem small = make_problem(load_spec(test::source_dir() + "/configs/j2d5pt.yaml"));
  small.domain = {11616, 11616, 1};
  const auto strip = [](int rx, int tw) {
    return Params{{"rx", rx}, {"warps", 8}, {"tw", tw}, {"rows", 1}, {"bps", 1}, {"split", 1}};
  };
  EXPECT_GT(pp(small, strip(10, 4)), 0.9 * pp(small, strip(11, 4)));
  EXPECT_LT(pp(small, strip(16, 2)), 0.6 * pp(small, strip(15, 2)));
}

// A run of steps = n x t + r: n passes of the full kernel, r of the step kernel (depth 1, the
// same tile). The prediction weighs both by their time; a multiple of t costs nothing extra.
TEST(Search, PredictionCountsTheRemainderSteps) {
  const Strategy& s = *find_strategy("smtile3d");
  const DeviceProfile d = *builtin_profile("h100");
  Problem p = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                  {384, 352, 512}, 20);
  const Params k{{"t", 3}, {"tx", 32}, {"ty", 32}, {"cy", 2}, {"z", 1}, {"bps", 1}, {"sum", 0}};
  const Prediction full = predict(s.model_terms(p, k, d), p, d);
  const ModelTerms step_terms = s.step_terms(p, k, d);
  EXPECT_EQ(step_terms.depth, 1);
  const Prediction step = predict(step_terms, p, d);
  EXPECT_GT(full.PP_gcells, step.PP_gcells);  // one step per pass moves the same bytes

  // 20 = 6 x 3 + 2
  ModelTerms terms;
  const Prediction run = predict_candidate(s, p, k, d, &terms);
  EXPECT_EQ(terms.depth, 3);
  const double want = 20.0 / (18.0 / full.PP_gcells + 2.0 / step.PP_gcells);
  EXPECT_NEAR(run.PP_gcells, want, 1e-9 * want);
  EXPECT_LT(run.V_steps, 0.97);
  EXPECT_NEAR(run.V, full.V * run.V_steps, 1e-12);
  EXPECT_NEAR(run.PP_gcells, run.P_gcells * run.V, 1e-9 * want);

  p.steps = 21;  // a multiple of t: the full kernel's prediction as it is
  const Prediction exact = predict_candidate(s, p, k, d);
  EXPECT_EQ(exact.V_steps, 1.0);
  EXPECT_NEAR(exact.PP_gcells, predict(s.model_terms(p, k, d), p, d).PP_gcells, 1e-9);
}

// Sum mode's z planes are not independent: each one's terms go into the partial sums the
// next one adds to (templates/tile3d.cuh), so only the ring counts them as parallel work.
TEST(Search, OnlyTheRingCountsZPlanesAsParallelWork) {
  const Strategy& s = *find_strategy("smtile3d");
  const DeviceProfile d = *builtin_profile("h100");
  const Problem p = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                        {384, 352, 512}, 20);
  Params k{{"t", 4}, {"tx", 32}, {"ty", 32}, {"cy", 2}, {"z", 2}, {"bps", 1}, {"sum", 0}};
  EXPECT_EQ(s.model_terms(p, k, d).ilp, 2);
  k["sum"] = 1;
  EXPECT_EQ(s.model_terms(p, k, d).ilp, 1);
}

// Device tiling's step kernel (depth 1) has no fused level to exchange and never synchronises
// the grid (templates/tile3d.cuh), so a remainder step costs no grid syncs.
TEST(Search, DeviceTilingStepKernelHasNoGridSyncs) {
  const Strategy& s = *find_strategy("devtile3d");
  const DeviceProfile d = *builtin_profile("h100");
  const Problem p = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                        {384, 352, 512}, 20);
  const Params k{{"t", 3}, {"tx", 32}, {"ty", 32}, {"cy", 2}, {"z", 1}, {"bps", 1}, {"sum", 0}};
  EXPECT_GT(s.model_terms(p, k, d).syncs_per_pass, 512.0);
  EXPECT_EQ(s.step_terms(p, k, d).syncs_per_pass, 0.0);
  EXPECT_EQ(predict(s.step_terms(p, k, d), p, d).V_sync, 1.0);
  EXPECT_LT(predict_candidate(s, p, k, d).V_steps, 1.0);  // 20 = 6 x 3 + 2
}

// The register queue (rq=1, templates/tile3d.cuh): the thread's own column comes from registers,
// so fewer shared-memory reads; a star stencil's planes above level 0 are read in shared memory
// only at dz = 0, so those levels hold 2z planes instead of 2z + 2R; a box reads every dz off
// the own column and keeps its rings. Parameters stored before rq existed mean rq=0.
TEST(Search, RegisterQueueSavesSharedMemory) {
  const Strategy& s = *find_strategy("smtile3d");
  const DeviceProfile d = *builtin_profile("h100");
  const auto problem = [](const char* spec) {
    return test::small_problem(test::source_dir() + "/configs/" + spec, DType::Double, {384, 352, 512}, 20);
  };
  const Problem star = problem("j3d7pt.yaml"), box = problem("j3d27pt.yaml");
  Params k{{"t", 4}, {"tx", 32}, {"ty", 32}, {"cy", 2}, {"z", 1}, {"bps", 1}, {"sum", 0}, {"rq", 0}};
  const ModelTerms ring = s.model_terms(star, k, d);
  Params legacy = k;
  legacy.erase("rq");
  EXPECT_EQ(s.model_terms(star, legacy, d).smem_bytes, ring.smem_bytes);
  k["rq"] = 1;
  const ModelTerms queue = s.model_terms(star, k, d);
  const long plane = 34 * 34 * 8;
  EXPECT_EQ(ring.smem_bytes, 4 * 4 * plane);            // ring_slots(1, 1) = 4 per level
  EXPECT_EQ(queue.smem_bytes, (4 + 3 * 2) * plane);     // level 0 keeps 4, the others 2
  // 7-point star, 2 rows: per 2 cells 6 reads (dz = 0, off the own column) instead of 12, plus
  // level 0's own cells once per plane (1/t).
  EXPECT_NEAR(ring.a_sm, 12.0 / 2 + 1 + 1.0 / 4, 1e-12);
  EXPECT_NEAR(queue.a_sm, 6.0 / 2 + 1.0 / 4 + 1 + 1.0 / 4, 1e-12);
  // The least a kernel holding the queue takes: 4 levels x 3 planes x 2 rows of doubles, plus 24.
  EXPECT_EQ(queue.regs_per_thread, 24 + 4 * 3 * 2 * 2);
  EXPECT_EQ(s.model_terms(box, k, d).smem_bytes, s.model_terms(box, legacy, d).smem_bytes);
  // The generated kernel gets both rings and the lag of the star's planes (R - 0).
  const std::string src = s.source(star, k);
  EXPECT_NE(src.find("#define TB_RING0 4\n#define TB_RING 2\n#define TB_LAG 1\n"), std::string::npos);

  // The levels above 0 never unroll more iterations than level 0's ring: at z = 2 the star's 4
  // planes do not divide level 0's 6, so they keep 6.
  k["z"] = 2;
  EXPECT_NE(s.source(star, k).find("#define TB_RING0 6\n#define TB_RING 6\n"), std::string::npos);
  k["z"] = 1;

  Params both = k;
  both["sum"] = 1;
  EXPECT_THROW(s.complete(star, both), UsageError);
  Params bad = k;
  bad["rq"] = 2;
  EXPECT_THROW(s.complete(star, bad), UsageError);
}

// A candidate deeper than the run would only ever launch its step kernel: left out.
TEST(Search, NoCandidateIsDeeperThanTheRun) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                        {130, 98, 66}, 3);
  const auto ranked = rank_candidates(p, *builtin_profile("h100"));
  ASSERT_FALSE(ranked.empty());
  bool deepest = false;
  for (const auto& c : ranked) {
    EXPECT_LE(c.strategy->depth(c.params), 3) << c.strategy->name() << " " << params_text(c.params);
    deepest = deepest || c.strategy->depth(c.params) == 3;
  }
  EXPECT_TRUE(deepest);
}

// Whether `params` has each of `want`'s values.
bool has_values(const Params& params, const Params& want) {
  return std::all_of(want.begin(), want.end(), [&](const auto& kv) {
    const auto it = params.find(kv.first);
    return it != params.end() && it->second == kv.second;
  });
}

// --param: only the candidates with those values, each judged by the exact limits alone (the
// register estimate leaves the decision to ptxas); a filter that matches nothing is an error.
TEST(Search, ParamFilterKeepsItsCandidatesAndLeavesRegistersToPtxas) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j3d13pt.yaml", DType::Double,
                                        {384, 352, 64}, 10);
  const DeviceProfile d = *builtin_profile("h100");
  const Params want{{"t", 3}, {"tx", 64}, {"ty", 32}, {"cy", 8}, {"z", 1}, {"rq", 1}};
  // Held registers alone exceed the 255 a thread may have: the unfiltered ranking rules it out.
  bool ruled_out = false;
  for (const auto& c : rank_candidates(p, d, "smtile3d"))
    if (has_values(c.params, want)) {
      ruled_out = !c.prediction.fits;
      EXPECT_NE(c.prediction.why_not.find("registers"), std::string::npos) << c.prediction.why_not;
    }
  EXPECT_TRUE(ruled_out);

  const auto filtered = rank_candidates(p, d, "smtile3d", want);
  ASSERT_FALSE(filtered.empty());
  for (const auto& c : filtered) {
    EXPECT_TRUE(has_values(c.params, want)) << params_text(c.params);
    EXPECT_TRUE(c.prediction.fits) << c.prediction.why_not;
  }
  EXPECT_THROW((void)rank_candidates(p, d, "smtile3d", {{"t", 99}}), UsageError);
  EXPECT_THROW((void)rank_candidates(p, d, "", {{"no_such", 1}}), UsageError);
}

// A --param that names a shape the register-tiled strategies' spaces leave out says which rule
// left it out (one rule for the space and the error: outside_space), the shape completed with
// the strategy's defaults; every shape in the space is not left out.
TEST(Search, ParamOutsideTheSpaceSaysWhy) {
  const DeviceProfile d = *builtin_profile("h100");
  const auto error_of = [&](const Problem& p, const std::string& strategy, const Params& want) -> std::string {
    try {
      (void)rank_candidates(p, d, strategy, want);
    } catch (const UsageError& e) {
      return e.what();
    }
    return "no error";
  };
  const auto says = [](const std::string& error, const std::string& why) {
    return error.find("in the space has these values") != std::string::npos &&
           error.find(" is left out: " + why) != std::string::npos;
  };
  Problem blur = make_problem(load_spec(test::source_dir() + "/configs/j2d49pt.yaml"));
  blur.domain = {9504, 9504, 1};
  std::string e = error_of(blur, "wpipe2d", {{"sep", 1}, {"split", 1}});
  EXPECT_TRUE(says(e, "sep=1 runs as one kernel")) << e;
  EXPECT_NE(e.find("sep=1,split=1,tw="), std::string::npos) << e;  // the completed shape
  e = error_of(blur, "wpipe2d", {{"warps", 5}});
  EXPECT_TRUE(says(e, "warps: the space holds 4, 6, 8 and 12")) << e;
  const Problem star = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Double, {500, 300, 1}, 10);
  e = error_of(star, "wpipe2d", {{"rx", 5}, {"warps", 8}, {"tw", 2}});
  EXPECT_TRUE(says(e, "its depth, 16 steps, is over the run's 10")) << e;
  const Problem cube = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                           {572, 216, 256}, 100);
  e = error_of(cube, "wpipe3d", {{"wy", 3}});
  EXPECT_TRUE(says(e, "wy: the space holds 1, 2, 4 and 8")) << e;
  // A value the strategy rejects outright is complete()'s error; a strategy that does not say
  // why keeps the short error.
  e = error_of(cube, "wpipe3d", {{"fold", 1}});
  EXPECT_NE(e.find("fold=1 needs"), std::string::npos) << e;
  e = error_of(star, "cmq2d", {{"t", 99}});
  EXPECT_NE(e.find("in the space has these values"), std::string::npos) << e;
  EXPECT_EQ(e.find("left out"), std::string::npos) << e;

  for (const auto& [p, name] : {std::pair{blur, "wpipe2d"}, std::pair{cube, "wpipe3d"}}) {
    const Strategy& s = *find_strategy(name);
    const auto space = s.space(p, d);
    ASSERT_FALSE(space.empty()) << name;
    for (const Params& k : space) ASSERT_EQ(s.outside_space(p, d, k), "") << name << " " << params_text(k);
  }
}

// The register-tiled strategies alike: FastStencil's j3d7pt shape in wpipe3d is beyond the
// register estimate, so a search does not choose it, but asked for by name it is there to compile.
TEST(Search, ParamFilterReachesWpipeShapesBeyondTheRegisterEstimate) {
  const Problem p = test::small_problem(test::source_dir() + "/configs/j3d7pt.yaml", DType::Double,
                                        {572, 216, 256}, 100);
  const DeviceProfile d = *builtin_profile("h100");
  const Params fs{{"rx", 2}, {"cy", 7}, {"wy", 4}, {"warps", 2}, {"tw", 3}, {"bps", 1}, {"late", 1}};
  bool ruled_out = false;
  for (const auto& c : rank_candidates(p, d, "wpipe3d"))
    if (has_values(c.params, fs))
      ruled_out = !c.prediction.fits && c.prediction.why_not.find("registers") != std::string::npos;
  EXPECT_TRUE(ruled_out);
  const auto filtered = rank_candidates(p, d, "wpipe3d", fs);
  ASSERT_EQ(filtered.size(), 1u);
  EXPECT_TRUE(filtered[0].prediction.fits) << filtered[0].prediction.why_not;
}

// A wpipe shape is in the space twice, its held rows' terms summed late or all before the
// barrier: late 1 the primary where the register estimate leaves room, late 0 where it does not
// (FastStencil's j2d5pt shape, which spills with late 1). The model search selects primaries
// only; a selected one's late 0 variant is the first of its stand-ins, ahead of the next shapes
// (a late 1 variant is none: it would spill where its late 0 primary did); the
// exhaustive search times both; the space's size counts each shape once.
TEST(Search, VariantsStandInForTheirPrimariesOnly) {
  Problem p = make_problem(load_spec(test::source_dir() + "/configs/j2d5pt.yaml"));
  p.domain = {11616, 11616, 1};
  const auto ranked = rank_candidates(p, *builtin_profile("h100"), "wpipe2d");
  const auto late = [](const Params& k, int v) {
    Params out = k;
    out["late"] = v;
    return out;
  };
  int primaries = 0, variants = 0;
  std::map<Params, int> primary_late;  // by the shape (late 1)
  for (const auto& c : ranked) {
    if (!is_feasible(c)) continue;
    (c.primary ? variants : primaries) += 1;
    if (c.primary) {
      EXPECT_EQ(*c.primary, late(c.params, 1 - c.params.at("late")));
    } else {
      primary_late[late(c.params, 1)] = c.params.at("late");
    }
  }
  EXPECT_GT(primaries, 0);
  EXPECT_EQ(variants, primaries);
  EXPECT_EQ(space_size(ranked).feasible, primaries);
  const Params fs{{"rx", 13}, {"warps", 8}, {"tw", 4}, {"rows", 1}, {"bps", 1}, {"split", 1},
                  {"late", 1},  {"sep", 0},   {"fold", 0}};
  EXPECT_EQ(primary_late.at(fs), 0);  // estimated 234 registers of 255
  Params roomy = fs;
  roomy["tw"] = 3;
  roomy["rx"] = 15;
  EXPECT_EQ(primary_late.at(roomy), 1);  // 210 of 255
  SearchOptions o;
  const auto selected = select_candidates(ranked, o);
  ASSERT_GE(selected.size(), 2u);
  for (const auto& c : selected) EXPECT_FALSE(c.primary) << params_text(c.params);
  // The variants that stand in are those with late 0, of roomy primaries: a tight shape's late 1
  // holds more registers than the late 0 that spilled.
  const auto more = stand_ins(ranked, selected, 2);
  ASSERT_EQ(more.size(), 2 * selected.size());
  std::size_t roomy_variants = 0, tight_primaries = 0;
  for (const auto& c : selected) {
    if (c.params.at("late") == 0) {
      ++tight_primaries;
      continue;
    }
    EXPECT_EQ(more[roomy_variants].params, late(c.params, 0));
    ++roomy_variants;
  }
  EXPECT_GT(roomy_variants, 0u);
  EXPECT_GT(tight_primaries, 0u);
  for (std::size_t i = roomy_variants; i < more.size(); ++i) EXPECT_FALSE(more[i].primary);
  // Exhaustive search: every feasible primary and variant, and those ptxas may fit beyond them.
  o.mode = SearchMode::Exhaustive;
  int beyond = 0;
  for (const auto& c : ranked) beyond += may_be_feasible(c) && !is_feasible(c);
  EXPECT_GT(beyond, 0);
  EXPECT_EQ(int(select_candidates(ranked, o).size()), primaries + variants + beyond);
  // Asked for by parameter, the variant is a candidate like any other.
  const auto asked = rank_candidates(p, *builtin_profile("h100"), "wpipe2d", {{"rx", 13}, {"tw", 4}, {"late", 1}});
  ASSERT_FALSE(asked.empty());
  for (const auto& c : asked) EXPECT_FALSE(c.primary) << params_text(c.params);
  EXPECT_FALSE(select_candidates(asked, SearchOptions{}).empty());
  // A stencil that is not affine is evaluated whole after the barrier either way: its shapes
  // are there once, late 0, with no variant, in 2D and in 3D.
  for (const char* spec : {"nonlinear.yaml", "nonlinear3d.yaml"}) {
    const Problem q = test::small_problem(test::source_dir() + "/tests/specs/good/" + spec, DType::Double,
                                          {1037, 389, 64}, 100);
    const auto nl = rank_candidates(q, *builtin_profile("h100"), q.dims() == 2 ? "wpipe2d" : "wpipe3d");
    ASSERT_FALSE(nl.empty()) << spec;
    for (const auto& c : nl) {
      EXPECT_EQ(c.params.at("late"), 0) << spec;
      EXPECT_FALSE(c.primary) << spec;
    }
  }
}

// wpipe3d: a shape whose register estimate leaves ptxas no room (above 0.9 of the cap) keeps
// 0.9 of its share, so on FastStencil's j3d27pt domain rx 3, cy 7 (estimated 225 of 255) ranks
// above cy 8 (252), which the share alone favours and which ran 7% slower on the H100.
TEST(Search, TightWpipe3dShapesKeepLessOfTheirShare) {
  Problem p = make_problem(load_spec(test::source_dir() + "/configs/j3d27pt.yaml"));
  p.domain = {540, 220, 2560};
  const DeviceProfile d = *builtin_profile("h100");
  const auto& wpipe3d = *find_strategy("wpipe3d");
  const Params roomy{{"rx", 3}, {"cy", 7}, {"wy", 4}, {"warps", 2}, {"tw", 1}, {"bps", 1}, {"late", 1}};
  Params tight = roomy;
  tight["cy"] = 8;
  tight["late"] = 0;
  const ModelTerms t = wpipe3d.model_terms(p, tight, d), r = wpipe3d.model_terms(p, roomy, d);
  ASSERT_EQ(t.regs_per_thread, 252);
  ASSERT_EQ(r.regs_per_thread, 225);
  // cy 8's tile has the larger valid share (28 of 32 rows against 24 of 28) but keeps 0.9 of it.
  EXPECT_LT(t.valid, r.valid);
  EXPECT_NEAR(t.valid / r.valid, 0.9 * (28.0 / 32) / (24.0 / 28), 0.02);
  EXPECT_GT(predict_candidate(wpipe3d, p, roomy, d).PP_gcells, predict_candidate(wpipe3d, p, tight, d).PP_gcells);
}

}  // namespace
}  // namespace tbtune
