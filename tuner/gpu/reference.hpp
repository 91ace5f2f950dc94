#pragma once
/// @file reference.hpp
/// The CPU reference executor (ground truth in tests) and the deterministic input generator.
#include <cstdint>
#include <vector>

#include "tuner/spec/stencil.hpp"

namespace tbtune {

/// Default seed of the input generator.
inline constexpr std::uint64_t kDefaultSeed = 20231;

/// Deterministic input of `problem.total_cells()` values in [0, 1): cell i (linear index
/// x + nx * (y + ny * z)) gets (splitmix64(seed + i) >> 11) * 2^-53, converted to T.
template <class T>
[[nodiscard]] std::vector<T> make_input(const Problem& problem, std::uint64_t seed = kDefaultSeed);

/// Advances `grid` (layout as above) by `steps` Jacobi steps of the stencil, in T arithmetic.
/// Cells closer than `radius` to an edge keep their values (Dirichlet ring).
template <class T>
void reference_run(const Problem& problem, std::vector<T>& grid, long steps);

}  // namespace tbtune
