#pragma once
/// @file verify.hpp
/// Comparing a candidate's result with the reference result.
#include <cstddef>

#include "tuner/spec/spec.hpp"

namespace tbtune {

/// Largest |a - b| / max(|b|, 1) over `n` cells of type `dtype` (absolute error for values
/// under 1, relative above). NaN or infinity in `a` where `b` is finite counts as infinite.
[[nodiscard]] double max_error(DType dtype, const void* a, const void* b, std::size_t n);

/// Largest accepted max_error: 1e-9 for double and 1e-3 for float. Kernels evaluate the same
/// generated stencil per cell, summing its terms in the same order (tuner/codegen.cpp), so
/// differences come only from the compiler contracting a * b + c into an FMA differently; over
/// 1000 steps of a stable stencil that stays far below these bounds, while any indexing or
/// synchronisation bug produces errors of order 1e-2 or more.
[[nodiscard]] double tolerance(DType dtype);

}  // namespace tbtune
