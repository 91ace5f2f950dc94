#include "tuner/search/search.hpp"

#include <algorithm>
#include <map>

#include "tuner/spec/error.hpp"

namespace tbtune {

Prediction predict_candidate(const Strategy& strategy, const Problem& problem,
                              const Params& params, const DeviceProfile& device, ModelTerms* terms) {
  const ModelTerms full_terms = strategy.model_terms(problem, params, device);
  if (terms) *terms = full_terms;
  Prediction full = predict(full_terms, problem, device);
  const long t = strategy.depth(params);
  const long rest = t > 0 ? problem.steps % t : 0;
  if (rest == 0 || full.PP_gcells <= 0) return full;
  // The remainder: passes of the rest kernel where the strategy has one, then single steps. A
  // step reads and writes the whole domain like a full pass but advances one step: at 20 steps
  // a depth of 3 runs 6 passes and 2 single steps, 8 passes' traffic for 20 steps.
  double time_per_cell = double(problem.steps - rest) / full.PP_gcells;
  long single = rest;
  if (const auto rest_params = strategy.rest_params(problem, params)) {
    const Prediction r = predict(strategy.model_terms(problem, *rest_params, device), problem, device);
    const long d = strategy.depth(*rest_params);
    if (d < 1 || d > rest) throw Error(strategy.name() + ": rest_params must be a pass of at most steps % depth steps");
    if (r.PP_gcells <= 0) return full;
    time_per_cell += double(rest - rest % d) / r.PP_gcells;
    single = rest % d;
  }
  if (single > 0) {
    const ModelTerms step_terms = strategy.step_terms(problem, params, device);
    if (step_terms.depth != 1) throw Error(strategy.name() + ": step_terms must describe the one-step kernel (depth 1)");
    const Prediction step = predict(step_terms, problem, device);
    if (step.PP_gcells <= 0) return full;
    time_per_cell += double(single) / step.PP_gcells;
  }
  const double run = double(problem.steps) / time_per_cell;
  full.V_steps = run / full.PP_gcells;
  full.V *= full.V_steps;
  full.PP_gcells = run;
  return full;
}

void set_register_slack(RankedCandidate& c, const DeviceProfile& device) {
  ModelTerms exact = c.terms;
  exact.regs_per_thread = 0;
  const bool exactly = resource_check(exact, device).empty();
  const auto fits_with_slack = [&](double slack) {
    ModelTerms fewer = c.terms;
    fewer.regs_per_thread = int(c.terms.regs_per_thread / slack);
    return exactly && resource_check(fewer, device).empty();
  };
  c.may_fit = fits_with_slack(kRegisterEstimateSlack);
  c.may_fit_model_search = fits_with_slack(c.strategy->register_estimate_slack());
}

namespace {

// For the error of a `--param` that no candidate matches: where one strategy is asked for, the
// shape those values complete to (its defaults for the rest) and why its space leaves that shape
// out, as far as the strategy says. complete() throws for values it rejects outright.
std::string why_not_in_space(const Problem& problem, const DeviceProfile& device, const std::string& only_strategy,
                             const Params& only_params) {
  const Strategy* s = only_strategy.empty() ? nullptr : find_strategy(only_strategy);
  if (!s || !s->supports(problem)) return "";
  const Params shape = s->complete(problem, only_params);
  std::string why = s->outside_space(problem, device, shape);
  if (why.empty() && s->depth(shape) > problem.steps) {  // rank_candidates' own rule, for the space's shapes
    const std::vector<Params> space = s->space(problem, device);
    if (std::find(space.begin(), space.end(), shape) != space.end())
      why = "its depth, " + std::to_string(s->depth(shape)) + " steps, is over the run's " + std::to_string(problem.steps);
  }
  return why.empty() ? "" : "; " + params_text(shape) + " is left out: " + why;
}

}  // namespace

std::vector<RankedCandidate> rank_candidates(const Problem& problem, const DeviceProfile& device,
                                             const std::string& only_strategy, const Params& only_params) {
  const auto wanted = [&](const Params& p) {
    for (const auto& [name, value] : only_params) {
      const auto it = p.find(name);
      if (it == p.end() || it->second != value) return false;
    }
    return true;
  };
  std::vector<RankedCandidate> out;
  for (const auto& s : strategies()) {
    if (!only_strategy.empty() && s->name() != only_strategy) continue;
    if (!s->supports(problem)) continue;
    for (const Params& p : s->space(problem, device)) {
      // Deeper than the whole run: its full kernel would never launch, and it would run exactly
      // as its depth-1 twin does (every step by the step kernel).
      if (s->depth(p) > problem.steps || !wanted(p)) continue;
      RankedCandidate c;
      c.strategy = s.get();
      c.params = p;
      // Asked for by parameter, a candidate stands in for none: both ways of a shape are chosen
      // like any other (`--param late=0` times late 0 where it is the variant).
      if (only_params.empty()) c.primary = s->primary_of(problem, device, p);
      c.prediction = predict_candidate(*s, problem, p, device, &c.terms);
      // Asked for by name, only the exact limits rule a candidate out; an exhaustive search
      // compiles what ptxas may fit. In both ptxas decides the registers (prune_after_compile).
      set_register_slack(c, device);
      if (!only_params.empty() && !c.prediction.fits) {
        ModelTerms exact = c.terms;
        exact.regs_per_thread = 0;
        c.prediction.why_not = resource_check(exact, device);
        c.prediction.fits = c.prediction.why_not.empty();
        c.may_fit = c.may_fit_model_search = c.prediction.fits;
      }
      out.push_back(std::move(c));
    }
  }
  if (out.empty() && !only_params.empty())
    throw UsageError("--param " + params_text(only_params) + ": no candidate" +
                     (only_strategy.empty() ? "" : " of " + only_strategy) + " in the space has these values" +
                     why_not_in_space(problem, device, only_strategy, only_params));
  // Stable, so equal predictions keep the strategies' own order (simplest first).
  std::stable_sort(out.begin(), out.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
    if (a.prediction.fits != b.prediction.fits) return a.prediction.fits;
    return a.prediction.PP_gcells > b.prediction.PP_gcells;
  });
  return out;
}

