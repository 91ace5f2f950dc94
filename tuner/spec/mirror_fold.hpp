#pragma once
/// @file mirror_fold.hpp
/// Stencils symmetric along the axis the register-tiled kernels stream (y in 2D, z in 3D): an
/// affine stencil whose every term at offset d along it has a mirror at -d with the same
/// coefficient and the same offsets across, as most Laplacians and blurs have, or more
/// generally a coefficient in the same ratio for every term of the two rows (j3d17pt's corner
/// planes weigh 0.50 and 0.52). Its output is then a stencil over "folded" rows (planes in
/// 3D): folded row 0 is the output's own row and folded row d > 0 the row d after it plus the
/// row d before it times that ratio, formed once per cell and read by every output of the
/// row. So a 2D (2R + 1) x (2R + 1) box costs R adds and (R + 1) x (2R + 1)
/// multiply-adds per cell instead of (2R + 1)^2, and the halos of R + 1 rows are shuffled
/// instead of 2R + 1 (the `fold` parameter of wpipe2d and wpipe3d, templates/wpipe2d.cuh and
/// wpipe3d.cuh).
#include <optional>
#include <vector>

#include "tuner/spec/stencil.hpp"

namespace tbtune {

struct MirrorFold {
  /// The stencil over folded rows: terms at offset d >= 0 along the streamed axis (the offsets
  /// across unchanged), and the constant.
  LinearForm rows;
  int pairs = 0;  ///< folded rows d > 0 with a term: one add (or multiply-add) per cell each
  /// ratio[d], d = 1 .. R: the coefficients of the row d before over those of the row d after
  /// (1 for a mirror); folded row d = row d after + ratio[d] x row d before. ratio[0] = 1.
  std::vector<double> ratio;
  /// Adds and multiply-adds per output cell.
  [[nodiscard]] int ops() const { return int(rows.terms.size()) + pairs; }
};

/// The folded form of a 2D or 3D affine stencil whose coefficients at offsets -d and d along the
/// streamed axis are equal, or in one ratio for all the terms of the two rows (to a few units
/// in the last place, the rounding of the ratio itself), when that takes fewer operations than its terms and the stencil does not amplify (the
/// sum of |coefficients| is at most 1): folded sums round differently from the term-by-term one
/// every kernel else follows, and only a stencil that does not amplify keeps that difference at
/// the rounding's size over any number of steps (README, "Verification"). None otherwise.
[[nodiscard]] std::optional<MirrorFold> mirror_fold(const Stencil& s);

}  // namespace tbtune
