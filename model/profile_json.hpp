#pragma once
/// @file profile_json.hpp
/// DeviceProfile <-> JSON, the form profiles are stored in the cache (`profiles.json`) and
/// printed by `tbtune probe --json`. Every field of DeviceProfile is one key of the same name.
#include <nlohmann/json.hpp>

#include "model/device_profile.hpp"

namespace tbtune {

/// Every field of `d` as one JSON object.
[[nodiscard]] nlohmann::json profile_to_json(const DeviceProfile& d);

/// The profile in `j` over `base`: keys that are missing keep base's values (so a profile written
/// by an older tbtune still reads, and takes the fields added since from the built-in profile
/// it was probed from); a key of the wrong type, or `j` not an object, throws Error naming the key.
[[nodiscard]] DeviceProfile profile_from_json(const nlohmann::json& j, const DeviceProfile& base = {});

}  // namespace tbtune
