#include "db/cache.hpp"

#include <bit>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <system_error>

#include <fmt/format.h>

#include "db/rows.hpp"
#include "db/schema.hpp"
#include "db/sqlite.hpp"
#include "model/profile_json.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

using db::Statement;
using db::Transaction;

/// How long a write waits for another process's write to finish before giving up. Tune
/// transactions are short (one row), so 10 s means something is stuck, not busy.
constexpr int kBusyTimeoutMs = 10000;

/// The winner columns every query selects, in read_winner() order; `cubin` is appended only
/// by winner(), so listing many winners does not read every image.
std::string winner_columns() {
  return fmt::format("{}, stencil_name, steps, {}, tool_version, created_at", db::kKeyColumns,
                     db::kTrialColumns);
}
constexpr int kWinnerCount = db::kKeyCount + 2 + db::kTrialCount + 2;

Winner read_winner(const Statement& s, const std::string& path, bool with_cubin) {
  Winner w;
  w.key = db::read_key(s, 0, path);
  w.stencil_name = s.text(db::kKeyCount);
  w.steps = s.int64(db::kKeyCount + 1);
  w.trial = db::read_trial(s, db::kKeyCount + 2, path);
  constexpr int rest = db::kKeyCount + 2 + db::kTrialCount;
  w.tool_version = s.text(rest);
  w.created_at = s.text(rest + 1);
  if (with_cubin) w.trial.cubin = s.blob(rest + 2);
  return w;
}

/// An empty environment variable counts as unset (a common way of "clearing" one in scripts).
const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

/// Checked up front so a write to a read-only cache fails with a message that says why,
/// rather than SQLite's "attempt to write a readonly database" halfway through.
void require_writable(sqlite3* handle, const std::string& path) {
  if (sqlite3_db_readonly(handle, "main") == 1)
    throw CacheError(fmt::format("cache '{}' is open read-only: cannot write to it", path),
                     SQLITE_READONLY);
}

struct CloseDb {
  void operator()(sqlite3* db) const { sqlite3_close_v2(db); }
};

}  // namespace

int steps_class(long steps) {
  if (steps < 1) return 0;
  return static_cast<int>(std::bit_width(static_cast<unsigned long>(steps))) - 1;
}

std::string DeviceRecord::fingerprint() const {
  return fmt::format("{}|sm_{}{}|{}SM|driver {}|nvrtc {}.{}", name, cc_major, cc_minor, sm_count,
                     driver_version, nvrtc_major, nvrtc_minor);
}

Cache::Cache(const std::string& path, Mode mode) : path_(path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  int flags = 0;
  // SQLite would call a folder a "disk I/O error".
  if (fs::is_directory(path_, ec))
    throw CacheError(fmt::format("cache '{}' is a folder; give the path of a cache file inside "
                                 "it, e.g. '{}'",
                                 path_, (fs::path(path_) / "tbtune.db").string()),
                     SQLITE_CANTOPEN);
  if (mode == Mode::ReadOnly) {
    // SQLite would say "unable to open database file"; a lookup before any tune is common
    // enough to deserve a plain sentence.
    if (!fs::exists(path_, ec))
      throw CacheError(fmt::format("no cache at '{}'", path_), SQLITE_CANTOPEN);
    flags = SQLITE_OPEN_READONLY | SQLITE_OPEN_URI;
  } else {
    const fs::path parent = fs::path(path_).parent_path();
    if (!parent.empty() && !fs::create_directories(parent, ec) && ec)
      throw CacheError(fmt::format("cache '{}': cannot create folder '{}': {}", path_,
                                   parent.string(), ec.message()),
                       SQLITE_CANTOPEN);
    flags = SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
  }

  // Owned by a guard until fully set up: a throw below must not leak the handle.
  sqlite3* raw = nullptr;
  // A reader opens a URI (db::read_only_uri) so that a cache in a read-only folder can be read.
  const std::string name = mode == Mode::ReadOnly ? db::read_only_uri(path_) : path_;
  const int rc = sqlite3_open_v2(name.c_str(), &raw, flags, nullptr);
  std::unique_ptr<sqlite3, CloseDb> db(raw);
  if (rc != SQLITE_OK) db::fail(db.get(), path_, "cannot open", rc);

  // Before anything that takes a lock: another process may be writing right now.
  if (const int brc = sqlite3_busy_timeout(db.get(), kBusyTimeoutMs); brc != SQLITE_OK)
    db::fail(db.get(), path_, "cannot set the busy timeout", brc);
  db::probe(db.get(), path_);
  // Refuse a newer file before writing anything to it, even the journal mode.
  const int version = db::check_version(db.get(), path_);
  db::exec(db.get(), path_, "PRAGMA foreign_keys = ON");
  if (mode == Mode::ReadOnly) {
    if (version == 0)
      throw CacheError(fmt::format("cache '{}' is empty (no tbtune tables)", path_), SQLITE_EMPTY);
    if (version < db::kSchemaVersion)
      throw CacheError(fmt::format("cache '{}' has schema version {}, older than this tbtune ({}): "
                                   "open it read-write once to migrate it",
                                   path_, version, db::kSchemaVersion),
                       SQLITE_MISMATCH);
  } else {
    // WAL lets readers (lookups) proceed while a tune writes. It is a property of the file,
    // so this only switches a new (or foreign-made) file.
    db::enable_wal(db.get(), path_, kBusyTimeoutMs);
    db::create_or_migrate(db.get(), path_);
  }
  db_ = db.release();
}

