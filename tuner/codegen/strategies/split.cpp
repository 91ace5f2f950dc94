#include <algorithm>

#include "tuner/codegen/strategies/strategies.hpp"

namespace tbtune {

StreamSplit split_stream(long lines, long tiles, long resident, int depth, int radius, int group) {
  StreamSplit best;
  double best_cost = 0;
  const long overhead = 2L * depth * radius + long(depth) * group;
  for (long n = 1; n <= std::max(1L, lines / 16); ++n) {
    const long waves = (tiles * n + resident - 1) / resident;
    const double cost = double(waves) * double((lines + n - 1) / n + overhead);
    if (n == 1 || cost < best_cost) {
      best_cost = cost;
      best.segments = n;
    }
  }
  best.efficiency = double(tiles) * double(lines) / (double(resident) * best_cost);
  return best;
}

double share_time(long work, long blocks, long pad, double speed) {
  return double((work + blocks - 1) / blocks + pad) / speed;
}

}  // namespace tbtune
