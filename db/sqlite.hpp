#pragma once
/// @file sqlite.hpp
/// Internal to db/: a thin RAII layer over the SQLite C API. Every failure becomes a
/// CacheError that names the cache file, what was being done and SQLite's own message.
#include <sqlite3.h>

#include <cstdint>
#include <string>
#include <string_view>

namespace tbtune::db {

/// Throws CacheError "cache 'path': what: <sqlite3_errmsg>" with `code` (SQLite's result code).
[[noreturn]] void fail(sqlite3* db, const std::string& path, std::string_view what, int code);

/// Runs SQL that returns no rows (pragmas, DDL, transaction control); throws CacheError.
void exec(sqlite3* db, const std::string& path, const char* sql);

/// The URI a reader opens `path` with (SQLITE_OPEN_URI) so that it never writes: `mode=ro`, and
/// `immutable=1` when the folder is not writable and holds no `-shm` file (no writer is active).
[[nodiscard]] std::string read_only_uri(const std::string& path);

/// Switches the file to WAL unless it is already. Retries for up to `timeout_ms` while
/// another connection holds the file: SQLite does not call the busy handler for this switch.
void enable_wal(sqlite3* db, const std::string& path, int timeout_ms);

/// One prepared statement, finalized on destruction. Parameters are bound by 1-based index.
class Statement {
 public:
  /// Prepares `sql`; throws CacheError. `persistent`: the statement will be reset and run again
  /// for the connection's life (SQLITE_PREPARE_PERSISTENT).
  Statement(sqlite3* db, const std::string& path, const char* sql, bool persistent = false);
  ~Statement();
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;

  /// Binds and returns the next index, so a row is bound with one chain of calls.
  Statement& bind(long long v);
  Statement& bind(long v) { return bind(static_cast<long long>(v)); }
  Statement& bind(int v) { return bind(static_cast<long long>(v)); }
  Statement& bind(double v);
  Statement& bind(const std::string& v);
  Statement& bind(const char* v) { return bind(std::string(v)); }
  /// Binds bytes as a BLOB (NUL bytes kept; an empty string is an empty BLOB, not NULL).
  Statement& bind_blob(const std::string& bytes);

  /// Steps once: true while a row is available, false when done; throws CacheError.
  [[nodiscard]] bool step();
  /// Steps a statement that returns no rows.
  void run();
  /// Ends the current run and clears the bindings, so the statement can be bound and stepped
  /// again (no new prepare).
  void reset();

  [[nodiscard]] std::int64_t int64(int col) const;
  [[nodiscard]] int int32(int col) const;
  [[nodiscard]] double real(int col) const;
  /// TEXT column; NULL reads as "".
  [[nodiscard]] std::string text(int col) const;
  /// BLOB column as bytes; NULL reads as "".
  [[nodiscard]] std::string blob(int col) const;

 private:
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
  int next_ = 1;
  void check_bind(int rc);
};

/// BEGIN IMMEDIATE on construction; ROLLBACK on destruction unless commit() succeeded, so an
/// exception anywhere in a write leaves the file as it was. IMMEDIATE takes the write lock up
/// front: a deferred transaction that later upgrades can fail with SQLITE_BUSY without the
/// busy handler retrying, which is exactly the two-writers case we need to survive.
class Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  sqlite3* db_;
  std::string path_;
  bool done_ = false;
};

}  // namespace tbtune::db
