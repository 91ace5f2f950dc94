#pragma once
/// @file fold_rows.hpp
/// Stencils whose rows before the output (along the axis the register-tiled kernels stream: y
/// in 2D, z in 3D; planes in 3D) are combinations of the rows at and after it. Most Laplacians
/// and blurs are symmetric: the row d before has the weights of the row d after (j2d25pt,
/// poisson); j3d17pt's corner planes weigh 0.50 before and 0.52 after, one ratio for the whole
/// plane; j3d27pt's planes differ by a constant added to every weight, so the plane before is
/// twice the output's own plane minus the plane after. The output is then a stencil over
/// "folded" rows: folded row d (0 <= d <= R) is row d plus the rows before in their weights,
/// formed once per cell and read by every output of the row with row d's coefficients. A
/// (2R + 1) x (2R + 1) box symmetric in y costs R adds and (R + 1) x (2R + 1) multiply-adds per
/// cell instead of (2R + 1)^2, and the halos of R + 1 rows are shuffled instead of 2R + 1 (the
/// `fold` parameter of wpipe2d and wpipe3d, templates/wpipe2d.cuh and wpipe3d.cuh).
#include <optional>
#include <vector>

#include "tuner/spec/stencil.hpp"

namespace tbtune {

struct FoldedRows {
  /// The stencil over folded rows: terms at offset d >= 0 along the streamed axis (the stencil's
  /// own terms of row d, the offsets across unchanged), and the constant.
  LinearForm rows;
  /// weight[d][R + e]: the weight of the row at offset e (-R .. R) in folded row d; 1 at e = d,
  /// 0 at the other e >= 0. Folded rows without terms have no other weight.
  std::vector<std::vector<double>> weight;
  int combines = 0;  ///< adds or multiply-adds per cell that form the folded rows
  /// Adds and multiply-adds per output cell (the combines counted once per folded cell).
  [[nodiscard]] int ops() const { return int(rows.terms.size()) + combines; }
};

/// The folded form of a 2D or 3D affine stencil each of whose rows before the output is a
/// combination of one or two of its rows at and after it (the fewest that give its
/// coefficients to 8 units in the last place; a mirror first), when that takes fewer operations than its terms
/// and the folded sums cannot amplify their rounding: the weights' magnitudes times the rows'
/// sum to at most 1. Folded sums round differently from the term-by-term sum every other kernel
/// follows, and only a stencil that does not amplify keeps that difference at the rounding's
/// size over any number of steps (README, "Verification"). None otherwise.
[[nodiscard]] std::optional<FoldedRows> fold_rows(const Stencil& s);

}  // namespace tbtune
