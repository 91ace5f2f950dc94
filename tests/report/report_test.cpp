// Tests for model/report: accuracy statistics over a cache filled with synthetic trials, the
// profile a report judges a device by, the winners' roofline chart written as SVG, and the
// model search against the exhaustive one from recorded tune runs (library and `tbtune report`).
#include "tuner/report/report.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace tbtune {
namespace {

namespace fs = std::filesystem;

DeviceRecord device(const std::string& name, int sms) {
  DeviceRecord d;
  d.name = name;
  d.cc_major = 9;
  d.sm_count = sms;
  d.memory_bytes = 80L << 30;
  d.driver_version = 13000;
  d.nvrtc_major = 13;
  return d;
}
const DeviceRecord kH100 = device("NVIDIA H100 80GB HBM3", 132);
const DeviceRecord kOther = device("NVIDIA H100 PCIe", 114);

Stencil stencil() {
  Stencil s;
  s.name = "j2d5pt";
  s.dims = 2;
  s.canonical = "canonical";
  s.hash = "00000000000000aa";
  return s;
}

WinnerKey key(const DeviceRecord& d, DType dtype, long nx) {
  return WinnerKey{stencil().hash, d.fingerprint(), dtype, {nx, nx, 1}, 9};
}

Trial trial(const std::string& strategy, int t, double pp, double measured,
            TrialStatus status = TrialStatus::Ok) {
  Trial x;
  x.strategy = strategy;
  x.params = {{"t", t}};
  x.predicted.PP_gcells = pp;
  x.predicted.P_gcells = pp;
  x.status = status;
  x.gcells_median = measured;
  x.gcells_best = measured;
  return x;
}

/// A complete tune run of `mode` on the 4098^2 double H100 key with 1000 steps: `feasible`
/// candidates to choose from, `tally` as counted, the winner at `gcells`, `wall_s` seconds.
TuneRecord run(SearchMode mode, int feasible, SearchTally tally, double gcells, double wall_s) {
  TuneRecord r;
  r.key = key(kH100, DType::Double, 4098);
  r.steps = 1000;
  r.stencil_name = "j2d5pt";
  r.search.mode = mode;
  r.space = {feasible + 50, feasible};
  r.selected = tally.total();
  r.tally = tally;
  if (gcells > 0) {
    r.winner_strategy = "cmq2d";
    r.winner_params = {{"t", 8}};
    r.winner_gcells = gcells;
  }
  r.wall_s = wall_s;
  return r;
}
constexpr SearchMode kModel = SearchMode::Model;
constexpr SearchMode kExhaustive = SearchMode::Exhaustive;

/// The runs of the main evidence test: a model search, then an exhaustive search in the same
/// cache that ran out of budget once, was resumed to the end, and was then run once more.
std::vector<TuneRecord> model_then_resumed_exhaustive() {
  TuneRecord first = run(kExhaustive, 300, {100, 8, 2, 0, 190}, 1010, 200);
  first.out_of_budget = true;
  return {run(kModel, 300, {8, 0, 0, 0, 0}, 1000, 40), first,
          run(kExhaustive, 300, {188, 108, 2, 2, 0}, 1020, 300),
          run(kExhaustive, 300, {0, 298, 0, 2, 0}, 1020, 5)};  // re-ran a finished search
}

class ReportTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("tbtune_report_test_" + std::to_string(getpid()) + "_" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    cache_.emplace((dir_ / "t.db").string(), Cache::Mode::ReadWrite);
    cache_->put_device(kH100);
    cache_->put_device(kOther);
    cache_->put_stencil(stencil(), "");
  }
  void TearDown() override {
    cache_.reset();
    fs::remove_all(dir_);
  }
  /// Stores `trials` under `k` and the best ok one as the winner, tuned at `when`.
  void store(const WinnerKey& k, const std::vector<Trial>& trials, const std::string& when) {
    const Trial* best = nullptr;
    for (const Trial& t : trials) {
      cache_->add_trial(k, 1000, t);
      if (t.status == TrialStatus::Ok && (!best || t.gcells_median > best->gcells_median)) best = &t;
    }
    cache_->put_winner(Winner{k, "j2d5pt", 1000, *best, "0.1.0", when});
  }
  /// Two H100 double keys (the main data), one float key, one key of another device.
  void fill() {
    store(key(kH100, DType::Double, 4098),
          {trial("naive", 1, 100, 90),                                // -0.10
           trial("cmq2d", 8, 800, 600),                               // -0.25
           trial("cmq2d", 4, 500, 550),                               // +0.10
           trial("cmq2d", 16, 900, 0, TrialStatus::CompileError),     // not verified: left out
           trial("stream", 1, 0, 50)},                                // no prediction: no error
          "2025-01-01T00:00:00Z");
    store(key(kH100, DType::Double, 8194),
          {trial("naive", 1, 100, 130),                               // +0.30
           trial("cmq2d", 8, 1000, 900)},                             // -0.10
          "2025-01-02T00:00:00Z");
    store(key(kH100, DType::Float, 4098), {trial("cmq2d", 8, 1000, 1100)}, "2025-01-03T00:00:00Z");
    store(key(kOther, DType::Double, 4098), {trial("cmq2d", 8, 700, 700)}, "2025-01-04T00:00:00Z");
  }
  fs::path dir_;
  std::optional<Cache> cache_;
};

