// Tests for tuner/search: which candidates the model and exhaustive searches choose.
#include "tuner/search.hpp"

#include <gtest/gtest.h>

#include "model/device_profile.hpp"
#include "test_util.hpp"

namespace tbtune {
namespace {

RankedCandidate make(const char* strategy, int id, double pp, bool fits = true) {
  RankedCandidate c;
  c.strategy = find_strategy(strategy);
  c.params = {{"id", id}};
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
  o.top = 2;
  o.within = 0;
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1}));
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

TEST(Search, ExhaustiveTakesEveryFittingCandidate) {
  SearchOptions o;
  o.mode = SearchMode::Exhaustive;
  o.top = 1;
  o.within = 0;
  o.max_candidates = 1;  // model search only
  EXPECT_EQ(ids(select_candidates(space(), o)), (std::vector<int>{0, 1, 2, 3, 4, 5}));
}

TEST(Search, SpaceSizeLeavesOutNaiveAndCountsWhatFits) {
  const SpaceSize s = space_size(space());
  EXPECT_EQ(s.candidates, 7);  // 8 ranked, less naive
  EXPECT_EQ(s.feasible, 6);    // less the one that does not fit
  EXPECT_FALSE(is_feasible(make("naive", 0, 1)));
  EXPECT_FALSE(is_feasible(make("stream", 0, 1, false)));
  EXPECT_TRUE(is_feasible(make("stream", 0, 1)));
  // Exhaustive search selects exactly the feasible candidates.
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

}  // namespace
}  // namespace tbtune
