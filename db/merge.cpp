#include "db/merge.hpp"

#include <chrono>
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "db/cache.hpp"
#include "db/schema.hpp"
#include "db/sqlite.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;
using db::Statement;

struct CloseDb {
  void operator()(sqlite3* d) const { sqlite3_close_v2(d); }
};
using Handle = std::unique_ptr<sqlite3, CloseDb>;

Handle open_file(const std::string& path, int flags) {
  sqlite3* raw = nullptr;
  const int rc = sqlite3_open_v2(path.c_str(), &raw, flags, nullptr);
  Handle h(raw);
  if (rc != SQLITE_OK) db::fail(h.get(), path, "cannot open", rc);
  sqlite3_busy_timeout(h.get(), 10000);
  return h;
}

/// Opens `path` read-only and checks it (check_merge_input); the handle stays open for reading.
Handle open_checked(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec))
    throw CacheError(fmt::format("no cache at '{}'", path), SQLITE_CANTOPEN);
  Handle h = open_file(path, SQLITE_OPEN_READONLY);
  db::probe(h.get(), path);
  Statement check(h.get(), path, "PRAGMA quick_check");
  if (check.step() && check.text(0) != "ok")
    throw CacheError(fmt::format("cache '{}' is corrupt (quick_check: {})", path, check.text(0)),
                     SQLITE_CORRUPT);
  const int version = db::check_version(h.get(), path);  // throws for a newer or foreign file
  if (version == 0)
    throw CacheError(fmt::format("cache '{}' is empty (no tbtune tables)", path), SQLITE_EMPTY);
  if (version != db::kSchemaVersion)
    throw CacheError(fmt::format("cache '{}' has schema version {}, older than this tbtune ({}): "
                                 "open it read-write once (e.g. tbtune tune --db) to migrate it, "
                                 "then merge",
                                 path, version, db::kSchemaVersion),
                     SQLITE_MISMATCH);
  return h;
}

/// How rows of one table are taken from an input: the statement that inserts one row (bound
/// with ?1..?n in column order), and which rows of the input are offered.
struct TableRule {
  const char* table;
  const char* where = "1";  ///< filter on the input's rows
  enum class Kind { New, Unique, Better } kind;
  const char* key = "";     ///< Better: the conflict target (the primary key)
  const char* better = "";  ///< Better: when the offered row replaces the stored one
  long MergeCounts::*took;
  long MergeCounts::*offered = nullptr;
};

/// In foreign-key order: devices and stencils before the rows that refer to them.
const TableRule kRules[] = {
    {"devices", "1", TableRule::Kind::New, "", "", &MergeCounts::devices},
    {"stencils", "1", TableRule::Kind::New, "", "", &MergeCounts::stencils},
    {"profiles", "1", TableRule::Kind::Better, "device_fingerprint",
     "excluded.created_at > profiles.created_at", &MergeCounts::profiles},
    {"trials", "1", TableRule::Kind::Unique, "", "", &MergeCounts::trials, &MergeCounts::trials_in},
    {"winners", "status = 'ok'", TableRule::Kind::Better,
     "stencil_hash, device_fingerprint, dtype, nx, ny, nz, steps_class",
     "excluded.gcells_median > winners.gcells_median", &MergeCounts::winners,
     &MergeCounts::winners_in},
    {"tunes", "1", TableRule::Kind::Unique, "", "", &MergeCounts::tunes},
    {"compiles", "1", TableRule::Kind::Better,
     "stencil_hash, profile, arch, dtype, nx, ny, nz, steps",
     "excluded.created_at > compiles.created_at", &MergeCounts::compiles},
};

/// The table's columns, its `id` (a row number local to each file) left out.
std::vector<std::string> columns_of(sqlite3* d, const std::string& path, const char* table) {
  const std::string sql = fmt::format("SELECT name FROM pragma_table_info('{}') ORDER BY cid", table);
  Statement s(d, path, sql.c_str());
  std::vector<std::string> out;
  while (s.step())
    if (s.text(0) != "id") out.push_back(s.text(0));
  return out;
}