TEST_F(ReportTest, EmptyCache) {
  const ModelReport r = model_report(*cache_);
  EXPECT_TRUE(r.keys.empty());
  EXPECT_TRUE(r.strategies.empty());
  const ReportRoofline chart = report_roofline(*cache_, r, [](const Winner&, const DeviceProfile&) {
    return std::optional<ModelTerms>();
  });
  EXPECT_TRUE(chart.svg.empty());
}

TEST_F(ReportTest, RowsAndMedianErrorPerStrategy) {
  fill();
  const ModelReport r = model_report(*cache_);
  ASSERT_EQ(r.keys.size(), 4u);
  // Newest winner first, as Cache::winners() gives them.
  EXPECT_EQ(r.keys[0].winner.key.device_fingerprint, kOther.fingerprint());
  const ReportKey& first = r.keys[3];
  EXPECT_EQ(first.winner.key.domain[0], 4098);
  ASSERT_EQ(first.rows.size(), 4u);  // the compile error is not a verified trial
  EXPECT_EQ(first.rows[1].strategy, "cmq2d");
  EXPECT_EQ(first.rows[1].params, (Params{{"t", 8}}));
  EXPECT_EQ(first.rows[1].predicted_pp, 800);
  EXPECT_EQ(first.rows[1].measured, 600);
  EXPECT_DOUBLE_EQ(*first.rows[1].error(), -0.25);
  EXPECT_FALSE(first.rows[3].error());  // stream: PP 0

  ASSERT_EQ(r.strategies.size(), 2u);  // stream has no trial with a prediction
  EXPECT_EQ(r.strategies[0].strategy, "cmq2d");
  // cmq2d: |-0.25|, |+0.10|, |-0.10|, float |+0.10|, other device |0| -> median 0.10
  EXPECT_EQ(r.strategies[0].trials, 5);
  EXPECT_NEAR(r.strategies[0].median_abs_error, 0.10, 1e-12);
  EXPECT_EQ(r.strategies[1].strategy, "naive");
  EXPECT_EQ(r.strategies[1].trials, 2);
  EXPECT_NEAR(r.strategies[1].median_abs_error, 0.20, 1e-12);  // (0.10 + 0.30) / 2
}

