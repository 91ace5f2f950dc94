// Tests for tuner/engine on CPU: a planted Measurer and a planted compiler stand in for the GPU
// and (mostly) NVRTC. Covered: trials and winner, resume after an interrupt (a second run
// re-times nothing), --fresh, the time budget, post-compile pruning, wrong results, a real NVRTC
// compile error, failures of a supervised worker as trials, and the naive reference failing;
// the tally of outcomes per candidate, and the `tunes` row tune() makes of a run.
#include "tuner/search/engine.hpp"

#include <unistd.h>

#include <atomic>
#include <condition_variable>
#include <csignal>
#include <filesystem>
#include <map>
#include <mutex>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/test_util.hpp"
#include "tuner/gpu/messages.hpp"
#include "tuner/gpu/protocol.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/search/worker_measurer.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

/// Answers every job as planted: by default Ok, faster for later candidates.
struct FakeMeasurer : Measurer {
  std::vector<std::pair<int, bool>> calls;  ///< (index, is_reference)
  std::map<int, MeasureOutcome> planted;
  std::function<void(int)> on_call;
  MeasureOutcome measure(const MeasureJob& job) override {
    calls.emplace_back(job.index, job.is_reference);
    EXPECT_FALSE(job.reference_path.empty());
    EXPECT_TRUE(fs::exists(job.cubin_path)) << job.cubin_path;
    if (on_call) on_call(job.index);
    if (auto it = planted.find(job.index); it != planted.end()) return it->second;
    MeasureOutcome o;
    o.measurement.seconds_median = o.measurement.seconds_min = 1.0 / (1 + job.index);
    o.measurement.repetitions = 3;
    return o;
  }
};

/// naive with a source NVRTC rejects.
class BrokenStrategy : public Strategy {
 public:
  std::string name() const override { return "broken"; }
  std::string summary() const override { return "does not compile"; }
  bool supports(const Problem&) const override { return true; }
  std::vector<Params> space(const Problem&, const DeviceProfile&) const override { return {{}}; }
  Params complete(const Problem&, const Params& p) const override { return p; }
  int depth(const Params&) const override { return 1; }
  ModelTerms model_terms(const Problem& p, const Params& q, const DeviceProfile& d) const override {
    return naive().model_terms(p, q, d);
  }
  std::string source(const Problem&, const Params&) const override {
    return "extern \"C\" __global__ void tb_full() { this is not cuda; }\n";
  }
  Launch launch(const Problem& p, const Params& q, bool full, const LaunchContext& c) const override {
    return naive().launch(p, q, full, c);
  }

 private:
  static const Strategy& naive() { return *find_strategy("naive"); }
};

void expect_tally(const SearchTally& got, const SearchTally& want) {
  EXPECT_EQ(got.timed, want.timed);
  EXPECT_EQ(got.reused, want.reused);
  EXPECT_EQ(got.pruned, want.pruned);
  EXPECT_EQ(got.compile_errors, want.compile_errors);
  EXPECT_EQ(got.not_run, want.not_run);
}

class EngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tbtune_engine_test_" + std::to_string(getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    problem_ = test::small_problem(test::source_dir() + "/configs/j2d5pt.yaml", DType::Double,
                                   {515, 387, 1}, 23);
    cache_ = std::make_unique<Cache>((dir_ / "t.db").string(), Cache::Mode::ReadWrite);
    DeviceRecord d;
    d.name = "Planted GPU";
    key_ = WinnerKey{problem_.stencil.hash, d.fingerprint(), problem_.dtype, problem_.domain,
                     steps_class(problem_.steps)};
    cache_->put_device(d);
    cache_->put_stencil(problem_.stencil, "");
    const auto ranked = rank_candidates(problem_, *builtin_profile("h100"));
    candidates_ = rank_candidates(problem_, *builtin_profile("h100"), "naive");
    SearchOptions s;
    s.top = 5;
    s.within = 0;
    s.max_candidates = 5;  // the model's five best, without other strategies' best
    for (auto& c : select_candidates(ranked, s)) candidates_.push_back(c);
    ASSERT_EQ(candidates_.size(), 6u);
  }
  void TearDown() override {
    cache_.reset();
    fs::remove_all(dir_);
  }

  std::string source(int i) const {
    return candidates_[std::size_t(i)].strategy->source(problem_, candidates_[std::size_t(i)].params);
  }

  /// The planted compiler: "cubin:<hash>" and ptxas figures from `resources_` (32 registers,
  /// no spills by default); a source naming tb_broken goes to real NVRTC.
  EngineOptions options() {
    EngineOptions o;
    o.arch = "sm_90";
    o.profile = *builtin_profile("h100");
    o.work_dir = (dir_ / "work").string();
    o.compile = [this](const std::string& src, const std::string& arch, const std::string& cache_dir) {
      ++compiles_;
      if (src.find("not cuda") != std::string::npos) return compile_cuda(src, arch, cache_dir);
      CompiledModule m;
      m.cubin = "cubin:" + hex64(fnv1a64(src));
      KernelResources k;
      k.registers = 32;
      if (auto it = resources_.find(src); it != resources_.end()) k = it->second;
      m.kernels[kFullKernel] = k;
      return m;
    };
    return o;
  }

  EngineResult run(Measurer& m, const EngineOptions& o) {
    return run_engine(problem_, key_, candidates_, m, *cache_, o);
  }

  fs::path dir_;
  Problem problem_;
  std::unique_ptr<Cache> cache_;
  WinnerKey key_;
  std::vector<RankedCandidate> candidates_;
  std::map<std::string, KernelResources> resources_;
  std::atomic<int> compiles_{0};
};

TEST_F(EngineTest, StoresEveryTrialAndTheFastestAsWinner) {
  FakeMeasurer m;
  std::vector<int> events;
  const EngineResult r = run_engine(problem_, key_, candidates_, m, *cache_, options(),
                                    [&](const TuneEvent& e) {
                                      if (e.kind == TuneEvent::Kind::Measured) events.push_back(e.index);
                                    });
  ASSERT_EQ(r.trials.size(), 6u);
  EXPECT_EQ(m.calls.front(), std::make_pair(0, true));  // the reference first
  ASSERT_EQ(m.calls.size(), 6u);
  for (int i = 1; i < 6; ++i) EXPECT_EQ(m.calls[std::size_t(i)], std::make_pair(i, false));
  EXPECT_EQ(events, (std::vector<int>{0, 1, 2, 3, 4, 5}));
  for (const Trial& t : r.trials) EXPECT_EQ(t.status, TrialStatus::Ok) << t.message;
  expect_tally(r.tally, {5, 0, 0, 0, 0});  // the naive reference is not counted
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_EQ(r.winner->trial.params, candidates_[5].params);  // planted as the fastest
  EXPECT_EQ(cache_->trials(key_).size(), 6u);
  const auto stored = cache_->winner(key_);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->trial.cubin, "cubin:" + hex64(fnv1a64(source(5))));
  EXPECT_FALSE(fs::exists(dir_ / "work" / "reference.bin"));  // the planted measurer writes none
}

TEST_F(EngineTest, SecondRunRetimesNothing) {
  FakeMeasurer first;
  const EngineResult a = run(first, options());
  compiles_ = 0;
  FakeMeasurer second;
  const EngineResult b = run(second, options());
  EXPECT_TRUE(second.calls.empty());
  EXPECT_EQ(b.reused, 6);
  expect_tally(b.tally, {0, 5, 0, 0, 0});
  for (const Trial& t : b.trials) EXPECT_TRUE(t.reused);
  EXPECT_EQ(compiles_, 1);  // only the winner, whose image the trials table does not keep
  ASSERT_TRUE(b.winner.has_value());
  EXPECT_EQ(b.winner->trial.params, a.winner->trial.params);
  EXPECT_EQ(cache_->winner(key_)->trial.cubin, a.winner->trial.cubin);
  EXPECT_EQ(cache_->trials(key_).size(), 6u);  // nothing new recorded
}

