#include "db/cache.hpp"

#include <pthread.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bit>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <memory>
#include <mutex>
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

/// Cache::winner()'s query: one key, with the CUBIN.
std::string winner_sql() {
  return fmt::format("SELECT {}, cubin FROM winners WHERE {}", winner_columns(), db::kKeyWhere);
}

std::optional<Winner> find_winner(Statement& s, const std::string& path, const WinnerKey& key) {
  db::bind_key(s, key);
  if (!s.step()) return std::nullopt;
  return read_winner(s, path, true);
}

/// Cache::winners_of()'s query. Only columns stored before `cubin`: SQLite then stops reading a
/// row before the image's overflow pages. rowid order is storing order (put_winner replaces with
/// a new rowid).
std::string winners_of_sql() {
  return fmt::format(
      "SELECT {}, stencil_name, steps, {} FROM winners WHERE stencil_hash = ? ORDER BY rowid DESC",
      db::kKeyColumns, db::kTrialColumns);
}

std::vector<Winner> list_winners(Statement& s, const std::string& path, const std::string& stencil_hash) {
  s.bind(stencil_hash);
  std::vector<Winner> out;
  while (s.step()) {
    Winner w;
    w.key = db::read_key(s, 0, path);
    w.stencil_name = s.text(db::kKeyCount);
    w.steps = s.int64(db::kKeyCount + 1);
    w.trial = db::read_trial(s, db::kKeyCount + 2, path);
    out.push_back(std::move(w));
  }
  return out;
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
  if (mode == Mode::ReadOnly) {
    immutable_ = name.find("&immutable=1") != std::string::npos;
    // A reader asks its one question in one statement when the answer is "current"; anything
    // else goes through the full checks below, which say what is wrong. It sets no foreign_keys:
    // they act on writes only.
    if (db::is_current(db.get())) {
      db_ = db.release();
      return;
    }
  }
  db::probe(db.get(), path_);
  // Refuse a newer file before writing anything to it, even the journal mode.
  const int version = db::check_version(db.get(), path_);
  if (mode == Mode::ReadOnly) {
    if (version == 0)
      throw CacheError(fmt::format("cache '{}' is empty (no tbtune tables)", path_), SQLITE_EMPTY);
    if (version < db::kSchemaVersion)
      throw CacheError(fmt::format("cache '{}' has schema version {}, older than this tbtune ({}): "
                                   "open it read-write once to migrate it",
                                   path_, version, db::kSchemaVersion),
                       SQLITE_MISMATCH);
  } else {
    db::exec(db.get(), path_, "PRAGMA foreign_keys = ON");
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
  Statement s(db_, path_, winner_sql().c_str());
  return find_winner(s, path_, key);
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
  Statement s(db_, path_, winners_of_sql().c_str());
  return list_winners(s, path_, stencil_hash);
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

std::optional<DeviceProfile> Cache::profile(const std::string& fingerprint, const DeviceProfile& base) const {
  Statement s(db_, path_, "SELECT json FROM profiles WHERE device_fingerprint = ?");
  s.bind(fingerprint);
  if (!s.step()) return std::nullopt;
  const std::string text = s.text(0);
  try {
    return profile_from_json(nlohmann::json::parse(text), base);
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

// ---- CacheReader: lookups' pooled read-only connections --------------------------------------

namespace {

/// What says whether a path still names the file a reader has open, and whether it changed.
struct FileStamp {
  dev_t dev = 0;
  ino_t ino = 0;
  off_t size = 0;
  timespec mtime{}, ctime{};
};

std::optional<FileStamp> stamp_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return std::nullopt;
  return FileStamp{st.st_dev, st.st_ino, st.st_size, st.st_mtim, st.st_ctim};
}

bool same_file(const FileStamp& a, const FileStamp& b) { return a.dev == b.dev && a.ino == b.ino; }

bool same_time(const timespec& a, const timespec& b) {
  return a.tv_sec == b.tv_sec && a.tv_nsec == b.tv_nsec;
}

bool unchanged(const FileStamp& a, const FileStamp& b) {
  return same_file(a, b) && a.size == b.size && same_time(a.mtime, b.mtime) &&
         same_time(a.ctime, b.ctime);
}

/// At most this many idle readers per path and in all: an application looks up a few kernels,
/// usually from one thread, in one or two cache files.
constexpr std::size_t kIdlePerPath = 2;
constexpr std::size_t kIdleInAll = 8;

struct Pool {
  std::mutex mutex;
  std::vector<std::unique_ptr<CacheReader>> idle;  ///< oldest first
  bool fork_safe = false;  ///< the fork handlers below are registered; else nothing is pooled
};

/// Set once, by pool(), before the fork handlers are registered; they use it rather than pool(),
/// whose first call might be under way in another thread when a process forks.
Pool* g_pool = nullptr;

/// fork() safety. A fork copies only the calling thread: had another thread held the pool's
/// mutex at that moment, the child's copy would stay locked forever and its first lookup would
/// hang. So fork() waits for the mutex (prepare) and both sides release it; the child, which
/// must not use its parent's connections (SQLite connections do not survive fork(): their POSIX
/// locks stay with the parent), starts with an empty pool. Its parent's readers are forgotten,
/// not closed: closing one could act on the parent's locks, -wal and -shm from stale
/// bookkeeping. That leaks a few KB per pooled reader in the child, once. The handlers allocate
/// and free nothing. A lease out at the fork is the forking thread's (other threads do not exist
/// in the child) and is dropped unclosed when it ends there (Impl::pid). The pool's lock is only
/// held for a few vector operations and never around SQLite calls, so prepare waits at most
/// that long.
void lock_pool_for_fork() { g_pool->mutex.lock(); }
void unlock_pool_in_parent() { g_pool->mutex.unlock(); }
void reset_pool_in_child() {
  // The forking thread took the lock in prepare, and it is the child's only thread: unlocking
  // is that owner's unlock.
  for (auto& r : g_pool->idle) (void)r.release();
  g_pool->idle.clear();  // destroys empty pointers only; the buffer is kept
  g_pool->mutex.unlock();
}

/// Never destroyed: a lease may end during the process's exit, after static destructors ran.
/// The OS closes the idle connections at exit; a read-only connection has nothing to write.
Pool& pool() {
  static Pool* const p = [] {
    auto* q = new Pool;
    g_pool = q;
    // Fails only for lack of memory; then lookups work unpooled (open anew each time).
    q->fork_safe =
        ::pthread_atfork(lock_pool_for_fork, unlock_pool_in_parent, reset_pool_in_child) == 0;
    return q;
  }();
  return *p;
}

/// Made while the program starts, before it has threads: a fork while another thread is inside
/// pool()'s first call would leave the child waiting on that call's static-init guard.
[[maybe_unused]] const Pool& g_pool_at_start = pool();

}  // namespace

struct CacheReader::Impl {
  pid_t pid = ::getpid();
  std::optional<FileStamp> before;  ///< the file just before it was opened
  FileStamp stamp;                  ///< the file when it was opened (poolable only)
  bool poolable = false;            ///< see CacheReader::CacheReader
  /// Prepared once, in the constructor's body; finalized in the destructor's, before closing.
  std::optional<Statement> version, list, one;
  explicit Impl(const std::string& path) : before(stamp_of(path)) {}
};

namespace {

/// Resets `s` when the scope ends, so no statement keeps a read transaction (and its snapshot,
/// and the WAL frames it pins) open between lookups.
struct ResetAfter {
  Statement& s;
  ~ResetAfter() { s.reset(); }
};

}  // namespace

CacheReader::CacheReader(const std::string& path)
    : impl_(std::make_unique<Impl>(path)),
      cache_(path, Cache::Mode::ReadOnly) {
  sqlite3* db = cache_.db_;
  impl_->version.emplace(db, path, db::kCurrentVersionSql, true);
  impl_->list.emplace(db, path, winners_of_sql().c_str(), true);
  impl_->one.emplace(db, path, winner_sql().c_str(), true);
  // Pooled only when the path named the same, unchanged file just before the open and now:
  // then the connection has the file the stamp describes. (Cache's constructor has read the
  // schema already, so for an immutable file "unchanged since the stamp" covers every page read.)
  const auto after = stamp_of(path);
  if (!impl_->before || !after || !unchanged(*impl_->before, *after)) return;
  impl_->stamp = *after;
  impl_->poolable = true;
  if (cache_.immutable_) {
    // A write in the same clock tick as the stamp could leave the times as they were; a file
    // last written over a second ago cannot be written again without a newer time.
    timespec now{};
    ::clock_gettime(CLOCK_REALTIME, &now);
    impl_->poolable = now.tv_sec - after->mtime.tv_sec > 1 && now.tv_sec - after->ctime.tv_sec > 1;
  }
}

CacheReader::~CacheReader() {
  impl_->one.reset();
  impl_->list.reset();
  impl_->version.reset();
}

CacheReader::Lease CacheReader::acquire(const std::string& path) {
  Pool& p = pool();
  if (!p.fork_safe) return Lease(new CacheReader(path));
  std::unique_ptr<CacheReader> found;
  {
    const std::lock_guard<std::mutex> lock(p.mutex);
    for (auto it = p.idle.rbegin(); it != p.idle.rend(); ++it) {
      if ((*it)->cache_.path_ != path) continue;
      found = std::move(*it);
      p.idle.erase(std::next(it).base());
      break;
    }
  }
  if (found) {
    if (found->impl_->pid != ::getpid()) {
      // Made by the parent of this forked process (the fork handlers empty a child's pool, so
      // this is a second line of defence): its locks are the parent's. Left unclosed, as
      // closing it here could touch state the parent still uses.
      (void)found.release();
    } else if (found->still_good()) {
      found->reused_ = true;
      return Lease(found.release());
    }
    found.reset();
  }
  return Lease(new CacheReader(path));
}

bool CacheReader::still_good() {
  const std::string& path = cache_.path_;
  const auto now = stamp_of(path);
  if (!now || !same_file(*now, impl_->stamp)) return false;
  if (cache_.immutable_) {
    // Opened without locks or -shm, on the word that no writer could be connected: that word
    // must still hold, and the file must not have changed since.
    if (!unchanged(*now, impl_->stamp)) return false;
    if (db::read_only_uri(path).find("&immutable=1") == std::string::npos) return false;
  }
  try {
    Statement& v = *impl_->version;
    const ResetAfter reset{v};
    return v.step() && v.int64(0) == db::kSchemaVersion;
  } catch (const CacheError&) {
    return false;  // a new connection's open says what is wrong
  }
}

void CacheReader::GiveBack::operator()(CacheReader* reader) const {
  std::unique_ptr<CacheReader> r(reader);
  if (r->impl_->pid != ::getpid()) {
    (void)r.release();  // a forked child's copy of its parent's connection: see acquire()
    return;
  }
  if (r->broken_ || !r->impl_->poolable || !pool().fork_safe) return;
  r->reused_ = false;
  std::vector<std::unique_ptr<CacheReader>> closing;  // closed after the lock is released
  {
    Pool& p = pool();
    const std::lock_guard<std::mutex> lock(p.mutex);
    const std::string path = r->cache_.path_;
    p.idle.push_back(std::move(r));
    std::size_t same = 0;
    for (auto it = p.idle.rbegin(); it != p.idle.rend();) {
      if ((*it)->cache_.path_ == path && ++same > kIdlePerPath) {
        closing.push_back(std::move(*it));
        it = decltype(it)(p.idle.erase(std::next(it).base()));
      } else {
        ++it;
      }
    }
    while (p.idle.size() > kIdleInAll) {
      closing.push_back(std::move(p.idle.front()));
      p.idle.erase(p.idle.begin());
    }
  }
}

std::unique_lock<std::mutex> CacheReader::hold_pool() { return std::unique_lock(pool().mutex); }

void CacheReader::close_idle() {
  std::vector<std::unique_ptr<CacheReader>> closing;
  {
    Pool& p = pool();
    const std::lock_guard<std::mutex> lock(p.mutex);
    closing.swap(p.idle);
  }
  for (auto& r : closing)
    if (r->impl_->pid != ::getpid()) (void)r.release();
}

// Runs `read` on the prepared statement `s`, reset afterwards; a reader whose query threw is
// not pooled again.
template <class Read>
auto CacheReader::query(Statement& s, Read read) {
  try {
    const ResetAfter reset{s};
    return read(s);
  } catch (...) {
    broken_ = true;
    throw;
  }
}

std::vector<Winner> CacheReader::winners_of(const std::string& stencil_hash) {
  return query(*impl_->list, [&](Statement& s) { return list_winners(s, cache_.path_, stencil_hash); });
}

std::optional<Winner> CacheReader::winner(const WinnerKey& key) {
  return query(*impl_->one, [&](Statement& s) { return find_winner(s, cache_.path_, key); });
}

}  // namespace tbtune
