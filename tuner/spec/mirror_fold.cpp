#include "tuner/spec/mirror_fold.hpp"

#include <cmath>
#include <map>
#include <set>

namespace tbtune {

std::optional<MirrorFold> mirror_fold(const Stencil& s) {
  if (s.dims < 2 || !s.linear || s.linear->terms.empty()) return std::nullopt;
  const int axis = s.dims - 1;
  std::map<Offset, double> c;  // coefficient by offset, repeated offsets summed
  double total = 0;
  for (const auto& t : s.linear->terms) {
    c[t.at] += t.coef;
    total += std::fabs(t.coef);
  }
  if (total > 1 + 1e-12) return std::nullopt;
  MirrorFold f;
  std::set<int> paired;
  for (const auto& [at, coef] : c) {
    Offset mirrored = at;
    mirrored[axis] = -at[axis];
    const auto mirror = c.find(mirrored);
    if (mirror == c.end() || mirror->second != coef) return std::nullopt;
    if (at[axis] < 0 || coef == 0) continue;
    f.rows.terms.push_back({at, coef});
    if (at[axis] > 0) paired.insert(at[axis]);
  }
  f.pairs = int(paired.size());
  f.rows.constant = s.linear->constant;
  if (f.ops() >= int(s.linear->terms.size())) return std::nullopt;
  return f;
}

}  // namespace tbtune
