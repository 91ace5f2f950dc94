#pragma once
/// @file common.hpp
/// Pieces every subcommand shares: the problem options, the cache option, exit codes, output.
#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <functional>
#include <string>
#include <vector>

#include "tuner/record/trial.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune::cli {

/// Documented exit codes (README "Exit codes").
enum Exit : int {
  kOk = 0,
  kMiss = 1,          ///< `lookup`: no winner stored for the key
  kError = 2,         ///< bad input, cache, compiler or GPU failure: the message says which
  kInterrupted = 130, ///< Ctrl-C / SIGTERM
};

/// A subcommand's body, run by main inside its error handling; returns the exit code.
using Action = std::function<int()>;

/// SPEC plus the overrides --domain, --steps, --dtype.
struct ProblemArgs {
  std::string spec_path;
  std::string domain;
  std::string steps;  ///< as typed: parsed with overflow checks, not clamped by CLI11
  std::string dtype;
  /// Adds SPEC (positional) and the overrides; `with_steps` false for commands that ignore it.
  void add_to(CLI::App* cmd, bool with_steps = true);
  /// Loads the spec and applies the overrides. Throws SpecError or UsageError.
  [[nodiscard]] Problem load(Spec* spec_out = nullptr) const;
};

/// "NXxNY[xNZ]" -> extents, within the spec's limits (extent_problem, cells_problem);
/// throws UsageError naming the option.
[[nodiscard]] std::array<long, 3> parse_domain(const std::string& text, int dims, int radius);

/// A --steps value within the spec's limits (steps_problem); throws UsageError.
[[nodiscard]] long parse_steps(const std::string& text);

/// A CLI11 check that a number lies in [lo, hi]; unlike CLI::Range it also refuses nan.
[[nodiscard]] CLI::Validator finite_range(double lo, double hi);

/// The --db option (default: Cache::default_path()).
void add_db_option(CLI::App* cmd, std::string& path);

/// Prints `rows` under `header` with columns padded to fit.
void print_table(const std::vector<std::string>& header,
                 const std::vector<std::vector<std::string>>& rows);

/// JSON forms shared by several commands.
[[nodiscard]] nlohmann::json stencil_json(const Problem& p);
[[nodiscard]] nlohmann::json params_json(const Params& p);
[[nodiscard]] nlohmann::json trial_json(const Trial& t);

/// "1234.5" style figures.
[[nodiscard]] std::string fixed(double v, int decimals = 1);

}  // namespace tbtune::cli
