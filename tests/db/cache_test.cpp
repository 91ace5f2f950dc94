// Tests for db/cache: schema creation and versioning, round trips of every stored field,
// read-only and foreign files, default paths, and two writers on one file.
#include "db/cache.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>
#include <utility>

#include <gtest/gtest.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

/// A fresh folder per test, removed afterwards; the pid keeps parallel ctest runs apart.
class CacheTest : public ::testing::Test {
 protected:
  void SetUp() override {
    static std::atomic<int> counter{0};
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() / ("tbtune_cache_test_" + std::to_string(getpid()) + "_" +
                                        info->name() + "_" + std::to_string(counter++));
    fs::remove_all(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  [[nodiscard]] std::string db_path() const {
    return (dir_ / "sub" / "dir" / "tbtune.db").string();
  }
  fs::path dir_;
};

/// Runs one SQL query on the file behind the cache's back; returns the first column of the
/// first row as text ("" for no row).
std::string query(const std::string& path, const std::string& sql,
                  int flags = SQLITE_OPEN_READWRITE) {
  sqlite3* db = nullptr;
  EXPECT_EQ(sqlite3_open_v2(path.c_str(), &db, flags, nullptr), SQLITE_OK);
  sqlite3_stmt* st = nullptr;
  EXPECT_EQ(sqlite3_prepare_v2(db, sql.c_str(), -1, &st, nullptr), SQLITE_OK) << sqlite3_errmsg(db);
  std::string out;
  const int rc = sqlite3_step(st);
  EXPECT_TRUE(rc == SQLITE_ROW || rc == SQLITE_DONE) << sqlite3_errmsg(db);
  if (rc == SQLITE_ROW && sqlite3_column_text(st, 0))
    out = reinterpret_cast<const char*>(sqlite3_column_text(st, 0));
  sqlite3_finalize(st);
  sqlite3_close(db);
  return out;
}

DeviceRecord device() {
  DeviceRecord d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.memory_bytes = 85'000'000'000L;
  d.driver_version = 13000;
  d.nvrtc_major = 13;
  d.nvrtc_minor = 0;
  return d;
}

Stencil stencil() {
  Stencil s;
  s.name = "heat2d";
  s.dims = 2;
  s.canonical = "0.25*(u[-1,0]+u[1,0]+u[0,-1]+u[0,1])";
  s.hash = "0123456789abcdef";
  return s;
}

WinnerKey key(int steps_cls = 9) {
  return WinnerKey{
      stencil().hash, device().fingerprint(), DType::Float, {4098, 4098, 1}, steps_cls};
}

/// A trial with every field set to something other than its default.
Trial full_trial() {
  Trial t;
  t.strategy = "cmq2d";
  t.params = {{"bx", 32}, {"by", 8}, {"depth", 4}, {"neg", -3}};
  t.predicted.P_gcells = 812.5;
  t.predicted.V = 0.875;
  t.predicted.PP_gcells = 710.9375;
  t.predicted.bottleneck = Bottleneck::SharedMemory;
  t.predicted.fits = false;
  t.status = TrialStatus::Ok;
  t.message = "a message, with commas = and 'quotes'";
  t.gcells_median = 701.25;
  t.gcells_best = 733.0625;
  t.seconds_median = 0.1234567890123;
  t.repetitions = 7;
  t.max_rel_error = 1.5e-13;
  t.registers = 96;
  t.spill_bytes = 16;
  t.smem_bytes = 49152;
  return t;
}

void expect_same(const Trial& a, const Trial& b) {
  EXPECT_EQ(a.strategy, b.strategy);
  EXPECT_EQ(a.params, b.params);
  EXPECT_EQ(a.predicted.P_gcells, b.predicted.P_gcells);
  EXPECT_EQ(a.predicted.V, b.predicted.V);
  EXPECT_EQ(a.predicted.PP_gcells, b.predicted.PP_gcells);
  EXPECT_EQ(a.predicted.bottleneck, b.predicted.bottleneck);
  EXPECT_EQ(a.predicted.fits, b.predicted.fits);
  EXPECT_EQ(a.status, b.status);
  EXPECT_EQ(a.gcells_median, b.gcells_median);
  EXPECT_EQ(a.gcells_best, b.gcells_best);
  EXPECT_EQ(a.seconds_median, b.seconds_median);
  EXPECT_EQ(a.repetitions, b.repetitions);
  EXPECT_EQ(a.max_rel_error, b.max_rel_error);
  EXPECT_EQ(a.registers, b.registers);
  EXPECT_EQ(a.spill_bytes, b.spill_bytes);
  EXPECT_EQ(a.smem_bytes, b.smem_bytes);
}

/// Stores the device and stencil that the foreign keys of trials and winners need.
void seed(Cache& c) {
  c.put_device(device());
  c.put_stencil(stencil(), "name: heat2d\n");
}

Winner winner_with(const std::string& strategy, const std::string& created_at, int steps_cls = 9) {
  Winner w;
  w.key = key(steps_cls);
  w.stencil_name = "heat2d";
  w.steps = 1000;
  w.trial = full_trial();
  w.trial.strategy = strategy;
  const char elf[] = {'\x7f', 'E', 'L', 'F', '\0', '\0', '\x01', '\xff'};
  w.trial.cubin = std::string(elf, sizeof elf) + std::string(1000, '\0') + "end";
  w.tool_version = "0.1.0";
  w.created_at = created_at;
  return w;
}

/// A tune record with every field set to something other than its default.
TuneRecord full_tune() {
  TuneRecord r;
  r.key = key();
  r.steps = 1000;
  r.stencil_name = "heat2d";
  r.only_strategy = "cmq2d";
  r.search.mode = SearchMode::Exhaustive;
  r.search.top = 12;
  r.search.within = 0.025;
  r.search.max_candidates = 64;
  r.budget_s = 480.5;
  r.fresh = true;
  r.allow_spills = true;
  r.space = {465, 358};
  r.selected = 358;
  r.tally = {200, 40, 7, 3, 108};
  r.winner_strategy = "cmq2d";
  r.winner_params = {{"bps", 2}, {"t", 8}, {"tile_x", 256}};
  r.winner_gcells = 1234.5678;
  r.interrupted = true;
  r.out_of_budget = true;
  r.wall_s = 412.25;
  r.tool_version = "0.1.0";
  return r;
}

void expect_same(const TuneRecord& a, const TuneRecord& b) {
  EXPECT_EQ(a.key.stencil_hash, b.key.stencil_hash);
  EXPECT_EQ(a.key.device_fingerprint, b.key.device_fingerprint);
  EXPECT_EQ(a.key.dtype, b.key.dtype);
  EXPECT_EQ(a.key.domain, b.key.domain);
  EXPECT_EQ(a.key.steps_class, b.key.steps_class);
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.stencil_name, b.stencil_name);
  EXPECT_EQ(a.only_strategy, b.only_strategy);
  EXPECT_EQ(a.search.mode, b.search.mode);
  EXPECT_EQ(a.search.top, b.search.top);
  EXPECT_EQ(a.search.within, b.search.within);
  EXPECT_EQ(a.search.max_candidates, b.search.max_candidates);
  EXPECT_EQ(a.budget_s, b.budget_s);
  EXPECT_EQ(a.fresh, b.fresh);
  EXPECT_EQ(a.allow_spills, b.allow_spills);
  EXPECT_EQ(a.space.candidates, b.space.candidates);
  EXPECT_EQ(a.space.feasible, b.space.feasible);
  EXPECT_EQ(a.selected, b.selected);
  EXPECT_EQ(a.tally.timed, b.tally.timed);
  EXPECT_EQ(a.tally.reused, b.tally.reused);
  EXPECT_EQ(a.tally.pruned, b.tally.pruned);
  EXPECT_EQ(a.tally.compile_errors, b.tally.compile_errors);
  EXPECT_EQ(a.tally.not_run, b.tally.not_run);
  EXPECT_EQ(a.winner_strategy, b.winner_strategy);
  EXPECT_EQ(a.winner_params, b.winner_params);
  EXPECT_EQ(a.winner_gcells, b.winner_gcells);
  EXPECT_EQ(a.interrupted, b.interrupted);
  EXPECT_EQ(a.out_of_budget, b.out_of_budget);
  EXPECT_EQ(a.wall_s, b.wall_s);
  EXPECT_EQ(a.tool_version, b.tool_version);
}

/// Expects `f` to throw CacheError whose message contains `needle`.
template <class F>
void expect_cache_error(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "no CacheError (expected one mentioning \"" << needle << "\")";
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(StepsClass, PowersOfTwo) {
  EXPECT_EQ(steps_class(0), 0);
  EXPECT_EQ(steps_class(1), 0);
  EXPECT_EQ(steps_class(2), 1);
  EXPECT_EQ(steps_class(3), 1);
  EXPECT_EQ(steps_class(4), 2);
  EXPECT_EQ(steps_class(600), 9);
  EXPECT_EQ(steps_class(1000), 9);
  EXPECT_EQ(steps_class(1023), 9);
  EXPECT_EQ(steps_class(1024), 10);
  EXPECT_EQ(steps_class(1L << 40), 40);
}

TEST(DeviceRecord, Fingerprint) {
  EXPECT_EQ(device().fingerprint(), "NVIDIA H100 80GB HBM3|sm_90|132SM|driver 13000|nvrtc 13.0");
  DeviceRecord d = device();
  d.driver_version = 13010;
  EXPECT_NE(d.fingerprint(), device().fingerprint());
}

TEST_F(CacheTest, CreatesFoldersAndReopens) {
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);
    EXPECT_EQ(c.path(), db_path());
    seed(c);
  }
  EXPECT_TRUE(fs::exists(db_path()));
  EXPECT_EQ(query(db_path(), "PRAGMA journal_mode"), "wal");
  Cache rw(db_path(), Cache::Mode::ReadWrite);
  const Cache ro(db_path(), Cache::Mode::ReadOnly);
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM devices"), "1");
}

