#include "db/schema.hpp"

#include <array>

#include <fmt/format.h>

#include "db/sqlite.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune::db {
namespace {

/// kMigrations[v] takes a database from version v to v + 1; version 0 is an empty file.
/// Steps are never edited once released, only appended, so every old file has a path forward.
constexpr std::array<const char*, kSchemaVersion> kMigrations{{
    // 0 -> 1: the first schema.
    R"sql(
CREATE TABLE schema_version (
  id      INTEGER PRIMARY KEY CHECK (id = 1),
  version INTEGER NOT NULL
);
CREATE TABLE devices (
  fingerprint    TEXT PRIMARY KEY,
  name           TEXT NOT NULL,
  cc_major       INTEGER NOT NULL,
  cc_minor       INTEGER NOT NULL,
  sm_count       INTEGER NOT NULL,
  memory_bytes   INTEGER NOT NULL,
  driver_version INTEGER NOT NULL,
  nvrtc_major    INTEGER NOT NULL,
  nvrtc_minor    INTEGER NOT NULL,
  first_seen     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE TABLE stencils (
  hash      TEXT PRIMARY KEY,
  name      TEXT NOT NULL,
  dims      INTEGER NOT NULL,
  canonical TEXT NOT NULL,
  spec_text TEXT NOT NULL
);
CREATE TABLE trials (
  id                 INTEGER PRIMARY KEY,
  stencil_hash       TEXT NOT NULL REFERENCES stencils(hash),
  device_fingerprint TEXT NOT NULL REFERENCES devices(fingerprint),
  dtype              TEXT NOT NULL CHECK (dtype IN ('float', 'double')),
  nx                 INTEGER NOT NULL,
  ny                 INTEGER NOT NULL,
  nz                 INTEGER NOT NULL,
  steps_class        INTEGER NOT NULL,
  steps              INTEGER NOT NULL,
  strategy           TEXT NOT NULL,
  params             TEXT NOT NULL,
  predicted_P        REAL NOT NULL,
  predicted_V        REAL NOT NULL,
  predicted_PP       REAL NOT NULL,
  bottleneck         TEXT NOT NULL,
  fits               INTEGER NOT NULL,
  status             TEXT NOT NULL,
  message            TEXT NOT NULL,
  gcells_median      REAL NOT NULL,
  gcells_best        REAL NOT NULL,
  seconds_median     REAL NOT NULL,
  repetitions        INTEGER NOT NULL,
  max_rel_error      REAL NOT NULL,
  registers          INTEGER NOT NULL,
  spill_bytes        INTEGER NOT NULL,
  smem_bytes         INTEGER NOT NULL,
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX trials_by_key
  ON trials (stencil_hash, device_fingerprint, dtype, nx, ny, nz, steps_class);
CREATE TABLE winners (
  stencil_hash       TEXT NOT NULL REFERENCES stencils(hash),
  device_fingerprint TEXT NOT NULL REFERENCES devices(fingerprint),
  dtype              TEXT NOT NULL CHECK (dtype IN ('float', 'double')),
  nx                 INTEGER NOT NULL,
  ny                 INTEGER NOT NULL,
  nz                 INTEGER NOT NULL,
  steps_class        INTEGER NOT NULL,
  stencil_name       TEXT NOT NULL,
  steps              INTEGER NOT NULL,
  strategy           TEXT NOT NULL,
  params             TEXT NOT NULL,
  status             TEXT NOT NULL,
  gcells_median      REAL NOT NULL,
  gcells_best        REAL NOT NULL,
  seconds_median     REAL NOT NULL,
  repetitions        INTEGER NOT NULL,
  max_rel_error      REAL NOT NULL,
  registers          INTEGER NOT NULL,
  spill_bytes        INTEGER NOT NULL,
  smem_bytes         INTEGER NOT NULL,
  predicted_P        REAL NOT NULL,
  predicted_V        REAL NOT NULL,
  predicted_PP       REAL NOT NULL,
  bottleneck         TEXT NOT NULL,
  fits               INTEGER NOT NULL,
  cubin              BLOB NOT NULL,
  tool_version       TEXT NOT NULL,
  created_at         TEXT NOT NULL,
  PRIMARY KEY (stencil_hash, device_fingerprint, dtype, nx, ny, nz, steps_class)
);
)sql",
    // 1 -> 2: measured device profiles (`tbtune probe`), one per device fingerprint, as the
    // JSON of model/profile_json.hpp so a new DeviceProfile field needs no migration.
    R"sql(
CREATE TABLE profiles (
  device_fingerprint TEXT PRIMARY KEY,
  json               TEXT NOT NULL,
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
)sql",
    // 2 -> 3: one row per tune run (search mode and options, space covered, winner, wall
    // time), the evidence `tbtune report` compares model and exhaustive searches with.
    R"sql(
CREATE TABLE tunes (
  id                 INTEGER PRIMARY KEY,
  stencil_hash       TEXT NOT NULL REFERENCES stencils(hash),
  device_fingerprint TEXT NOT NULL REFERENCES devices(fingerprint),
  dtype              TEXT NOT NULL CHECK (dtype IN ('float', 'double')),
  nx                 INTEGER NOT NULL,
  ny                 INTEGER NOT NULL,
  nz                 INTEGER NOT NULL,
  steps_class        INTEGER NOT NULL,
  steps              INTEGER NOT NULL,
  stencil_name       TEXT NOT NULL,
  strategy_filter    TEXT NOT NULL,
  search             TEXT NOT NULL CHECK (search IN ('model', 'exhaustive')),
  top                INTEGER NOT NULL,
  within             REAL NOT NULL,
  max_candidates     INTEGER NOT NULL,
  budget_s           REAL NOT NULL,
  fresh              INTEGER NOT NULL,
  allow_spills       INTEGER NOT NULL,
  space              INTEGER NOT NULL,
  feasible           INTEGER NOT NULL,
  selected           INTEGER NOT NULL,
  timed              INTEGER NOT NULL,
  reused             INTEGER NOT NULL,
  pruned             INTEGER NOT NULL,
  compile_errors     INTEGER NOT NULL,
  not_run            INTEGER NOT NULL,
  winner_strategy    TEXT NOT NULL,
  winner_params      TEXT NOT NULL,
  winner_gcells      REAL NOT NULL,
  interrupted        INTEGER NOT NULL,
  out_of_budget      INTEGER NOT NULL,
  wall_s             REAL NOT NULL,
  tool_version       TEXT NOT NULL,
  created_at         TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
);
CREATE INDEX tunes_by_key
  ON tunes (stencil_hash, device_fingerprint, dtype, nx, ny, nz, steps_class);
)sql",
    // 3 -> 4: problems compiled ahead without a GPU (`tbtune sweep --compile-only`), one row per
    // problem and profile; no device yet, so no device fingerprint.
    R"sql(
CREATE TABLE compiles (
  stencil_hash   TEXT NOT NULL REFERENCES stencils(hash),
  profile        TEXT NOT NULL,
  arch           TEXT NOT NULL,
  dtype          TEXT NOT NULL CHECK (dtype IN ('float', 'double')),
  nx             INTEGER NOT NULL,
  ny             INTEGER NOT NULL,
  nz             INTEGER NOT NULL,
  steps          INTEGER NOT NULL,
  stencil_name   TEXT NOT NULL,
  candidates     INTEGER NOT NULL,
  compiled       INTEGER NOT NULL,
  compile_errors INTEGER NOT NULL,
  spilled        INTEGER NOT NULL,
  wall_s         REAL NOT NULL,
  tool_version   TEXT NOT NULL,
  created_at     TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
  PRIMARY KEY (stencil_hash, profile, arch, dtype, nx, ny, nz, steps)
);
)sql",
}};

}  // namespace

