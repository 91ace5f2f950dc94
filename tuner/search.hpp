#pragma once
/// @file search.hpp
/// The candidate space of every strategy, ranked by the performance model. Needs no GPU.
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

/// The `top` best candidates that fit, leaving out the naive reference (the engine always runs
/// it first).
[[nodiscard]] std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked,
                                                             int top);

}  // namespace tbtune
