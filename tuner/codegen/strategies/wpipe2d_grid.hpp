#pragma once
/// @file wpipe2d_grid.hpp
/// How a pass of the wpipe2d strategy divides the domain among blocks (templates/wpipe2d.cuh):
/// tiles across the interior's columns, each over all its rows, shared equally by one wave of
/// blocks (tb_share). With split, tb_full's blocks share the tiles between the first and the
/// last, and tb_edge's, run beside them, the first and the last, whose loop tests for the
/// boundary ring's columns and runs slower. Shared by the strategy, the timing executable
/// (scripts/wpipe2d_variant.cu) and the CPU emulator's driver, so that all three launch what the
/// template expects.
#include <array>

namespace tbtune {

struct Wpipe2dGrid {
  long tiles = 0;
  long full = 0;  ///< tb_full's blocks; 0 when it has no tiles (split with two tiles or one)
  long edge = 0;  ///< tb_edge's blocks; 0 without split
  double efficiency = 1;  ///< share of the block slots' time spent on interior cells (an estimate)
  [[nodiscard]] std::array<unsigned, 3> full_grid() const { return {unsigned(full), 1u, 1u}; }
  [[nodiscard]] std::array<unsigned, 3> edge_grid() const { return {unsigned(edge), 1u, 1u}; }
};

/// How fast the loop with the boundary ring's tests (its rows and columns) runs, as a share of
/// the loop without them, for a loop of `ops` multiply-adds per cell (the stencil's points,
/// fewer with wpipe2d's sep or fold): the tests cost about as much as kRingTests more per cell,
/// in instructions and in the registers they hold (fitted on the H100, docs/bench-2d.md,
/// version 9: j2d5pt 0.58 at rx 13, tw 4, where they spill; 57-78% across shapes in version 8).
/// The loop with the column tests only runs at about full speed (version 12).
[[nodiscard]] double ring_loop_speed(int ops);

/// Whether tb_edge runs the first and last tiles' rows away from the ring's rows in a loop of
/// their own, with the column tests only (TB_WP_EDGE_BY_ROWS): where the ring loop, at
/// `ring_speed` (ring_loop_speed), is slow enough for a second loop to pay.
[[nodiscard]] bool edge_columns_apart(double ring_speed);

/// Tiles of 32 x rx columns, overlapping by depth x radius per side, across the interior of nx
/// columns (the template counts them alike: wp_tiles).
[[nodiscard]] long wpipe2d_tiles(long nx, int radius, int rx, int depth);

/// A pass's grid with `resident` blocks at a time (`rows`: rows per iteration). Without split
/// one kernel's blocks share every tile, all at `edge_speed` (ring_loop_speed); with split
/// tb_edge gets as many of the slots as make its blocks end with tb_full's. `efficiency` is
/// relative to the loop without tests.
[[nodiscard]] Wpipe2dGrid wpipe2d_grid(long nx, long ny, int radius, int rx, int depth, int rows, long resident,
                                       double edge_speed, bool split);

}  // namespace tbtune
