// `tbtune lookup SPEC`: the stored winner for this spec, precision, domain, step class and GPU.
// Exit 0 on a hit, 1 on a miss, 2 on an error, so scripts can branch on it.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "db/cache.hpp"
#include "tuner/api/key_match.hpp"

namespace tbtune::cli {
namespace {

struct LookupArgs {
  ProblemArgs problem;
  std::string db;
  int device = 0;
  bool json = false;
};

int run_lookup(const LookupArgs& a) {
  const Problem p = a.problem.load();
  const std::string path = a.db.empty() ? Cache::default_path() : a.db;
  const DeviceInfo d = open_device(a.device);
  // Matched as applications match (tuner/api/key_match.hpp): by GPU model and driver, not by the
  // NVRTC version, so a lookup never loads NVRTC.
  const WantedKey want{p.stencil.hash, p.dtype, p.domain, steps_class(p.steps), device_model(d),
                       std::to_string(d.driver_version)};
  const std::string device = want.model + "|driver " + want.driver;
  // No cache file yet means nothing was tuned: a miss, not an error.
  std::optional<Winner> w;
  MissReason reason = MissReason::NoCache;
  if (std::filesystem::exists(path)) {
    const Cache cache(path, Cache::Mode::ReadOnly);
    const MatchResult m = match(cache.winners_of(p.stencil.hash), want);
    reason = m.reason;
    if (m.hit) w = cache.winner(*m.hit);
  }
  if (a.json) {
    nlohmann::json j{{"hit", bool(w)}, {"reason", reason_name(reason)}, {"stencil", stencil_json(p)},
                     {"device", w ? w->key.device_fingerprint : device}};
    if (w) {
      j["winner"] = trial_json(w->trial);
      j["cubin_bytes"] = w->trial.cubin.size();
      j["tuned_steps"] = w->steps;
      j["created_at"] = w->created_at;
      j["tool_version"] = w->tool_version;
    }
    std::cout << j.dump(2) << '\n';
  } else if (w) {
    fmt::print("hit: {} {} at {:.1f} GCells/s ({} steps, tuned {} by tbtune {}, CUBIN {} bytes)\n",
               w->trial.strategy, params_text(w->trial.params), w->trial.gcells_median, w->steps,
               w->created_at, w->tool_version, w->trial.cubin.size());
  } else {
    fmt::print("miss ({}): no winner for {} ({}, {}x{}x{}, step class {}) on {} in {}\n",
               reason_name(reason), p.stencil.name, dtype_name(p.dtype), p.domain[0], p.domain[1],
               p.domain[2], want.steps_class, device, path);
  }
  return w ? kOk : kMiss;
}

}  // namespace

void add_lookup_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<LookupArgs>();
  CLI::App* cmd = app.add_subcommand(
      "lookup", "Print the cached winner for SPEC on this GPU without compiling anything (or "
                "loading NVRTC), as an application's lookup finds it, or why there is none. "
                "Exit 0 on a hit, 1 on a miss, 2 on an error.");
  args->problem.add_to(cmd);
  add_db_option(cmd, args->db);
  cmd->add_option("--device", args->device, "CUDA device number")->capture_default_str();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([&action, args] { action = [args] { return run_lookup(*args); }; });
}

}  // namespace tbtune::cli
