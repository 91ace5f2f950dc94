#include "db/sqlite.hpp"

#include <chrono>
#include <filesystem>
#include <thread>

#include <unistd.h>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune::db {

void fail(sqlite3* db, const std::string& path, std::string_view what, int code) {
  // sqlite3_errmsg is only meaningful with a handle; without one, errstr(code) is the best we have.
  const char* msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(code);
  throw CacheError(fmt::format("cache '{}': {}: {}", path, what, msg), code);
}

void exec(sqlite3* db, const std::string& path, const char* sql) {
  const int rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
  if (rc != SQLITE_OK) fail(db, path, sql, rc);
}

std::string read_only_uri(const std::string& path) {
  // Percent-encode what a URI would read as syntax; everything else passes as it is.
  std::string uri = "file:";
  for (const char c : path) {
    if (c == '%' || c == '?' || c == '#' || c == ' ')
      uri += fmt::format("%{:02X}", static_cast<unsigned char>(c));
    else
      uri += c;
  }
  uri += "?mode=ro";
  namespace fs = std::filesystem;
  const fs::path dir = fs::absolute(fs::path(path)).parent_path();
  std::error_code ec;
  // A WAL reader needs the -shm file. Where it cannot be created and none exists, no writer is
  // connected (a writer keeps one there), so the file is a stable snapshot: `immutable` tells
  // SQLite to read it without locks or a -shm. Where one exists, SQLite reads it read-only.
  if (::access(dir.c_str(), W_OK) != 0 && !fs::exists(path + "-shm", ec)) uri += "&immutable=1";
  return uri;
}

void enable_wal(sqlite3* db, const std::string& path, int timeout_ms) {
  {
    // The mode is stored in the file, so after the first open this is the only statement run.
    Statement s(db, path, "PRAGMA journal_mode");
    if (s.step() && s.text(0) == "wal") return;
  }
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  for (;;) {
    const int rc = sqlite3_exec(db, "PRAGMA journal_mode = WAL", nullptr, nullptr, nullptr);
    if (rc == SQLITE_OK) return;
    // Only several processes opening one new file at once get here, and only for a moment.
    if ((rc != SQLITE_BUSY && rc != SQLITE_LOCKED) || std::chrono::steady_clock::now() > deadline)
      fail(db, path, "cannot switch to WAL mode", rc);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

Statement::Statement(sqlite3* db, const std::string& path, const char* sql, bool persistent)
    : db_(db), path_(path) {
  const int rc =
      sqlite3_prepare_v3(db, sql, -1, persistent ? SQLITE_PREPARE_PERSISTENT : 0, &stmt_, nullptr);
  if (rc != SQLITE_OK) fail(db, path_, fmt::format("cannot prepare \"{}\"", sql), rc);
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::check_bind(int rc) {
  if (rc != SQLITE_OK) fail(db_, path_, fmt::format("cannot bind parameter {}", next_), rc);
  ++next_;
}

Statement& Statement::bind(long long v) {
  check_bind(sqlite3_bind_int64(stmt_, next_, v));
  return *this;
}

Statement& Statement::bind(double v) {
  check_bind(sqlite3_bind_double(stmt_, next_, v));
  return *this;
}

Statement& Statement::bind(const std::string& v) {
  check_bind(sqlite3_bind_text64(stmt_, next_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
  return *this;
}

Statement& Statement::bind_blob(const std::string& bytes) {
  // std::string::data() is never null, so an empty image stays a zero-length BLOB.
  check_bind(sqlite3_bind_blob64(stmt_, next_, bytes.data(), bytes.size(), SQLITE_TRANSIENT));
  return *this;
}

bool Statement::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) return true;
  if (rc == SQLITE_DONE) return false;
  fail(db_, path_, fmt::format("\"{}\" failed", sqlite3_sql(stmt_)), rc);
}

void Statement::run() {
  while (step()) {
  }
}

void Statement::reset() {
  // sqlite3_reset repeats the last step's error, which step() has already thrown.
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  next_ = 1;
}

std::int64_t Statement::int64(int col) const { return sqlite3_column_int64(stmt_, col); }

int Statement::int32(int col) const { return sqlite3_column_int(stmt_, col); }

double Statement::real(int col) const { return sqlite3_column_double(stmt_, col); }

std::string Statement::text(int col) const {
  const auto* p = sqlite3_column_text(stmt_, col);
  // Bytes are asked for after the pointer: the pointer call may convert the value first.
  const int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(reinterpret_cast<const char*>(p), static_cast<std::size_t>(n))
           : std::string();
}

std::string Statement::blob(int col) const {
  const void* p = sqlite3_column_blob(stmt_, col);
  const int n = sqlite3_column_bytes(stmt_, col);
  return p ? std::string(static_cast<const char*>(p), static_cast<std::size_t>(n)) : std::string();
}

Transaction::Transaction(sqlite3* db, const std::string& path) : db_(db), path_(path) {
  exec(db_, path_, "BEGIN IMMEDIATE");
}

Transaction::~Transaction() {
  // Errors are ignored here: we are already unwinding, and a failed ROLLBACK means SQLite
  // rolled back on its own (it does so after I/O and out-of-memory errors).
  if (!done_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}

void Transaction::commit() {
  exec(db_, path_, "COMMIT");
  done_ = true;
}

}  // namespace tbtune::db