TEST_F(ReportTest, ProfileStoredElseBuiltin) {
  const DeviceProfile builtin = report_profile(*cache_, kH100.fingerprint());
  EXPECT_EQ(builtin.name, "h100 (NVIDIA H100 80GB HBM3)");
  EXPECT_EQ(builtin.gm_bw, builtin_profile("h100")->gm_bw);
  EXPECT_EQ(report_profile(*cache_, kOther.fingerprint()).sm_count, 114);

  DeviceProfile probed = *builtin_profile("h100");
  probed.name = "probed:NVIDIA H100 80GB HBM3";
  probed.gm_bw = 2.75e12;
  cache_->put_profile(kH100.fingerprint(), probed);
  EXPECT_EQ(report_profile(*cache_, kH100.fingerprint()).name, probed.name);
  EXPECT_EQ(report_profile(*cache_, kH100.fingerprint()).gm_bw, 2.75e12);

  const DeviceProfile a100 =
      report_profile(*cache_, "NVIDIA A100-SXM4-40GB|sm_80|108SM|driver 13000|nvrtc 13.0");
  EXPECT_EQ(a100.name, "a100 (NVIDIA A100-SXM4-40GB)");
  EXPECT_EQ(a100.gm_bw, builtin_profile("a100")->gm_bw);
  const DeviceProfile h200 =
      report_profile(*cache_, "NVIDIA H200|sm_90|132SM|driver 13000|nvrtc 13.0");
  EXPECT_EQ(h200.gm_bw, builtin_profile("h200")->gm_bw);
  const DeviceProfile b200 = report_profile(*cache_, "NVIDIA B200|sm_100|148SM|driver 13000|nvrtc 13.0");
  EXPECT_EQ(b200.cc_major, 10);
  EXPECT_EQ(b200.cc_minor, 0);
  EXPECT_EQ(b200.sm_count, 148);
  EXPECT_EQ(report_profile(*cache_, "garbage").name, "h100 (garbage)");
}

TEST_F(ReportTest, RooflineSvgWritten) {
  fill();
  const ModelReport r = model_report(*cache_);
  int asked = 0;
  // Terms for cmq2d winners only; a 2d5pt-like candidate of depth t.
  const TermsFn terms = [&](const Winner& w, const DeviceProfile& d) -> std::optional<ModelTerms> {
    ++asked;
    EXPECT_EQ(d.name, "h100 (NVIDIA H100 80GB HBM3)");
    if (w.trial.strategy != "cmq2d") return std::nullopt;
    ModelTerms t;
    t.depth = w.trial.params.at("t");
    t.a_gm = 2;
    t.a_sm = 4;
    t.a_cmp = 10;
    return t;
  };
  const ReportRoofline chart = report_roofline(*cache_, r, terms);
  EXPECT_EQ(chart.device_fingerprint, kH100.fingerprint());  // 3 of the 4 winners
  EXPECT_EQ(chart.dtype, DType::Double);                     // 2 of its 3
  EXPECT_EQ(asked, 2);
  EXPECT_EQ(chart.drawn, 2);
  ASSERT_EQ(chart.left_out.size(), 2u);
  EXPECT_NE(chart.left_out[0].find("another device"), std::string::npos) << chart.left_out[0];
  EXPECT_NE(chart.left_out[1].find("float, the chart is double"), std::string::npos)
      << chart.left_out[1];

  const fs::path file = dir_ / "roofline.svg";
  std::ofstream(file) << chart.svg;
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  const std::string svg = text.str();
  EXPECT_EQ(svg.rfind("<svg", 0), 0u);
  EXPECT_NE(svg.find("</svg>"), std::string::npos);
  std::size_t circles = 0;
  for (std::size_t at = svg.find("<circle"); at != std::string::npos; at = svg.find("<circle", at + 1))
    ++circles;
  EXPECT_EQ(circles, 2u);
  EXPECT_NE(svg.find("j2d5pt cmq2d t=8"), std::string::npos);
}

TEST_F(ReportTest, FloatChartWhenFloatsDominate) {
  store(key(kH100, DType::Float, 4098), {trial("cmq2d", 8, 1000, 1100)}, "2025-01-03T00:00:00Z");
  store(key(kH100, DType::Float, 8194), {trial("cmq2d", 8, 1000, 1100)}, "2025-01-04T00:00:00Z");
  store(key(kH100, DType::Double, 8194), {trial("cmq2d", 8, 1000, 1100)}, "2025-01-05T00:00:00Z");
  const ReportRoofline chart =
      report_roofline(*cache_, model_report(*cache_),
                      [](const Winner&, const DeviceProfile&) { return std::optional<ModelTerms>(ModelTerms{}); });
  EXPECT_EQ(chart.dtype, DType::Float);
  EXPECT_EQ(chart.drawn, 2);
}