TEST_F(CacheTest, SchemaVersion) {
  EXPECT_EQ(Cache::schema_version(), 4);
  { Cache c(db_path(), Cache::Mode::ReadWrite); }
  EXPECT_EQ(query(db_path(), "SELECT version FROM schema_version"), "4");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM schema_version"), "1");
  { Cache c(db_path(), Cache::Mode::ReadWrite); }  // reopening does not add a row
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM schema_version"), "1");
}

TEST_F(CacheTest, PutDeviceAndStencilAreIdempotent) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  c.put_device(device());
  const std::string first_seen = query(db_path(), "SELECT first_seen FROM devices");
  c.put_device(device());
  c.put_stencil(stencil(), "v1");
  c.put_stencil(stencil(), "v2");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM devices"), "1");
  EXPECT_EQ(query(db_path(), "SELECT first_seen FROM devices"), first_seen);
  EXPECT_EQ(query(db_path(), "SELECT sm_count FROM devices"), "132");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM stencils"), "1");
  EXPECT_EQ(query(db_path(), "SELECT spec_text FROM stencils"), "v2");
}

TEST_F(CacheTest, TrialsRoundTripInOrder) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  Trial ok = full_trial();
  ok.cubin = "not stored with trials";
  Trial failed;
  failed.strategy = "naive";
  failed.status = TrialStatus::CompileError;
  failed.message = "error: identifier \"x\" is undefined";
  failed.predicted.bottleneck = Bottleneck::Compute;
  c.add_trial(key(), 1000, ok);
  c.add_trial(key(), 1000, failed);
  c.add_trial(key(3), 8, ok);  // another key

  const auto got = c.trials(key());
  ASSERT_EQ(got.size(), 2u);
  expect_same(got[0], ok);
  EXPECT_EQ(got[0].message, ok.message);
  EXPECT_TRUE(got[0].cubin.empty());
  expect_same(got[1], failed);
  EXPECT_EQ(got[1].message, failed.message);
  EXPECT_TRUE(got[1].params.empty());
  EXPECT_EQ(query(db_path(), "SELECT params FROM trials ORDER BY id"), "bx=32,by=8,depth=4,neg=-3");
  EXPECT_EQ(query(db_path(), "SELECT status FROM trials WHERE id = 2"), "compile_error");
  EXPECT_EQ(c.trials(key(3)).size(), 1u);
  EXPECT_TRUE(c.trials(key(4)).empty());
}

