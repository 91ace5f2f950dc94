#pragma once
/// @file report.hpp
/// How well the model predicted what was measured (`tbtune report`): every verified trial
/// behind every stored winner, predicted PP next to measured GCells/s, the median error per
/// strategy, and a roofline chart of the winners.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "model/model.hpp"
#include "model/roofline_svg.hpp"

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
