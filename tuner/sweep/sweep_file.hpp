#pragma once
/// @file sweep_file.hpp
/// Reading a sweep file (YAML; format: docs/sweeps.md): the specs to tune, and for all of them
/// or for some, the dtypes, domains, step counts and tune options. Validated like a spec: every
/// problem is a SweepError at "file:line:col".
#include <optional>
#include <string>
#include <vector>

#include "tuner/record/search_record.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/spec.hpp"

namespace tbtune {

/// A problem in a sweep file. `what()` reads "file:line:col: message".
class SweepError : public SpecError {
 public:
  using SpecError::SpecError;
};

/// Tune options a sweep file may set (`tune:`), each only where given, so that a per-spec
/// `tune:` can change one of them and keep the others.
struct SweepTuneOptions {
  std::optional<SearchMode> search;
  std::optional<int> top;
  std::optional<double> within;          ///< a fraction: 0.03 is 3%
  std::optional<int> max_candidates;
  std::optional<double> budget_s;
  std::optional<double> timeout_s;
  std::optional<bool> allow_spills;
  std::optional<std::string> strategy;
  /// These options with `more`'s set ones taking their place.
  [[nodiscard]] SweepTuneOptions overlaid(const SweepTuneOptions& more) const;
};

/// The axes of a sweep (each empty: the spec's own value) and its tune options.
struct SweepAxes {
  std::vector<DType> dtypes;
  std::vector<std::vector<long>> domains;  ///< each applies to the specs of its length (2 or 3)
  std::vector<long> steps;
  SweepTuneOptions tune;
};

/// A per-spec override: the specs it names (paths or globs, resolved) and the axes it replaces.
struct SweepOverride {
  std::vector<std::string> specs;          ///< resolved paths
  std::optional<std::vector<DType>> dtypes;
  std::optional<std::vector<std::vector<long>>> domains;
  std::optional<std::vector<long>> steps;
  SweepTuneOptions tune;                   ///< overlaid on the sweep's
};

struct SweepFile {
  std::string path;
  std::vector<std::string> specs;          ///< resolved paths, in file order, globs sorted, once each
  SweepAxes axes;
  std::vector<SweepOverride> overrides;    ///< later ones win
  std::string profile;                     ///< built-in device profile name (empty: none named)
};

/// Reads and validates the sweep file at `path`. Spec paths and globs are relative to the
/// sweep file's folder. Throws SweepError; a file that cannot be read throws tbtune::Error.
[[nodiscard]] SweepFile load_sweep(const std::string& path);

}  // namespace tbtune