TEST_F(CacheTest, FindTrialMatchesWholeKeyStepsStrategyAndParams) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  const Trial ok = full_trial();
  EXPECT_FALSE(c.find_trial(key(), 1000, ok.strategy, ok.params).has_value());
  c.add_trial(key(), 1000, ok);
  const auto got = c.find_trial(key(), 1000, ok.strategy, ok.params);
  ASSERT_TRUE(got.has_value());
  expect_same(*got, ok);
  EXPECT_EQ(got->message, ok.message);
  // Any part of the key differing is a miss.
  EXPECT_FALSE(c.find_trial(key(), 999, ok.strategy, ok.params).has_value());
  EXPECT_FALSE(c.find_trial(key(3), 1000, ok.strategy, ok.params).has_value());
  EXPECT_FALSE(c.find_trial(key(), 1000, "stream", ok.params).has_value());
  Params other = ok.params;
  other["bx"] = 64;
  EXPECT_FALSE(c.find_trial(key(), 1000, ok.strategy, other).has_value());
  WinnerKey double_key = key();
  double_key.dtype = DType::Double;
  EXPECT_FALSE(c.find_trial(double_key, 1000, ok.strategy, ok.params).has_value());
}

TEST_F(CacheTest, FindTrialTakesNewestAndIgnoresSkipped) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  Trial first = full_trial();
  first.status = TrialStatus::Timeout;
  Trial second = full_trial();
  second.gcells_median = 999;
  Trial skipped = full_trial();
  skipped.status = TrialStatus::Skipped;
  c.add_trial(key(), 1000, first);
  c.add_trial(key(), 1000, second);
  c.add_trial(key(), 1000, skipped);
  const auto got = c.find_trial(key(), 1000, first.strategy, first.params);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->status, TrialStatus::Ok);
  EXPECT_EQ(got->gcells_median, 999);

  Trial only_skipped = full_trial();
  only_skipped.strategy = "stream";
  only_skipped.status = TrialStatus::Skipped;
  c.add_trial(key(), 1000, only_skipped);
  EXPECT_FALSE(c.find_trial(key(), 1000, "stream", only_skipped.params).has_value());
}

