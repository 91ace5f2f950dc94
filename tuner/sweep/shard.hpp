#pragma once
/// @file shard.hpp
/// Which problems of a sweep one task tunes: shard I of N, balanced by estimated cost, chosen
/// from --shard or from Slurm's job-array variables; and the task's file names.
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace tbtune {

/// Shard `index` of `count` (0 <= index < count), and the id the task's file names use.
struct ShardSpec {
  int index = 0;
  int count = 1;
  long task_id = 0;      ///< SLURM_ARRAY_TASK_ID, or `index` for --shard
  std::string job_id;    ///< SLURM_ARRAY_JOB_ID, or empty
  std::string source;    ///< "--shard" or "SLURM_ARRAY_*", for messages
};

/// Parses "I/N" (0 <= I < N). Throws UsageError.
[[nodiscard]] ShardSpec parse_shard(const std::string& text);

/// Reads an environment variable; empty means unset. Replaced in tests.
using EnvFn = std::function<std::optional<std::string>(const char* name)>;
/// The process environment.
[[nodiscard]] std::optional<std::string> process_env(const char* name);

/// The shard of a Slurm array task: index (TASK_ID - TASK_MIN) / TASK_STEP of TASK_COUNT (or of
/// (TASK_MAX - TASK_MIN) / TASK_STEP + 1). nullopt outside an array job (no SLURM_ARRAY_TASK_ID);
/// UsageError for variables that do not make an evenly stepped range, e.g. --array=1,2,7.
[[nodiscard]] std::optional<ShardSpec> shard_from_slurm(const EnvFn& env = process_env);

/// The problems of shard `index` of `count`, ascending: problems are dealt out largest
/// estimated cost first (ties: lower problem index) to the shard with the least total so far
/// (ties: lower shard), so the result depends on the costs alone, not on the machine.
[[nodiscard]] std::vector<int> shard_problems(const std::vector<double>& costs, int index, int count);

/// `pattern` with "%a" replaced by the task id, "%A" by the array job id (empty: "local") and
/// "%%" by "%"; as in Slurm's own --output patterns. UsageError for another "%x".
[[nodiscard]] std::string task_path(const std::string& pattern, const ShardSpec& shard);

/// The task ids of a Slurm array spec: "N" (0 to N-1), "A-B" or "A-B:S". Throws UsageError.
[[nodiscard]] std::vector<long> parse_task_ids(const std::string& text);

}  // namespace tbtune
