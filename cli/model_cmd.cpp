// `tbtune model SPEC`: the performance model's ranking of the candidate space. Needs no GPU.
#include <algorithm>
#include <iostream>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "model/derived.hpp"
#include "tuner/search/search.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune::cli {
namespace {

struct ModelArgs {
  ProblemArgs problem;
  std::string profile = "h100";
  std::string old_device;  ///< the deprecated spelling of --profile
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

/// Thesis 5.7/5.9 figures from the best candidate of the strategy they are about (cmq2d in 2D,
/// devtile3d in 3D): from `ranked` if it holds one, else from that strategy's own ranking.
/// Null when that strategy does not support the problem.
nlohmann::json derived_json(const Problem& p, const DeviceProfile& d,
                            const std::vector<RankedCandidate>& ranked) {
  const std::string name = p.dims() == 3 ? "devtile3d" : "cmq2d";
  auto it = std::find_if(ranked.begin(), ranked.end(),
                         [&](const RankedCandidate& c) { return c.strategy->name() == name; });
  std::vector<RankedCandidate> own;
  if (it == ranked.end()) {
    own = rank_candidates(p, d, name);
    if (own.empty()) return nullptr;
    it = own.begin();
  }
  const ModelTerms& t = it->terms;
  nlohmann::json j{{"strategy", name}, {"params", params_json(it->params)},
                   {"a_gm", t.a_gm}, {"a_sm", t.a_sm}, {"a_cmp", t.a_cmp},
                   {"desired_depth_sm", desired_depth_sm(t.a_gm, t.a_sm, d)},
                   {"desired_depth_balance", desired_depth_balance(t.a_gm, t.a_cmp, d, p.dtype)}};
  if (p.dims() == 3) {
    j["devtile_min_tile_sm"] = devtile_min_tile(t.a_gm, t.a_sm, p.stencil.radius, d);
    j["devtile_min_tile_balance"] =
        devtile_min_tile_balance(t.a_gm, t.a_cmp, p.stencil.radius, d, p.dtype);
  }
  return j;
}

/// The derived figures as one or two lines under the table.
void print_derived(const nlohmann::json& j) {
  if (j.is_null()) return;
  auto num = [&](const char* k) { return fmt::format("{:.3g}", j[k].get<double>()); };
  fmt::print("derived from the best {} candidate ({}): a_gm {}, a_sm {}, a_cmp {}; desired depth "
             "(eq. 5.13) for shared memory {}, (eq. 5.24) for balance {}\n",
             j["strategy"].get<std::string>(), params_text(j["params"].get<Params>()), num("a_gm"),
             num("a_sm"), num("a_cmp"), num("desired_depth_sm"), num("desired_depth_balance"));
  if (j.contains("devtile_min_tile_sm"))
    fmt::print("least device-tile side (eq. 5.23) for shared memory {}, (eq. 5.30) for balance {}\n",
               num("devtile_min_tile_sm"), num("devtile_min_tile_balance"));
}

int run_model(const ModelArgs& a) {
  const Problem p = a.problem.load();
  // `--device` means a CUDA device number in tune, lookup and probe; here it was a profile name.
  if (!a.old_device.empty())
    std::cerr << "tbtune: model --device is deprecated; use --profile " << a.old_device << '\n';
  const std::string& name = a.old_device.empty() ? a.profile : a.old_device;
  const auto profile = builtin_profile(name);
  if (!profile) {
    std::string names;
    for (const auto& n : builtin_profile_names()) names += (names.empty() ? "" : ", ") + n;
    throw UsageError("--profile '" + name + "': no such profile (have: " + names + ")");
  }
  if (!a.strategy.empty() && !find_strategy(a.strategy))
    throw UsageError("--strategy '" + a.strategy + "': no such strategy");
  std::vector<RankedCandidate> ranked;
  if (!a.params.empty()) {
    if (a.strategy.empty()) throw UsageError("--param needs --strategy");
    const Strategy* s = find_strategy(a.strategy);
    RankedCandidate c;
    c.strategy = s;
    c.params = s->complete(p, parse_params(a.params));
    c.primary = s->primary_of(p, *profile, c.params);
    c.prediction = predict_candidate(*s, p, c.params, *profile, &c.terms);
    set_register_slack(c, *profile);
    ranked.push_back(c);
  } else {
    ranked = rank_candidates(p, *profile, a.strategy);
  }
  const std::size_t shown = std::min<std::size_t>(ranked.size(), std::size_t(std::max(a.top, 0)));
  // The best fitting candidate of each strategy, in rank order: why the winner's strategy wins.
  std::vector<const RankedCandidate*> best;
  // A variant is timed only in its primary's place (Strategy::primary_of): not a strategy's best.
  for (const auto& c : ranked)
    if (c.prediction.fits && !c.primary && std::none_of(best.begin(), best.end(), [&](const RankedCandidate* b) {
          return b->strategy == c.strategy;
        }))
      best.push_back(&c);
  if (a.json) {
    nlohmann::json cands = nlohmann::json::array();
    for (std::size_t i = 0; i < shown; ++i) {
      const auto& c = ranked[i];
      cands.push_back({{"strategy", c.strategy->name()}, {"params", params_json(c.params)},
                       {"P_gcells", c.prediction.P_gcells}, {"V", c.prediction.V},
                       {"PP_gcells", c.prediction.PP_gcells},
                       {"bottleneck", bottleneck_name(c.prediction.bottleneck)},
                       {"smem_bytes", c.terms.smem_bytes}, {"regs_estimate", c.terms.regs_per_thread},
                       {"fits", c.prediction.fits}, {"model_search_may_choose", may_be_chosen_by_model(c)},
                       {"variant", c.primary.has_value()}});
    }
    nlohmann::json per_strategy = nlohmann::json::array();
    for (const RankedCandidate* c : best)
      per_strategy.push_back({{"strategy", c->strategy->name()}, {"params", params_json(c->params)},
                              {"PP_gcells", c->prediction.PP_gcells}, {"P_gcells", c->prediction.P_gcells},
                              {"V", c->prediction.V}, {"V_valid", c->prediction.V_valid},
                              {"V_sync", c->prediction.V_sync}, {"V_latency", c->prediction.V_latency},
                              {"V_issue", c->prediction.V_issue},
                              {"V_steps", c->prediction.V_steps},
                              {"bottleneck", bottleneck_name(c->prediction.bottleneck)}});
    nlohmann::json j{{"stencil", stencil_json(p)}, {"device", profile_json(*profile)},
                     {"candidates", cands}, {"best_per_strategy", per_strategy}, {"space_size", ranked.size()},
                     {"derived", derived_json(p, *profile, ranked)}};
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  fmt::print("{} ({}, {}, radius {}, {} points, {} flops/cell) on the {} profile: {} candidates\n",
             p.stencil.name, dtype_name(p.dtype), shape_name(p.stencil.shape), p.stencil.radius,
             p.stencil.points.size(), p.stencil.flops, profile->name, ranked.size());
  std::vector<std::vector<std::string>> rows;
  const std::vector<RankedCandidate> in_order = in_model_search_order(ranked);
  for (std::size_t i = 0; i < shown; ++i) {
    const auto& c = in_order[i];
    rows.push_back({c.strategy->name(), params_text(c.params), fixed(c.prediction.P_gcells),
                    fixed(c.prediction.V, 3), fixed(c.prediction.PP_gcells),
                    bottleneck_name(c.prediction.bottleneck), std::to_string(c.terms.smem_bytes),
                    (c.prediction.fits ? "yes"
                     : may_be_chosen_by_model(c)
                         ? "ptxas decides: " + c.prediction.why_not + " by the estimate, within the strategy's slack"
                         : "no: " + c.prediction.why_not) +
                        (c.primary ? " (variant: stands in for " + params_text(*c.primary) + ")" : "")});
  }
  print_table({"strategy", "params", "P GCells/s", "V", "PP GCells/s", "bound", "smem B", "fits"}, rows);
  if (best.size() > 1) {
    // P says how fast the bottleneck lets a strategy go, V what it loses to halos, balance,
    // grid syncs, latency and issue: the two numbers that decide between, e.g., device and SM tiling.
    fmt::print("\nbest of each strategy (V = own share x sync x latency x issue x remainder steps):\n");
    rows.clear();
    for (const RankedCandidate* c : best) {
      const Prediction& q = c->prediction;
      rows.push_back({c->strategy->name(), params_text(c->params), fixed(q.PP_gcells), fixed(q.P_gcells),
                      fmt::format("{:.3f} = {:.3f} x {:.3f} x {:.3f} x {:.3f} x {:.3f}", q.V, q.V_valid,
                                  q.V_sync, q.V_latency, q.V_issue, q.V_steps),
                      bottleneck_name(q.bottleneck)});
    }
    print_table({"strategy", "params", "PP GCells/s", "P GCells/s", "V", "bound"}, rows);
  }
  print_derived(derived_json(p, *profile, ranked));
  return kOk;
}

}  // namespace

void add_model_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<ModelArgs>();
  CLI::App* cmd = app.add_subcommand(
      "model", "Rank the candidate space with the practical attainable performance model "
               "(PP = P x V, EBISU) for a built-in device profile. Needs no GPU.");
  args->problem.add_to(cmd);
  cmd->add_option("--profile", args->profile, "built-in device profile: a100, h100, h200")
      ->capture_default_str();
  cmd->add_option("--device", args->old_device, "deprecated spelling of --profile")
      ->group("");  // hidden from --help
  cmd->add_option("--strategy", args->strategy, "only this strategy");
  cmd->add_option("--param", args->params, "evaluate one candidate: NAME=VALUE (repeatable)");
  cmd->add_option("--top", args->top, "rows to show")->capture_default_str();
  cmd->add_flag("--json", args->json, "print JSON");
  cmd->callback([&action, args] { action = [args] { return run_model(*args); }; });
}

}  // namespace tbtune::cli
