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

/// The model's prediction for one candidate over the problem's whole run: steps / t passes of the
/// full kernel and steps % t launches of the step kernel (Strategy::step_params), each predicted
/// with `predict`; V_steps is the run's rate over the full kernel's. Fills `terms` (the full
/// kernel's) when not null.
[[nodiscard]] Prediction predict_candidate(const Strategy& strategy, const Problem& problem,
                                           const Params& params, const DeviceProfile& device,
                                           ModelTerms* terms = nullptr);

/// Every candidate of every strategy that supports `problem` (or only `only_strategy` if not
/// empty), best predicted PP first; candidates that do not fit on chip come last. With
/// `only_params`, only the candidates that have each of those parameters at that value; they
/// were asked for by name, so the model's register estimate does not rule them out (ptxas's
/// count does, after compiling), while the exact limits (shared memory, threads) still do.
/// Throws UsageError when `only_params` matches no candidate.
[[nodiscard]] std::vector<RankedCandidate> rank_candidates(const Problem& problem,
                                                           const DeviceProfile& device,
                                                           const std::string& only_strategy = {},
                                                           const Params& only_params = {});

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

/// Whether a search may choose `c`: it fits on chip and is not the naive reference (which the
/// engine always runs first, outside the search).
[[nodiscard]] bool is_feasible(const RankedCandidate& c);

/// The size of a ranked space, the naive reference left out: every candidate the model ranked,
/// and the feasible ones a search chooses from.
struct SpaceSize {
  int candidates = 0;
  int feasible = 0;
};
[[nodiscard]] SpaceSize space_size(const std::vector<RankedCandidate>& ranked);

/// The feasible candidates after the first `skip` (a model search's selection is a prefix of
/// them), at most `count`: they stand in, in rank order, for selected ones passed over (pruned
/// after compiling, not compiled, too large to launch).
[[nodiscard]] std::vector<RankedCandidate> stand_ins(const std::vector<RankedCandidate>& ranked,
                                                     int skip, int count);

/// What became of the candidates a search selected and of the stand-ins it reached, in one run
/// of the engine (the naive reference is not counted): each is in exactly one count. Without
/// stand-ins (exhaustive search, --allow-spills) the counts add up to the selection; with them,
/// timed + reused + not_run is at most the selection and pruned + compile_errors adds the
/// candidates passed over.
struct SearchTally {
  int timed = 0;           ///< sent to the GPU in this run, whatever the outcome
  int reused = 0;          ///< a trial stored by an earlier run was taken instead (resume)
  int pruned = 0;          ///< compiled but not run: spills, or too many registers
  int compile_errors = 0;  ///< NVRTC rejected the source
  int not_run = 0;         ///< left out by the time budget or a stop request
  [[nodiscard]] int total() const { return timed + reused + pruned + compile_errors + not_run; }
};

/// The candidates to compile and time, best predicted first, leaving out the naive reference
/// (the engine always runs it first) and candidates that do not fit on chip (is_feasible). Model search: the
/// first `top`, then every further one with PP >= (1 - within) x the best PP, at most
/// `max_candidates` in all. Exhaustive search: every candidate that fits.
[[nodiscard]] std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked,
                                                             const SearchOptions& options);

}  // namespace tbtune
