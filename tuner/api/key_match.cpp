#include "tuner/api/key_match.hpp"

#include <cmath>
#include <cstdlib>
#include <tuple>

namespace tbtune {

FingerprintParts split_fingerprint(const std::string& fp) {
  FingerprintParts p;
  const auto nvrtc = fp.rfind("|nvrtc ");
  const auto driver = fp.rfind("|driver ", nvrtc);
  if (nvrtc == std::string::npos || driver == std::string::npos) {
    p.model = fp;
    return p;
  }
  p.model = fp.substr(0, driver);
  p.driver = fp.substr(driver + 8, nvrtc - driver - 8);
  p.nvrtc = fp.substr(nvrtc + 7);
  return p;
}

std::string device_model(const DeviceInfo& d) {
  DeviceRecord r;
  r.name = d.name;
  r.cc_major = d.cc_major;
  r.cc_minor = d.cc_minor;
  r.sm_count = d.sm_count;
  return split_fingerprint(r.fingerprint()).model;
}

MatchResult match(const std::vector<Winner>& winners, const WantedKey& want) {
  // Narrow the list one key part at a time; the first part nothing survives is the reason.
  bool stencil = false, model = false, driver = false, dtype = false, domain = false;
  for (const Winner& w : winners) {
    if (w.key.stencil_hash != want.stencil_hash) continue;
    stencil = true;
    if (want.model.empty()) continue;
    const FingerprintParts fp = split_fingerprint(w.key.device_fingerprint);
    if (fp.model != want.model) continue;
    model = true;
    if (fp.driver != want.driver) continue;
    driver = true;
    if (w.key.dtype != want.dtype) continue;
    dtype = true;
    if (w.key.domain != want.domain) continue;
    domain = true;
    if (w.key.steps_class != want.steps_class) continue;
    return {MissReason::None, w.key};
  }
  if (!stencil) return {MissReason::StencilUnknown, std::nullopt};
  if (want.model.empty()) return {MissReason::NoGpu, std::nullopt};
  if (!model) return {MissReason::OtherDevice, std::nullopt};
  if (!driver) return {MissReason::OtherDriver, std::nullopt};
  if (!dtype) return {MissReason::OtherDtype, std::nullopt};
  if (!domain) return {MissReason::OtherDomain, std::nullopt};
  return {MissReason::OtherStepClass, std::nullopt};
}

std::optional<Winner> nearest(const std::vector<Winner>& winners, const WantedKey& want) {
  std::optional<Winner> best;
  std::tuple<double, int, int> best_score{};
  for (const Winner& w : winners) {
    if (w.key.stencil_hash != want.stencil_hash || w.key.dtype != want.dtype) continue;
    const FingerprintParts fp = split_fingerprint(w.key.device_fingerprint);
    if (fp.model != want.model) continue;
    double distance = 0;
    for (std::size_t i = 0; i < 3; ++i)
      distance += std::abs(std::log(double(w.key.domain[i]) / double(want.domain[i])));
    const std::tuple<double, int, int> score{distance, std::abs(w.key.steps_class - want.steps_class),
                                             fp.driver == want.driver ? 0 : 1};
    if (!best || score < best_score) {
      best = w;
      best_score = score;
    }
  }
  return best;
}

}  // namespace tbtune
