#include "tuner/codegen/strategies/wpipe2d_grid.hpp"

#include <algorithm>

#include "tuner/codegen/strategies/strategies.hpp"

namespace tbtune {
namespace {

constexpr double kRingTests = 3.6;

// How fast the loop with the tests of the ring's columns only runs, as a share of the loop
// without tests: a select of R cells in one lane per level and row.
constexpr double kColumnsSpeed = 1.0;

// Below this ring loop speed tb_edge runs the first and last tiles' rows between the bands with
// the column tests only, a second loop in it. Above, the tests cost little and the second
// loop more: j2d25pt (0.87) ran 3.6% slower with it on the H100, j2d5pt (0.58) 4% faster and
// j2d9pt (0.71) 2.7% (docs/bench-2d.md, version 12).
constexpr double kByRowsBelow = 0.8;

}  // namespace

long wpipe2d_tiles(long nx, int radius, int rx, int depth) {
  const long valid = 32L * rx - 2L * depth * radius;
  return (nx - 2 * radius + valid - 1) / valid;
}

double ring_loop_speed(int ops) { return double(ops) / (double(ops) + kRingTests); }

bool edge_columns_apart(double ring_speed) { return ring_speed < kByRowsBelow; }

Wpipe2dGrid wpipe2d_grid(long nx, long ny, int radius, int rx, int depth, int rows, long resident, double edge_speed,
                         bool split) {
  Wpipe2dGrid g;
  g.tiles = wpipe2d_tiles(nx, radius, rx, depth);
  resident = std::max(1L, resident);
  // The template's layout of the work (wp_shared_pass): per tile's rows, a segment that streams
  // depth x R rows more at each end and fills the pipeline, as `pad` rows more.
  const long lines = ny - 2L * radius, pad = 2L * depth * radius + long(depth) * rows;
  const auto piece = [&](long rows_of_piece) { return rows_of_piece > 0 ? pad + rows_of_piece : 0L; };
  // With split, tb_full's rows are [a, b) of the tiles between the first and the last, and
  // tb_edge takes those two tiles' rows [a, b), with the tests of the ring's columns only, and
  // the bands above and below [a, b) of every tile, with the tests of its rows too.
  const long dr = long(depth) * radius, a = std::min(dr, ny - radius), b = std::max(a, ny - dr);
  const long between = split ? std::max(0L, g.tiles - 2) : 0;
  // The work that tests the ring's rows (at edge_speed): the bands with split, every tile's
  // rows without. The work that tests its columns only runs at kColumnsSpeed, in a loop of its
  // own where edge_columns_apart, else in the same loop as the rows' (at edge_speed).
  const long full_work = between * piece(b - a);
  const long columns_work = split ? (g.tiles - between) * piece(b - a) : 0;
  const long rows_work = split ? g.tiles * (piece(a - radius) + piece(ny - radius - b)) : g.tiles * piece(lines);
  const long edge_work = columns_work + rows_work;
  if (edge_work > 0 && edge_columns_apart(edge_speed))
    edge_speed = double(edge_work) / (double(columns_work) / kColumnsSpeed + double(rows_work) / edge_speed);
  double time = 0;
  if (full_work == 0) {
    // One kernel's blocks: tb_full's without split, tb_edge's with two tiles or no rows between.
    const long blocks = std::max(1L, std::min(resident, edge_work));
    (split ? g.edge : g.full) = blocks;
    time = share_time(edge_work, blocks, pad, edge_speed);
  } else {
    // tb_edge's slots: as many as end the pass soonest, its blocks and tb_full's at once.
    for (long e = 1; e < std::max(2L, resident); ++e) {
      const long f = std::max(1L, resident - e), waves = (f + e + resident - 1) / resident;
      const double t = double(waves) * std::max(share_time(full_work, f, pad, 1.0),
                                                share_time(edge_work, e, pad, edge_speed));
      if (e == 1 || t < time) {
        time = t;
        g.full = f;
        g.edge = e;
      }
    }
  }
  g.efficiency = double(g.tiles) * double(lines) / (double(resident) * time);
  return g;
}

}  // namespace tbtune