std::vector<RankedCandidate> in_model_search_order(std::vector<RankedCandidate> ranked) {
  const auto considered = [](const RankedCandidate& c) { return c.prediction.fits || may_be_chosen_by_model(c); };
  std::stable_sort(ranked.begin(), ranked.end(), [&](const RankedCandidate& a, const RankedCandidate& b) {
    if (considered(a) != considered(b)) return considered(a);
    return a.prediction.PP_gcells > b.prediction.PP_gcells;
  });
  return ranked;
}

bool is_feasible(const RankedCandidate& c) {
  return c.strategy->name() != "naive" && c.prediction.fits;
}

bool may_be_feasible(const RankedCandidate& c) {
  return c.strategy->name() != "naive" && (c.prediction.fits || c.may_fit);
}

bool may_be_chosen_by_model(const RankedCandidate& c) {
  return c.strategy->name() != "naive" && !c.primary && (c.prediction.fits || c.may_fit_model_search);
}

namespace {

// A variant that stands in for its primary only (Strategy::primary_of).
bool is_variant(const RankedCandidate& c) { return c.primary.has_value(); }

}  // namespace

SpaceSize space_size(const std::vector<RankedCandidate>& ranked) {
  SpaceSize s;
  for (const auto& c : ranked) {
    if (c.strategy->name() == "naive" || is_variant(c)) continue;
    ++s.candidates;
    if (is_feasible(c)) ++s.feasible;
  }
  return s;
}