TEST_F(CacheTest, WinnerRoundTripWithBinaryCubin) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  const Winner w = winner_with("cmq2d", "2025-01-02T03:04:05Z");
  ASSERT_EQ(w.trial.cubin.size(), 1011u);
  c.put_winner(w);
  const auto got = c.winner(w.key);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->key.stencil_hash, w.key.stencil_hash);
  EXPECT_EQ(got->key.device_fingerprint, w.key.device_fingerprint);
  EXPECT_EQ(got->key.dtype, w.key.dtype);
  EXPECT_EQ(got->key.domain, w.key.domain);
  EXPECT_EQ(got->key.steps_class, w.key.steps_class);
  EXPECT_EQ(got->stencil_name, w.stencil_name);
  EXPECT_EQ(got->steps, w.steps);
  EXPECT_EQ(got->tool_version, w.tool_version);
  EXPECT_EQ(got->created_at, w.created_at);
  expect_same(got->trial, w.trial);
  EXPECT_EQ(got->trial.cubin, w.trial.cubin);  // NUL bytes and all

  // Read back through a read-only handle too: that is how lookups see it.
  const Cache ro(db_path(), Cache::Mode::ReadOnly);
  const auto again = ro.winner(w.key);
  ASSERT_TRUE(again);
  EXPECT_EQ(again->trial.cubin, w.trial.cubin);
}

TEST_F(CacheTest, PutWinnerReplaces) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  c.put_winner(winner_with("stream", "2025-01-01T00:00:00Z"));
  Winner better = winner_with("tile3d", "2025-01-02T00:00:00Z");
  better.trial.cubin = "short";
  c.put_winner(better);
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM winners"), "1");
  const auto got = c.winner(key());
  ASSERT_TRUE(got);
  EXPECT_EQ(got->trial.strategy, "tile3d");
  EXPECT_EQ(got->trial.cubin, "short");
}

TEST_F(CacheTest, WinnersNewestFirstWithoutCubin) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  c.put_winner(winner_with("new", "2025-06-01T00:00:00Z", 5));
  c.put_winner(winner_with("old", "2024-06-01T00:00:00Z", 6));
  c.put_winner(winner_with("now", "", 7));  // empty: stamped by the cache
  const auto all = c.winners();
  ASSERT_EQ(all.size(), 3u);
  EXPECT_EQ(all[0].trial.strategy, "now");
  EXPECT_EQ(all[0].created_at.size(), 20u) << all[0].created_at;  // 2025-01-02T03:04:05Z
  EXPECT_EQ(all[1].trial.strategy, "new");
  EXPECT_EQ(all[2].trial.strategy, "old");
  for (const auto& w : all) EXPECT_TRUE(w.trial.cubin.empty());
  EXPECT_EQ(all[2].key.steps_class, 6);
}