TEST_F(EngineTest, InterruptedRunStoresWinnerSoFarAndResumes) {
  std::atomic<bool> stop{false};
  FakeMeasurer first;
  first.on_call = [&](int index) {
    if (index == 2) stop = true;  // as a SIGINT during candidate 2 would
  };
  EngineOptions o = options();
  o.stop = &stop;
  const EngineResult a = run(first, o);
  EXPECT_TRUE(a.interrupted);
  EXPECT_EQ(a.trials.size(), 3u);
  EXPECT_EQ(a.not_run, 3);
  expect_tally(a.tally, {2, 0, 0, 0, 3});
  ASSERT_TRUE(a.winner.has_value());
  EXPECT_EQ(cache_->winner(key_)->trial.params, candidates_[2].params);

  FakeMeasurer second;
  const EngineResult b = run(second, options());
  // The reference output is not stored, so naive runs again as the reference only; then the
  // three candidates the first run never reached.
  EXPECT_EQ(second.calls, (std::vector<std::pair<int, bool>>{{0, true}, {3, false}, {4, false}, {5, false}}));
  EXPECT_EQ(b.reused, 3);
  expect_tally(b.tally, {3, 2, 0, 0, 0});  // naive's stored trial is reused but not counted
  EXPECT_FALSE(b.interrupted);
  EXPECT_EQ(b.trials.size(), 6u);
  EXPECT_EQ(cache_->trials(key_).size(), 6u);
  EXPECT_EQ(cache_->winner(key_)->trial.params, candidates_[5].params);
}

// A stop that comes while the engine waits for a compile ends the compiles (stop_compiles) and
// leaves that candidate out at once, recording no trial for it: a resumed run compiles it.
TEST_F(EngineTest, AStopDuringACompileEndsItAndLeavesTheCandidateOut) {
  std::atomic<bool> stop{false};
  std::mutex mutex;
  std::condition_variable cv;
  bool ended = false;
  EngineOptions o = options();
  const CompileFn planted = o.compile;
  o.compile = [&](const std::string& src, const std::string& arch, const std::string& dir) {
    if (src != source(2)) return planted(src, arch, dir);
    std::unique_lock lock(mutex);
    if (!cv.wait_for(lock, 60s, [&] { return ended; })) ADD_FAILURE() << "the compile was never stopped";
    throw Error("compile stopped: its result was no longer needed");
  };
  o.stop = &stop;
  int stops = 0;
  o.stop_compiles = [&] {
    ++stops;
    const std::lock_guard lock(mutex);
    ended = true;
    cv.notify_all();
  };
  o.compile_threads = 8;
  FakeMeasurer first;
  const EngineResult a = run_engine(problem_, key_, candidates_, first, *cache_, o, [&](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::Start && e.index == 2) stop = true;  // a Ctrl-C as it waits for 2
  });
  EXPECT_TRUE(a.interrupted);
  ASSERT_EQ(a.trials.size(), 2u);  // naive and 1; 2 was compiling
  expect_tally(a.tally, {1, 0, 0, 0, 4});
  EXPECT_GE(stops, 1);
  EXPECT_EQ(cache_->trials(key_).size(), 2u);  // no compile error stored for 2

  FakeMeasurer second;
  const EngineResult b = run(second, options());
  EXPECT_FALSE(b.interrupted);
  expect_tally(b.tally, {4, 1, 0, 0, 0});
  EXPECT_EQ(cache_->trials(key_).size(), 6u);
}

TEST_F(EngineTest, FreshRetimesEverything) {
  FakeMeasurer first;
  (void)run(first, options());
  FakeMeasurer second;
  EngineOptions o = options();
  o.fresh = true;
  const EngineResult b = run(second, o);
  EXPECT_EQ(second.calls.size(), 6u);
  EXPECT_EQ(b.reused, 0);
  EXPECT_EQ(cache_->trials(key_).size(), 12u);
}

TEST_F(EngineTest, BudgetStopsStartingCandidates) {
  FakeMeasurer m;
  m.on_call = [](int) { std::this_thread::sleep_for(100ms); };
  EngineOptions o = options();
  o.budget_s = 0.25;
  const EngineResult r = run(m, o);
  EXPECT_TRUE(r.out_of_budget);
  EXPECT_GE(r.not_run, 1);
  EXPECT_LE(m.calls.size(), 5u);
  EXPECT_EQ(int(r.trials.size()) + r.not_run, 6);
  EXPECT_EQ(r.tally.not_run, r.not_run);
  EXPECT_EQ(r.tally.timed, int(m.calls.size()) - 1);
  EXPECT_EQ(r.tally.total(), 5);
  ASSERT_TRUE(r.winner.has_value());
  EXPECT_TRUE(cache_->winner(key_).has_value());
}

