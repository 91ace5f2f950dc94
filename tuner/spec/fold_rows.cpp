#include "tuner/spec/fold_rows.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>

namespace tbtune {

namespace {

using Row = std::map<Offset, double>;  // coefficients by offset across (the streamed entry 0)

// Solves a x = b by Gaussian elimination with partial pivoting; none where a is singular
// relative to its largest diagonal entry (the normal equations of dependent rows).
std::optional<std::vector<double>> solve(std::vector<std::vector<double>> a, std::vector<double> b) {
  const std::size_t n = b.size();
  double scale = 0;
  for (std::size_t i = 0; i < n; ++i) scale = std::max(scale, std::fabs(a[i][i]));
  for (std::size_t c = 0; c < n; ++c) {
    std::size_t pivot = c;
    for (std::size_t r = c + 1; r < n; ++r)
      if (std::fabs(a[r][c]) > std::fabs(a[pivot][c])) pivot = r;
    if (std::fabs(a[pivot][c]) <= 1e-12 * scale) return std::nullopt;
    std::swap(a[c], a[pivot]);
    std::swap(b[c], b[pivot]);
    for (std::size_t r = 0; r < n; ++r) {
      if (r == c) continue;
      const double f = a[r][c] / a[c][c];
      for (std::size_t k = c; k < n; ++k) a[r][k] -= f * a[c][k];
      b[r] -= f * b[c];
    }
  }
  for (std::size_t i = 0; i < n; ++i) b[i] /= a[i][i];
  return b;
}

double dot(const Row& a, const Row& b) {
  double s = 0;
  for (const auto& [at, v] : a)
    if (const auto it = b.find(at); it != b.end()) s += v * it->second;
  return s;
}

// The least-squares fit of `target` by the rows `basis`: the normal equations, then refined
// from the residual, as rows that differ by a little (j3d27pt's planes, 1% apart) make them
// ill-conditioned; none where the rows are dependent.
std::optional<std::vector<double>> fit(const Row& target, const std::vector<const Row*>& basis) {
  const std::size_t n = basis.size();
  std::vector<std::vector<double>> gram(n, std::vector<double>(n));
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < n; ++j) gram[i][j] = dot(*basis[i], *basis[j]);
  std::vector<double> alpha(n, 0.0);
  for (int step = 0; step < 4; ++step) {
    Row residual = target;
    for (std::size_t i = 0; i < n; ++i)
      for (const auto& [at, v] : *basis[i]) residual[at] -= alpha[i] * v;
    std::vector<double> rhs(n);
    for (std::size_t i = 0; i < n; ++i) rhs[i] = dot(*basis[i], residual);
    const auto delta = solve(gram, rhs);
    if (!delta) return std::nullopt;
    for (std::size_t i = 0; i < n; ++i) alpha[i] += (*delta)[i];
  }
  return alpha;
}

// Whether the combination gives every coefficient of `target` (and nothing elsewhere) to 8 units
// in the last place of the terms it sums.
bool exact(const Row& target, const std::vector<const Row*>& basis, const std::vector<double>& alpha) {
  Row sum, scale;
  for (std::size_t i = 0; i < basis.size(); ++i)
    for (const auto& [at, v] : *basis[i]) {
      sum[at] += alpha[i] * v;
      scale[at] += std::fabs(alpha[i] * v);
    }
  for (const auto& [at, v] : target) scale[at] += std::fabs(v);
  constexpr double kUlps = 8 * std::numeric_limits<double>::epsilon();
  for (const auto& [at, s] : scale) {
    const auto t = target.find(at);
    if (std::fabs((t == target.end() ? 0.0 : t->second) - sum[at]) > kUlps * s) return false;
  }
  return true;
}

}  // namespace

