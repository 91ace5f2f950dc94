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
  /// Whether ptxas may fit it on chip: it fits by the limits the model knows exactly (shared
  /// memory, threads and blocks per SM) and by the register file with kRegisterEstimateSlack
  /// times fewer registers than estimated (only ptxas knows a kernel's registers:
  /// prune_after_compile). `prediction.fits` holds the estimate itself to the register file.
  bool may_fit = false;
  /// The same with the strategy's own slack (Strategy::register_estimate_slack): whether a model
  /// search may choose it.
  bool may_fit_model_search = false;
};

/// How far a register estimate overshoots at most what ptxas fits without spilling, as
/// measured for the wpipe strategies, whose fastest shapes hold about all the registers a thread
/// may: of 1,110 shapes compiled with NVRTC 13.0 for sm_90 (wpipe2d's j2d5pt slice of 656
/// and wpipe3d's j3d7pt slice of 274 in docs/data/v29-trials.csv, and 180 wpipe3d shapes of the
/// five 3D configs near the register cap in docs/data/regs-survey-3d.csv), the largest estimate
/// of a kernel that fit was 1.34 times its cap (j3d7pt rx 3, cy 12, tw 1: 342 estimated, 255
/// compiled), and every estimate above that spilled.
inline constexpr double kRegisterEstimateSlack = 1.4;

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

/// Fills c.may_fit and c.may_fit_model_search from c.terms: whether `c` fits by the limits the
/// model knows exactly, and by the register file with kRegisterEstimateSlack and with its
/// strategy's slack (Strategy::register_estimate_slack) times fewer registers than estimated.
void set_register_slack(RankedCandidate& c, const DeviceProfile& device);

/// `ranked` as a model search sees it, for showing: the candidates that fit by the estimate or
/// that a model search may choose over it (may_be_chosen_by_model), best predicted first, then
/// the others. rank_candidates puts those that fit by the estimate first,
/// which an exhaustive search and the stand-ins keep to.
[[nodiscard]] std::vector<RankedCandidate> in_model_search_order(std::vector<RankedCandidate> ranked);

/// Whether `c` fits on chip by the model's estimate and is not the naive reference (which the
/// engine always runs first, outside the search). Stand-ins are chosen among these.
[[nodiscard]] bool is_feasible(const RankedCandidate& c);

/// Whether a model search may choose `c`: not the naive reference, not a variant (it stands in
/// for its primary only: stand_ins), and it fits or may fit by its strategy's slack
/// (RankedCandidate::may_fit_model_search).
[[nodiscard]] bool may_be_chosen_by_model(const RankedCandidate& c);

/// Whether an exhaustive search chooses `c`: not the naive reference, and ptxas may fit it
/// (RankedCandidate::may_fit). Near the register file's limit the estimate is a guess: of
/// j3d7pt's 274 wpipe3d shapes compiled at two stages of four warps, 16 of the 44 estimated at
/// 256-342 registers fit without spilling, the fastest of the slice on the H200 among them
/// (docs/tuning.md, "Exhaustive slices"), which an exhaustive search by the estimate never timed.
[[nodiscard]] bool may_be_feasible(const RankedCandidate& c);

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
/// (the engine always runs it first). Model search, among the candidates it may choose
/// (may_be_chosen_by_model), by prediction: the first `top`, then every further one with
/// PP >= (1 - within) x the best PP, then further ones in that order, predicted at least SearchDefaults::strategy_floor x the best PP,
/// of each strategy that has fewer than SearchDefaults::per_strategy among them (a candidate of
/// one step: fewer than one), until it has that many; at most `max_candidates` in all; never a
/// variant (it stands in for its primary: stand_ins). Exhaustive search: every candidate that
/// may be feasible (may_be_feasible), variants too, those feasible by the register estimate first.
[[nodiscard]] std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked,
                                                             const SearchOptions& options);

}  // namespace tbtune