void probe(sqlite3* db, const std::string& path) {
  // Opening never reads the file; the first statement does, and reports SQLITE_NOTADB for a
  // file with a foreign header. Say that in words a user recognises.
  const int rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  if (rc == SQLITE_NOTADB)
    throw CacheError(fmt::format("cache '{}' is not an SQLite database ({}): move it away or "
                                 "choose another path",
                                 path, sqlite3_errmsg(db)),
                     rc);
  if (rc != SQLITE_OK) fail(db, path, "cannot read the database", rc);
}

int check_version(sqlite3* db, const std::string& path) {
  // One statement, so both answers come from one snapshot: another process may be creating
  // the tables right now, and two reads could see "no schema_version" and then its tables.
  Statement tables(db, path,
                   "SELECT EXISTS (SELECT 1 FROM sqlite_master WHERE type = 'table' AND "
                   "name = 'schema_version'), (SELECT count(*) FROM sqlite_master WHERE "
                   "type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\')");
  (void)tables.step();
  int version = 0;
  if (tables.int32(0) != 0) {
    // The row is written in the same transaction as the table, so it is there too.
    Statement s(db, path, "SELECT version FROM schema_version WHERE id = 1");
    // Without the row the file would pass for an empty one; it was damaged or not written by us.
    if (!s.step())
      throw CacheError(fmt::format("cache '{}' is damaged: its schema_version table has no "
                                   "version row, so its tables cannot be trusted",
                                   path),
                       SQLITE_CORRUPT);
    version = s.int32(0);
    // Versions count from 1; anything else would index the migrations out of bounds (the cache
    // fuzz target's -4).
    if (version < 1)
      throw CacheError(fmt::format("cache '{}' is damaged: its schema version ({}) is not one tbtune writes",
                                   path, version),
                       SQLITE_CORRUPT);
  } else {
    // Adding our tables to somebody else's database would be a surprise; refuse instead.
    if (tables.int64(1) > 0)
      throw CacheError(fmt::format("cache '{}' is an SQLite database but not a tbtune cache "
                                   "(it has no schema_version table)",
                                   path),
                       SQLITE_MISMATCH);
  }
  if (version > kSchemaVersion)
    throw CacheError(fmt::format("cache '{}' has schema version {}, newer than this tbtune ({}): "
                                 "upgrade tbtune",
                                 path, version, kSchemaVersion),
                     SQLITE_MISMATCH);
  return version;
}