Cache::~Cache() { sqlite3_close_v2(db_); }

std::string Cache::default_path() {
  if (const char* p = env("TBTUNE_DB")) return p;
  if (const char* p = env("XDG_CACHE_HOME")) return std::string(p) + "/tbtune/tbtune.db";
  if (const char* p = env("HOME")) return std::string(p) + "/.cache/tbtune/tbtune.db";
  throw CacheError("cannot choose a cache path: set TBTUNE_DB, XDG_CACHE_HOME or HOME",
                   SQLITE_CANTOPEN);
}

int Cache::schema_version() { return db::kSchemaVersion; }

void Cache::put_device(const DeviceRecord& d) {
  require_writable(db_, path_);
  Transaction t(db_, path_);
  // Every field but memory_bytes is part of the fingerprint, so an existing row is already
  // right, and keeping it keeps first_seen.
  Statement s(db_, path_,
              "INSERT OR IGNORE INTO devices (fingerprint, name, cc_major, cc_minor, sm_count, "
              "memory_bytes, driver_version, nvrtc_major, nvrtc_minor) "
              "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)");
  s.bind(d.fingerprint()).bind(d.name).bind(d.cc_major).bind(d.cc_minor).bind(d.sm_count);
  s.bind(d.memory_bytes).bind(d.driver_version).bind(d.nvrtc_major).bind(d.nvrtc_minor);
  s.run();
  t.commit();
}

void Cache::put_stencil(const Stencil& stencil, const std::string& spec_text) {
  require_writable(db_, path_);
  Transaction t(db_, path_);
  // Same hash means same canonical stencil; the latest name and spec text are the ones a
  // user will recognise in `db show`. An upsert, not OR REPLACE: that would delete the row
  // that trials and winners refer to.
  Statement s(
      db_, path_,
      "INSERT INTO stencils (hash, name, dims, canonical, spec_text) VALUES (?, ?, ?, ?, ?) "
      "ON CONFLICT (hash) DO UPDATE SET name = excluded.name, spec_text = excluded.spec_text");
  s.bind(stencil.hash)
      .bind(stencil.name)
      .bind(stencil.dims)
      .bind(stencil.canonical)
      .bind(spec_text);
  s.run();
  t.commit();
}

void Cache::add_trial(const WinnerKey& key, long steps, const Trial& trial) {
  require_writable(db_, path_);
  Transaction t(db_, path_);
  const std::string sql =
      fmt::format("INSERT INTO trials ({}, steps, {}, message) VALUES ({})", db::kKeyColumns,
                  db::kTrialColumns, db::placeholders(db::kKeyCount + 1 + db::kTrialCount + 1));
  Statement s(db_, path_, sql.c_str());
  db::bind_key(s, key);
  s.bind(steps);
  db::bind_trial(s, trial);
  s.bind(trial.message);
  s.run();
  t.commit();
}

std::vector<Trial> Cache::trials(const WinnerKey& key) const {
  const std::string sql = fmt::format("SELECT {}, message FROM trials WHERE {} ORDER BY id",
                                      db::kTrialColumns, db::kKeyWhere);
  Statement s(db_, path_, sql.c_str());
  db::bind_key(s, key);
  std::vector<Trial> out;
  while (s.step()) {
    out.push_back(db::read_trial(s, 0, path_));
    out.back().message = s.text(db::kTrialCount);
  }
  return out;
}

std::optional<Trial> Cache::find_trial(const WinnerKey& key, long steps,
                                       const std::string& strategy, const Params& params) const {
  const std::string sql = fmt::format(
      "SELECT {}, message FROM trials WHERE {} AND steps = ? AND strategy = ? AND params = ? "
      "AND status <> 'skipped' ORDER BY id DESC LIMIT 1",
      db::kTrialColumns, db::kKeyWhere);
  Statement s(db_, path_, sql.c_str());
  db::bind_key(s, key);
  s.bind(steps).bind(strategy).bind(db::format_params(params));
  if (!s.step()) return std::nullopt;
  Trial t = db::read_trial(s, 0, path_);
  t.message = s.text(db::kTrialCount);
  return t;
}

