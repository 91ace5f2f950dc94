#pragma once
/// @file search_record.hpp
/// The values that describe a search as a tune records it: its mode and options, the size of
/// the space it chose from, and what became of its candidates. Plain values, defined below the
/// cache so the cache can store them; the search itself (tuner/search/search.hpp) fills them.
namespace tbtune {

enum class SearchMode {
  Model,       ///< the model's top K, plus everything predicted close to its best, capped
  Exhaustive,  ///< every candidate that may fit on chip, ptxas deciding the registers (may_be_feasible)
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
  /// And each strategy's best `per_strategy` (its best alone, for candidates of one step), where
  /// the selection holds fewer of its candidates, for the strategies whose best is predicted at
  /// least `strategy_floor` x the best: the model's error differs between strategies, and
  /// within one its ranking is looser than 3%. The floor is below half: in float the model
  /// put smtile3d's best for j3d13pt at 585 GCells/s and wpipe3d's under half of it (H100),
  /// where smtile3d's ran 320 and, at 0.4, wpipe3d's 495 (docs/bench-3d.md, "Float strips").
  /// With the built-in H100 profile, 0.4 adds at most one candidate to the default selection
  /// of each config on FastStencil's domains, float or double, and four to float j3d13pt's.
  /// Five, not four: poisson's fastest wpipe3d shape of its slice (H200) is the model's fifth
  /// of that strategy once wpipe3d's estimate may go over the cap (kWpipe3dRegisterSlack).
  static constexpr int per_strategy = 5;
  static constexpr double strategy_floor = 0.4;
};

struct SearchOptions {
  SearchMode mode = SearchMode::Model;
  int top = SearchDefaults::top;
  double within = SearchDefaults::within;              ///< a fraction: 0.03 is 3%
  int max_candidates = SearchDefaults::max_candidates;  ///< model search only
};

/// The size of a ranked space, the naive reference left out: every candidate the model ranked,
/// and the feasible ones a search chooses from (search.hpp's space_size()).
struct SpaceSize {
  int candidates = 0;
  int feasible = 0;
};

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

}  // namespace tbtune