bool is_current(sqlite3* db) {
  // check_version()'s conditions in one query: a table (not a view, and under this very name)
  // called schema_version whose row 1 holds this build's version.
  sqlite3_stmt* s = nullptr;
  if (sqlite3_prepare_v2(db, kCurrentVersionSql, -1, &s, nullptr) != SQLITE_OK) {
    sqlite3_finalize(s);
    return false;
  }
  const bool current = sqlite3_step(s) == SQLITE_ROW && sqlite3_column_type(s, 0) == SQLITE_INTEGER &&
                       sqlite3_column_int64(s, 0) == kSchemaVersion;
  sqlite3_finalize(s);
  return current;
}

void create_or_migrate(sqlite3* db, const std::string& path) {
  // The version is read again under the write lock: another process may have created or
  // migrated the file between our first look and BEGIN IMMEDIATE.
  Transaction t(db, path);
  const int from = check_version(db, path);
  if (from == kSchemaVersion) return;  // nothing written; the guard's ROLLBACK is a no-op
  for (int v = from; v < kSchemaVersion; ++v) {
    const int rc =
        sqlite3_exec(db, kMigrations[static_cast<std::size_t>(v)], nullptr, nullptr, nullptr);
    if (rc != SQLITE_OK)
      fail(db, path, fmt::format("cannot migrate the schema from version {} to {}", v, v + 1), rc);
  }
  Statement s(db, path,
              "INSERT INTO schema_version (id, version) VALUES (1, ?) "
              "ON CONFLICT (id) DO UPDATE SET version = excluded.version");
  s.bind(kSchemaVersion).run();
  t.commit();
}

}  // namespace tbtune::db