TEST_F(CacheTest, WinnersOfOneStencilForMatching) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  Stencil other = stencil();
  other.hash = "fedcba9876543210";
  c.put_stencil(other, "name: other\n");
  c.put_winner(winner_with("first", "2025-06-01T00:00:00Z", 5));
  Winner elsewhere = winner_with("other stencil", "2025-06-02T00:00:00Z", 6);
  elsewhere.key.stencil_hash = other.hash;
  c.put_winner(elsewhere);
  // Stored later with an older time: storing order decides, as a replaced winner gets a new row.
  c.put_winner(winner_with("second", "2024-01-01T00:00:00Z", 7));

  const Cache ro(db_path(), Cache::Mode::ReadOnly);
  const auto mine = ro.winners_of(stencil().hash);
  ASSERT_EQ(mine.size(), 2u);
  EXPECT_EQ(mine[0].trial.strategy, "second");
  EXPECT_EQ(mine[1].trial.strategy, "first");
  for (const auto& [got, want] : {std::pair{mine[0].key, key(7)}, std::pair{mine[1].key, key(5)}}) {
    EXPECT_EQ(got.stencil_hash, want.stencil_hash);
    EXPECT_EQ(got.device_fingerprint, want.device_fingerprint);
    EXPECT_EQ(got.dtype, want.dtype);
    EXPECT_EQ(got.domain, want.domain);
    EXPECT_EQ(got.steps_class, want.steps_class);
  }
  EXPECT_EQ(mine[1].stencil_name, "heat2d");
  EXPECT_EQ(mine[1].steps, 1000);
  Trial expected = full_trial();
  expected.strategy = "first";
  expect_same(mine[1].trial, expected);
  for (const auto& w : mine) {
    EXPECT_TRUE(w.trial.cubin.empty());
    EXPECT_TRUE(w.tool_version.empty());
    EXPECT_TRUE(w.created_at.empty());
  }
  ASSERT_EQ(ro.winners_of(other.hash).size(), 1u);
  EXPECT_TRUE(ro.winners_of("0000000000000000").empty());
}

TEST_F(CacheTest, MissReturnsNullopt) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  EXPECT_FALSE(c.winner(key()));
  seed(c);
  c.put_winner(winner_with("cmq2d", ""));
  WinnerKey other = key();
  other.dtype = DType::Double;
  EXPECT_FALSE(c.winner(other));
  other = key();
  other.domain[1] = 4097;
  EXPECT_FALSE(c.winner(other));
  EXPECT_TRUE(c.winner(key()));
}

TEST_F(CacheTest, FailedWriteLeavesNothing) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  // No device or stencil stored: the foreign keys reject the row and the transaction is
  // rolled back, so the cache stays usable.
  EXPECT_THROW(c.add_trial(key(), 1000, full_trial()), CacheError);
  EXPECT_THROW(c.put_winner(winner_with("cmq2d", "")), CacheError);
  EXPECT_THROW(c.add_tune(full_tune()), CacheError);
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM trials"), "0");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM tunes"), "0");
  seed(c);
  c.add_trial(key(), 1000, full_trial());
  EXPECT_EQ(c.trials(key()).size(), 1u);
}

TEST_F(CacheTest, ReadOnlyMissingFileThrows) {
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadOnly); },
                     "no cache at '" + db_path() + "'");
  EXPECT_FALSE(fs::exists(db_path()));  // and nothing was created
}

TEST_F(CacheTest, ReadOnlyRefusesWrites) {
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);
    seed(c);
  }
  Cache ro(db_path(), Cache::Mode::ReadOnly);
  expect_cache_error([&] { ro.put_device(device()); }, "read-only");
  expect_cache_error([&] { ro.put_stencil(stencil(), ""); }, "read-only");
  expect_cache_error([&] { ro.add_trial(key(), 1, full_trial()); }, "read-only");
  expect_cache_error([&] { ro.put_winner(winner_with("x", "")); }, "read-only");
  expect_cache_error([&] { ro.add_tune(full_tune()); }, "read-only");
  EXPECT_TRUE(ro.trials(key()).empty());
  EXPECT_TRUE(ro.winners().empty());
}

TEST_F(CacheTest, GarbageFileThrows) {
  fs::create_directories(fs::path(db_path()).parent_path());
  const std::string garbage(4096, 'x');
  { std::ofstream(db_path(), std::ios::binary) << garbage; }
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadWrite); }, "not an SQLite database");
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadOnly); }, "not an SQLite database");
  EXPECT_EQ(fs::file_size(db_path()), garbage.size());  // left untouched
}

TEST_F(CacheTest, ForeignDatabaseThrows) {
  fs::create_directories(fs::path(db_path()).parent_path());
  query(db_path(), "CREATE TABLE other (x)", SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE);
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadWrite); }, "not a tbtune cache");
}

