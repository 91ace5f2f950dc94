// `tbtune probe`: measure the present GPU's bandwidths, flop rates and latencies, print them
// next to the built-in profile's figures, and store the measured profile in the cache, where
// `tune` finds it.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "db/cache.hpp"
#include "model/profile_json.hpp"
#include "tuner/gpu/probe.hpp"
#include "tuner/search/tune.hpp"

namespace tbtune::cli {
namespace {

struct ProbeArgs {
  std::string db;
  int device = 0;
  int repetitions = 9;
  bool json = false;
};

/// One row of the comparison: a DeviceProfile field, its display unit and scale.
struct Figure {
  const char* key;
  const char* what;
  const char* unit;
  double scale;  // profile value / scale = the figure in `unit`
  double DeviceProfile::*field;
};

constexpr Figure kFigures[] = {
    {"gm_bw", "global-memory copy (read + write)", "TB/s", 1e12, &DeviceProfile::gm_bw},
    {"sm_bw", "shared-memory read", "TB/s", 1e12, &DeviceProfile::sm_bw},
    {"fp64_flops", "FP64 FMA (2 flops each)", "TFLOP/s", 1e12, &DeviceProfile::fp64_flops},
    {"fp32_flops", "FP32 FMA (2 flops each)", "TFLOP/s", 1e12, &DeviceProfile::fp32_flops},
    {"grid_sync_s", "grid.sync(), 1 block/SM", "us", 1e-6, &DeviceProfile::grid_sync_s},
    {"gm_latency_s", "global-memory latency (chase)", "ns", 1e-9, &DeviceProfile::gm_latency_s},
};

nlohmann::json figures_json(const DeviceProfile& p) {
  nlohmann::json j = nlohmann::json::object();
  for (const Figure& f : kFigures) j[f.key] = p.*f.field;
  return j;
}

int run_probe(const ProbeArgs& a) {
  const std::string db_path = a.db.empty() ? Cache::default_path() : a.db;
  const DeviceInfo device = open_device(a.device);
  ProbeOptions o;
  o.repetitions = a.repetitions;
  o.compile_cache_dir = (std::filesystem::path(db_path).parent_path() / "cubins").string();
  const ProbeResult r = probe_device(device, o);

  const DeviceRecord record = device_record(device);
  Cache cache(db_path, Cache::Mode::ReadWrite);
  cache.put_device(record);
  cache.put_profile(record.fingerprint(), r.profile);

  if (a.json) {
    nlohmann::json j{{"device", {{"name", device.name},
                                 {"fingerprint", record.fingerprint()},
                                 {"sm_count", device.sm_count}}},
                     {"db", db_path},
                     {"gpu_seconds", r.gpu_seconds},
                     {"measured", figures_json(r.profile)},
                     {"builtin", figures_json(r.builtin)},
                     {"builtin_name", r.builtin.name},
                     {"profile", profile_to_json(r.profile)}};
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  fmt::print("{} ({} SMs, sm_{}{}), {:.0f} ms of GPU time\n", device.name, device.sm_count,
             device.cc_major, device.cc_minor, r.gpu_seconds * 1e3);
  std::vector<std::vector<std::string>> rows;
  for (const Figure& f : kFigures) {
    const double measured = r.profile.*f.field, builtin = r.builtin.*f.field;
    rows.push_back({f.what, f.unit, fmt::format("{:.3g}", measured / f.scale),
                    fmt::format("{:.3g}", builtin / f.scale),
                    builtin > 0 ? fmt::format("{:.0f}%", 100 * measured / builtin) : "-"});
  }
  print_table({"figure", "unit", "measured", r.builtin.name, "measured/built-in"}, rows);
  fmt::print("stored as profile '{}' for {} in {}\n", r.profile.name, record.fingerprint(), db_path);
  return kOk;
}

}  // namespace

void add_probe_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ProbeArgs>();
  CLI::App* cmd = app.add_subcommand(
      "probe", "Measure this GPU with microbenchmarks (global-memory copy bandwidth, shared-memory "
               "bandwidth, FP64/FP32 FMA rates, grid.sync() and global-memory latency), print "
               "them next to the built-in profile and store the measured profile in the cache; "
               "`tune` then models with it. Needs a GPU; takes well under a second of GPU time.");
  add_db_option(cmd, args->db);
  cmd->add_option("--device", args->device, "CUDA device number")->capture_default_str();
  cmd->add_option("--reps", args->repetitions, "timed runs per benchmark (the median counts)")
      ->capture_default_str()->check(CLI::Range(1, 100));
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([&action, args] { action = [args] { return run_probe(*args); }; });
}

}  // namespace tbtune::cli
