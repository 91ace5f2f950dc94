#pragma once
/// @file schema.hpp
/// Internal to db/: the cache's tables (documented in docs/cache.md) and their versioning.
#include <string>

struct sqlite3;

namespace tbtune::db {

/// The schema this build writes. Bump it and append a step to the migration list in
/// schema.cpp when the tables change; docs/cache.md says what each version holds.
inline constexpr int kSchemaVersion = 4;

/// Fails with a clear CacheError when the file is not an SQLite database at all, before any
/// pragma or schema statement turns that into a less obvious message.
void probe(sqlite3* db, const std::string& path);

/// The stored schema version: 0 for an empty database. Throws CacheError for a database that
/// holds tables but no `schema_version` (someone else's file) and for one newer than this build.
[[nodiscard]] int check_version(sqlite3* db, const std::string& path);

/// Whether the file is a tbtune cache of exactly this build's schema, asked in one statement: a
/// reader's open in the common case (probe() and check_version() take four). False for anything
/// else, an error included: the caller then runs probe() and check_version(), whose verdict and
/// messages are the ones that count. One snapshot, like check_version().
[[nodiscard]] bool is_current(sqlite3* db);
/// is_current()'s query: one row, this build's version, when the file is current.
inline constexpr const char* kCurrentVersionSql =
    "SELECT version FROM schema_version WHERE id = 1 AND "
    "(SELECT type FROM sqlite_master WHERE name = 'schema_version') = 'table'";

/// Creates the tables in an empty database or migrates an older one, in one transaction;
/// safe when several processes open a new file at once. Needs a read-write handle.
void create_or_migrate(sqlite3* db, const std::string& path);

}  // namespace tbtune::db