TEST_F(CacheTest, NewerSchemaThrows) {
  { Cache c(db_path(), Cache::Mode::ReadWrite); }
  query(db_path(), "UPDATE schema_version SET version = 99");
  const std::string msg =
      "cache '" + db_path() + "' has schema version 99, newer than this tbtune (4): upgrade tbtune";
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadWrite); }, msg);
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadOnly); }, msg);
  EXPECT_EQ(query(db_path(), "SELECT version FROM schema_version"), "99");
}

/// Sets or unsets environment variables for one scope and puts them back afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value)
      setenv(name, value, 1);
    else
      unsetenv(name);
  }
  ~ScopedEnv() {
    if (old_)
      setenv(name_, old_->c_str(), 1);
    else
      unsetenv(name_);
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DefaultPath, FollowsEnvironment) {
  {
    ScopedEnv db("TBTUNE_DB", "/tmp/x/my.db");
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(Cache::default_path(), "/tmp/x/my.db");
  }
  {
    ScopedEnv db("TBTUNE_DB", "");  // empty counts as unset
    ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
    EXPECT_EQ(Cache::default_path(), "/xdg/tbtune/tbtune.db");
  }
  {
    ScopedEnv db("TBTUNE_DB", nullptr);
    ScopedEnv xdg("XDG_CACHE_HOME", "");
    ScopedEnv home("HOME", "/home/me");
    EXPECT_EQ(Cache::default_path(), "/home/me/.cache/tbtune/tbtune.db");
  }
}

TEST_F(CacheTest, TwoWritersOnOneFile) {
  // Two Cache objects stand in for two processes: each has its own connection and locks.
  Cache a(db_path(), Cache::Mode::ReadWrite);
  Cache b(db_path(), Cache::Mode::ReadWrite);
  seed(a);
  seed(b);
  a.add_trial(key(), 1000, full_trial());
  b.add_trial(key(), 1000, full_trial());
  EXPECT_EQ(a.trials(key()).size(), 2u);

  // Now at the same time: BEGIN IMMEDIATE plus the busy timeout serialise the writers
  // instead of failing one with SQLITE_BUSY, and a reader keeps reading meanwhile.
  constexpr int kEach = 40;
  auto writer = [&](Cache& c, const char* strategy) {
    Trial t = full_trial();
    t.strategy = strategy;
    for (int i = 0; i < kEach; ++i) {
      t.repetitions = i;
      c.add_trial(key(), 1000, t);
    }
  };
  std::thread ta([&] { writer(a, "from_a"); });
  std::thread tb([&] { writer(b, "from_b"); });
  const Cache reader(db_path(), Cache::Mode::ReadOnly);
  for (int i = 0; i < 10; ++i) EXPECT_GE(reader.trials(key()).size(), 2u);
  ta.join();
  tb.join();
  const auto all = reader.trials(key());
  ASSERT_EQ(all.size(), 2u + 2 * kEach);
  // Each writer's trials come back in the order it wrote them.
  int next_a = 0, next_b = 0;
  for (std::size_t i = 2; i < all.size(); ++i)
    EXPECT_EQ(all[i].repetitions, all[i].strategy == "from_a" ? next_a++ : next_b++);
}

TEST_F(CacheTest, OpenConcurrentlyOnNewFile) {
  // Two processes starting on a cache that does not exist yet must not both try to create it.
  std::atomic<int> failures{0};
  auto open = [&] {
    try {
      Cache c(db_path(), Cache::Mode::ReadWrite);
      seed(c);
    } catch (const CacheError& e) {
      ADD_FAILURE() << e.what();
      ++failures;
    }
  };
  std::thread t1(open), t2(open), t3(open);
  t1.join();
  t2.join();
  t3.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM schema_version"), "1");
}

// ---- Schema v2: measured device profiles ----

/// A profile with every field different from DeviceProfile's defaults and from h100's.
DeviceProfile probed() {
  DeviceProfile p = *builtin_profile("h100");
  p.name = "probed:NVIDIA H100 80GB HBM3";
  p.gm_bw = 2.8123456789e12;
  p.sm_bw = 33.0987654321e12;
  p.fp64_flops = 31.5e12;
  p.fp32_flops = 62.75e12;
  p.grid_sync_s = 1.1234e-6;
  p.gm_latency_s = 512.5e-9;
  p.l2_bytes = 52428800;
  return p;
}

