#pragma once
/// @file cache.hpp
/// The SQLite cache: devices, stencils, every trial, and the winner per key with its CUBIN.
/// Schema and key: README "Cache". Writes use WAL, a busy timeout and BEGIN IMMEDIATE, so
/// several processes on one node can share a file; a failed write leaves nothing half done.
#include <array>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "model/device_profile.hpp"
#include "tuner/record/search_record.hpp"
#include "tuner/record/trial.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

struct sqlite3;
namespace tbtune::db {
class Statement;
}

namespace tbtune {

/// The device a result belongs to. `fingerprint` is what keys are made of.
struct DeviceRecord {
  std::string name;              ///< e.g. "NVIDIA H100 80GB HBM3"
  int cc_major = 0, cc_minor = 0;
  int sm_count = 0;
  long memory_bytes = 0;
  int driver_version = 0;        ///< cudaDriverGetVersion, e.g. 13000
  int nvrtc_major = 0, nvrtc_minor = 0;
  /// "name|sm_XY|SMs|driver|nvrtc X.Y": changes when any of them changes.
  [[nodiscard]] std::string fingerprint() const;
};

/// What a winner is stored under.
struct WinnerKey {
  std::string stencil_hash;
  std::string device_fingerprint;
  DType dtype = DType::Double;
  std::array<long, 3> domain{1, 1, 1};
  int steps_class = 0;           ///< see steps_class()
};

/// Step counts in [2^k, 2^(k+1)) share class k: a kernel tuned for 1000 steps is the one to
/// use for 600 or 900 steps, and the CUBIN itself does not depend on the step count.
[[nodiscard]] int steps_class(long steps);

struct Winner {
  WinnerKey key;
  std::string stencil_name;
  long steps = 0;                ///< the step count it was tuned with
  Trial trial;                   ///< strategy, params, measured figures and the CUBIN
  std::string tool_version;
  std::string created_at;        ///< UTC, ISO 8601
};

/// One `tune()` call that got as far as choosing its candidates: what it searched, how much of
/// the space it covered, what it found and how long it took. `tbtune report` compares model
/// and exhaustive searches of one problem from these (docs/tuning.md, "Evidence").
struct TuneRecord {
  WinnerKey key;
  long steps = 0;                ///< the exact step count, as trials store it
  std::string stencil_name;
  std::string only_strategy;     ///< `--strategy`, then any `--param` values (empty: the whole space)
  SearchOptions search;          ///< mode, top, within, max_candidates as given
  double budget_s = 0;           ///< 0: none
  bool fresh = false;            ///< stored trials were ignored
  bool allow_spills = false;
  SpaceSize space;               ///< the ranked space and its feasible part, naive left out
  int selected = 0;              ///< candidates the search chose (naive left out)
  SearchTally tally;             ///< what became of them in this run
  std::string winner_strategy;   ///< the run's winner (empty: none)
  Params winner_params;
  double winner_gcells = 0;      ///< its GCells/s (median time)
  bool interrupted = false;      ///< stopped by SIGINT/SIGTERM
  bool out_of_budget = false;
  double wall_s = 0;             ///< the whole tune() call
  std::string tool_version;
  std::string created_at;        ///< UTC, ISO 8601; written by the cache
  /// Neither interrupted nor out of budget: every selected candidate has a trial.
  [[nodiscard]] bool complete() const { return !interrupted && !out_of_budget; }
};

/// One problem compiled ahead by `tbtune sweep --compile-only` on a node without a GPU: the
/// candidates a tune with the built-in `profile` would compile (the naive reference, the
/// search's selection and its stand-ins), whose CUBINs went to the folder of compiled CUBINs.
struct CompileRecord {
  std::string stencil_hash;
  std::string stencil_name;
  std::string profile;           ///< the built-in device profile the candidates were ranked with
  std::string arch;              ///< "sm_90"
  DType dtype = DType::Double;
  std::array<long, 3> domain{1, 1, 1};
  long steps = 0;
  int candidates = 0;            ///< compiled or found compiled, the naive reference included
  int compiled = 0;              ///< of those, compiled by this run (the rest were in the folder)
  int compile_errors = 0;        ///< rejected by NVRTC
  int spilled = 0;               ///< compiled with register spills (a tune prunes them)
  double wall_s = 0;
  std::string tool_version;
  std::string created_at;        ///< UTC, ISO 8601; written by the cache
};

class Cache {
 public:
  enum class Mode { ReadWrite, ReadOnly };
  /// Opens (and for ReadWrite creates, with parent folders, and migrates) the cache at `path`.
  /// Throws CacheError with the path and SQLite's message.
  Cache(const std::string& path, Mode mode);
  ~Cache();
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;

  /// $TBTUNE_DB, else $XDG_CACHE_HOME/tbtune/tbtune.db, else ~/.cache/tbtune/tbtune.db.
  [[nodiscard]] static std::string default_path();
  [[nodiscard]] const std::string& path() const { return path_; }
  [[nodiscard]] static int schema_version();

