#include "tuner/spec/mirror_fold.hpp"

#include <cmath>
#include <limits>
#include <map>

namespace tbtune {

namespace {

// The ratio of the row before's coefficients to the row after's, when one ratio holds for
// every term of the two (offsets across the same, each coefficient within a few units in the
// last place of ratio x its mirror's); none otherwise. Rows without terms have ratio 1.
std::optional<double> row_ratio(const std::map<Offset, double>& before, const std::map<Offset, double>& after) {
  if (before.size() != after.size()) return std::nullopt;
  if (before.empty()) return 1.0;
  const double ratio = before.begin()->second / after.begin()->second;
  constexpr double kUlps = 4 * std::numeric_limits<double>::epsilon();
  for (auto b = before.begin(), a = after.begin(); b != before.end(); ++b, ++a) {
    if (b->first != a->first) return std::nullopt;
    if (std::fabs(b->second - ratio * a->second) > kUlps * std::fabs(b->second)) return std::nullopt;
  }
  return ratio;
}

}  // namespace

std::optional<MirrorFold> mirror_fold(const Stencil& s) {
  if (s.dims < 2 || !s.linear || s.linear->terms.empty()) return std::nullopt;
  const int axis = s.dims - 1;
  // Coefficients by offset along the axis, then by offset across it (the axis's entry 0).
  std::map<int, std::map<Offset, double>> rows;
  std::map<Offset, double> c;  // repeated offsets summed
  double total = 0;
  for (const auto& t : s.linear->terms) {
    c[t.at] += t.coef;
    total += std::fabs(t.coef);
  }
  if (total > 1 + 1e-12) return std::nullopt;
  for (const auto& [at, coef] : c) {
    if (coef == 0) continue;
    Offset across = at;
    across[axis] = 0;
    rows[at[axis]][across] = coef;
  }
  MirrorFold f;
  f.ratio.assign(s.radius + 1, 1.0);
  for (int d = 1; d <= s.radius; ++d) {
    const auto ratio = row_ratio(rows[-d], rows[d]);
    if (!ratio) return std::nullopt;
    f.ratio[d] = *ratio;
    if (!rows[d].empty()) ++f.pairs;
  }
  for (const auto& [at, coef] : c)
    if (at[axis] >= 0 && coef != 0) f.rows.terms.push_back({at, coef});
  f.rows.constant = s.linear->constant;
  if (f.ops() >= int(s.linear->terms.size())) return std::nullopt;
  return f;
}

}  // namespace tbtune