TEST_F(EngineTest, PrunesSpillsAndRegisterOverflowAfterCompiling) {
  resources_[source(1)] = KernelResources{32, 8, 16, 0, 0};   // spills (and fits any SM)
  resources_[source(2)] = KernelResources{100000, 0, 0, 0, 0}; // cannot fit any block
  FakeMeasurer m;
  const EngineResult r = run(m, options());
  EXPECT_EQ(r.trials[1].status, TrialStatus::Skipped);
  EXPECT_NE(r.trials[1].message.find("spill"), std::string::npos) << r.trials[1].message;
  EXPECT_EQ(r.trials[1].spill_bytes, 24);
  EXPECT_EQ(r.trials[2].status, TrialStatus::Resources);
  EXPECT_NE(r.trials[2].message.find("100000 registers"), std::string::npos) << r.trials[2].message;
  for (const auto& call : m.calls) EXPECT_TRUE(call.first != 1 && call.first != 2);
  expect_tally(r.tally, {3, 0, 2, 0, 0});

  // --allow-spills times the spilling one (a stored skipped trial is not reused).
  FakeMeasurer again;
  EngineOptions o = options();
  o.allow_spills = true;
  const EngineResult r2 = run(again, o);
  EXPECT_EQ(r2.trials[1].status, TrialStatus::Ok);
  EXPECT_FALSE(r2.trials[1].reused);
  // The stored `resources` trial is reused; the skipped one is not, so it is timed now.
  expect_tally(r2.tally, {1, 4, 0, 0, 0});
}

TEST_F(EngineTest, StandInsTakeThePlaceOfPrunedCandidates) {
  resources_[source(1)] = KernelResources{32, 8, 16, 0, 0};  // spills
  FakeMeasurer m;
  EngineOptions o = options();
  o.max_timed = 3;  // candidates 1-3 selected, 4 and 5 standing in
  const EngineResult r = run(m, o);
  ASSERT_EQ(r.trials.size(), 5u);  // naive, the pruned one, and three timed: 5 is not needed
  EXPECT_EQ(r.trials[1].status, TrialStatus::Skipped);
  for (int i = 2; i <= 4; ++i) EXPECT_EQ(r.trials[std::size_t(i)].status, TrialStatus::Ok) << i;
  expect_tally(r.tally, {3, 0, 1, 0, 0});
  for (const auto& call : m.calls) EXPECT_NE(call.first, 5);
  EXPECT_EQ(compiles_, 5);  // naive, 1-3 and the stand-in 4; 5, not needed, is never compiled

  // Resumed: the stored trials count toward the three, so nothing new runs.
  FakeMeasurer again;
  const EngineResult r2 = run(again, o);
  expect_tally(r2.tally, {0, 3, 1, 0, 0});
  EXPECT_EQ(r2.trials.size(), 5u);
}

// A stand-in starts compiling as soon as a compile prunes the candidate it stands for, not when
// that candidate's trial comes up: here candidate 1's compile holds out until the stand-in's has
// begun, which the pruned candidate 3's compile brings about while 1 is still compiling.
TEST_F(EngineTest, AStandInCompilesOnceACompilePrunes) {
  resources_[source(3)] = KernelResources{32, 8, 16, 0, 0};  // spills: 4 stands in
  const std::string first = source(1), stand_in = source(4);
  std::mutex mutex;
  std::condition_variable started;
  bool stand_in_started = false, waited_out = false;
  EngineOptions o = options();
  o.max_timed = 3;
  o.compile_threads = 4;
  const auto planted = o.compile;
  o.compile = [&](const std::string& src, const std::string& arch, const std::string& cache_dir) {
    std::unique_lock lock(mutex);
    if (src == stand_in) {
      stand_in_started = true;
      started.notify_all();
    } else if (src == first && !started.wait_for(lock, 10s, [&] { return stand_in_started; })) {
      waited_out = true;
    }
    lock.unlock();
    return planted(src, arch, cache_dir);
  };
  FakeMeasurer m;
  const EngineResult r = run(m, o);
  EXPECT_FALSE(waited_out);
  ASSERT_EQ(r.trials.size(), 5u);
  EXPECT_EQ(r.trials[3].status, TrialStatus::Skipped);
  expect_tally(r.tally, {3, 0, 1, 0, 0});
  EXPECT_EQ(compiles_, 5);  // naive, 1-3 and 4; 5 is not needed
}

