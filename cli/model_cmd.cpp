// `tbtune model SPEC`: the performance model's ranking of the candidate space. Needs no GPU.
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "tuner/error.hpp"
#include "tuner/search.hpp"

namespace tbtune::cli {
namespace {

struct ModelArgs {
  ProblemArgs problem;
  std::string device = "h100";
  std::string strategy;
  std::vector<std::string> params;
  int top = 20;
  bool json = false;
};

nlohmann::json profile_json(const DeviceProfile& d) {
  return {{"name", d.name}, {"sm_count", d.sm_count}, {"smem_per_sm", d.smem_per_sm},
          {"gm_bw", d.gm_bw}, {"sm_bw", d.sm_bw}, {"fp32_flops", d.fp32_flops},
          {"fp64_flops", d.fp64_flops}, {"grid_sync_s", d.grid_sync_s}};
}

int run_model(const ModelArgs& a) {
  const Problem p = a.problem.load();
  const auto profile = builtin_profile(a.device);
  if (!profile) {
    std::string names;
    for (const auto& n : builtin_profile_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("--device '" + a.device + "': no such profile (have: " + names + ")");
  }
  if (!a.strategy.empty() && !find_strategy(a.strategy))
    throw UsageError("--strategy '" + a.strategy + "': no such strategy");
  std::vector<RankedCandidate> ranked;
  if (!a.params.empty()) {
    if (a.strategy.empty()) throw UsageError("--param needs --strategy");
    const Strategy* s = find_strategy(a.strategy);
    RankedCandidate c{s, s->complete(p, parse_params(a.params)), {}, {}};
    c.terms = s->model_terms(p, c.params, *profile);
    c.prediction = predict(c.terms, p, *profile);
    ranked.push_back(c);
  } else {
    ranked = rank_candidates(p, *profile, a.strategy);
  }
  const std::size_t shown = std::min<std::size_t>(ranked.size(), std::size_t(std::max(a.top, 0)));
  if (a.json) {
    nlohmann::json cands = nlohmann::json::array();
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& c = ranked[i];
      cands.push_back({{"strategy", c.strategy->name()}, {"params", params_json(c.params)},
                       {"P_gcells", c.prediction.P_gcells}, {"V", c.prediction.V},
                       {"PP_gcells", c.prediction.PP_gcells},
                       {"bottleneck", bottleneck_name(c.prediction.bottleneck)},
                       {"smem_bytes", c.terms.smem_bytes}, {"fits", c.prediction.fits}});
    }
    nlohmann::json j{{"stencil", stencil_json(p)}, {"device", profile_json(*profile)},
                     {"candidates", cands}, {"space_size", ranked.size()}};
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  fmt::print("{} ({}, {}, radius {}, {} points, {} flops/cell) on the {} profile: {} candidates\n",
             p.stencil.name, dtype_name(p.dtype), shape_name(p.stencil.shape), p.stencil.radius,
             p.stencil.points.size(), p.stencil.flops, profile->name, ranked.size());
  std::vector<std::vector<std::string>> rows;
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& c = ranked[i];
    rows.push_back({c.strategy->name(), params_text(c.params), fixed(c.prediction.P_gcells),
                    fixed(c.prediction.V, 3), fixed(c.prediction.PP_gcells),
                    bottleneck_name(c.prediction.bottleneck), std::to_string(c.terms.smem_bytes),
                    c.prediction.fits ? "yes" : "no: " + c.prediction.why_not});
  }
  print_table({"strategy", "params", "P GCells/s", "V", "PP GCells/s", "bound", "smem B", "fits"}, rows);
  return kOk;
}

}  // namespace

void add_model_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "model", "Rank the candidate space with the practical attainable performance model "
               "(PP = P x V, EBISU) for a built-in device profile. Needs no GPU.");
  args->problem.add_to(cmd);
  cmd->add_option("--device", args->device, "device profile: a100, h100, h200")->capture_default_str();
  cmd->add_option("--strategy", args->strategy, "only this strategy");
  cmd->add_option("--param", args->params, "evaluate one candidate: NAME=VALUE (repeatable)");
  cmd->add_option("--top", args->top, "rows to show")->capture_default_str();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([&action, args] { action = [args] { return run_model(*args); }; });
}

}  // namespace tbtune::cli
