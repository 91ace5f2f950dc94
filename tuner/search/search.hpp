#pragma once
/// @file search.hpp
/// The candidate space of every strategy, ranked by the performance model, and the choice of
/// which candidates to compile and time. Needs no GPU.
#include <optional>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "tuner/codegen/strategy.hpp"
#include "tuner/record/search_record.hpp"

namespace tbtune {

struct RankedCandidate {
  const Strategy* strategy = nullptr;
  Params params;
  ModelTerms terms;
  Prediction prediction;
  /// Where this candidate is a variant (Strategy::primary_of): its primary's parameters.
  std::optional<Params> primary;
};

/// The model's prediction for one candidate over the problem's whole run: steps / t passes of the
/// full kernel and steps % t launches of the step kernel (Strategy::step_terms), each predicted
/// with `predict`; V_steps is the run's rate over the full kernel's. Fills `terms` (the full
/// kernel's) when not null.
[[nodiscard]] Prediction predict_candidate(const Strategy& strategy, const Problem& problem,
                                           const Params& params, const DeviceProfile& device,
                                           ModelTerms* terms = nullptr);

/// Every candidate of every strategy that supports `problem` (or only `only_strategy` if not
/// empty), best predicted PP first; candidates that do not fit on chip come last. With
/// `only_params`, only the candidates that have each of those parameters at that value; they
/// were asked for by name, so the model's register estimate does not rule them out (ptxas's
/// count does, after compiling), while the exact limits (shared memory, threads) still do, and
/// none of them is a variant (RankedCandidate::primary).
/// Throws UsageError when `only_params` matches no candidate.
[[nodiscard]] std::vector<RankedCandidate> rank_candidates(const Problem& problem,
                                                           const DeviceProfile& device,
                                                           const std::string& only_strategy = {},
                                                           const Params& only_params = {});

/// Whether a search may choose `c`: it fits on chip and is not the naive reference (which the
/// engine always runs first, outside the search).
[[nodiscard]] bool is_feasible(const RankedCandidate& c);

/// The size of a ranked space (SpaceSize), the naive reference and the variants that only stand
/// in for their primaries (Strategy::primary_of) left out: it counts the shapes a search chooses from.
[[nodiscard]] SpaceSize space_size(const std::vector<RankedCandidate>& ranked);

/// The feasible candidates not in `selected` of the strategies `selected` holds, for each
/// strategy `per_selected` for each of its selected candidates: first the selected ones'
/// variants (Strategy::primary_of) that may fit where their primaries spill
/// (Strategy::variant_may_fit_where_primary_spills) in the selection's order, then the others
/// in rank order, variants left out. They stand in for selected ones of their strategy passed over (pruned
/// after compiling, not compiled, too large to launch; EngineOptions::max_timed).
[[nodiscard]] std::vector<RankedCandidate> stand_ins(const std::vector<RankedCandidate>& ranked,
                                                     const std::vector<RankedCandidate>& selected,
                                                     int per_selected);

/// The candidates to compile and time, best predicted first, leaving out the naive reference
/// (the engine always runs it first) and candidates that do not fit on chip (is_feasible). Model
/// search: the first `top`, then every further one with PP >= (1 - within) x the best PP, then
/// further ones in rank order, predicted at least SearchDefaults::strategy_floor x the best PP,
/// of each strategy that has fewer than SearchDefaults::per_strategy among them (a candidate of
/// one step: fewer than one), until it has that many; at most `max_candidates` in all; never a
/// variant (it stands in for its primary: stand_ins). Exhaustive search: every candidate that
/// fits, variants too.
[[nodiscard]] std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked,
                                                             const SearchOptions& options);

}  // namespace tbtune