// With compile_ahead, a compile that prunes a candidate starts its stand-in and the one after it
// (threads being idle), and stop_compiles is called once, at the end; the stand-in compiled
// ahead is not timed when no place needs it.
TEST_F(EngineTest, StandInsCompileAheadAndTheEndStopsTheCompiles) {
  resources_[source(1)] = KernelResources{32, 8, 16, 0, 0};  // spills: 4 stands in, 5 ahead
  FakeMeasurer m;
  EngineOptions o = options();
  o.max_timed = 3;
  o.compile_threads = 8;
  o.compile_ahead = 1;
  int stops = 0;
  o.stop_compiles = [&] { ++stops; };
  const EngineResult r = run(m, o);
  ASSERT_EQ(r.trials.size(), 5u);  // naive, the pruned one, 2-4
  expect_tally(r.tally, {3, 0, 1, 0, 0});
  for (const auto& call : m.calls) EXPECT_NE(call.first, 5);
  EXPECT_EQ(compiles_, 6);  // naive, 1-3, the stand-in 4 and 5 ahead of need
  EXPECT_EQ(stops, 1);

  // Without compile_ahead, as before: 5 is never compiled.
  compiles_ = 0;
  o.compile_ahead = 0;
  o.fresh = true;
  FakeMeasurer again;
  (void)run(again, o);
  EXPECT_EQ(compiles_, 5);
  EXPECT_EQ(stops, 2);
}

// A stand-in compiled ahead and pruned may never be needed: its pass-over compiles nothing more
// (one for a needed candidate would start the next stand-in).
TEST_F(EngineTest, AStandInCompiledAheadAndPrunedStartsNoFurtherCompile) {
  resources_[source(1)] = KernelResources{32, 8, 16, 0, 0};  // spills: 3 stands in, 4 ahead
  resources_[source(4)] = KernelResources{32, 8, 16, 0, 0};  // spills too, unneeded: 3 fits
  FakeMeasurer m;
  EngineOptions o = options();
  o.max_timed = 2;  // 1 and 2 selected; 3, 4 and 5 standing in
  o.compile_threads = 8;
  o.compile_ahead = 1;
  const EngineResult r = run(m, o);
  ASSERT_EQ(r.trials.size(), 4u);  // naive, the pruned 1, 2 and its stand-in 3
  EXPECT_EQ(r.trials[3].params, candidates_[3].params);
  expect_tally(r.tally, {2, 0, 1, 0, 0});
  EXPECT_EQ(compiles_, 5);  // naive, 1-3 and 4 ahead; not 5
}

