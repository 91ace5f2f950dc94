// Tests for model/profile_json (DeviceProfile <-> JSON) and model/probe's pure parts: the
// probed profile built from measured figures, and the median. The benchmarks themselves need a
// GPU; `tbtune probe` runs them (README "Commands").
#include "model/profile_json.hpp"

#include <gtest/gtest.h>

#include "tuner/codegen/templates.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/gpu/probe.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

TEST(ProfileJson, EveryBuiltinRoundTrips) {
  for (const std::string& name : builtin_profile_names()) {
    const DeviceProfile p = *builtin_profile(name);
    const nlohmann::json j = profile_to_json(p);
    EXPECT_EQ(j.size(), 20u) << "a DeviceProfile field is missing from profile_json.cpp";
    // Through text, as the cache stores it.
    const DeviceProfile q = profile_from_json(nlohmann::json::parse(j.dump()));
    EXPECT_EQ(profile_to_json(q), j) << name;
    EXPECT_EQ(q.name, p.name);
    EXPECT_EQ(q.gm_bw, p.gm_bw);
    EXPECT_EQ(q.smem_per_block, p.smem_per_block);
    EXPECT_EQ(q.gm_latency_s, p.gm_latency_s);
    EXPECT_EQ(q.warp_ready_share, p.warp_ready_share);
  }
}

TEST(ProfileJson, KeysAndUnits) {
  const nlohmann::json j = profile_to_json(*builtin_profile("h100"));
  EXPECT_EQ(j.at("name"), "h100");
  EXPECT_EQ(j.at("sm_count"), 132);
  EXPECT_DOUBLE_EQ(j.at("gm_bw").get<double>(), 2.82e12);
  EXPECT_DOUBLE_EQ(j.at("grid_sync_s").get<double>(), 1.12e-6);
  EXPECT_EQ(j.at("smem_per_sm"), 228 * 1024);
}

TEST(ProfileJson, MissingKeysKeepDefaults) {
  const DeviceProfile p = profile_from_json(nlohmann::json::parse(R"({"name": "x", "gm_bw": 1e12})"));
  EXPECT_EQ(p.name, "x");
  EXPECT_EQ(p.gm_bw, 1e12);
  EXPECT_EQ(p.regs_per_sm, DeviceProfile{}.regs_per_sm);
  // Integers are fine where doubles are expected.
  EXPECT_EQ(profile_from_json(nlohmann::json::parse(R"({"sm_bw": 3})")).sm_bw, 3.0);
}

// A profile probed by an older tbtune lacks the fields added since: they come from the built-in
// profile it is read over, so its model is the same as a fresh probe's.
TEST(ProfileJson, MissingKeysTakeTheBase) {
  const DeviceProfile h100 = *builtin_profile("h100");
  nlohmann::json old = profile_to_json(h100);
  old.erase("warp_ready_share");
  old["gm_bw"] = 2.5e12;
  const DeviceProfile p = profile_from_json(old, h100);
  EXPECT_EQ(p.warp_ready_share, h100.warp_ready_share);
  EXPECT_GT(p.warp_ready_share, 0);
  EXPECT_EQ(p.gm_bw, 2.5e12);  // what the JSON holds wins
  EXPECT_EQ(profile_from_json(old).warp_ready_share, 0);  // no base: DeviceProfile's default
}

TEST(ProfileJson, WrongTypesThrow) {
  EXPECT_THROW((void)profile_from_json(nlohmann::json::array()), Error);
  EXPECT_THROW((void)profile_from_json(nlohmann::json::parse(R"({"gm_bw": "fast"})")), Error);
  EXPECT_THROW((void)profile_from_json(nlohmann::json::parse(R"({"sm_count": 1.5})")), Error);
  EXPECT_THROW((void)profile_from_json(nlohmann::json::parse(R"({"name": 3})")), Error);
  try {
    (void)profile_from_json(nlohmann::json::parse(R"({"sm_count": "many"})"));
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("'sm_count'"), std::string::npos) << e.what();
  }
}

TEST(Probe, ProbedProfileReplacesMeasuredFields) {
  const DeviceProfile h100 = *builtin_profile("h100");
  ProbeFigures f;
  f.gm_bw = 2.79e12;
  f.sm_bw = 32.8e12;
  f.fp64_flops = 31.7e12;
  f.fp32_flops = 63.1e12;
  f.grid_sync_s = 1.09e-6;
  f.gm_latency_s = 0;  // not measured: keeps the built-in figure
  const DeviceProfile p = probed_profile(h100, "NVIDIA H100 80GB HBM3", f);
  EXPECT_EQ(p.name, "probed:NVIDIA H100 80GB HBM3");
  EXPECT_EQ(p.gm_bw, 2.79e12);
  EXPECT_EQ(p.sm_bw, 32.8e12);
  EXPECT_EQ(p.fp64_flops, 31.7e12);
  EXPECT_EQ(p.fp32_flops, 63.1e12);
  EXPECT_EQ(p.grid_sync_s, 1.09e-6);
  EXPECT_EQ(p.gm_latency_s, h100.gm_latency_s);
  EXPECT_EQ(p.sm_count, h100.sm_count);  // capacities come from the built-in profile
  EXPECT_EQ(p.smem_per_sm, h100.smem_per_sm);
}

TEST(Probe, Median) {
  EXPECT_EQ(median_of({}), 0);
  EXPECT_EQ(median_of({3}), 3);
  EXPECT_EQ(median_of({5, 1, 3}), 3);
  EXPECT_EQ(median_of({4, 1, 3, 2}), 2.5);
}

TEST(Probe, TemplateCompilesWithoutGpu) {
  // NVRTC needs no GPU, so the probe kernels are checked here; running them needs one.
  const std::string* source = embedded_template("probe.cuh");
  ASSERT_NE(source, nullptr);
  const CompiledModule m = compile_cuda(*source, "sm_90");
  EXPECT_FALSE(m.cubin.empty());
  for (const char* k : {"probe_copy", "probe_smem", "probe_fma64", "probe_fma32",
                        "probe_grid_sync", "probe_chase_init", "probe_chase"}) {
    ASSERT_TRUE(m.kernels.count(k)) << k << " missing; log:\n" << m.log;
    EXPECT_EQ(m.kernels.at(k).spill_bytes(), 0) << k;
  }
  EXPECT_EQ(m.kernels.at("probe_smem").smem_bytes, 16384);  // 4 blocks of 256 fit any SM
}

}  // namespace
}  // namespace tbtune
