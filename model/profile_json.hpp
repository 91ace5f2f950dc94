#pragma once
/// @file profile_json.hpp
/// DeviceProfile <-> JSON, the form profiles are stored in the cache (`profiles.json`) and
/// printed by `tbtune probe --json`. Every field of DeviceProfile is one key of the same name.
#include <nlohmann/json.hpp>

#include "model/device_profile.hpp"

namespace tbtune {

/// Every field of `d` as one JSON object.
[[nodiscard]] nlohmann::json profile_to_json(const DeviceProfile& d);

/// The profile in `j`. Keys that are missing keep DeviceProfile's defaults (so a profile
/// written by an older tbtune still reads); a key of the wrong type, or `j` not an object,
/// throws Error naming the key.
[[nodiscard]] DeviceProfile profile_from_json(const nlohmann::json& j);

}  // namespace tbtune