// A stand-in takes the place of a pruned candidate of its own strategy only: where wpipe2d's
// selected shape spills, the next wpipe2d shape is timed, not a cmq2d one ranked above it.
TEST_F(EngineTest, StandInsAreOfTheStrategyPassedOver) {
  const auto ranked = rank_candidates(problem_, *builtin_profile("h100"));
  std::vector<RankedCandidate> of[2];
  for (const auto& c : ranked)
    for (int s = 0; s < 2; ++s)
      if (is_feasible(c) && c.strategy->name() == (s == 0 ? "wpipe2d" : "cmq2d")) of[s].push_back(c);
  ASSERT_GE(of[0].size(), 2u);
  ASSERT_GE(of[1].size(), 2u);
  candidates_.resize(1);  // naive; selected: wpipe2d's and cmq2d's best; then a cmq2d stand-in
  for (const auto& c : {of[0][0], of[1][0], of[1][1], of[0][1]}) candidates_.push_back(c);
  resources_[source(1)] = KernelResources{255, 8, 16, 0, 0};  // wpipe2d's best spills
  FakeMeasurer m;
  EngineOptions o = options();
  o.max_timed = 2;
  const EngineResult r = run(m, o);
  ASSERT_EQ(r.trials.size(), 4u);  // naive, the pruned one, cmq2d's best, wpipe2d's next
  EXPECT_EQ(r.trials[1].status, TrialStatus::Skipped);
  EXPECT_EQ(r.trials[3].strategy, "wpipe2d");
  EXPECT_EQ(r.trials[3].params, candidates_[4].params);
  for (const auto& call : m.calls) EXPECT_NE(call.first, 3);  // cmq2d's stand-in was not needed
  expect_tally(r.tally, {2, 0, 1, 0, 0});

  // wpipe2d's stand-in spills too and the list holds no more of its shapes: the search ends with
  // one place unfilled, and the progress display still ends full.
  resources_[source(4)] = KernelResources{255, 8, 16, 0, 0};
  std::vector<TuneEvent> events;
  FakeMeasurer again;
  o.fresh = true;
  const EngineResult r2 = run_engine(problem_, key_, candidates_, again, *cache_, o, [&](const TuneEvent& e) {
    if (e.kind == TuneEvent::Kind::Measured) events.push_back(e);
  });
  ASSERT_EQ(r2.trials.size(), 4u);
  expect_tally(r2.tally, {1, 0, 2, 0, 0});
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.back().index + 1, events.back().total);
  EXPECT_EQ(events.back().total, 4);
}

// A tune of part of the space leaves a faster stored winner in place; a full one replaces it.
TEST_F(EngineTest, PartialSearchKeepsAFasterStoredWinner) {
  FakeMeasurer m;
  (void)run(m, options());
  ASSERT_EQ(cache_->winner(key_)->trial.params, candidates_[5].params);  // the fastest

  candidates_.resize(2);  // naive and candidate 1, which runs slower
  EngineOptions o = options();
  o.fresh = true;
  o.keep_faster_winner = true;
  FakeMeasurer part;
  const EngineResult r = run(part, o);
  ASSERT_TRUE(r.winner && r.kept);
  EXPECT_EQ(r.winner->trial.params, candidates_[1].params);
  EXPECT_EQ(r.kept->trial.params, cache_->winner(key_)->trial.params);
  EXPECT_NE(cache_->winner(key_)->trial.params, candidates_[1].params);

  o.keep_faster_winner = false;
  FakeMeasurer full;
  const EngineResult r2 = run(full, o);
  EXPECT_FALSE(r2.kept);
  EXPECT_EQ(cache_->winner(key_)->trial.params, candidates_[1].params);
}

// A finished tune run again compiles nothing: the stand-ins it never reached do not count as
// candidates still to run.
TEST_F(EngineTest, StandInsAreNotCompiledWhenNothingIsLeftToRun) {
  FakeMeasurer m;
  EngineOptions o = options();
  o.max_timed = 3;
  (void)run(m, o);
  EXPECT_EQ(compiles_, 4);  // naive and 1-3: nothing was passed over, so no stand-in compiled
  compiles_ = 0;
  FakeMeasurer again;
  const EngineResult r = run(again, o);
  expect_tally(r.tally, {0, 3, 0, 0, 0});
  EXPECT_EQ(compiles_, 1);  // only the winner's image, as in any resumed tune; no stand-in
  EXPECT_TRUE(again.calls.empty());
}

