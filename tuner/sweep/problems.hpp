#pragma once
/// @file problems.hpp
/// A sweep file expanded into its problems: every spec x dtype x domain x step count, in a
/// fixed order, each with its tune options and the model's estimate of what tuning it costs.
#include <string>
#include <vector>

#include "model/device_profile.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/spec/stencil.hpp"
#include "tuner/sweep/sweep_file.hpp"

namespace tbtune {

/// One problem of a sweep.
struct SweepProblem {
  int index = 0;                 ///< position in the expanded sweep, from 0
  std::string spec_path;
  std::string spec_text;         ///< stored with the stencil; the GPU worker reads the problem from it
  Problem problem;
  SweepTuneOptions options;      ///< the sweep's tune options with the overrides for this spec
  int selected = 0;              ///< candidates the search would time (naive left out)
  int compiles = 0;              ///< candidates a tune compiles: naive, selection and stand-ins
  double estimated_s = 0;        ///< the model's estimate of the tune's seconds (estimate_tune_s)
};

/// The tune options (search, budget, timeout, spills, strategy) a problem is tuned with; the
/// caller adds the device, the folder of CUBINs, the stop flag.
[[nodiscard]] TuneOptions tune_options(const SweepProblem& problem);

/// Seconds a tune of `choice` is estimated to take: for the naive reference and each selected
/// candidate, a fixed 1 s (a share of the compile, loading, the worker round trip: a guess, not
/// a measurement) plus the runs the timing makes of the model's predicted run time (a checked
/// run, a warm-up, then at least 3 runs and 0.2 s, at most 20 runs). It ranks problems for
/// sharding; it is not a promise.
[[nodiscard]] double estimate_tune_s(const Problem& problem, const CandidateChoice& choice);

/// Expands `sweep`: specs in file order, then dtypes, domains (those of the spec's dims) and
/// step counts in file order, each axis the spec's own value where the sweep gives none; a
/// problem met twice (same stencil, dtype, domain, steps) is kept once. Estimates each with
/// `profile`. Throws SpecError for a bad spec, SweepError or UsageError for a domain a spec
/// cannot take, and UsageError for a strategy that does not exist.
[[nodiscard]] std::vector<SweepProblem> expand_sweep(const SweepFile& sweep, const DeviceProfile& profile);

}  // namespace tbtune