TEST(SearchEvidence, ModelAgainstResumedExhaustive) {
  const auto evidence = search_evidence(model_then_resumed_exhaustive());
  ASSERT_EQ(evidence.size(), 1u);
  const SearchEvidence& e = evidence[0];
  ASSERT_TRUE(e.model);
  EXPECT_EQ(e.model->runs, 1);
  EXPECT_EQ(e.model->timed, 8);
  EXPECT_NEAR(e.model->timed_fraction(), 8.0 / 300, 1e-12);
  EXPECT_EQ(e.model->wall_s, 40);
  ASSERT_TRUE(e.exhaustive);
  // The two runs up to the first complete one; the re-run after it adds nothing.
  EXPECT_EQ(e.exhaustive->runs, 2);
  EXPECT_EQ(e.exhaustive->wall_s, 500);
  // The last run's timed + reused: its own 188, plus the model's 8 and the first run's 100 (and
  // the 2 it pruned to `resources`, which a stored trial does not tell apart).
  EXPECT_EQ(e.exhaustive->timed, 296);
  EXPECT_EQ(e.exhaustive->last.winner_gcells, 1020);
  EXPECT_TRUE(e.exhaustive->last.complete());
  EXPECT_EQ(&e.problem(), &e.model->last);
  EXPECT_NEAR(*e.ratio(), 1000.0 / 1020, 1e-12);
  EXPECT_EQ(e.meets_within(), std::optional<bool>(true));  // 0.980 >= 0.97
  EXPECT_EQ(e.meets_timed(), std::optional<bool>(true));   // 2.7% <= 10%
  EXPECT_EQ(e.meets_wall(), std::optional<bool>(true));    // 40 s <= 60 s
}

TEST(SearchEvidence, CriteriaFail) {
  const auto e = search_evidence({run(kModel, 100, {11, 0, 1, 0, 0}, 960, 75),
                                  run(kExhaustive, 100, {89, 11, 0, 0, 0}, 1000, 600)})[0];
  EXPECT_NEAR(*e.ratio(), 0.96, 1e-12);
  EXPECT_EQ(e.meets_within(), std::optional<bool>(false));  // 0.96 < 0.97
  EXPECT_EQ(e.meets_timed(), std::optional<bool>(false));   // 11% > 10%
  EXPECT_EQ(e.meets_wall(), std::optional<bool>(false));    // 75 s > 60 s
  // Right at the limits passes.
  const auto edge = search_evidence({run(kModel, 100, {10, 0, 0, 0, 0}, 970, 60),
                                     run(kExhaustive, 100, {90, 10, 0, 0, 0}, 1000, 600)})[0];
  EXPECT_EQ(edge.meets_within(), std::optional<bool>(true));
  EXPECT_EQ(edge.meets_timed(), std::optional<bool>(true));
  EXPECT_EQ(edge.meets_wall(), std::optional<bool>(true));
}

TEST(SearchEvidence, IncompleteOrMissingSearchesLeaveCriteriaOpen) {
  TuneRecord stopped = run(kModel, 300, {3, 0, 0, 0, 5}, 900, 10);
  stopped.interrupted = true;
  const auto a = search_evidence({stopped, run(kExhaustive, 300, {297, 3, 0, 0, 0}, 1000, 400)})[0];
  EXPECT_NEAR(*a.ratio(), 0.9, 1e-12);  // shown, but judged only once the model search ends
  EXPECT_FALSE(a.meets_within());
  EXPECT_FALSE(a.meets_timed());
  EXPECT_FALSE(a.meets_wall());

  const auto b = search_evidence({run(kModel, 300, {8, 0, 0, 0, 0}, 1000, 40)})[0];
  EXPECT_FALSE(b.exhaustive);
  EXPECT_FALSE(b.ratio());
  EXPECT_FALSE(b.meets_within());
  EXPECT_EQ(b.meets_timed(), std::optional<bool>(true));  // needs the model search only

  TuneRecord no_winner = run(kExhaustive, 300, {300, 0, 0, 0, 0}, 0, 400);
  const auto c = search_evidence({no_winner})[0];
  EXPECT_FALSE(c.model);
  EXPECT_EQ(&c.problem(), &c.exhaustive->last);
  EXPECT_FALSE(c.ratio());
  EXPECT_FALSE(c.meets_timed());
}

