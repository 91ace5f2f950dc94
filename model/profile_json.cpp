// DeviceProfile <-> JSON. One table of fields serves both directions, so a field added to
// DeviceProfile needs one line here and cannot be written but not read.
#include "model/profile_json.hpp"

#include <variant>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

using Field = std::variant<std::string DeviceProfile::*, int DeviceProfile::*,
                           long DeviceProfile::*, double DeviceProfile::*>;

struct Entry {
  const char* key;
  Field field;
};

const Entry kFields[] = {
    {"name", &DeviceProfile::name},
    {"cc_major", &DeviceProfile::cc_major},
    {"cc_minor", &DeviceProfile::cc_minor},
    {"sm_count", &DeviceProfile::sm_count},
    {"smem_per_sm", &DeviceProfile::smem_per_sm},
    {"smem_per_block", &DeviceProfile::smem_per_block},
    {"regs_per_sm", &DeviceProfile::regs_per_sm},
    {"max_threads_per_sm", &DeviceProfile::max_threads_per_sm},
    {"max_blocks_per_sm", &DeviceProfile::max_blocks_per_sm},
    {"l2_bytes", &DeviceProfile::l2_bytes},
    {"clock_ghz", &DeviceProfile::clock_ghz},
    {"gm_bw", &DeviceProfile::gm_bw},
    {"sm_bw", &DeviceProfile::sm_bw},
    {"fp32_flops", &DeviceProfile::fp32_flops},
    {"fp64_flops", &DeviceProfile::fp64_flops},
    {"grid_sync_s", &DeviceProfile::grid_sync_s},
    {"gm_latency_s", &DeviceProfile::gm_latency_s},
    {"update_latency_s", &DeviceProfile::update_latency_s},
    {"schedulers_per_sm", &DeviceProfile::schedulers_per_sm},
    {"warp_ready_share", &DeviceProfile::warp_ready_share},
};

}  // namespace

nlohmann::json profile_to_json(const DeviceProfile& d) {
  nlohmann::json j = nlohmann::json::object();
  for (const Entry& e : kFields)
    std::visit([&](auto member) { j[e.key] = d.*member; }, e.field);
  return j;
}

DeviceProfile profile_from_json(const nlohmann::json& j, const DeviceProfile& base) {
  if (!j.is_object()) throw Error("device profile: expected a JSON object, got " + j.dump());
  DeviceProfile d = base;
  for (const Entry& e : kFields) {
    const auto it = j.find(e.key);
    if (it == j.end()) continue;
    std::visit(
        [&](auto member) {
          using T = std::remove_reference_t<decltype(d.*member)>;
          const bool ok = std::is_same_v<T, std::string> ? it->is_string()
                          : std::is_floating_point_v<T> ? it->is_number()
                                                        : it->is_number_integer();
          if (!ok)
            throw Error(std::string("device profile: key '") + e.key + "' has the wrong type (" +
                        it->dump() + ")");
          d.*member = it->template get<T>();
        },
        e.field);
  }
  return d;
}

}  // namespace tbtune