std::string insert_sql(const TableRule& r, const std::vector<std::string>& cols) {
  std::string names, values, same, updates;
  for (std::size_t i = 0; i < cols.size(); ++i) {
    const char* sep = i ? ", " : "";
    names += sep + cols[i];
    values += fmt::format("{}?{}", sep, i + 1);
    same += fmt::format("{}{} = ?{}", i ? " AND " : "", cols[i], i + 1);
    updates += fmt::format("{}{} = excluded.{}", sep, cols[i], cols[i]);
  }
  switch (r.kind) {
    case TableRule::Kind::New:
      return fmt::format("INSERT OR IGNORE INTO {} ({}) VALUES ({})", r.table, names, values);
    case TableRule::Kind::Unique:
      // Rows have no natural key: a row is "the same" when every column matches (the
      // key columns first, so SQLite looks it up through the table's index on them).
      return fmt::format("INSERT INTO {0} ({1}) SELECT {2} WHERE NOT EXISTS (SELECT 1 FROM {0} WHERE {3})",
                         r.table, names, values, same);
    case TableRule::Kind::Better:
      return fmt::format("INSERT INTO {} ({}) VALUES ({}) ON CONFLICT ({}) DO UPDATE SET {} WHERE {}",
                         r.table, names, values, r.key, updates, r.better);
  }
  return {};
}

struct Finalize {
  void operator()(sqlite3_stmt* s) const { sqlite3_finalize(s); }
};
using Raw = std::unique_ptr<sqlite3_stmt, Finalize>;

Raw prepare(sqlite3* d, const std::string& path, const std::string& sql) {
  sqlite3_stmt* s = nullptr;
  if (const int rc = sqlite3_prepare_v2(d, sql.c_str(), -1, &s, nullptr); rc != SQLITE_OK)
    db::fail(d, path, fmt::format("cannot prepare \"{}\"", sql), rc);
  return Raw(s);
}

/// Copies the rows `rule` takes from `in` into `out` (in the caller's transaction).
void merge_table(sqlite3* out, const std::string& out_path, sqlite3* in, const std::string& in_path,
                 const TableRule& rule, MergeCounts& counts) {
  const std::vector<std::string> cols = columns_of(out, out_path, rule.table);
  std::string list;
  for (const std::string& c : cols) list += (list.empty() ? "" : ", ") + c;
  const std::string select = fmt::format("SELECT {} FROM {} WHERE {}", list, rule.table, rule.where);
  // Raw statements: a row is passed on as SQLite values (sqlite3_bind_value), whatever their
  // types, BLOBs included, without a round trip through C++ types.
  const Raw read = prepare(in, in_path, select);
  const Raw write = prepare(out, out_path, insert_sql(rule, cols));
  for (;;) {
    const int rrc = sqlite3_step(read.get());
    if (rrc == SQLITE_DONE) break;
    if (rrc != SQLITE_ROW) db::fail(in, in_path, fmt::format("cannot read '{}'", rule.table), rrc);
    for (int i = 0; i < int(cols.size()); ++i)
      sqlite3_bind_value(write.get(), i + 1, sqlite3_column_value(read.get(), i));
    if (const int rc = sqlite3_step(write.get()); rc != SQLITE_DONE)
      db::fail(out, out_path, fmt::format("cannot merge a row of '{}' from '{}'", rule.table, in_path), rc);
    counts.*rule.took += sqlite3_changes(out);
    if (rule.offered) ++(counts.*rule.offered);
    sqlite3_reset(write.get());
  }
}

void remove_cache_files(const std::string& path) {
  std::error_code ec;
  for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
}

}  // namespace

void check_merge_input(const std::string& path) { (void)open_checked(path); }

MergeResult merge_caches(const std::string& out, const std::vector<std::string>& inputs) {
  const auto started = std::chrono::steady_clock::now();
  MergeResult result;
  std::error_code ec;
  for (const std::string& in : inputs)
    if (fs::exists(out, ec) && fs::equivalent(in, out, ec))
      throw CacheError(fmt::format("cannot merge '{}' into itself", in), SQLITE_MISUSE);
  std::vector<Handle> readers;
  for (const std::string& in : inputs) readers.push_back(open_checked(in));
  result.created = !fs::exists(out, ec);
  if (!result.created) (void)open_checked(out);

  try {
    { Cache create(out, Cache::Mode::ReadWrite); }  // a new output gets the tables
    Handle w = open_file(out, SQLITE_OPEN_READWRITE);
    db::exec(w.get(), out, "PRAGMA foreign_keys = ON");
    db::Transaction t(w.get(), out);
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      MergeInput took{inputs[i], {}};
      for (const TableRule& rule : kRules)
        merge_table(w.get(), out, readers[i].get(), inputs[i], rule, took.took);
      result.inputs.push_back(std::move(took));
    }
    t.commit();
  } catch (...) {
    // The transaction rolled back; an output this call created goes too, so a failed merge
    // leaves no file behind that looks like a result.
    if (result.created) remove_cache_files(out);
    throw;
  }
  result.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  return result;
}

}  // namespace tbtune