// The progress display counts to the candidates the engine will look at, not to every stand-in,
// and a stop leaves out only the places still open.
TEST_F(EngineTest, StandInsKeepProgressAndNotRunCountsRight) {
  resources_[source(1)] = KernelResources{32, 8, 16, 0, 0};  // spills: 4 stands in
  std::vector<TuneEvent> events;
  FakeMeasurer m;
  EngineOptions o = options();
  o.max_timed = 3;
  const EngineResult r =
      run_engine(problem_, key_, candidates_, m, *cache_, o, [&](const TuneEvent& e) {
        if (e.kind == TuneEvent::Kind::Measured) events.push_back(e);
      });
  ASSERT_EQ(events.size(), 5u);
  EXPECT_EQ(events.back().index + 1, events.back().total);  // the bar ends full
  EXPECT_EQ(events.front().total, 4);                       // 1 + 3 before anything was pruned
  EXPECT_EQ(r.tally.timed, 3);

  // Stopped while candidate 2 runs: candidates 1 and 2 were settled, one place is left.
  std::atomic<bool> stop{false};
  FakeMeasurer first;
  first.on_call = [&](int index) {
    if (index == 2) stop = true;
  };
  o.fresh = true;
  o.stop = &stop;
  resources_.clear();
  const EngineResult s = run(first, o);
  EXPECT_TRUE(s.interrupted);
  expect_tally(s.tally, {2, 0, 0, 0, 1});
  EXPECT_EQ(s.not_run, 1);
}

TEST_F(EngineTest, WrongResultIsATrialNotAWinner) {
  FakeMeasurer m;
  MeasureOutcome wrong;
  wrong.measurement.seconds_median = wrong.measurement.seconds_min = 1e-6;  // fastest, but wrong
  wrong.measurement.max_error = 0.5;
  m.planted[3] = wrong;
  const EngineResult r = run(m, options());
  EXPECT_EQ(r.trials[3].status, TrialStatus::WrongResult);
  EXPECT_NE(r.trials[3].message.find("max error"), std::string::npos);
  EXPECT_EQ(r.winner->trial.params, candidates_[5].params);
}

TEST_F(EngineTest, NvrtcCompileErrorIsATrial) {
  BrokenStrategy broken;
  RankedCandidate c;
  c.strategy = &broken;
  candidates_.insert(candidates_.begin() + 1, c);
  FakeMeasurer m;
  const EngineResult r = run(m, options());
  ASSERT_EQ(r.trials.size(), 7u);
  EXPECT_EQ(r.trials[1].strategy, "broken");
  EXPECT_EQ(r.trials[1].status, TrialStatus::CompileError);
  EXPECT_NE(r.trials[1].message.find("error"), std::string::npos) << r.trials[1].message;
  for (const auto& call : m.calls) EXPECT_NE(call.first, 1);
  expect_tally(r.tally, {5, 0, 0, 1, 0});
  EXPECT_EQ(r.trials.back().status, TrialStatus::Ok);
  EXPECT_TRUE(r.winner.has_value());
}

TEST_F(EngineTest, NaiveReferenceFailureEndsTheTune) {
  FakeMeasurer m;
  MeasureOutcome failed;
  failed.status = TrialStatus::LaunchError;
  failed.message = "planted";
  m.planted[0] = failed;
  EXPECT_THROW((void)run(m, options()), Error);
}

TEST_F(EngineTest, GpuSideFailureKeepsTheWinnerSoFar) {
  FakeMeasurer m;
  m.on_call = [](int index) {
    if (index == 3) throw Error("planted: the worker cannot start");
  };
  EXPECT_THROW((void)run(m, options()), Error);
  const auto stored = cache_->winner(key_);
  ASSERT_TRUE(stored.has_value());
  EXPECT_EQ(stored->trial.params, candidates_[2].params);
  EXPECT_EQ(cache_->trials(key_).size(), 3u);
}

