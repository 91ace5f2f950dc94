#include "tuner/spec/mirror_fold.hpp"

#include <cmath>
#include <map>
#include <set>
#include <utility>

namespace tbtune {

std::optional<MirrorFold> mirror_fold(const Stencil& s) {
  if (s.dims != 2 || !s.linear || s.linear->terms.empty()) return std::nullopt;
  std::map<std::pair<int, int>, double> c;  // (dy, dx) -> coefficient, repeated offsets summed
  double total = 0;
  for (const auto& t : s.linear->terms) {
    c[{t.at[1], t.at[0]}] += t.coef;
    total += std::fabs(t.coef);
  }
  if (total > 1 + 1e-12) return std::nullopt;
  MirrorFold f;
  std::set<int> paired;
  for (const auto& [at, coef] : c) {
    const auto [dy, dx] = at;
    const auto mirror = c.find({-dy, dx});
    if (mirror == c.end() || mirror->second != coef) return std::nullopt;
    if (dy < 0 || coef == 0) continue;
    f.rows.terms.push_back({{dx, dy, 0}, coef});
    if (dy > 0) paired.insert(dy);
  }
  f.pairs = int(paired.size());
  f.rows.constant = s.linear->constant;
  if (f.ops() >= int(s.linear->terms.size())) return std::nullopt;
  return f;
}

}  // namespace tbtune