void expect_same(const DeviceProfile& a, const DeviceProfile& b) {
  EXPECT_EQ(a.name, b.name);
  EXPECT_EQ(a.cc_major, b.cc_major);
  EXPECT_EQ(a.cc_minor, b.cc_minor);
  EXPECT_EQ(a.sm_count, b.sm_count);
  EXPECT_EQ(a.smem_per_sm, b.smem_per_sm);
  EXPECT_EQ(a.smem_per_block, b.smem_per_block);
  EXPECT_EQ(a.regs_per_sm, b.regs_per_sm);
  EXPECT_EQ(a.max_threads_per_sm, b.max_threads_per_sm);
  EXPECT_EQ(a.max_blocks_per_sm, b.max_blocks_per_sm);
  EXPECT_EQ(a.l2_bytes, b.l2_bytes);
  EXPECT_EQ(a.clock_ghz, b.clock_ghz);
  EXPECT_EQ(a.gm_bw, b.gm_bw);  // exact: JSON numbers keep every bit of a double
  EXPECT_EQ(a.sm_bw, b.sm_bw);
  EXPECT_EQ(a.fp32_flops, b.fp32_flops);
  EXPECT_EQ(a.fp64_flops, b.fp64_flops);
  EXPECT_EQ(a.grid_sync_s, b.grid_sync_s);
  EXPECT_EQ(a.gm_latency_s, b.gm_latency_s);
}

TEST_F(CacheTest, ProfileRoundTrip) {
  const std::string fp = device().fingerprint();
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);
    EXPECT_FALSE(c.profile(fp));
    c.put_profile(fp, probed());  // no device row needed
  }
  const Cache ro(db_path(), Cache::Mode::ReadOnly);
  const auto got = ro.profile(fp);
  ASSERT_TRUE(got);
  expect_same(*got, probed());
  EXPECT_FALSE(ro.profile(fp + "x"));
  Cache writable_ro(db_path(), Cache::Mode::ReadOnly);
  expect_cache_error([&] { writable_ro.put_profile(fp, probed()); }, "open read-only");
  EXPECT_NE(query(db_path(), "SELECT created_at FROM profiles"), "");
}

TEST_F(CacheTest, ProfileReplaced) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  const std::string fp = device().fingerprint();
  c.put_profile(fp, probed());
  DeviceProfile again = probed();
  again.gm_bw = 2.5e12;
  c.put_profile(fp, again);
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM profiles"), "1");
  EXPECT_EQ(c.profile(fp)->gm_bw, 2.5e12);
}

TEST_F(CacheTest, ProfileOfAnOlderTbtuneTakesTheBaseForMissingFields) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  query(db_path(), "INSERT INTO profiles (device_fingerprint, json) VALUES ('a', '{\"gm_bw\": 2.5e12}')");
  DeviceProfile base = probed();
  base.warp_ready_share = 0.35;
  const auto got = c.profile("a", base);
  ASSERT_TRUE(got);
  EXPECT_EQ(got->gm_bw, 2.5e12);
  EXPECT_EQ(got->warp_ready_share, 0.35);
  EXPECT_EQ(got->sm_count, base.sm_count);
}

TEST_F(CacheTest, UnreadableProfileThrows) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  query(db_path(), "INSERT INTO profiles (device_fingerprint, json) VALUES ('a', '{\"gm_bw\": \"x\"}')");
  query(db_path(), "INSERT INTO profiles (device_fingerprint, json) VALUES ('b', 'not json')");
  expect_cache_error([&] { (void)c.profile("a"); }, "the profile stored for 'a' is unreadable");
  expect_cache_error([&] { (void)c.profile("b"); }, "the profile stored for 'b' is unreadable");
}

TEST_F(CacheTest, SpecText) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  EXPECT_FALSE(c.spec_text(stencil().hash));
  seed(c);
  EXPECT_EQ(c.spec_text(stencil().hash), std::optional<std::string>("name: heat2d\n"));
}

/// Turns the current file at `path` back into a version-`version` file by dropping the tables
/// later versions added, as the tbtune of that version would have left it.
void downgrade(const std::string& path, int version) {
  if (version < 4) query(path, "DROP TABLE compiles");
  if (version < 3) query(path, "DROP TABLE tunes");
  if (version < 2) query(path, "DROP TABLE profiles");
  query(path, "UPDATE schema_version SET version = " + std::to_string(version));
}