  void put_device(const DeviceRecord& device);
  void put_stencil(const Stencil& stencil, const std::string& spec_text);
  /// Stores one trial (any status). The CUBIN is not stored with trials, only with winners.
  void add_trial(const WinnerKey& key, long steps, const Trial& trial);
  /// Trials stored under `key`, oldest first.
  [[nodiscard]] std::vector<Trial> trials(const WinnerKey& key) const;
  /// The newest stored trial of `strategy` with `params` under `key` and exactly `steps` steps
  /// whose status is not `skipped` (pruning is cheap to redo, and its flags may have changed),
  /// or nullopt. A resumed tune reuses it instead of timing the candidate again.
  [[nodiscard]] std::optional<Trial> find_trial(const WinnerKey& key, long steps,
                                                const std::string& strategy,
                                                const Params& params) const;
  /// Replaces the winner for `winner.key`.
  void put_winner(const Winner& winner);
  [[nodiscard]] std::optional<Winner> winner(const WinnerKey& key) const;
  /// All winners (CUBIN left empty), newest first.
  [[nodiscard]] std::vector<Winner> winners() const;
  /// The winners of one stencil, newest stored first, for matching a lookup: key, steps and
  /// trial fields only; CUBIN, tool version and time left empty. Those three are stored last in
  /// a row, after the image, so leaving them out reads no image pages: a lookup lists the
  /// candidates without reading every stored CUBIN from disk.
  [[nodiscard]] std::vector<Winner> winners_of(const std::string& stencil_hash) const;

  /// Records one tune run (one row, one transaction). The device and stencil must be stored.
  void add_tune(const TuneRecord& record);
  /// Every recorded tune run, oldest first.
  [[nodiscard]] std::vector<TuneRecord> tunes() const;

  /// Stores (replacing any earlier one) the measured profile of the device with `fingerprint`
  /// (DeviceRecord::fingerprint()). The device need not be stored: a probe stands alone.
  void put_profile(const std::string& fingerprint, const DeviceProfile& profile);
  /// The profile stored for `fingerprint`, or nullopt; fields it lacks (stored by an older
  /// tbtune) take `base`'s values. Throws CacheError for a stored JSON text that does not read as
  /// a profile.
  [[nodiscard]] std::optional<DeviceProfile> profile(const std::string& fingerprint,
                                                     const DeviceProfile& base = {}) const;
  /// Records a problem compiled ahead (one row, one transaction), replacing the row of the same
  /// stencil, profile, arch, dtype, domain and steps. The stencil must be stored.
  void put_compile(const CompileRecord& record);
  /// Every problem compiled ahead, in the order recorded (a replaced row counts as new).
  [[nodiscard]] std::vector<CompileRecord> compiles() const;

  /// The spec text stored with stencil `hash` (empty if it was stored without one), or nullopt
  /// when no such stencil is stored.
  [[nodiscard]] std::optional<std::string> spec_text(const std::string& hash) const;

 private:
  friend class CacheReader;
  std::string path_;
  sqlite3* db_ = nullptr;
  bool immutable_ = false;  ///< read-only, opened `immutable=1` (db::read_only_uri)
};

/// The read side of an application's lookup (tuner/api): a read-only Cache whose two lookup
/// queries are prepared once, kept open by the process after the lookup for the next one on
/// the same file. A reader is used by one thread at a time: acquire() leases one, and the lease
/// gives it back to this process's pool when it ends.
///
/// A pooled reader is taken again only while that is as safe as opening anew:
/// - the path still names the very file it has open (device and inode; SQLite keeps the file
///   open, so its inode number cannot be reused meanwhile), in this process (not a fork's child:
///   SQLite connections do not survive fork());
/// - the file still holds this build's schema version (asked again on every lease);
/// - for a file opened `immutable=1` (read-only folder, no writer), the reasons it was still
///   hold (folder not writable, no -shm: no writer connected) and the file is unchanged since
///   (size, modification and change times, which were over a second old when it was opened,
///   so any later write shows as a new time).
/// Otherwise it is closed and a new one opened, with Cache(path, ReadOnly)'s checks and errors.
/// A fork() never leaves the child's pool locked: it waits while another thread is inside the
/// pool (a few vector operations, never an SQLite call), and the child starts with an empty pool
/// (its parent's connections are forgotten there, not closed), so its first lookup opens anew.
/// (SQLite's own mutexes are SQLite's: docs/api.md, "fork() and lookups".)
/// A WAL reader sees every commit made since, as any long-lived SQLite connection does.
class CacheReader {
 public:
  struct GiveBack {
    void operator()(CacheReader* reader) const;
  };
  using Lease = std::unique_ptr<CacheReader, GiveBack>;

  /// A reader of `path`: a pooled one (see above) or a new one. Throws CacheError as
  /// Cache(path, Mode::ReadOnly) does.
  [[nodiscard]] static Lease acquire(const std::string& path);
  /// Closes the pooled readers not leased now, so that the next lookup of each file is a
  /// process's first again (tests and benchmarks; the process's exit does the same).
  static void close_idle();
  /// Tests only: holds the pool's lock, as acquire() and a lease's end do for a moment, while
  /// the returned lock lives (e.g. to fork() while another thread is inside the pool).
  [[nodiscard]] static std::unique_lock<std::mutex> hold_pool();

  /// The open cache, for other reads (a fallback's stored profile).
  [[nodiscard]] const Cache& cache() const { return cache_; }
  /// Whether this lease took an open connection from the pool rather than opening one.
  [[nodiscard]] bool reused() const { return reused_; }

  /// As Cache::winners_of() and Cache::winner(), with statements prepared once.
  [[nodiscard]] std::vector<Winner> winners_of(const std::string& stencil_hash);
  [[nodiscard]] std::optional<Winner> winner(const WinnerKey& key);

  ~CacheReader();
  CacheReader(const CacheReader&) = delete;
  CacheReader& operator=(const CacheReader&) = delete;

 private:
  struct Impl;
  explicit CacheReader(const std::string& path);
  /// For a pooled reader: whether it may serve a lookup again (see above).
  [[nodiscard]] bool still_good();
  std::unique_ptr<Impl> impl_;  ///< before cache_: it stamps the file before the open
  Cache cache_;
  bool reused_ = false;
  template <class Read>
  auto query(db::Statement& s, Read read);
  bool broken_ = false;  ///< a query threw: not pooled again
};

}  // namespace tbtune
