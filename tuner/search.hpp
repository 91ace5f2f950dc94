#pragma once
/// @file search.hpp
/// The candidate space of every strategy, ranked by the performance model, and the choice of
/// which candidates to compile and time. Needs no GPU.
#include <string>
#include <vector>

#include "model/model.hpp"
#include "tuner/strategy.hpp"

namespace tbtune {

struct RankedCandidate {
  const Strategy* strategy = nullptr;
  Params params;
  ModelTerms terms;
  Prediction prediction;
};

/// Every candidate of every strategy that supports `problem` (or only `only_strategy` if not
/// empty), best predicted PP first; candidates that do not fit on chip come last.
[[nodiscard]] std::vector<RankedCandidate> rank_candidates(const Problem& problem,
                                                           const DeviceProfile& device,
                                                           const std::string& only_strategy = {});

enum class SearchMode {
  Model,       ///< the model's top K, plus everything predicted close to its best, capped
  Exhaustive,  ///< every candidate that fits on chip
};
[[nodiscard]] const char* search_mode_name(SearchMode m);  ///< "model", "exhaustive"

/// The search defaults, in one place. They are first guesses from the model's spread on the
/// benchmark set: the model's best is rarely the measured best, but the measured best has so
/// far been within the top few or within a few percent of the predicted best. They are to be
/// set from GPU measurements (`tbtune report` gives the model's error per strategy): a wider
/// error calls for a larger K and margin. docs/tuning.md explains them.
struct SearchDefaults {
  static constexpr int top = 8;               ///< K: always time the model's best K
  static constexpr double within = 0.03;      ///< and whatever is predicted within 3% of the best
  static constexpr int max_candidates = 48;   ///< but never more than this many (model search)
};

struct SearchOptions {
  SearchMode mode = SearchMode::Model;
  int top = SearchDefaults::top;
  double within = SearchDefaults::within;              ///< a fraction: 0.03 is 3%
  int max_candidates = SearchDefaults::max_candidates;  ///< model search only
};

/// The candidates to compile and time, best predicted first, leaving out the naive reference
/// (the engine always runs it first) and candidates that do not fit on chip. Model search: the
/// first `top`, then every further one with PP >= (1 - within) x the best PP, at most
/// `max_candidates` in all. Exhaustive search: every candidate that fits.
[[nodiscard]] std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked,
                                                             const SearchOptions& options);

}  // namespace tbtune