TEST(SearchEvidence, FreshStartsTheSearchAgain) {
  TuneRecord fresh = run(kExhaustive, 300, {150, 0, 0, 0, 150}, 990, 50);
  fresh.fresh = true;
  fresh.out_of_budget = true;
  const auto e = search_evidence({run(kExhaustive, 300, {300, 0, 0, 0, 0}, 1000, 100), fresh,
                                  run(kExhaustive, 300, {150, 150, 0, 0, 0}, 995, 60)})[0];
  EXPECT_EQ(e.exhaustive->runs, 2);
  EXPECT_EQ(e.exhaustive->wall_s, 110);
  EXPECT_EQ(e.exhaustive->timed, 300);
  EXPECT_EQ(e.exhaustive->last.winner_gcells, 995);
}

TEST(SearchEvidence, ProblemsByKeyStepsAndStrategyInFirstRunOrder) {
  TuneRecord other_steps = run(kModel, 300, {8, 0, 0, 0, 0}, 1000, 40);
  other_steps.steps = 1001;  // same step class, another problem
  TuneRecord only_stream = run(kModel, 56, {8, 0, 0, 0, 0}, 500, 20);
  only_stream.only_strategy = "stream";
  TuneRecord other_domain = run(kModel, 300, {8, 0, 0, 0, 0}, 1000, 40);
  other_domain.key.domain = {8194, 8194, 1};
  const auto evidence = search_evidence({other_steps, run(kModel, 300, {8, 0, 0, 0, 0}, 1000, 40),
                                         only_stream, other_domain,
                                         run(kExhaustive, 300, {292, 8, 0, 0, 0}, 1000, 400)});
  ASSERT_EQ(evidence.size(), 4u);
  EXPECT_EQ(evidence[0].problem().steps, 1001);
  EXPECT_FALSE(evidence[0].exhaustive);
  EXPECT_EQ(evidence[1].problem().steps, 1000);
  EXPECT_TRUE(evidence[1].exhaustive);  // the exhaustive run joins the 1000-step problem
  EXPECT_EQ(evidence[2].problem().only_strategy, "stream");
  EXPECT_EQ(evidence[3].problem().key.domain[0], 8194);
  EXPECT_TRUE(search_evidence({}).empty());
}

