#include "tuner/spec/row_factors.hpp"

#include <cmath>
#include <limits>
#include <map>
#include <utility>

namespace tbtune {

std::optional<RowFactors> row_factors(const Stencil& s) {
  if (s.dims != 2 || !s.linear || s.linear->terms.empty()) return std::nullopt;
  const LinearForm& f = *s.linear;
  std::map<std::pair<int, int>, double> c;  // (dx, dy) -> coefficient; absent terms are 0
  const LinearForm::Term* pivot = &f.terms.front();
  double total = 0;
  for (const auto& t : f.terms) {
    c[{t.at[0], t.at[1]}] += t.coef;
    total += std::fabs(t.coef);
    if (std::fabs(t.coef) > std::fabs(pivot->coef)) pivot = &t;
  }
  if (total > 1 + 1e-12) return std::nullopt;
  const auto coef = [&](int dx, int dy) {
    const auto it = c.find({dx, dy});
    return it == c.end() ? 0.0 : it->second;
  };
  // b: the pivot's row; a: the pivot's column over the pivot.
  const int px = pivot->at[0], py = pivot->at[1];
  RowFactors r;
  for (int d = -s.radius; d <= s.radius; ++d) {
    if (const double b = coef(d, py); b != 0) r.across.terms.push_back({{d, 0, 0}, b});
    if (const double a = coef(px, d) / pivot->coef; a != 0) r.down.terms.push_back({{0, d, 0}, a});
  }
  r.down.constant = f.constant;
  // Every product a x b must be its coefficient, absent ones included.
  // A few roundings of the products and of the quotient a: exact factors, not near ones.
  const double tolerance = 8 * std::numeric_limits<double>::epsilon() * std::fabs(pivot->coef);
  for (int dy = -s.radius; dy <= s.radius; ++dy)
    for (int dx = -s.radius; dx <= s.radius; ++dx)
      if (std::fabs(coef(px, dy) / pivot->coef * coef(dx, py) - coef(dx, dy)) > tolerance) return std::nullopt;
  if (r.ops() >= int(f.terms.size())) return std::nullopt;
  return r;
}

}  // namespace tbtune