std::optional<FoldedRows> fold_rows(const Stencil& s) {
  if (s.dims < 2 || !s.linear || s.linear->terms.empty()) return std::nullopt;
  const int axis = s.dims - 1, r = s.radius;
  std::map<Offset, double> c;  // coefficient by offset, repeated offsets summed
  for (const auto& t : s.linear->terms) c[t.at] += t.coef;
  std::map<int, Row> rows;  // by offset along the axis; only coefficients that are not 0
  for (const auto& [at, coef] : c) {
    if (coef == 0) continue;
    Offset across = at;
    across[axis] = 0;
    rows[at[axis]][across] = coef;
  }
  FoldedRows f;
  f.weight.assign(r + 1, std::vector<double>(2 * r + 1, 0.0));
  std::vector<int> basis;  // the rows at and after the output that have terms
  for (int d = 0; d <= r; ++d) {
    f.weight[d][r + d] = 1;
    if (rows.count(d)) basis.push_back(d);
  }
  // Each row before costs at least one combine per cell: nothing to gain unless the rows before
  // hold more terms than that.
  int before_terms = 0, before_rows = 0;
  for (int e = -r; e < 0; ++e)
    if (rows.count(e)) before_terms += int(rows.at(e).size()), ++before_rows;
  if (before_terms <= before_rows) return std::nullopt;
  // Each row before: one or two basis rows that give it (the mirror row first), which covers
  // mirrors, ratios and rows that differ by a constant (j3d27pt) and keeps the search to at most
  // R + 1 + (R + 1) R / 2 small fits per row.
  for (int e = -1; e >= -r; --e) {
    if (!rows.count(e)) continue;
    bool found = false;
    for (std::size_t size = 1; size <= std::min<std::size_t>(2, basis.size()) && !found; ++size) {
      // Subsets of `size` rows, as bit masks over basis; for size 1 the mirror first.
      std::vector<unsigned> masks;
      for (unsigned m = 1; m < (1u << basis.size()); ++m)
        if (std::size_t(__builtin_popcount(m)) == size) masks.push_back(m);
      if (size == 1)
        for (std::size_t i = 0; i < basis.size(); ++i)
          if (basis[i] == -e) std::swap(masks[0], masks[i]);
      for (const unsigned m : masks) {
        std::vector<const Row*> pick;
        std::vector<int> at;
        for (std::size_t i = 0; i < basis.size(); ++i)
          if (m & (1u << i)) pick.push_back(&rows.at(basis[i])), at.push_back(basis[i]);
        auto alpha = fit(rows.at(e), pick);
        if (!alpha || !exact(rows.at(e), pick, *alpha)) continue;
        // Weights a spec means as simple numbers (2, -1, a ratio of short decimals) come out of
        // the fit a few units off; the nearest multiple of 1/1024 is kept where it is as exact.
        std::vector<double> simple = *alpha;
        for (double& a : simple) a = std::round(a * 1024) / 1024;
        if (simple != *alpha && exact(rows.at(e), pick, simple)) alpha = simple;
        for (std::size_t i = 0; i < at.size(); ++i) f.weight[at[i]][r + e] = (*alpha)[i];
        found = true;
        break;
      }
    }
    if (!found) return std::nullopt;
  }
  // The folded rounding bound: sum over folded rows of |weights| x |row d's coefficients|.
  double bound = 0;
  for (const int d : basis) {
    double w = 0, row = 0;
    for (const double v : f.weight[d]) w += std::fabs(v);
    for (const auto& [at, v] : rows.at(d)) row += std::fabs(v);
    bound += w * row;
    for (int e = -r; e < 0; ++e) f.combines += f.weight[d][r + e] != 0;
  }
  if (bound > 1 + 1e-12) return std::nullopt;
  for (const auto& [at, coef] : c)
    if (at[axis] >= 0 && coef != 0) f.rows.terms.push_back({at, coef});
  f.rows.constant = s.linear->constant;
  if (f.ops() >= int(s.linear->terms.size())) return std::nullopt;
  return f;
}

}  // namespace tbtune
