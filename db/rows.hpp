#pragma once
/// @file rows.hpp
/// Internal to db/: how keys and trials map to table columns. Both tables list the key and
/// trial columns in the same order, so one bind and one read function serve both.
#include <string>

#include "db/cache.hpp"
#include "db/sqlite.hpp"

namespace tbtune::db {

/// The winner key, in bind_key() / read_key() order.
inline constexpr const char* kKeyColumns =
    "stencil_hash, device_fingerprint, dtype, nx, ny, nz, steps_class";
inline constexpr int kKeyCount = 7;
/// WHERE clause matching one key; bind with bind_key().
inline constexpr const char* kKeyWhere =
    "stencil_hash = ? AND device_fingerprint = ? AND dtype = ? AND nx = ? AND ny = ? AND "
    "nz = ? AND steps_class = ?";
/// The Trial fields both tables store, in bind_trial() / read_trial() order. Not in it:
/// `message` (trials only) and `cubin` (winners only).
inline constexpr const char* kTrialColumns =
    "strategy, params, predicted_P, predicted_V, predicted_PP, bottleneck, fits, status, "
    "gcells_median, gcells_best, seconds_median, repetitions, max_rel_error, registers, "
    "spill_bytes, smem_bytes";
inline constexpr int kTrialCount = 16;

/// The `tunes` columns after the key, in bind_tune() / read_tune() order; `created_at` is
/// written by SQLite and read after these.
inline constexpr const char* kTuneColumns =
    "steps, stencil_name, strategy_filter, search, top, within, max_candidates, budget_s, "
    "fresh, allow_spills, space, feasible, selected, timed, reused, pruned, compile_errors, "
    "not_run, winner_strategy, winner_params, winner_gcells, interrupted, out_of_budget, "
    "wall_s, tool_version";
inline constexpr int kTuneCount = 25;

/// Params as the trials table stores them: "k1=v1,k2=v2" in key order (Params is ordered).
[[nodiscard]] std::string format_params(const Params& params);

/// "?, ?, ?" with `n` placeholders.
[[nodiscard]] std::string placeholders(int n);

/// Binds the kKeyCount key columns.
void bind_key(Statement& s, const WinnerKey& key);
/// Reads the key columns starting at column `col`; throws CacheError on a malformed row.
[[nodiscard]] WinnerKey read_key(const Statement& s, int col, const std::string& path);
/// Binds the kTrialCount trial columns. Params are stored as "k=v,k=v" in key order and the
/// bottleneck as "gm" / "sm" / "cmp": forms owned by the cache, so the file format does not
/// change when the human-facing printers (params_text, bottleneck_name) do.
void bind_trial(Statement& s, const Trial& trial);
/// Reads the trial columns starting at `col`; throws CacheError on a malformed row.
[[nodiscard]] Trial read_trial(const Statement& s, int col, const std::string& path);

/// Binds the key and the kTuneCount columns of `record` (the search mode as "model" or
/// "exhaustive", params as in trials).
void bind_tune(Statement& s, const TuneRecord& record);
/// Reads a tune row bound as bind_tune() binds it, starting at column `col`, with `created_at`
/// after it; throws CacheError on a malformed row.
[[nodiscard]] TuneRecord read_tune(const Statement& s, int col, const std::string& path);

}  // namespace tbtune::db
