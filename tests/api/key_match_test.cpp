// Which stored winner answers a lookup, why a lookup missed, and which winner is nearest:
// tuner/api/key_match.hpp over hand-made winner lists (no GPU, no cache file).
#include "tuner/api/key_match.hpp"

#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tbtune/tbtune.h"

namespace tbtune {
namespace {

const std::string kH100 = "NVIDIA H100 80GB HBM3|sm_90|132SM";

Winner stored(const std::string& model, const std::string& driver, DType dtype, std::array<long, 3> domain,
              int steps_class, const std::string& strategy = "cmq2d") {
  Winner w;
  w.key = WinnerKey{"abc", model + "|driver " + driver + "|nvrtc 13.0", dtype, domain, steps_class};
  w.trial.strategy = strategy;
  return w;
}

WantedKey wanted(std::array<long, 3> domain = {4096, 4096, 1}, int steps_class = 9) {
  return WantedKey{"abc", DType::Double, domain, steps_class, kH100, "13000"};
}

// Every miss reason has one name, the same through C as through C++, and C's last value is the
// enum's last (a reason added to one and not the other would read "unknown").
TEST(KeyMatch, EveryReasonHasOneNameInBothApis) {
  std::set<std::string> names;
  for (int r = TBTUNE_HIT; r <= TBTUNE_MISS_STALE_KERNEL; ++r) {
    const std::string name = reason_name(static_cast<MissReason>(r));
    EXPECT_NE(name, "unknown") << r;
    EXPECT_EQ(name, tbtune_reason_name(r)) << r;
    names.insert(name);
  }
  EXPECT_EQ(names.size(), std::size_t(TBTUNE_MISS_STALE_KERNEL + 1));
  EXPECT_STREQ(tbtune_reason_name(TBTUNE_MISS_STALE_KERNEL), "stale_kernel");
  EXPECT_STREQ(tbtune_reason_name(TBTUNE_MISS_STALE_KERNEL + 1), "unknown");
  EXPECT_STREQ(reason_name(static_cast<MissReason>(TBTUNE_MISS_STALE_KERNEL + 1)), "unknown");
}

TEST(KeyMatch, SplitsAFingerprintFromTheEnd) {
  const auto p = split_fingerprint("GPU|with|bars|sm_90|132SM|driver 13000|nvrtc 13.0");
  EXPECT_EQ(p.model, "GPU|with|bars|sm_90|132SM");
  EXPECT_EQ(p.driver, "13000");
  EXPECT_EQ(p.nvrtc, "13.0");
  EXPECT_EQ(split_fingerprint("odd").model, "odd");
}

TEST(KeyMatch, AHitIgnoresTheNvrtcVersion) {
  std::vector<Winner> ws{stored(kH100, "13000", DType::Double, {4096, 4096, 1}, 9)};
  ws[0].key.device_fingerprint = kH100 + "|driver 13000|nvrtc 12.9";
  const MatchResult m = match(ws, wanted());
  EXPECT_EQ(m.reason, MissReason::None);
  ASSERT_TRUE(m.hit.has_value());
  EXPECT_EQ(m.hit->device_fingerprint, ws[0].key.device_fingerprint);
}

TEST(KeyMatch, TheReasonIsTheFirstDifference) {
  EXPECT_EQ(match({}, wanted()).reason, MissReason::StencilUnknown);
  auto other_stencil = stored(kH100, "13000", DType::Double, {4096, 4096, 1}, 9);
  other_stencil.key.stencil_hash = "def";
  EXPECT_EQ(match({other_stencil}, wanted()).reason, MissReason::StencilUnknown);
  EXPECT_EQ(match({stored("NVIDIA A100|sm_80|108SM", "13000", DType::Double, {4096, 4096, 1}, 9)}, wanted()).reason,
            MissReason::OtherDevice);
  EXPECT_EQ(match({stored(kH100, "12080", DType::Double, {4096, 4096, 1}, 9)}, wanted()).reason,
            MissReason::OtherDriver);
  EXPECT_EQ(match({stored(kH100, "13000", DType::Float, {4096, 4096, 1}, 9)}, wanted()).reason,
            MissReason::OtherDtype);
  EXPECT_EQ(match({stored(kH100, "13000", DType::Double, {2048, 2048, 1}, 9)}, wanted()).reason,
            MissReason::OtherDomain);
  EXPECT_EQ(match({stored(kH100, "13000", DType::Double, {4096, 4096, 1}, 4)}, wanted()).reason,
            MissReason::OtherStepClass);
  WantedKey no_gpu = wanted();
  no_gpu.model.clear();
  EXPECT_EQ(match({stored(kH100, "13000", DType::Double, {4096, 4096, 1}, 9)}, no_gpu).reason, MissReason::NoGpu);
}

TEST(KeyMatch, NearestPrefersTheClosestDomainThenStepClassThenThisDriver) {
  const std::vector<Winner> ws{
      stored(kH100, "13000", DType::Double, {1024, 1024, 1}, 9, "far"),
      stored(kH100, "13000", DType::Double, {4000, 4000, 1}, 4, "close-other-class"),
      stored(kH100, "13000", DType::Double, {4000, 4000, 1}, 9, "close"),
      stored(kH100, "12080", DType::Double, {4000, 4000, 1}, 9, "close-other-driver"),
      stored(kH100, "13000", DType::Float, {4096, 4096, 1}, 9, "other-dtype"),
      stored("NVIDIA A100|sm_80|108SM", "13000", DType::Double, {4096, 4096, 1}, 9, "other-gpu"),
  };
  const auto n = nearest(ws, wanted());
  ASSERT_TRUE(n.has_value());
  EXPECT_EQ(n->trial.strategy, "close");
  // Only another driver has the exact key: that is the nearest.
  const auto d = nearest({ws[0], stored(kH100, "12080", DType::Double, {4096, 4096, 1}, 9, "driver")}, wanted());
  ASSERT_TRUE(d.has_value());
  EXPECT_EQ(d->trial.strategy, "driver");
  // Neither another precision nor another GPU model lends its parameters.
  EXPECT_FALSE(nearest({ws[4], ws[5]}, wanted()).has_value());
}

}  // namespace
}  // namespace tbtune