/// Runs the tbtune CLI with `args`; returns its exit code and standard output.
std::pair<int, std::string> run_cli(const std::string& args) {
  const std::string cmd = std::string(TBTUNE_CLI_PATH) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return {-1, ""};
  std::string out;
  char buf[4096];
  while (const std::size_t n = std::fread(buf, 1, sizeof buf, p)) out.append(buf, n);
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST_F(ReportTest, CommandPrintsSearchSectionAndJson) {
  fill();  // winners too: the existing sections must stay
  for (const TuneRecord& r : model_then_resumed_exhaustive()) cache_->add_tune(r);
  // A later model run of the same problem without --fresh (here with a wider selection) is left
  // out: the first complete run is the evidence.
  cache_->add_tune(run(kModel, 300, {12, 0, 0, 0, 0}, 960, 75));
  const std::string db = (dir_ / "t.db").string();

  const auto [rc, json_text] = run_cli("report --json --db " + db);
  ASSERT_EQ(rc, 0) << json_text;
  const auto j = nlohmann::json::parse(json_text);
  EXPECT_EQ(j.at("keys").size(), 4u);
  ASSERT_EQ(j.at("search").size(), 1u);  // one problem: the last model run re-ran it
  const auto& e = j["search"][0];
  EXPECT_EQ(e.at("stencil"), "j2d5pt");
  EXPECT_EQ(e.at("device"), kH100.fingerprint());
  EXPECT_EQ(e.at("dtype"), "double");
  EXPECT_EQ(e.at("domain"), (std::vector<long>{4098, 4098, 1}));
  EXPECT_EQ(e.at("steps"), 1000);
  EXPECT_TRUE(e.at("strategy").is_null());
  EXPECT_EQ(e.at("feasible"), 300);
  EXPECT_EQ(e.at("space"), 350);
  const auto& m = e.at("model");
  EXPECT_EQ(m.at("runs"), 1);
  EXPECT_EQ(m.at("timed"), 8);
  EXPECT_EQ(m.at("selected"), 8);
  EXPECT_EQ(m.at("complete"), true);
  EXPECT_EQ(m.at("wall_s"), 40.0);
  EXPECT_EQ(m.at("winner").at("gcells"), 1000.0);
  EXPECT_EQ(m.at("winner").at("params").at("t"), 8);
  const auto& x = e.at("exhaustive");
  EXPECT_EQ(x.at("runs"), 2);
  EXPECT_EQ(x.at("timed"), 296);
  EXPECT_EQ(x.at("wall_s"), 500.0);
  EXPECT_EQ(x.at("winner").at("gcells"), 1020.0);
  EXPECT_NEAR(e.at("ratio").get<double>(), 1000.0 / 1020, 1e-12);
  EXPECT_EQ(e.at("within_3pct"), true);
  EXPECT_EQ(e.at("timed_at_most_10pct"), true);
  EXPECT_EQ(e.at("wall_at_most_60s"), true);

  const auto [rc2, text] = run_cli("report --db " + db);
  ASSERT_EQ(rc2, 0) << text;
  EXPECT_NE(text.find("model error per strategy"), std::string::npos) << text;
  const std::size_t at = text.find("\nsearch: the model search against the exhaustive search");
  ASSERT_NE(at, std::string::npos) << text;
  EXPECT_NE(text.find("on " + kH100.fingerprint() + ":", at), std::string::npos) << text;
  // One row: j2d5pt double 4098x4098 1000 300 "8 (2.7%)" 1000.0 40.0 296 1020.0 500.0 0.980 ...
  std::istringstream lines(text.substr(at));
  std::string line, row;
  while (std::getline(lines, line))
    if (line.rfind("j2d5pt", 0) == 0) row = line;
  std::istringstream cells(row);
  std::vector<std::string> got{std::istream_iterator<std::string>(cells), {}};
  EXPECT_EQ(got, (std::vector<std::string>{"j2d5pt", "double", "4098x4098", "1000", "300", "8",
                                           "(2.7%)", "1000.0", "40.0", "296", "1020.0", "500.0",
                                           "0.980", "pass", "pass", "pass"}))
      << row;
}

TEST_F(ReportTest, CommandMarksIncompleteAndFailingSearches) {
  TuneRecord stopped = run(kExhaustive, 100, {40, 11, 0, 0, 49}, 1000, 300);
  stopped.interrupted = true;
  cache_->add_tune(run(kModel, 100, {11, 0, 0, 0, 0}, 960, 75));
  cache_->add_tune(stopped);
  const std::string db = (dir_ / "t.db").string();
  const auto [rc, text] = run_cli("report --db " + db);
  ASSERT_EQ(rc, 0) << text;
  std::istringstream lines(text);
  std::string line, row;
  while (std::getline(lines, line))
    if (line.rfind("j2d5pt", 0) == 0) row = line;
  std::istringstream cells(row);
  std::vector<std::string> got{std::istream_iterator<std::string>(cells), {}};
  EXPECT_EQ(got, (std::vector<std::string>{"j2d5pt", "double", "4098x4098", "1000", "100", "11",
                                           "(11.0%)", "960.0", "75.0", "51*", "1000.0", "300.0",
                                           "0.960", "-", "FAIL", "FAIL"}))
      << row;
  EXPECT_NE(text.find("* incomplete"), std::string::npos) << text;

  const auto [rc2, json_text] = run_cli("report --json --db " + db);
  ASSERT_EQ(rc2, 0) << json_text;
  const auto e = nlohmann::json::parse(json_text).at("search").at(0);
  EXPECT_EQ(e.at("exhaustive").at("complete"), false);
  EXPECT_TRUE(e.at("within_3pct").is_null());
  EXPECT_EQ(e.at("timed_at_most_10pct"), false);
  EXPECT_EQ(e.at("wall_at_most_60s"), false);
}

TEST_F(ReportTest, CommandWithoutTuneRuns) {
  const auto [rc, text] = run_cli("report --db " + (dir_ / "t.db").string());
  ASSERT_EQ(rc, 0) << text;
  EXPECT_NE(text.find("search: no tune runs recorded"), std::string::npos) << text;
  const auto [rc2, json_text] = run_cli("report --json --db " + (dir_ / "t.db").string());
  ASSERT_EQ(rc2, 0) << json_text;
  EXPECT_TRUE(nlohmann::json::parse(json_text).at("search").empty());
}

}  // namespace
}  // namespace tbtune