TEST_F(CacheTest, MigratesVersion1ToCurrent) {
  // A version-1 file: what tbtune 0.1 wrote, i.e. today's tables without `profiles` and `tunes`.
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);
    seed(c);
    c.add_trial(key(), 1000, full_trial());
    c.put_winner(winner_with("cmq2d", "2025-01-02T03:04:05Z"));
  }
  downgrade(db_path(), 1);
  // Read-only cannot migrate, and says so without touching the file.
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadOnly); },
                     "has schema version 1, older than this tbtune (4)");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM sqlite_master WHERE name = 'profiles'"), "0");
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);  // migrates
    EXPECT_FALSE(c.profile(device().fingerprint()));
    c.put_profile(device().fingerprint(), probed());
    c.add_tune(full_tune());
  }
  EXPECT_EQ(query(db_path(), "SELECT version FROM schema_version"), "4");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM schema_version"), "1");
  const Cache ro(db_path(), Cache::Mode::ReadOnly);
  EXPECT_EQ(ro.trials(key()).size(), 1u);  // version-1 data survives
  ASSERT_TRUE(ro.winner(key()));
  EXPECT_EQ(ro.winner(key())->trial.cubin, winner_with("cmq2d", "").trial.cubin);
  ASSERT_TRUE(ro.profile(device().fingerprint()));
  expect_same(*ro.profile(device().fingerprint()), probed());
  EXPECT_EQ(ro.tunes().size(), 1u);
}

TEST_F(CacheTest, MigratesVersion2ToCurrent) {
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);
    seed(c);
    c.add_trial(key(), 1000, full_trial());
    c.put_winner(winner_with("cmq2d", "2025-01-02T03:04:05Z"));
    c.put_profile(device().fingerprint(), probed());
  }
  downgrade(db_path(), 2);
  expect_cache_error([&] { Cache c(db_path(), Cache::Mode::ReadOnly); },
                     "has schema version 2, older than this tbtune (4)");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM sqlite_master WHERE name = 'tunes'"), "0");
  {
    Cache c(db_path(), Cache::Mode::ReadWrite);  // migrates
    EXPECT_TRUE(c.tunes().empty());
    c.add_tune(full_tune());
  }
  EXPECT_EQ(query(db_path(), "SELECT version FROM schema_version"), "4");
  EXPECT_EQ(query(db_path(), "SELECT count(*) FROM sqlite_master WHERE name = 'tunes_by_key'"), "1");
  const Cache ro(db_path(), Cache::Mode::ReadOnly);
  EXPECT_EQ(ro.trials(key()).size(), 1u);  // version-2 data survives
  ASSERT_TRUE(ro.winner(key()));
  ASSERT_TRUE(ro.profile(device().fingerprint()));
  ASSERT_EQ(ro.tunes().size(), 1u);
  expect_same(ro.tunes()[0], full_tune());
}

TEST_F(CacheTest, TunesRoundTripInOrder) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  TuneRecord second;  // defaults: a model search with no winner, not interrupted
  second.key = key(10);
  second.steps = 1500;
  c.add_tune(full_tune());
  c.add_tune(second);
  const auto got = c.tunes();
  ASSERT_EQ(got.size(), 2u);
  expect_same(got[0], full_tune());
  expect_same(got[1], second);
  EXPECT_FALSE(got[0].complete());
  EXPECT_TRUE(got[1].complete());
  EXPECT_TRUE(got[1].winner_params.empty());
  EXPECT_EQ(got[0].created_at.size(), 20u) << got[0].created_at;  // 2025-01-02T03:04:05Z
  EXPECT_EQ(got[0].created_at.back(), 'Z');
  EXPECT_EQ(query(db_path(), "SELECT search || ',' || winner_params FROM tunes WHERE id = 1"),
            "exhaustive,bps=2,t=8,tile_x=256");
}

TEST_F(CacheTest, MalformedTuneRowsAreCorrupt) {
  Cache c(db_path(), Cache::Mode::ReadWrite);
  seed(c);
  c.add_tune(full_tune());
  // The CHECK constraint keeps tbtune from writing an unknown mode; a file edited by hand with
  // the constraint off can still hold one, and reading it must say what is wrong.
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_path().c_str(), &db), SQLITE_OK);
  EXPECT_EQ(sqlite3_exec(db, "PRAGMA ignore_check_constraints = ON; UPDATE tunes SET search = 'random'",
                         nullptr, nullptr, nullptr),
            SQLITE_OK)
      << sqlite3_errmsg(db);
  sqlite3_close(db);
  expect_cache_error([&] { (void)c.tunes(); }, "unknown search mode 'random' in a stored tune");
  query(db_path(), "UPDATE tunes SET search = 'model', winner_params = 'garbage'");
  expect_cache_error([&] { (void)c.tunes(); }, "malformed params 'garbage'");
}

}  // namespace
}  // namespace tbtune
