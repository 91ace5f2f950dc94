#pragma once
/// @file row_factors.hpp
/// Separable 2D stencils: an affine stencil whose rows of coefficients are all multiples of one
/// row, c(dx, dy) = a(dy) x b(dx), as a binomial blur is. Its output is then a sum down y of
/// a(dy) times each row's sum across x, b(dx) x u[dx, dy], and a row's sum across serves every
/// output that reads the row: (2R + 1) + (2R + 1) multiply-adds per cell instead of up to
/// (2R + 1)^2 (wpipe2d's `sep`, templates/wpipe2d.cuh).
#include <optional>
#include <vector>

#include "tuner/spec/stencil.hpp"

namespace tbtune {

struct RowFactors {
  LinearForm across;  ///< b: terms at (dx, 0, 0), no constant
  LinearForm down;    ///< a: terms at (0, dy, 0), and the stencil's constant
  /// Multiply-adds per output cell: one per term of each form.
  [[nodiscard]] int ops() const { return int(across.terms.size() + down.terms.size()); }
};

/// The factors of a 2D affine stencil whose coefficients are a(dy) x b(dx) to within a few
/// roundings (8 ulps of the largest), when that takes fewer multiply-adds than the stencil's terms and the stencil
/// does not amplify (the sum of |coefficients| is at most 1): the factored sum rounds
/// differently from the term-by-term one every kernel else follows, and only a stencil that
/// does not amplify keeps that difference at the rounding's size over any number of steps
/// (README, "Verification"). None otherwise.
[[nodiscard]] std::optional<RowFactors> row_factors(const Stencil& s);

}  // namespace tbtune
