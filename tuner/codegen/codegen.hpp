#pragma once
/// @file codegen.hpp
/// CUDA source generation: the stencil functor printed from the parsed expression tree, and the
/// assembly of a complete NVRTC translation unit from an embedded kernel template.
///
/// Nothing from the spec's text reaches the generated source: numbers are printed from their
/// parsed values, parameters as their values, offsets as integers, functions from a fixed table.
/// A spec therefore cannot inject code.
#include <string>
#include <utility>
#include <vector>

#include "tuner/spec/stencil.hpp"

namespace tbtune {

/// The expression as CUDA, reading cells through an accessor `u(dx, dy, dz)` and computing in
/// the type `real`.
[[nodiscard]] std::string cuda_expr(const Expr& e);

/// Compile-time constants a template is instantiated with, in order (name, value).
using Defines = std::vector<std::pair<std::string, long>>;

/// A complete translation unit: `real` for the dtype, the stencil's TB_RADIUS and TB_DIMS,
/// `defines`, templates/common.cuh, the functor `TbStencil`, then templates/<name> for each of
/// `templates` in order (a template's shared parts first).
[[nodiscard]] std::string assemble_source(const Problem& problem, const Defines& defines,
                                          const std::vector<std::string>& templates);

}  // namespace tbtune
