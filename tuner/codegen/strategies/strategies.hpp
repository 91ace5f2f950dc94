#pragma once
/// @file strategies.hpp
/// Factories of the built-in strategies (one file each in tuner/codegen/strategies/), for the registry.
#include <memory>

#include "tuner/codegen/strategy.hpp"

namespace tbtune {

std::unique_ptr<Strategy> make_naive_strategy();
std::unique_ptr<Strategy> make_stream_strategy();
std::unique_ptr<Strategy> make_cmq2d_strategy();
std::unique_ptr<Strategy> make_wpipe2d_strategy();
std::unique_ptr<Strategy> make_smtile3d_strategy();
std::unique_ptr<Strategy> make_devtile3d_strategy();
std::unique_ptr<Strategy> make_wpipe3d_strategy();

/// ceil(a / b) for a launch dimension.
[[nodiscard]] inline unsigned ceil_div(long a, long b) { return unsigned((a + b - 1) / b); }

/// Slots of one level's ring in a circular multi-queue that advances `group` rows (2D) or
/// planes (3D) per iteration: the least multiple of `group` holding the 2 * group + 2 * radius
/// being read and written in one iteration. Being a multiple of `group`, the templates can unroll
/// their loop ring / group times and see every slot as a constant (templates/cmq2d.cuh).
[[nodiscard]] inline int ring_slots(int group, int radius) {
  return (2 * group + 2 * radius + group - 1) / group * group;
}

/// How the streamed extent of a temporally blocked kernel (2D: rows, 3D: z planes) splits into
/// segments, one block per tile and segment. Every segment also streams depth * radius lines
/// before and after its own and takes depth iterations of `group` lines to fill its pipeline;
/// blocks run in waves of `resident`. The split minimises waves x (lines per segment + that
/// overhead); `efficiency` is the share of the GPU's block-slot time that advances useful lines.
struct StreamSplit {
  long segments = 1;
  double efficiency = 1;
};
[[nodiscard]] StreamSplit split_stream(long lines, long tiles, long resident, int depth, int radius, int group);

/// The share of `tiles` tiles of `valid` useful cells each, along one axis, that the axis' `n`
/// interior cells fill: a last tile that overhangs the domain costs a whole one (wpipe2d's
/// j2d49pt shape rx 17 fills 20 tiles of 496 columns with 9498, 0.957).
[[nodiscard]] inline double whole_tiles_share(long n, long valid, long tiles) {
  return tiles > 0 && valid > 0 ? double(n) / (double(tiles) * double(valid)) : 1.0;
}

/// The time of the slowest of `blocks` blocks that share `work` equally (templates/common.cuh,
/// tb_share: pieces laid out one after another, each with `pad` lines more for what its segment
/// costs beyond its own lines), in lines at full speed: its share, and the pad of a piece it
/// enters midway, at `speed`.
[[nodiscard]] double share_time(long work, long blocks, long pad, double speed);

}  // namespace tbtune
