#include "tuner/codegen/strategies/wpipe_model.hpp"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <utility>

namespace tbtune {

bool wpipe_pairs(const Problem& p, int dims) { return dims == 3 || p.dtype == DType::Float; }

namespace {
int access_bytes(const Problem& p, int rx, bool pairs) { return (pairs && rx % 2 == 0 ? 2 : 1) * dtype_bytes(p.dtype); }
}  // namespace

int wpipe_bank_conflicts(const Problem& p, int rx, bool pairs) {
  const int access = access_bytes(p, rx, pairs);
  return std::gcd(rx * dtype_bytes(p.dtype) / access, 128 / access);
}

double wpipe_conflict_cost(const Problem& p, int rx, bool pairs) {
  return 1.0 + (wpipe_bank_conflicts(p, rx, pairs) - 1) / 4.0;
}

bool wpipe_strip_too_conflicted(const Problem& p, int rx, bool pairs) {
  return wpipe_bank_conflicts(p, rx, pairs) * access_bytes(p, rx, pairs) > 32;
}

namespace {
// Over the lines across x of a set of offsets, (dy) in 2D and (dy, dz) in 3D, 2 x the widest
// |dx| of each.
template <class Offsets, class At>
double shuffles_per_cell(const Offsets& offsets, At at, int rx) {
  std::map<std::pair<int, int>, int> widest;  // (dy, dz) -> widest |dx|
  for (const auto& o : offsets) {
    const Offset& pt = at(o);
    int& w = widest[{pt[1], pt[2]}];
    w = std::max(w, std::abs(pt[0]));
  }
  int halo = 0;
  for (const auto& [line, w] : widest) halo += 2 * w;
  return double(halo) / rx;
}
}  // namespace

double wpipe_shuffles_per_cell(const Problem& p, int rx) {
  return shuffles_per_cell(p.stencil.points, [](const Offset& o) -> const Offset& { return o; }, rx);
}

double wpipe_shuffles_per_cell(const LinearForm& folded, int rx) {
  return shuffles_per_cell(folded.terms, [](const LinearForm::Term& t) -> const Offset& { return t.at; }, rx);
}

double wpipe_pass_flops(int multiply_adds) { return 2.0 * (64.0 + 1.9 * multiply_adds); }

std::optional<Params> wpipe_rest_params(const Problem& p, const Params& params) {
  const int warps = params.at("warps"), tw = params.at("tw"), rest = int(p.steps % (warps * tw));
  std::optional<Params> best;
  int most = 1;
  for (int w = std::min(warps, rest); w >= 1; --w) {
    const int t = std::min(tw, rest / w);
    if (w * t <= most) continue;
    most = w * t;
    best = params;
    (*best)["warps"] = w;
    (*best)["tw"] = t;
  }
  return best;
}

bool late_of(const Params& k) { return k.count("late") && k.at("late") != 0; }

bool fold_of(const Params& k) { return k.count("fold") && k.at("fold") != 0; }

int regs_cap(const DeviceProfile& d, int threads, int bps) {
  const long per_thread = d.regs_per_sm / std::max(1L, long(threads) * bps) / 8 * 8;
  return int(std::min(255L, per_thread));
}

bool wpipe_regs_roomy(const DeviceProfile& d, int estimated_regs, int threads, int bps) {
  return estimated_regs <= kWpipeLateRegs * regs_cap(d, threads, bps);
}

std::vector<int> wpipe_late_values(const Problem& p) {
  if (p.stencil.linear) return {1, 0};
  return {0};
}

std::optional<Params> wpipe_primary_of(const Problem& p, const DeviceProfile& d, const Params& k, int estimated_regs,
                                       int threads) {
  if (!k.count("late") || !p.stencil.linear) return std::nullopt;
  const int late = wpipe_regs_roomy(d, estimated_regs, threads, k.at("bps")) ? 1 : 0;
  if (k.at("late") == late) return std::nullopt;
  Params primary = k;
  primary["late"] = late;
  return primary;
}

bool wpipe_eager_heads(const Problem& p, const Params& k) {
  if (!p.stencil.linear || (k.count("rows") && k.at("rows") > 1)) return false;
  // The head sums the terms whose offset along the streamed axis is below the split (the
  // templates' wp_early_split and W3_EARLY_SPLIT, for the first output row; fold: late 0).
  const int r = p.stencil.radius, axis = p.dims() - 1, split = late_of(k) ? 1 - r : r;
  for (const Offset& o : p.stencil.points)
    if (o[std::size_t(axis)] < split && o[0] != 0) return true;
  return false;
}

bool wpipe_variant_may_fit(const Params& variant) { return !variant.count("late") || variant.at("late") == 0; }

}  // namespace tbtune
