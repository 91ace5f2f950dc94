#include "tuner/codegen/strategies/wpipe2d_grid.hpp"

#include <algorithm>
#include <cmath>

namespace tbtune {
namespace {

constexpr double kRingTests = 3.6;

long ceil_div(long a, long b) { return (a + b - 1) / b; }

// tb_full's rows [a, b): those at least depth x R rows from the top and the bottom.
long plain_rows(long ny, int radius, int depth) {
  const long dr = long(depth) * radius, a = std::min(dr, ny - radius);
  return std::max(a, ny - dr) - a;
}

}  // namespace

long wpipe2d_tiles(long nx, int radius, int rx, int depth) {
  return ceil_div(nx - 2 * radius, 32L * rx - 2L * depth * radius);
}

double ring_loop_speed(int points) { return double(points) / (double(points) + kRingTests); }

Wpipe2dGrid wpipe2d_grid(long nx, long ny, int radius, int rx, int depth, long plain, long edge) {
  Wpipe2dGrid g;
  g.tiles = wpipe2d_tiles(nx, radius, rx, depth);
  g.plain = g.tiles > 2 && plain_rows(ny, radius, depth) > 0 ? plain : 0;
  g.edge = edge;
  return g;
}

Wpipe2dGrid wpipe2d_split(long nx, long ny, int radius, int rx, int depth, int rows, long resident,
                          double edge_speed) {
  const long lines = ny - 2 * radius, inner = plain_rows(ny, radius, depth);
  // Every segment streams depth x R rows more at each end and fills a pipeline (split_stream's
  // overhead); a band holds the rows within depth x R of the top or bottom.
  const long overhead = 2L * depth * radius + long(depth) * rows;
  const long band = std::min(long(depth) * radius, lines) + overhead;
  Wpipe2dGrid best = wpipe2d_grid(nx, ny, radius, rx, depth, 1, 1);
  const long between = best.tiles - 2;
  const long limit = std::max(1L, (between > 0 && inner > 0 ? inner : lines) / 16);
  double best_cost = 0;
  for (long n = 1; n <= limit; ++n) {
    Wpipe2dGrid g = wpipe2d_grid(nx, ny, radius, rx, depth, n, 1);
    // A plain block's time, in rows of tb_full's speed; the edge segments no longer than that.
    const long span = g.plain > 0 ? ceil_div(inner, n) + overhead : 0;
    const long edge_rows = std::max(16L, long(edge_speed * double(span)) - overhead);
    g.edge = g.plain > 0 ? ceil_div(lines, edge_rows) : n;
    // Waves of blocks as long as the longest, the bands counted by their share of that.
    const double longest = std::max(double(span), double(ceil_div(lines, g.edge) + overhead) / edge_speed);
    const double blocks = double(between * g.plain + 2 * g.edge) + double(2 * between * band) / edge_speed / longest;
    const double cost = std::ceil(blocks / double(resident)) * longest;
    if (n == 1 || cost < best_cost) {
      best_cost = cost;
      best = g;
    }
  }
  best.efficiency = double(best.tiles) * double(lines) / (double(resident) * best_cost);
  return best;
}

}  // namespace tbtune
