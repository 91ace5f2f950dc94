// `db merge`: every trial once, the fastest verified winner per key, idempotent, and bad inputs
// refused before the output is touched. Also the 100k-trial benchmark (disabled by default;
// scripts/bench-merge.sh runs it).
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>
#include <unistd.h>

#include "db/cache.hpp"
#include "db/merge.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

std::string query(const std::string& path, const std::string& sql) {
  sqlite3* db = nullptr;
  sqlite3_open(path.c_str(), &db);
  std::string out;
  sqlite3_exec(db, sql.c_str(), [](void* o, int n, char** v, char**) {
    auto* s = static_cast<std::string*>(o);
    for (int i = 0; i < n; ++i) {
      if (!s->empty()) s->push_back('|');
      s->append(v[i] ? v[i] : "");
    }
    return 0;
  }, &out, nullptr);
  sqlite3_close(db);
  return out;
}

DeviceRecord device() {
  DeviceRecord d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.driver_version = 13000;
  d.nvrtc_major = 13;
  return d;
}

Stencil stencil(int i) {
  Stencil s;
  s.name = "s" + std::to_string(i);
  s.canonical = "u[0,0]*" + std::to_string(i);
  s.hash = fmt::format("{:016x}", 0xabc000 + i);
  return s;
}

WinnerKey key(int stencil_index, long nx) {
  return WinnerKey{stencil(stencil_index).hash, device().fingerprint(), DType::Double, {nx, nx, 1}, 9};
}

Trial trial(int candidate, double gcells) {
  Trial t;
  t.strategy = "cmq2d";
  t.params = {{"t", candidate % 8 + 1}, {"tile_x", 32 * (candidate / 8 + 1)}};
  t.status = TrialStatus::Ok;
  t.gcells_median = gcells;
  t.repetitions = 3;
  return t;
}

/// A cache like one sweep task's: `problems` keys (stencil `first + i`), `per_key` trials each,
/// the fastest stored as the winner (its speed `scale` x the candidate index).
void fill(const std::string& path, int first, int problems, int per_key, double scale) {
  Cache c(path, Cache::Mode::ReadWrite);
  c.put_device(device());
  for (int p = first; p < first + problems; ++p) {
    c.put_stencil(stencil(p), "name: s\n");
    const WinnerKey k = key(p, 1024);
    std::vector<Trial> trials;
    for (int i = 0; i < per_key; ++i) trials.push_back(trial(i, scale * (i + 1)));
    for (const Trial& t : trials) c.add_trial(k, 1000, t);
    Trial best = trials.back();
    best.cubin = fmt::format("\x7f" "ELF image {}", p);
    c.put_winner(Winner{k, stencil(p).name, 1000, best, "0.1.0", "2026-01-01T00:00:00Z"});
  }
}

class MergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tbtune-merge-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string path(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(MergeTest, TakesEveryTrialOnceAndTheFastestWinner) {
  fill(path("a.db"), 0, 3, 4, 1.0);  // stencils 0..2
  fill(path("b.db"), 2, 2, 4, 2.0);  // stencils 2..3: key 2 again, twice as fast
  const MergeResult r = merge_caches(path("out.db"), {path("a.db"), path("b.db")});
  EXPECT_TRUE(r.created);
  ASSERT_EQ(r.inputs.size(), 2u);
  EXPECT_EQ(r.inputs[0].took.trials, 12);
  EXPECT_EQ(r.inputs[1].took.trials, 8);  // other speeds: different trials
  EXPECT_EQ(r.inputs[1].took.stencils, 1);
  EXPECT_EQ(r.inputs[1].took.winners, 2);  // stencil 3 new, stencil 2 faster
  const Cache out(path("out.db"), Cache::Mode::ReadOnly);
  EXPECT_EQ(out.winners().size(), 4u);
  const auto w2 = out.winner(key(2, 1024));
  ASSERT_TRUE(w2);
  EXPECT_EQ(w2->trial.gcells_median, 8.0);
  EXPECT_EQ(w2->trial.cubin, "\x7f" "ELF image 2");
  EXPECT_EQ(out.trials(key(2, 1024)).size(), 8u);
  EXPECT_EQ(query(path("out.db"), "PRAGMA integrity_check"), "ok");
}

TEST_F(MergeTest, MergingTwiceIsANoOp) {
  fill(path("a.db"), 0, 3, 5, 1.0);
  fill(path("b.db"), 1, 3, 5, 1.5);
  const std::vector<std::string> in{path("a.db"), path("b.db")};
  (void)merge_caches(path("out.db"), in);
  const std::string dump =
      "SELECT (SELECT count(*) FROM trials), (SELECT count(*) FROM winners), "
      "(SELECT group_concat(gcells_median) FROM winners), (SELECT count(*) FROM stencils), "
      "(SELECT count(*) FROM devices), (SELECT total(gcells_median) FROM trials)";
  const std::string before = query(path("out.db"), dump);
  const MergeResult again = merge_caches(path("out.db"), in);
  EXPECT_FALSE(again.created);
  for (const MergeInput& i : again.inputs) {
    EXPECT_EQ(i.took.trials, 0) << i.path;
    EXPECT_EQ(i.took.winners, 0) << i.path;
    EXPECT_EQ(i.took.stencils, 0) << i.path;
    EXPECT_EQ(i.took.devices, 0) << i.path;
    EXPECT_GT(i.took.trials_in, 0) << i.path;
  }
  EXPECT_EQ(query(path("out.db"), dump), before);
  // Merging the output into a copy of itself changes nothing either.
  fs::copy_file(path("out.db"), path("copy.db"));
  (void)merge_caches(path("copy.db"), {path("out.db")});
  EXPECT_EQ(query(path("copy.db"), dump), before);
}

TEST_F(MergeTest, BadInputLeavesOutputUnchanged) {
  fill(path("a.db"), 0, 2, 3, 1.0);
  { std::ofstream(path("corrupt.db")) << "this is not a database"; }
  // A new output is not created when an input is bad...
  EXPECT_THROW((void)merge_caches(path("new.db"), {path("a.db"), path("corrupt.db")}), CacheError);
  EXPECT_FALSE(fs::exists(path("new.db")));
  EXPECT_THROW((void)merge_caches(path("new.db"), {path("a.db"), path("missing.db")}), CacheError);
  EXPECT_FALSE(fs::exists(path("new.db")));
  // ...and an existing one keeps its content.
  (void)merge_caches(path("out.db"), {path("a.db")});
  const std::string before = query(path("out.db"), "SELECT count(*) FROM trials");
  fill(path("b.db"), 5, 1, 3, 1.0);
  query(path("b.db"), "UPDATE schema_version SET version = 3");
  try {
    (void)merge_caches(path("out.db"), {path("b.db")});
    FAIL() << "merged an input of another schema version";
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find("has schema version 3"), std::string::npos) << e.what();
  }
  EXPECT_EQ(query(path("out.db"), "SELECT count(*) FROM trials"), before);
  // An output of another schema version is refused too.
  fill(path("c.db"), 7, 1, 3, 1.0);
  query(path("out.db"), "UPDATE schema_version SET version = 99");
  EXPECT_THROW((void)merge_caches(path("out.db"), {path("c.db")}), CacheError);
  EXPECT_EQ(query(path("out.db"), "SELECT count(*) FROM trials"), before);
}

TEST_F(MergeTest, KeepsTheNewestCompileRecord) {
  for (const char* name : {"a.db", "b.db"}) {
    Cache c(path(name), Cache::Mode::ReadWrite);
    c.put_stencil(stencil(0), "");
    CompileRecord r;
    r.stencil_hash = stencil(0).hash;
    r.profile = "h100";
    r.arch = "sm_90";
    r.domain = {512, 512, 1};
    r.steps = 100;
    r.candidates = name[0] == 'a' ? 5 : 6;
    c.put_compile(r);
  }
  query(path("a.db"), "UPDATE compiles SET created_at = '2026-01-01T00:00:00Z'");
  (void)merge_caches(path("out.db"), {path("a.db"), path("b.db")});
  const Cache out(path("out.db"), Cache::Mode::ReadOnly);
  ASSERT_EQ(out.compiles().size(), 1u);
  EXPECT_EQ(out.compiles()[0].candidates, 6);
}

// The benchmark: TBTUNE_MERGE_SHARDS caches (default 4) holding 100k trials in all, merged into
// a new file. Run by scripts/bench-merge.sh; the figure is in docs/sweeps.md.
TEST_F(MergeTest, DISABLED_Benchmark100kTrials) {
  const char* env = std::getenv("TBTUNE_MERGE_SHARDS");
  const int shards = env ? std::atoi(env) : 4;
  constexpr int kTrials = 100000, kPerKey = 50;
  const int problems = kTrials / kPerKey / shards;
  std::vector<std::string> in;
  for (int s = 0; s < shards; ++s) {
    in.push_back(path(fmt::format("shard-{}.db", s)));
    fill(in.back(), s * problems, problems, kPerKey, 1.0);
  }
  const auto t0 = std::chrono::steady_clock::now();
  const MergeResult r = merge_caches(path("out.db"), in);
  const double first = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const auto t1 = std::chrono::steady_clock::now();
  (void)merge_caches(path("out.db"), in);
  const double again = std::chrono::duration<double>(std::chrono::steady_clock::now() - t1).count();
  long trials = 0;
  for (const MergeInput& i : r.inputs) trials += i.took.trials;
  EXPECT_EQ(trials, long(shards) * problems * kPerKey);
  std::printf("merge: %d caches, %ld trials, %d winners: %.2f s into a new file, %.2f s again (no-op)\n",
              shards, trials, shards * problems, first, again);
}

}  // namespace
}  // namespace tbtune
