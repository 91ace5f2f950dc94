#include "tuner/search.hpp"

#include <algorithm>


namespace tbtune {

std::vector<RankedCandidate> rank_candidates(const Problem& problem, const DeviceProfile& device,
                                             const std::string& only_strategy) {
  std::vector<RankedCandidate> out;
  for (const auto& s : strategies()) {
    if (!only_strategy.empty() && s->name() != only_strategy) continue;
    if (!s->supports(problem)) continue;
    for (const Params& p : s->space(problem, device)) {
      RankedCandidate c{s.get(), p, s->model_terms(problem, p, device), {}};
      c.prediction = predict(c.terms, problem, device);
      out.push_back(std::move(c));
    }
  }
  // Stable, so equal predictions keep the strategies' own order (simplest first).
  std::stable_sort(out.begin(), out.end(), [](const RankedCandidate& a, const RankedCandidate& b) {
    if (a.prediction.fits != b.prediction.fits) return a.prediction.fits;
    return a.prediction.PP_gcells > b.prediction.PP_gcells;
  });
  return out;
}

std::vector<RankedCandidate> select_candidates(const std::vector<RankedCandidate>& ranked, int top) {
  std::vector<RankedCandidate> out;
  for (const auto& c : ranked) {
    if (int(out.size()) >= top) break;
    if (c.strategy->name() == "naive" || !c.prediction.fits) continue;
    out.push_back(c);
  }
  return out;
}

}  // namespace tbtune
