// `tbtune db list|show|merge`: what the cache holds, and joining the caches of a sweep's tasks.
#include <filesystem>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "db/cache.hpp"
#include "db/merge.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/sweep/shard.hpp"

namespace tbtune::cli {
namespace {

struct DbArgs {
  std::string db;
  std::string hash;
  bool json = false;
  std::vector<std::string> inputs;  ///< merge: IN... (a pattern with %a when expect is set)
  std::string expect;               ///< merge: the task ids a pattern should give
};

/// Exit code of `db merge` when expected shards were missing and the others were merged.
constexpr int kShardsMissing = 3;

std::string domain_text(const WinnerKey& k) {
  return fmt::format("{}x{}{}", k.domain[0], k.domain[1], k.domain[2] > 1 ? "x" + std::to_string(k.domain[2]) : "");
}

nlohmann::json winner_json(const Winner& w) {
  return {{"stencil", w.stencil_name}, {"hash", w.key.stencil_hash}, {"device", w.key.device_fingerprint},
          {"dtype", dtype_name(w.key.dtype)}, {"domain", w.key.domain}, {"steps", w.steps},
          {"steps_class", w.key.steps_class}, {"trial", trial_json(w.trial)},
          {"created_at", w.created_at}, {"tool_version", w.tool_version}};
}

int run_list(const DbArgs& a) {
  const std::string path = a.db.empty() ? Cache::default_path() : a.db;
  const Cache cache(path, Cache::Mode::ReadOnly);
  const auto winners = cache.winners();
  if (a.json) {
    nlohmann::json j = nlohmann::json::array();
    for (const auto& w : winners) j.push_back(winner_json(w));
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (const auto& w : winners)
    rows.push_back({w.stencil_name, w.key.stencil_hash, dtype_name(w.key.dtype), domain_text(w.key),
                    std::to_string(w.steps), w.trial.strategy, params_text(w.trial.params),
                    fixed(w.trial.gcells_median), w.key.device_fingerprint, w.created_at});
  fmt::print("{}: {} winner(s)\n", path, winners.size());
  print_table({"stencil", "hash", "dtype", "domain", "steps", "strategy", "params", "GCells/s", "device", "tuned"}, rows);
  return kOk;
}

int run_show(const DbArgs& a) {
  const std::string path = a.db.empty() ? Cache::default_path() : a.db;
  const Cache cache(path, Cache::Mode::ReadOnly);
  nlohmann::json out = nlohmann::json::array();
  int found = 0;
  for (const auto& w : cache.winners()) {
    if (w.key.stencil_hash.rfind(a.hash, 0) != 0 && w.stencil_name != a.hash) continue;
    ++found;
    const auto trials = cache.trials(w.key);
    if (a.json) {
      nlohmann::json j = winner_json(w);
      j["trials"] = nlohmann::json::array();
      for (const Trial& t : trials) j["trials"].push_back(trial_json(t));
      out.push_back(j);
      continue;
    }
    fmt::print("{} ({}), {}, {}, {} steps on {}: {} trial(s)\n", w.stencil_name, w.key.stencil_hash,
               dtype_name(w.key.dtype), domain_text(w.key), w.steps, w.key.device_fingerprint, trials.size());
    std::vector<std::vector<std::string>> rows;
    for (const Trial& t : trials)
      rows.push_back({t.strategy, params_text(t.params), trial_status_name(t.status),
                      fixed(t.gcells_median), fixed(t.predicted.PP_gcells), std::to_string(t.registers),
                      t.message.substr(0, 60)});
    print_table({"strategy", "params", "status", "GCells/s", "model PP", "regs", "message"}, rows);
  }
  if (a.json) std::cout << out.dump(2) << '\n';
  if (!found && !a.json) fmt::print("no winner matches '{}' in {}\n", a.hash, path);
  return found ? kOk : kMiss;
}

int run_merge(const DbArgs& a) {
  std::vector<std::string> inputs, missing;
  for (const std::string& in : a.inputs) {
    if (in.find("%a") == std::string::npos) {
      inputs.push_back(in);  // named explicitly: must exist (merge_caches says so if not)
      continue;
    }
    if (a.expect.empty()) throw UsageError(fmt::format("'{}' has %a: give --expect with the task ids", in));
    for (long id : parse_task_ids(a.expect)) {
      const std::string path = task_path(in, ShardSpec{0, 1, id, "", ""});
      (std::filesystem::exists(path) ? inputs : missing).push_back(path);
    }
  }
  if (inputs.empty()) throw UsageError("no input cache exists: nothing to merge");
  const MergeResult r = merge_caches(a.db, inputs);
  const int code = missing.empty() ? kOk : kShardsMissing;
  if (a.json) {
    nlohmann::json j{{"out", a.db}, {"created", r.created}, {"inputs", nlohmann::json::array()},
                     {"missing", missing}, {"wall_s", r.wall_s}, {"exit_code", code}};
    for (const MergeInput& in : r.inputs) {
      const MergeCounts& c = in.took;
      j["inputs"].push_back({{"path", in.path}, {"devices", c.devices}, {"stencils", c.stencils},
                             {"profiles", c.profiles}, {"trials", c.trials}, {"trials_in", c.trials_in},
                             {"winners", c.winners}, {"winners_in", c.winners_in}, {"tunes", c.tunes},
                             {"compiles", c.compiles}});
    }
    std::cout << j.dump(2) << '\n';
    return code;
  }
  for (const MergeInput& in : r.inputs) {
    const MergeCounts& c = in.took;
    fmt::print("{}: took {} of {} trial(s), {} of {} winner(s), {} tune record(s), {} compile record(s), "
               "{} device(s), {} stencil(s), {} profile(s)\n", in.path, c.trials, c.trials_in, c.winners,
               c.winners_in, c.tunes, c.compiles, c.devices, c.stencils, c.profiles);
  }
  for (const std::string& m : missing) fmt::print("missing: {} (expected by --expect {})\n", m, a.expect);
  fmt::print("merged {} cache(s) into {}{} in {:.2f} s{}\n", r.inputs.size(), a.db,
             r.created ? " (new)" : "", r.wall_s,
             missing.empty() ? "" : fmt::format("; {} expected shard(s) missing (exit {})", missing.size(), code));
  return code;
}

}  // namespace

void add_db_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<DbArgs>();
  CLI::App* db = app.add_subcommand("db", "The cache: `db list` (winners), `db show` (trials), `db merge` (join caches).");
  db->require_subcommand(1);
  CLI::App* list = db->add_subcommand("list", "List every stored winner.");
  add_db_option(list, args->db);
  list->add_flag("--json", args->json, "print JSON");
  list->callback([&action, args] { action = [args] { return run_list(*args); }; });
  CLI::App* show = db->add_subcommand("show", "Show every trial behind the winners of one stencil.");
  show->add_option("STENCIL", args->hash, "stencil name or (a prefix of) its hash")->required();
  add_db_option(show, args->db);
  show->add_flag("--json", args->json, "print JSON");
  show->callback([&action, args] { action = [args] { return run_show(*args); }; });
  CLI::App* merge = db->add_subcommand(
      "merge",
      "Merge caches (the tasks' of a sweep) into OUT, created if missing, in one transaction: "
      "every trial and tune record once, per key the fastest verified winner with its CUBIN, "
      "devices, stencils, profiles, compile records. Merging again changes nothing. An input "
      "that is missing, corrupt or of another schema version stops it before OUT is touched "
      "(exit 2). With --expect, an IN holding %a stands for one file per task id; those missing "
      "are listed and the rest merged (exit 3).");
  merge->add_option("OUT", args->db, "the merged cache")->required();
  merge->add_option("IN", args->inputs, "input caches, or a pattern with %a (see --expect)")->required();
  merge->add_option("--expect", args->expect,
                    "task ids the %a patterns should give: N (0 to N-1), A-B or A-B:S, as in sbatch --array");
  merge->add_flag("--json", args->json, "print JSON");
  merge->callback([&action, args] { action = [args] { return run_merge(*args); }; });
}

}  // namespace tbtune::cli