TEST_F(EngineTest, TuneRecordTakesSearchTallyWinnerAndWallTime) {
  std::atomic<bool> stop{false};
  FakeMeasurer m;
  m.on_call = [&](int index) {
    if (index == 3) stop = true;
  };
  EngineOptions eo = options();
  eo.stop = &stop;
  const EngineResult er = run(m, eo);
  TuneOptions o;
  o.search.top = 5;
  o.search.within = 0;
  o.only_strategy = "cmq2d";
  o.budget_s = 90;
  o.allow_spills = true;
  const TuneRecord r = tune_record(problem_, o, key_, {400, 300}, 5, er, 12.5);
  EXPECT_EQ(r.key.stencil_hash, key_.stencil_hash);
  EXPECT_EQ(r.key.device_fingerprint, key_.device_fingerprint);
  EXPECT_EQ(r.steps, problem_.steps);
  EXPECT_EQ(r.stencil_name, "j2d5pt");
  EXPECT_EQ(r.only_strategy, "cmq2d");
  EXPECT_EQ(r.search.mode, SearchMode::Model);
  EXPECT_EQ(r.search.top, 5);
  EXPECT_EQ(r.budget_s, 90);
  EXPECT_FALSE(r.fresh);
  EXPECT_TRUE(r.allow_spills);
  EXPECT_EQ(r.space.candidates, 400);
  EXPECT_EQ(r.space.feasible, 300);
  EXPECT_EQ(r.selected, 5);
  expect_tally(r.tally, {3, 0, 0, 0, 2});
  EXPECT_EQ(r.tally.total(), r.selected);
  EXPECT_TRUE(r.interrupted);
  EXPECT_FALSE(r.complete());
  ASSERT_TRUE(er.winner.has_value());
  EXPECT_EQ(r.winner_strategy, er.winner->trial.strategy);
  EXPECT_EQ(r.winner_params, candidates_[3].params);  // the fastest of those run
  EXPECT_EQ(r.winner_gcells, er.winner->trial.gcells_median);
  EXPECT_GT(r.winner_gcells, 0);
  EXPECT_EQ(r.wall_s, 12.5);
  EXPECT_FALSE(r.tool_version.empty());

  // Stored as it is; the resumed run appends a second row.
  cache_->add_tune(r);
  FakeMeasurer again;
  const EngineResult er2 = run(again, options());
  cache_->add_tune(tune_record(problem_, o, key_, {400, 300}, 5, er2, 3));
  const auto rows = cache_->tunes();
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_FALSE(rows[0].complete());
  EXPECT_TRUE(rows[1].complete());
  expect_tally(rows[1].tally, {2, 3, 0, 0, 0});
  EXPECT_EQ(rows[1].winner_params, candidates_[5].params);
}

// The supervised worker, with a planted handler in a forked child: a crash, a hang and an
// exception each become a trial, and the candidates after them are still timed.
JobResult planted_worker(const std::string& text) {
  const auto req = nlohmann::json::parse(text);
  if (req.at("op") == "hello") return {nlohmann::json{{"device", device_to_json(DeviceInfo{})}}.dump()};
  switch (req.at("index").get<int>()) {
    case 1: std::raise(SIGSEGV); break;
    case 2: std::this_thread::sleep_for(60s); break;
    case 3: std::abort();
    case 4: throw Error("planted exception");
    default: break;
  }
  Measurement m;
  m.seconds_median = m.seconds_min = 1.0 / (1 + req.at("index").get<int>());
  return {nlohmann::json{{"status", "ok"}, {"measurement", measurement_to_json(m)}}.dump()};
}

TEST_F(EngineTest, WorkerCrashesAndHangsAreTrialsAndTuningGoesOn) {
  WorkerMeasurer w(fork_launcher([](int fd) { serve_jobs(fd, planted_worker); }), {0, 0.5, 10});
  const EngineResult r = run(w, options());
  ASSERT_EQ(r.trials.size(), 6u);
  EXPECT_EQ(r.trials[0].status, TrialStatus::Ok);
  EXPECT_EQ(r.trials[1].status, TrialStatus::LaunchError);
  EXPECT_NE(r.trials[1].message.find("signal 11"), std::string::npos) << r.trials[1].message;
  EXPECT_EQ(r.trials[2].status, TrialStatus::Timeout);
  EXPECT_EQ(r.trials[3].status, TrialStatus::LaunchError);
  EXPECT_EQ(r.trials[4].status, TrialStatus::LaunchError);
  EXPECT_NE(r.trials[4].message.find("planted exception"), std::string::npos);
  EXPECT_EQ(r.trials[5].status, TrialStatus::Ok);
  EXPECT_EQ(w.starts(), 4);
  EXPECT_EQ(r.winner->trial.params, candidates_[5].params);
  const auto stored = cache_->trials(key_);
  ASSERT_EQ(stored.size(), 6u);
  EXPECT_EQ(stored[2].status, TrialStatus::Timeout);
}

}  // namespace
}  // namespace tbtune