std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked,
                                               const SearchOptions& options) {
  if (options.mode == SearchMode::Exhaustive) {
    // `ranked` puts what fits by the estimate first, so a --budget times those first.
    std::vector<RankedCandidate> out;
    for (const auto& c : ranked)
      if (may_be_feasible(c)) out.push_back(c);
    return out;
  }
  std::vector<RankedCandidate> choosable;
  for (const auto& c : ranked)
    if (may_be_chosen_by_model(c)) choosable.push_back(c);
  if (choosable.empty()) return choosable;

  // `ranked` puts what fits by the estimate first; by prediction alone, the first candidate
  // holds the best and the ones within the margin form a prefix.
  std::stable_sort(choosable.begin(), choosable.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
    return a.prediction.PP_gcells > b.prediction.PP_gcells;
  });
  const double threshold = (1.0 - options.within) * choosable.front().prediction.PP_gcells;
  std::vector<RankedCandidate> out;
  for (const auto& c : choosable) {
    if (int(out.size()) >= options.max_candidates) break;
    const bool close = options.within > 0 && c.prediction.PP_gcells >= threshold;
    if (int(out.size()) >= options.top && !close) break;
    out.push_back(c);
  }
  // Each strategy's best few too: the model's error is not the same for every strategy (it
  // over-predicted cmq2d 1.3x on j2d49pt, and smtile3d 1.2-1.6x on the 3D configs where it
  // under-predicted wpipe3d 1.1-1.5x; docs/tuning.md), so a ranking across strategies can leave
  // out the one whose best would win; and within a strategy its first pick ran at 83-99% of the
  // best of its 16 first (wpipe3d on the 3D configs, H100; docs/bench-3d.md). A one-step
  // strategy (stream) gets its best alone: its candidates are memory-bound and predicted alike
  // (j2d49pt: every one 172.9), and topping it up made j2d49pt's tune 59.4 s where it was 40.1.
  // `choosable` is in prediction order and `out` is a prefix of it.
  const double floor = SearchDefaults::strategy_floor * choosable.front().prediction.PP_gcells;
  std::map<const Strategy*, int> held;
  for (const auto& c : out) ++held[c.strategy];
  for (std::size_t i = out.size(); i < choosable.size(); ++i) {
    const auto& c = choosable[i];
    if (int(out.size()) >= options.max_candidates || c.prediction.PP_gcells < floor) break;
    if (held[c.strategy] < (c.strategy->depth(c.params) > 1 ? SearchDefaults::per_strategy : 1)) {
      ++held[c.strategy];
      out.push_back(c);
    }
  }
  return out;
}

std::vector<RankedCandidate> stand_ins(const std::vector<RankedCandidate>& ranked,
                                       const std::vector<RankedCandidate>& selected, int per_selected) {
  // Places per strategy: per_selected for each of its selected candidates.
  std::map<const Strategy*, int> places;
  for (const auto& s : selected) places[s.strategy] += per_selected;
  std::vector<RankedCandidate> out;
  // First the selected candidates' variants, in the selection's order: the same shape built
  // another way is the likeliest to take a place its primary left (a spill), unless it holds
  // at least the registers of its primary (a variant that would spill where it did).
  for (const auto& s : selected)
    for (const auto& c : ranked) {
      if (c.strategy != s.strategy || !is_feasible(c) || c.primary != s.params ||
          !c.strategy->variant_may_fit_where_primary_spills(c.params))
        continue;
      int& left = places[c.strategy];
      if (left > 0) {
        out.push_back(c);
        --left;
      }
    }
  for (const auto& c : ranked) {
    const auto it = places.find(c.strategy);
    if (it == places.end() || it->second == 0 || !is_feasible(c) || is_variant(c)) continue;
    const bool chosen = std::any_of(selected.begin(), selected.end(), [&](const RankedCandidate& s) {
      return s.strategy == c.strategy && s.params == c.params;
    });
    if (chosen) continue;
    out.push_back(c);
    --it->second;
  }
  return out;
}

}  // namespace tbtune
