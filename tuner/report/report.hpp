#pragma once
/// @file report.hpp
/// How well the model predicted what was measured (`tbtune report`): every verified trial
/// behind every stored winner, predicted PP next to measured GCells/s, the median error per
/// strategy, a roofline chart of the winners, and the model search against the exhaustive one.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "model/model.hpp"
#include "tuner/report/roofline_svg.hpp"

namespace tbtune {

/// One verified (status ok) trial: what the model predicted and what was measured.
struct ReportRow {
  std::string strategy;
  Params params;
  double predicted_pp = 0;   ///< GCells/s
  double measured = 0;       ///< GCells/s, from the median time
  /// measured / predicted - 1; nullopt when nothing (PP <= 0) was predicted.
  [[nodiscard]] std::optional<double> error() const;
};

/// One stored winner with the verified trials of its key, oldest first.
struct ReportKey {
  Winner winner;
  std::vector<ReportRow> rows;
};

/// The model's accuracy for one strategy over every key.
struct StrategyAccuracy {
  std::string strategy;
  int trials = 0;                 ///< verified trials with a positive prediction
  double median_abs_error = 0;    ///< median |measured / PP - 1| over those
};

struct ModelReport {
  std::vector<ReportKey> keys;               ///< in Cache::winners() order (newest first)
  std::vector<StrategyAccuracy> strategies;  ///< by strategy name
};

/// Reads every winner and its trials from `cache`.
[[nodiscard]] ModelReport model_report(const Cache& cache);

/// What the model search must achieve against an exhaustive search of the same problem: a
/// winner within 3% of the exhaustive best, timing at most 10% of the feasible candidates, in
/// at most 60 s for the whole tune.
struct SearchCriteria {
  static constexpr double within = 0.03;
  static constexpr double timed_fraction = 0.10;
  static constexpr double wall_s = 60;
};

/// The recorded runs of one search mode on one problem, folded into one search: from the last
/// `--fresh` run of that mode (or the first run) up to the first run that completed. Runs
/// after that re-ran a finished search, reusing its trials, and add nothing to the evidence.
struct SearchSummary {
  TuneRecord last;    ///< the last run folded in: space, selection, winner, completeness
  int runs = 0;       ///< runs folded in (a search resumed after a stop or budget has several)
  /// Candidates with a trial: the last run's timed + reused. A resumed run reuses every trial
  /// the earlier ones stored, so this counts those too, and an exhaustive search run after a
  /// model search counts the model search's trials.
  int timed = 0;
  double wall_s = 0;  ///< summed over the runs
  /// timed / feasible candidates; 0 when nothing is feasible.
  [[nodiscard]] double timed_fraction() const;
};

/// One problem (key, exact step count, strategy filter) with the model and exhaustive searches
/// recorded for it, and how the first fares against the second (SearchCriteria). A criterion
/// is nullopt while a search it needs is missing or incomplete.
struct SearchEvidence {
  std::optional<SearchSummary> model, exhaustive;
  [[nodiscard]] const TuneRecord& problem() const;  ///< the model search's last run, else the exhaustive one's
  /// model winner GCells/s / exhaustive best; nullopt unless both have a winner.
  [[nodiscard]] std::optional<double> ratio() const;
  [[nodiscard]] std::optional<bool> meets_within() const;  ///< ratio >= 1 - 3%
  [[nodiscard]] std::optional<bool> meets_timed() const;   ///< model timed <= 10% of feasible
  [[nodiscard]] std::optional<bool> meets_wall() const;    ///< model wall time <= 60 s
};

/// Groups `tunes` (oldest first, as Cache::tunes() gives them) by problem and folds each
/// mode's runs (SearchSummary); problems in the order of their first run.
[[nodiscard]] std::vector<SearchEvidence> search_evidence(const std::vector<TuneRecord>& tunes);

/// The profile to judge results of device `fingerprint` by: the one `tbtune probe` stored for
/// it, else the built-in profile of its architecture (chosen as profile_for() does) with the
/// fingerprint's SM count and compute capability.
[[nodiscard]] DeviceProfile report_profile(const Cache& cache, const std::string& fingerprint);

/// A winner's model terms under `profile`, or nullopt when they cannot be had (for example the
/// stencil's spec text is not stored).
using TermsFn = std::function<std::optional<ModelTerms>(const Winner&, const DeviceProfile&)>;

/// Terms from the spec text stored with the winner's stencil, at the winner's dtype, domain and
/// step count, through its strategy's model_terms(). nullopt when the text is missing, no longer
/// parses, or names an unknown strategy.
[[nodiscard]] std::optional<ModelTerms> stored_winner_terms(const Cache& cache, const Winner& w,
                                                            const DeviceProfile& profile);

/// The roofline chart of the winners of one device and one precision.
struct ReportRoofline {
  std::string svg;                  ///< roofline_svg() document; empty when there are no winners
  std::string device_fingerprint;   ///< the device with the most winners
  DeviceProfile profile;            ///< report_profile() of that device
  DType dtype = DType::Double;      ///< that device's most common dtype (a tie goes to double)
  int drawn = 0;                    ///< winners on the chart
  std::vector<std::string> left_out;  ///< one line per winner not drawn, saying why
};

/// Charts the winners of `report` on the device that has the most of them, in its most common
/// precision; `terms` places each one (see roofline_point()).
[[nodiscard]] ReportRoofline report_roofline(const Cache& cache, const ModelReport& report,
                                             const TermsFn& terms);

}  // namespace tbtune
