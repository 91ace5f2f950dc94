// Tests for model/report: accuracy statistics over a cache filled with synthetic trials, the
// profile a report judges a device by, and the winners' roofline chart written as SVG.
#include "model/report.hpp"

#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

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

}  // namespace
}  // namespace tbtune
