#include "tuner/sweep/problems.hpp"

#include <algorithm>
#include <cmath>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "tuner/codegen/strategy.hpp"

namespace tbtune {
namespace {

/// The axes that apply to `spec_path`: the sweep's, with every override naming it laid over.
SweepAxes axes_for(const SweepFile& sweep, const std::string& spec_path) {
  SweepAxes a = sweep.axes;
  for (const SweepOverride& o : sweep.overrides) {
    if (std::find(o.specs.begin(), o.specs.end(), spec_path) == o.specs.end()) continue;
    if (o.dtypes) a.dtypes = *o.dtypes;
    if (o.domains) a.domains = *o.domains;
    if (o.steps) a.steps = *o.steps;
    a.tune = a.tune.overlaid(o.tune);
  }
  return a;
}

std::array<long, 3> checked_domain(const std::vector<long>& extents, const Stencil& s,
                                   const SweepFile& sweep, const std::string& spec_path) {
  std::array<long, 3> d{1, 1, 1};
  double cells = 1;
  for (std::size_t i = 0; i < extents.size(); ++i) {
    if (extents[i] <= 2L * s.radius)
      throw UsageError(fmt::format("sweep '{}': domain extent {} is too small for '{}' (radius {}): "
                                   "it must be more than {}",
                                   sweep.path, extents[i], spec_path, s.radius, 2 * s.radius));
    d[i] = extents[i];
    cells *= double(extents[i]);
  }
  if (cells > 4e9)
    throw UsageError(fmt::format("sweep '{}': a domain of '{}' has more than 4e9 cells", sweep.path, spec_path));
  return d;
}

}  // namespace

TuneOptions tune_options(const SweepProblem& p) {
  TuneOptions o;
  const SweepTuneOptions& t = p.options;
  if (t.search) o.search.mode = *t.search;
  if (t.top) o.search.top = *t.top;
  if (t.within) o.search.within = *t.within;
  if (t.max_candidates) o.search.max_candidates = *t.max_candidates;
  o.budget_s = t.budget_s.value_or(0);
  o.timeout_s = t.timeout_s.value_or(60);
  o.allow_spills = t.allow_spills.value_or(false);
  o.only_strategy = t.strategy.value_or("");
  o.spec_text = p.spec_text;
  return o;
}

double estimate_tune_s(const Problem& problem, const CandidateChoice& choice) {
  constexpr double kPerCandidateS = 1.0;  // compile share, load, worker round trip: a guess
  const double updates = problem.interior_cells() * double(problem.steps);
  double total = 0;
  // chosen = naive, the selection, then stand-ins: only the first 1 + selected are counted.
  const int counted = std::min(int(choice.chosen.size()), 1 + choice.selected);
  for (int i = 0; i < counted; ++i) {
    const double pp = choice.chosen[std::size_t(i)].prediction.PP_gcells;
    const double run_s = pp > 0 ? updates / (pp * 1e9) : 1.0;
    const double timed_s = std::clamp(0.2, 3 * run_s, 20 * run_s);
    total += kPerCandidateS + 2 * run_s + timed_s;
  }
  return total;
}

std::vector<SweepProblem> expand_sweep(const SweepFile& sweep, const DeviceProfile& profile) {
  std::vector<SweepProblem> out;
  std::set<std::tuple<std::string, DType, std::array<long, 3>, long>> seen;
  for (const std::string& path : sweep.specs) {
    const Spec spec = load_spec(path);
    const SweepAxes axes = axes_for(sweep, path);
    if (axes.tune.strategy && !find_strategy(*axes.tune.strategy))
      throw UsageError(fmt::format("sweep '{}': strategy '{}' (for '{}') does not exist",
                                   sweep.path, *axes.tune.strategy, path));
    const Stencil stencil = make_stencil(spec);
    const std::vector<DType> dtypes = axes.dtypes.empty() ? std::vector<DType>{spec.dtype} : axes.dtypes;
    std::vector<std::vector<long>> domains;
    for (const auto& d : axes.domains)
      if (int(d.size()) == spec.dims) domains.push_back(d);
    if (domains.empty()) domains.push_back(spec.domain);
    const std::vector<long> steps = axes.steps.empty() ? std::vector<long>{spec.steps} : axes.steps;
    for (DType dtype : dtypes)
      for (const auto& extents : domains)
        for (long n : steps) {
          SweepProblem sp;
          sp.spec_path = path;
          sp.spec_text = spec.text;
          sp.problem.stencil = stencil;
          sp.problem.dtype = dtype;
          sp.problem.domain = checked_domain(extents, stencil, sweep, path);
          sp.problem.steps = n;
          if (!seen.emplace(stencil.hash, dtype, sp.problem.domain, n).second) continue;
          sp.options = axes.tune;
          sp.index = int(out.size());
          const CandidateChoice choice = choose_candidates(sp.problem, profile, tune_options(sp));
          sp.selected = choice.selected;
          sp.compiles = int(choice.chosen.size());
          sp.estimated_s = estimate_tune_s(sp.problem, choice);
          out.push_back(std::move(sp));
        }
  }
  return out;
}

}  // namespace tbtune
