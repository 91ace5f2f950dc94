// stored_winner_terms(): a winner's model terms, rebuilt from the spec text its stencil was
// stored with. Apart from report.cpp because it needs the spec parser and the strategies.
#include "tuner/report/report.hpp"

#include "tuner/codegen/strategy.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

std::optional<ModelTerms> stored_winner_terms(const Cache& cache, const Winner& w,
                                              const DeviceProfile& profile) {
  const std::optional<std::string> text = cache.spec_text(w.key.stencil_hash);
  const Strategy* strategy = find_strategy(w.trial.strategy);
  if (!text || text->empty() || !strategy) return std::nullopt;
  try {
    Problem p = make_problem(parse_spec(*text, "<cache: " + w.stencil_name + ">"));
    p.dtype = w.key.dtype;
    p.domain = w.key.domain;
    p.steps = w.steps;
    return strategy->model_terms(p, w.trial.params, profile);
  } catch (const Error&) {
    // A spec stored by an older tbtune that this one no longer accepts: the winner is simply
    // left off the chart, which report_roofline() says.
    return std::nullopt;
  }
}

}  // namespace tbtune
