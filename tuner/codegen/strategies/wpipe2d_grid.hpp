#pragma once
/// @file wpipe2d_grid.hpp
/// How a pass of the wpipe2d strategy divides the domain among blocks (templates/wpipe2d.cuh):
/// tiles across the interior's columns; the tiles between the first and the last, over the rows
/// [depth x R, ny - depth x R), in `plain` segments each (tb_full, no handling of the boundary
/// ring); the first and last tiles in `edge` segments of all rows, and a band at the top and
/// bottom of each tile between (tb_edge, run beside it). Shared by the strategy, the timing
/// executable (scripts/wpipe2d_variant.cu) and the CPU emulator's driver, so that all three
/// launch what the template expects.
#include <array>

namespace tbtune {

struct Wpipe2dGrid {
  long tiles = 0;
  long plain = 0;  ///< segments per tile between the first and last; 0 when there are no such rows or tiles
  long edge = 1;   ///< segments of the first and last tiles
  double efficiency = 1;  ///< share of the block slots' time spent on interior cells (an estimate)
  [[nodiscard]] std::array<unsigned, 3> full_grid() const {
    return {plain > 0 ? unsigned(tiles - 2) : 0u, unsigned(plain), 1u};
  }
  [[nodiscard]] std::array<unsigned, 3> edge_grid() const { return {unsigned(2 * edge + 2 * (tiles - 2)), 1u, 1u}; }
};

/// How fast the loop with the boundary ring's tests runs, as a share of the loop without them,
/// for a stencil of `points` points: the tests cost about as much as kRingTests more points per
/// cell, in instructions and in the registers they hold (fitted on the H100, docs/bench-2d.md,
/// version 9: j2d5pt 0.58 at rx 13, tw 4, where they spill; 57-78% across shapes in version 8).
[[nodiscard]] double ring_loop_speed(int points);

/// Tiles of 32 x rx columns, overlapping by depth x radius per side, across the interior of nx
/// columns (the template counts them alike: wp_tiles).
[[nodiscard]] long wpipe2d_tiles(long nx, int radius, int rx, int depth);

/// The grid for given segment counts (tiles from the domain).
[[nodiscard]] Wpipe2dGrid wpipe2d_grid(long nx, long ny, int radius, int rx, int depth, long plain, long edge);

/// The segment counts that finish a pass soonest with `resident` blocks at a time, the edge
/// kernel's blocks given shorter segments as they run at `edge_speed` of the others' speed
/// (ring_loop_speed; `rows`: rows per iteration).
[[nodiscard]] Wpipe2dGrid wpipe2d_split(long nx, long ny, int radius, int rx, int depth, int rows, long resident,
                                        double edge_speed);

}  // namespace tbtune
