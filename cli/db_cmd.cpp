// `tbtune db list|show`: what the cache holds.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "db/cache.hpp"

namespace tbtune::cli {
namespace {

struct DbArgs {
  std::string db;
  std::string hash;
  bool json = false;
};

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

}  // namespace

void add_db_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<DbArgs>();
  CLI::App* db = app.add_subcommand("db", "Inspect the cache: `db list` (winners), `db show` (trials).");
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
}

}  // namespace tbtune::cli
