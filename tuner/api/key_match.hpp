#pragma once
/// @file key_match.hpp
/// Internal to tuner/api: which stored winner answers a lookup, and when none does, why not
/// and which one is nearest. Pure functions over the cache's winner list: no GPU, no SQLite.
#include <optional>
#include <string>
#include <vector>

#include "db/cache.hpp"
#include "tbtune/tbtune.hpp"
#include "tuner/gpu/gpu.hpp"

namespace tbtune {

/// A device fingerprint ("name|sm_XY|NSM|driver D|nvrtc X.Y", DeviceRecord::fingerprint) in parts.
struct FingerprintParts {
  std::string model;   ///< "name|sm_XY|NSM": the GPU model
  std::string driver;  ///< "13000"
  std::string nvrtc;   ///< "13.0"
};
/// Splits from the end, as a GPU name could hold a '|'. A fingerprint of another form is all model.
[[nodiscard]] FingerprintParts split_fingerprint(const std::string& fingerprint);

/// The GPU model part of `device`'s fingerprint, made without NVRTC (whose version is the
/// fingerprint's last part and does not matter for running a stored CUBIN).
[[nodiscard]] std::string device_model(const DeviceInfo& device);

/// What a lookup asks for. The NVRTC version is not part of it: a stored CUBIN runs whatever
/// NVRTC (or none) is installed now, so a hit needs only the GPU model and the driver.
struct WantedKey {
  std::string stencil_hash;
  DType dtype = DType::Double;
  std::array<long, 3> domain{1, 1, 1};
  int steps_class = 0;
  std::string model;
  std::string driver;
};

struct MatchResult {
  MissReason reason = MissReason::StencilUnknown;  ///< None: `hit` is set
  std::optional<WinnerKey> hit;                    ///< the stored key that answers it
};

/// The stored winner that answers `wanted` (the first of `winners` in their order, newest first
/// as Cache::winners_of() lists them), else the reason for the miss, by the order documented at
/// tbtune::MissReason. Without a GPU (`wanted.model` empty) a stencil the cache knows is NoGpu.
[[nodiscard]] MatchResult match(const std::vector<Winner>& winners, const WantedKey& wanted);

/// The stored winner nearest to `wanted` that a `nearest` fallback may borrow parameters from:
/// same stencil, precision and GPU model; the least domain distance (sum over axes of
/// |log(n_stored / n_wanted)|), then the least step-class difference, then this driver before
/// another. nullopt when none qualifies.
[[nodiscard]] std::optional<Winner> nearest(const std::vector<Winner>& winners, const WantedKey& wanted);

}  // namespace tbtune
