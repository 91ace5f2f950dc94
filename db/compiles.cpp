// Cache members for the `compiles` table (schema version 4): problems compiled ahead without a
// GPU by `tbtune sweep --compile-only`. Kept apart from cache.cpp, whose tables are keyed by a
// device; these rows name a built-in profile and an architecture instead.
#include <fmt/format.h>

#include "db/cache.hpp"
#include "db/rows.hpp"
#include "db/sqlite.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

constexpr const char* kCompileColumns =
    "stencil_hash, profile, arch, dtype, nx, ny, nz, steps, stencil_name, candidates, compiled, "
    "compile_errors, spilled, wall_s, tool_version";

}  // namespace

void Cache::put_compile(const CompileRecord& r) {
  if (sqlite3_db_readonly(db_, "main") == 1)
    throw CacheError(fmt::format("cache '{}' is open read-only: cannot write to it", path_), SQLITE_READONLY);
  db::Transaction t(db_, path_);
  // OR REPLACE: a compile of the same problem again (a requeued task) replaces its row.
  const std::string sql = fmt::format("INSERT OR REPLACE INTO compiles ({}) VALUES ({})",
                                      kCompileColumns, db::placeholders(15));
  db::Statement s(db_, path_, sql.c_str());
  s.bind(r.stencil_hash).bind(r.profile).bind(r.arch).bind(dtype_name(r.dtype));
  s.bind(r.domain[0]).bind(r.domain[1]).bind(r.domain[2]).bind(r.steps).bind(r.stencil_name);
  s.bind(r.candidates).bind(r.compiled).bind(r.compile_errors).bind(r.spilled).bind(r.wall_s);
  s.bind(r.tool_version);
  s.run();
  t.commit();
}

std::vector<CompileRecord> Cache::compiles() const {
  const std::string sql =
      fmt::format("SELECT {}, created_at FROM compiles ORDER BY rowid", kCompileColumns);
  db::Statement s(db_, path_, sql.c_str());
  std::vector<CompileRecord> out;
  while (s.step()) {
    CompileRecord r;
    r.stencil_hash = s.text(0);
    r.profile = s.text(1);
    r.arch = s.text(2);
    r.dtype = s.text(3) == dtype_name(DType::Float) ? DType::Float : DType::Double;
    r.domain = {s.int64(4), s.int64(5), s.int64(6)};
    r.steps = s.int64(7);
    r.stencil_name = s.text(8);
    r.candidates = s.int32(9);
    r.compiled = s.int32(10);
    r.compile_errors = s.int32(11);
    r.spilled = s.int32(12);
    r.wall_s = s.real(13);
    r.tool_version = s.text(14);
    r.created_at = s.text(15);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace tbtune