void Cache::put_winner(const Winner& w) {
  require_writable(db_, path_);
  Transaction t(db_, path_);
  // OR REPLACE gives the new row a new rowid, which orders winners() among equal timestamps.
  // An empty created_at is filled in here, in the same UTC ISO 8601 form the engine uses.
  const std::string sql = fmt::format(
      "INSERT OR REPLACE INTO winners ({}, cubin) VALUES "
      "({}, COALESCE(NULLIF(?, ''), strftime('%Y-%m-%dT%H:%M:%SZ', 'now')), ?)",
      winner_columns(), db::placeholders(kWinnerCount - 1));
  Statement s(db_, path_, sql.c_str());
  db::bind_key(s, w.key);
  s.bind(w.stencil_name).bind(w.steps);
  db::bind_trial(s, w.trial);
  s.bind(w.tool_version).bind(w.created_at).bind_blob(w.trial.cubin);
  s.run();
  t.commit();
}

std::optional<Winner> Cache::winner(const WinnerKey& key) const {
  const std::string sql =
      fmt::format("SELECT {}, cubin FROM winners WHERE {}", winner_columns(), db::kKeyWhere);
  Statement s(db_, path_, sql.c_str());
  db::bind_key(s, key);
  if (!s.step()) return std::nullopt;
  return read_winner(s, path_, true);
}

std::vector<Winner> Cache::winners() const {
  const std::string sql =
      fmt::format("SELECT {} FROM winners ORDER BY created_at DESC, rowid DESC", winner_columns());
  Statement s(db_, path_, sql.c_str());
  std::vector<Winner> out;
  while (s.step()) out.push_back(read_winner(s, path_, false));
  return out;
}

std::vector<Winner> Cache::winners_of(const std::string& stencil_hash) const {
  // Only columns stored before `cubin`: SQLite then stops reading a row before the image's
  // overflow pages. rowid order is storing order (put_winner replaces with a new rowid).
  const std::string sql =
      fmt::format("SELECT {}, stencil_name, steps, {} FROM winners WHERE stencil_hash = ? ORDER BY rowid DESC",
                  db::kKeyColumns, db::kTrialColumns);
  Statement s(db_, path_, sql.c_str());
  s.bind(stencil_hash);
  std::vector<Winner> out;
  while (s.step()) {
    Winner w;
    w.key = db::read_key(s, 0, path_);
    w.stencil_name = s.text(db::kKeyCount);
    w.steps = s.int64(db::kKeyCount + 1);
    w.trial = db::read_trial(s, db::kKeyCount + 2, path_);
    out.push_back(std::move(w));
  }
  return out;
}

void Cache::add_tune(const TuneRecord& record) {
  require_writable(db_, path_);
  Transaction t(db_, path_);
  const std::string sql =
      fmt::format("INSERT INTO tunes ({}, {}) VALUES ({})", db::kKeyColumns, db::kTuneColumns,
                  db::placeholders(db::kKeyCount + db::kTuneCount));
  Statement s(db_, path_, sql.c_str());
  db::bind_tune(s, record);
  s.run();
  t.commit();
}

std::vector<TuneRecord> Cache::tunes() const {
  const std::string sql = fmt::format("SELECT {}, {}, created_at FROM tunes ORDER BY id",
                                      db::kKeyColumns, db::kTuneColumns);
  Statement s(db_, path_, sql.c_str());
  std::vector<TuneRecord> out;
  while (s.step()) out.push_back(db::read_tune(s, 0, path_));
  return out;
}

void Cache::put_profile(const std::string& fingerprint, const DeviceProfile& profile) {
  require_writable(db_, path_);
  Transaction t(db_, path_);
  // A re-probe replaces the old figures and its timestamp: the newest measurement counts.
  Statement s(db_, path_,
              "INSERT OR REPLACE INTO profiles (device_fingerprint, json) VALUES (?, ?)");
  s.bind(fingerprint).bind(profile_to_json(profile).dump());
  s.run();
  t.commit();
}

std::optional<DeviceProfile> Cache::profile(const std::string& fingerprint) const {
  Statement s(db_, path_, "SELECT json FROM profiles WHERE device_fingerprint = ?");
  s.bind(fingerprint);
  if (!s.step()) return std::nullopt;
  const std::string text = s.text(0);
  try {
    return profile_from_json(nlohmann::json::parse(text));
  } catch (const std::exception& e) {  // nlohmann's parse_error or our Error
    throw CacheError(fmt::format("cache '{}': the profile stored for '{}' is unreadable: {}",
                                 path_, fingerprint, e.what()),
                     SQLITE_CORRUPT);
  }
}

std::optional<std::string> Cache::spec_text(const std::string& hash) const {
  Statement s(db_, path_, "SELECT spec_text FROM stencils WHERE hash = ?");
  s.bind(hash);
  if (!s.step()) return std::nullopt;
  return s.text(0);
}

}  // namespace tbtune
