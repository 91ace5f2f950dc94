#pragma once
/// @file mirror_fold.hpp
/// 2D stencils symmetric in y: an affine stencil whose every term at (dx, dy) has a mirror at
/// (dx, -dy) with the same coefficient, as most Laplacians and blurs have. Its output is then a
/// stencil over "folded" rows: row 0 is the output's own row and row d > 0 the sum of the rows
/// d above and below it, formed once per cell and read by every output of the row across x. So
/// a (2R + 1) x (2R + 1) box costs R adds and (R + 1) x (2R + 1) multiply-adds per cell instead
/// of (2R + 1)^2, and the halo of R + 1 rows is shuffled instead of 2R + 1 (wpipe2d's `fold`,
/// templates/wpipe2d.cuh).
#include <optional>

#include "tuner/spec/stencil.hpp"

namespace tbtune {

struct MirrorFold {
  LinearForm rows;  ///< the stencil over folded rows: terms at (dx, d, 0), d >= 0, and the constant
  int pairs = 0;    ///< folded rows d > 0 with a term: one add per cell each
  /// Adds and multiply-adds per output cell.
  [[nodiscard]] int ops() const { return int(rows.terms.size()) + pairs; }
};

/// The folded form of a 2D affine stencil whose coefficients at (dx, dy) and (dx, -dy) are equal
/// (exactly: they are the same expression in any spec that means them to be), when that takes
/// fewer operations than its terms and the stencil does not amplify (the sum of |coefficients|
/// is at most 1): folded sums round differently from the term-by-term one every kernel else
/// follows, and only a stencil that does not amplify keeps that difference at the rounding's size
/// over any number of steps (README, "Verification"). None otherwise.
[[nodiscard]] std::optional<MirrorFold> mirror_fold(const Stencil& s);

}  // namespace tbtune
