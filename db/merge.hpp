#pragma once
/// @file merge.hpp
/// `tbtune db merge`: folds the caches written by the tasks of a sweep into one, in one
/// transaction. Idempotent: merging the same inputs again changes nothing.
#include <string>
#include <vector>

namespace tbtune {

/// What a merge took from one input (rows new to the output, or replacing a worse one).
struct MergeCounts {
  long devices = 0;
  long stencils = 0;
  long profiles = 0;   ///< new, or newer than the output's
  long trials = 0;     ///< every trial once: one already in the output is not taken again
  long trials_in = 0;  ///< trials the input holds
  long winners = 0;    ///< new keys, or faster than the output's winner (verified ones only)
  long winners_in = 0;
  long tunes = 0;
  long compiles = 0;   ///< problems compiled ahead, new or newer
};

struct MergeInput {
  std::string path;
  MergeCounts took;
};

struct MergeResult {
  std::vector<MergeInput> inputs;
  bool created = false;  ///< the output did not exist before
  double wall_s = 0;
};

/// Checks that `path` is a tbtune cache this build can merge: a readable SQLite file that
/// passes `PRAGMA quick_check` and has exactly this build's schema version. Throws CacheError
/// with one line that names the file and the problem. Changes nothing.
void check_merge_input(const std::string& path);

/// Merges `inputs` into the cache at `out`, created if missing. Every input (and an existing
/// `out`) is checked first (check_merge_input), so a bad one leaves `out` as it was, or absent.
/// Then, in one transaction: devices and stencils new to `out`; every trial and tune record
/// not already there (same values in every column); per key the fastest verified winner, with
/// its CUBIN; per device the newest probed profile; per problem the newest compile record.
/// Throws CacheError; on any failure `out` is unchanged.
[[nodiscard]] MergeResult merge_caches(const std::string& out, const std::vector<std::string>& inputs);

}  // namespace tbtune
