#pragma once
/// @file stencil.hpp
/// The stencil IR: a spec's expression with its derived properties, canonical form and hash.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tuner/spec/spec.hpp"

namespace tbtune {

enum class Shape { Star, Box, General };
[[nodiscard]] const char* shape_name(Shape s);

/// A stencil that is affine in u: sum of coef x u[at] over `terms`, plus `constant`.
struct LinearForm {
  struct Term {
    Offset at;
    double coef = 0;
  };
  std::vector<Term> terms;  ///< nonzero coefficients, offsets in (z, y, x) order
  double constant = 0;
};

/// What every later stage needs to know about a stencil. Independent of dtype, domain and steps.
struct Stencil {
  std::string name;
  int dims = 2;
  Expr expr;                    ///< parameters already replaced by their values
  std::vector<Offset> points;   ///< distinct offsets read, sorted (z, y, x)
  int radius = 0;               ///< max |offset| over all axes
  int flops = 0;                ///< arithmetic operations per cell update (+ - * / and calls)
  Shape shape = Shape::General;
  /// The affine form with coefficients folded (e.g. "(5*u[..] + ...) / 118" as 5/118 * u[..]),
  /// when there is one. Code generation prints it as a chain of fused multiply-adds instead of
  /// the spec's tree, which for a divided sum saves a division per cell.
  std::optional<LinearForm> linear;
  std::string canonical;        ///< normalised text form; see canonical_form()
  std::string hash;             ///< 16 lowercase hex digits of FNV-1a 64 over `canonical`
};

/// Builds the IR from a validated spec.
[[nodiscard]] Stencil make_stencil(const Spec& spec);

/// One tuning problem: a stencil at a precision, domain size and step count.
struct Problem {
  Stencil stencil;
  DType dtype = DType::Double;
  std::array<long, 3> domain{1, 1, 1};  ///< nx, ny, nz (nz = 1 in 2D), boundary ring included
  long steps = 1;

  [[nodiscard]] int dims() const { return stencil.dims; }
  /// Cells updated each step: the domain without the ring of width `radius`.
  [[nodiscard]] double interior_cells() const;
  [[nodiscard]] long total_cells() const { return domain[0] * domain[1] * domain[2]; }
};

/// Problem from a spec, with the spec's dtype, domain and steps.
[[nodiscard]] Problem make_problem(const Spec& spec);

/// FNV-1a 64-bit hash of `text` (offset basis 0xcbf29ce484222325, prime 0x100000001b3).
[[nodiscard]] std::uint64_t fnv1a64(std::string_view text);
[[nodiscard]] std::string hex64(std::uint64_t v);

}  // namespace tbtune
