// The 3D strategies `smtile3d` (overlapped SM tiling) and `devtile3d` (device tiling with a
// grid-wide barrier per plane group). Both stream in z through a circular multi-queue of planes
// (templates/tile3d.cuh); they differ only in how a tile gets its halo, so one class with a flag
// implements both. Parameters: t (steps per pass), tx x ty (x-y tile), cy (consecutive cells per
// thread in y), z (planes per iteration; device tiling synchronises once per z planes), bps (blocks
// per SM the kernel is compiled for: its launch bounds; device tiling needs tiles <= bps x SMs),
// sum (1: partial sums in registers and 2 z planes of shared memory per level, affine stencils
// only; 0: a ring of planes per level, any stencil), rq (ring only; 1: each thread also keeps its
// own cells of the last z + 2R planes of every level in registers, so its own column's terms skip
// shared memory).
#include "tuner/codegen/strategies/strategies.hpp"

#include <algorithm>
#include <cstdlib>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "model/derived.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {


// Output cells per tile side of overlapped tiling: level 0 has the R-wide frame from the input,
// the t - 1 levels above it lose R per side each (templates/tile3d.cuh).
int valid_side(int tile, int t, int radius) { return tile - 2 * (t - 1) * radius; }

// The register queue's flag; parameters stored before it existed (a cache's older winners) are
// the ring without it.
int register_queue(const Params& k) { return k.count("rq") ? k.at("rq") : 0; }

// How far in z a stencil reaches off the own column: the largest |dz| of a point with dx or dy
// not 0 (0 for a star, the radius for a box).
int off_column_reach(const Stencil& s) {
  int d = 0;
  for (const Offset& o : s.points)
    if (o[0] != 0 || o[1] != 0) d = std::max(d, std::abs(o[2]));
  return d;
}

// The planes of each level's ring (templates/tile3d.cuh). Sum mode holds the z planes being read
// and the z being written; the ring also holds the radius around the ones being read. With the
// register queue, levels above 0 need in shared memory only the planes read off the own column:
// each enters `lag` planes after it was computed.
struct Rings {
  int level0, above, lag;
};
Rings rings(const Problem& p, int z, bool sum, bool rq) {
  const int r = p.stencil.radius;
  if (sum) return {2 * z, 2 * z, 0};
  if (!rq) return {ring_slots(z, r), ring_slots(z, r), 0};
  // The template unrolls lcm(level0, above) / z iterations (twice, with and without checks), so
  // `above` must divide level 0's ring: otherwise NVRTC's time grows with the lcm (radius 4 at
  // z = 1: 75 s instead of 5 s). The least such multiple of z that holds the 2z + 2D planes.
  const int d = off_column_reach(p.stencil), level0 = ring_slots(z, r);
  int above = ring_slots(z, d);
  while (level0 % above) above += z;
  return {level0, above, r - d};
}

long smem_bytes(const Problem& p, int depth, int tx, int ty, int z, bool sum, bool rq) {
  const int r = p.stencil.radius;
  const Rings g = rings(p, z, sum, rq);
  return long(g.level0 + (depth - 1) * g.above) * (tx + 2 * r) * (ty + 2 * r) * dtype_bytes(p.dtype);
}

// Shared-memory loads per cell: a thread evaluates its cy consecutive cells (y) of one plane at
// once (apply_rows), reading each distinct neighbour once; the z planes of an iteration are
// evaluated one after the other, interleaved with stores, so they do not share reads. In sum
// mode a thread reads each plane once for all the planes it contributes to: the distinct
// (dx, dy) columns count, not the points. With the register queue the thread's own column and
// rows come from registers, and level 0's own cells are read once per plane (1 / t per step).
double smem_loads_per_cell(const Stencil& s, int t, int cy, bool sum, bool rq) {
  std::set<std::tuple<int, int, int>> cells;
  for (const Offset& o : s.points)
    for (int c = 0; c < cy; ++c) {
      const int row = c + o[1];
      if (rq && o[0] == 0 && row >= 0 && row < cy) continue;
      cells.insert({o[0], row, sum ? 0 : o[2]});
    }
  return double(cells.size()) / cy + (rq ? 1.0 / t : 0.0);
}

class Tile3d final : public Strategy {
 public:
  explicit Tile3d(bool devtile) : devtile_(devtile) {}
  std::string name() const override { return devtile_ ? "devtile3d" : "smtile3d"; }
  std::string summary() const override {
    return devtile_ ? "3D device tiling: all blocks resident, halo exchange + one grid sync per plane "
                      "group; params t, tx, ty, cy, z, bps, sum, rq"
                    : "3D overlapped SM tiling streaming in z (3.5-D); params t, tx, ty, cy, z, bps, sum, rq";
  }
  bool supports(const Problem& p) const override { return p.dims() == 3; }

  std::vector<Params> space(const Problem& p, const DeviceProfile& d) const override {
    std::vector<Params> out;
    const int r = p.stencil.radius;
    // Fewer than 128 threads (4 warps) cannot hide shared-memory and FMA latency at one block per
    // SM; tx stays a multiple of 32 so a warp spans x (conflict-free shared-memory rows). Sum
    // mode's candidates past the register file are in the space but do not fit (model_terms).
    for (const auto& [sum, rq] : modes(p))
      for (int tx : {32, 64})
        for (int ty : {8, 16, 32, 64})
          for (int cy : {2, 4, 8})
            for (int z : {1, 2}) {
              const int threads = tx * ty / cy;
              if (ty % cy || threads < 128 || threads > 1024) continue;
              for (int t = 1; t <= 16; ++t) {
                const long smem = smem_bytes(p, t, tx, ty, z, sum, rq);
                if (smem > d.smem_per_block) break;
                if (!devtile_ && (valid_side(tx, t, r) < tx / 4 || valid_side(ty, t, r) < ty / 4)) break;
                const int fit = blocks_per_sm(d, smem, threads);
                // Device tiling: exactly the blocks per SM that make every tile resident.
                const int lo = devtile_ ? devtile_bps(p, d, tx, ty) : 1, hi = devtile_ ? lo : 2;
                for (int bps = lo; bps <= std::min(hi, fit); ++bps)
                  out.push_back({{"t", t}, {"tx", tx}, {"ty", ty}, {"cy", cy}, {"z", z}, {"bps", bps}, {"sum", sum},
                                 {"rq", rq}});
              }
            }
    return out;
  }

  Params complete(const Problem& p, const Params& given) const override {
    // Device tiling of the specs' 384 x 352 planes in 32 x 16 tiles: 264 blocks, 2 per SM.
    Params k{{"t", devtile_ ? 4 : 2}, {"tx", 32}, {"ty", devtile_ ? 16 : 32}, {"cy", 4}, {"z", 1},
             {"bps", devtile_ ? 2 : 1}, {"sum", 0}, {"rq", 0}};
    for (const auto& [n, v] : given) {
      if (!k.count(n))
        throw UsageError(fmt::format("strategy '{}' has no parameter '{}' (t, tx, ty, cy, z, bps, sum, rq)", name(), n));
      k[n] = v;
    }
    const int r = p.stencil.radius;
    if (k["t"] < 1 || k["z"] < 1 || k["z"] > 8 || k["cy"] < 1 || k["cy"] > 16 || k["ty"] % k["cy"] ||
        k["tx"] * k["ty"] / k["cy"] > 1024 || k["tx"] < 1 || k["bps"] < 1 ||
        k["bps"] * k["tx"] * k["ty"] / k["cy"] > 2048)
      throw UsageError(name() + ": need 1 <= z <= 8, t >= 1, 1 <= cy <= 16 dividing ty, tx * ty / cy <= 1024, "
                                "bps >= 1 and bps * threads <= 2048");
    if (k["sum"] != 0 && k["sum"] != 1)
      throw UsageError(name() + ": sum is 0 (a ring of planes) or 1 (partial sums)");
    if (k["sum"] && !sum_mode_possible(p))
      throw UsageError(name() + ": sum=1 needs an affine stencil (a sum of coefficient x u[...] terms "
                                "plus a constant); this one is not, use sum=0");
    if (k["rq"] != 0 && k["rq"] != 1)
      throw UsageError(name() + ": rq is 0 (every read from shared memory) or 1 (a register queue of own cells)");
    if (k["rq"] && k["sum"])
      throw UsageError(name() + ": rq=1 is for the ring of planes (sum=0); partial sums keep registers of their own");
    if (!devtile_ && (valid_side(k["tx"], k["t"], r) < 1 || valid_side(k["ty"], k["t"], r) < 1))
      throw UsageError(fmt::format("{}: a {}x{} tile leaves no valid cells at t {} and radius {}",
                                   name(), k["tx"], k["ty"], k["t"], r));
    return k;
  }
  int depth(const Params& k) const override { return k.at("t"); }
  // The step kernel: the same tile at depth 1 (launch(full = false)).
  ModelTerms step_terms(const Problem& p, const Params& k, const DeviceProfile& d) const override {
    Params one = k;
    one["t"] = 1;
    return model_terms(p, one, d);
  }

  ModelTerms model_terms(const Problem& p, const Params& k, const DeviceProfile& d) const override {
    const int t = k.at("t"), tx = k.at("tx"), ty = k.at("ty"), cy = k.at("cy"), z = k.at("z");
    const bool sum = k.at("sum"), rq = register_queue(k);
    const int r = p.stencil.radius;
    ModelTerms m;
    m.depth = t;
    // Reads of the level below, one store, and the input plane stored once per pass.
    m.a_sm = smem_loads_per_cell(p.stencil, t, cy, sum, rq) + 1 + 1.0 / t;
    m.a_cmp = p.stencil.flops;
    if (devtile_) {
      // In and out once per pass, plus each fused level's tile border written and read back by
      // the neighbours (the halo term of eq. 5.14).
      const double border = 2.0 * r * (tx + ty) / (double(tx) * ty);
      m.a_gm = 2 + 2 * (t - 1) * border;
      // At depth 1 there is no fused level to exchange, and the kernel does not synchronise.
      m.syncs_per_pass = t > 1 ? double(p.domain[2] + t * r) / z + t : 0;
      // The busiest SM runs ceil(tiles / SMs) tiles; the others idle for part of the pass.
      const long n = tiles(p, tx, ty);
      const long sms = std::max(1, d.sm_count);
      m.valid = double(n) / double(sms * long(ceil_div(n, sms)));
    } else {
      // Eq. 5.9 with the t - 1 levels that shrink the tile (level 0's frame comes from the input),
      // times the share of block-slot time the z split keeps useful.
      const double v = overlapped_valid_3d(tx, ty, t - 1, r);
      const double busy = z_split(p, k, t, long(d.sm_count) * k.at("bps")).efficiency;
      // Every tile cell and its frame read, only the valid ones written.
      m.a_gm = double(tx + 2 * r) * (ty + 2 * r) / (double(tx) * ty) + v;
      m.valid = v * busy;
    }
    m.smem_bytes = smem_bytes(p, t, tx, ty, z, sum, rq);
    if (sum) m.regs_per_thread = held_regs(p, t * (2 * r + 1) * cy, devtile_);
    if (rq) m.regs_per_thread = held_regs(p, t * (z + 2 * r) * cy, devtile_);
    m.threads = tx * ty / cy;
    m.blocks_per_sm = k.at("bps");
    // The ring's z planes of an iteration are independent work. Sum mode's are not: each plane's
    // terms go into the partial sums the next plane adds to, a chain through the registers; the
    // H100 evidence (docs/tuning.md) ran sum mode at a median 0.72-0.75 of its PP where the ring
    // ran at 0.90-0.93 while ilp was z for both. The cy rows of a thread are not counted either:
    // on the H100 (sum mode, j3d7pt, j3d27pt, poisson) cy 4 at 256 threads ran 14-21% slower
    // than cy 2 at 512 threads where cy x threads is the same. At 250 registers per thread there
    // are none left to keep a second row's loads in flight, so only warps hide latency.
    m.ilp = sum ? 1 : z;
    return m;
  }

  std::string source(const Problem& p, const Params& k) const override {
    const Rings g = rings(p, k.at("z"), k.at("sum"), register_queue(k));
    return assemble_source(p,
                           {{"TB_DEVTILE", devtile_ ? 1 : 0}, {"TB_DEPTH", k.at("t")},
                            {"TB_TX", k.at("tx")}, {"TB_TY", k.at("ty")}, {"TB_CY", k.at("cy")},
                            {"TB_Z", k.at("z")}, {"TB_SUM", k.at("sum")}, {"TB_REGQ", register_queue(k)},
                            {"TB_RING0", g.level0}, {"TB_RING", g.above}, {"TB_LAG", g.lag},
                            {"TB_BPS", k.at("bps")}},
                           {"tile3d.cuh"});
  }

  Launch launch(const Problem& p, const Params& k, bool full, const LaunchContext& ctx) const override {
    const int r = p.stencil.radius;
    const int depth = full ? k.at("t") : 1;
    const int tx = k.at("tx"), ty = k.at("ty"), cy = k.at("cy"), z = k.at("z");
    Launch l;
    l.block = {unsigned(tx), unsigned(ty / cy), 1};
    l.dynamic_smem = std::size_t(smem_bytes(p, depth, tx, ty, z, k.at("sum"), register_queue(k)));
    if (devtile_) {
      l.grid = {ceil_div(p.domain[0], tx), ceil_div(p.domain[1], ty), 1};
      l.cooperative = true;
      // Per block, parity, fused level and plane of a group, one plane shaped like the shared ones.
      l.scratch_elems = std::size_t(tiles(p, tx, ty)) * std::size_t(2 * std::max(depth - 1, 0) * z) *
                        std::size_t((tx + 2 * r) * (ty + 2 * r));
    } else {
      const long resident = long(ctx.sm_count) * std::min(k.at("bps"), ctx.resident_blocks_per_sm);
      l.grid = {ceil_div(p.domain[0] - 2 * r, valid_side(tx, depth, r)),
                ceil_div(p.domain[1] - 2 * r, valid_side(ty, depth, r)),
                unsigned(z_split(p, k, depth, resident).segments)};
    }
    return l;
  }

 private:
  // The registers per thread the model expects of a kernel that holds `values` reals from one
  // iteration to the next (sum mode: the 2R + 1 partial sums of each of its cy rows at each of
  // the t levels; the register queue: z + 2R planes of them). Overlapped tiling: the least it can
  // take, those plus a few addresses; only candidates past this are dropped before compiling.
  // Held to the launch bounds' cap, ptxas squeezes the rest of a kernel so far that no closer
  // estimate separates the kernels that fit from those that spill: of the model's top 40 per 3D config (double), ptxas fit kernels holding 75% of
  // the cap and spilled others holding 38%, and fit 64 x 32 tiles (j3d13pt t=2, cy=4, z=1 in 127
  // of 128 registers; j3d7pt t=3, cy=2, z=1 in 64) that the earlier estimate (64 + 1.3 x the
  // held registers, fitted to sum mode's counts where the cap left room) dropped, and they ran
  // faster than every candidate it let through (docs/bench-3d.md). So ptxas decides: the tuner
  // prunes the kernels that spill after compiling and the next candidates stand in (tune.cpp).
  // Device tiling's kernels keep more besides (the frame refill's offsets, the scratch): with the
  // least estimate, all 32 candidates a devtile3d-only tune compiled spilled for j3d13pt, j3d17pt,
  // j3d27pt and poisson on the H100, so device tiling keeps the fitted one (64 + 1.3 x the held
  // registers, from ptxas' counts of sum mode, j3d7pt double, cy 4, t 1 .. 6).
  static int held_regs(const Problem& p, int values, bool devtile) {
    const int held = values * (p.dtype == DType::Double ? 2 : 1);
    return devtile ? 64 + int(1.3 * held) : 24 + held;
  }
  // The (sum, rq) modes the space holds: the ring with and without the register queue, and
  // partial sums where the stencil is affine.
  static std::vector<std::pair<int, int>> modes(const Problem& p) {
    std::vector<std::pair<int, int>> m{{0, 0}, {0, 1}};
    if (sum_mode_possible(p)) m.push_back({1, 0});
    return m;
  }
  // Partial sums need the stencil as a sum of terms (the 3D case is checked by supports()).
  static bool sum_mode_possible(const Problem& p) { return p.stencil.linear.has_value(); }
  // Overlapped tiling's z segments (templates/tile3d.cuh): enough for whole waves of blocks.
  static StreamSplit z_split(const Problem& p, const Params& k, int depth, long resident) {
    const int r = p.stencil.radius;
    const long tiles = long(ceil_div(p.domain[0] - 2 * r, valid_side(k.at("tx"), depth, r))) *
                       ceil_div(p.domain[1] - 2 * r, valid_side(k.at("ty"), depth, r));
    return split_stream(p.domain[2] - 2 * r, tiles, std::max(1L, resident), depth, r, k.at("z"));
  }
  static long tiles(const Problem& p, int tx, int ty) {
    return long(ceil_div(p.domain[0], tx)) * long(ceil_div(p.domain[1], ty));
  }
  static int devtile_bps(const Problem& p, const DeviceProfile& d, int tx, int ty) {
    const long sms = std::max(1, d.sm_count);
    return int(std::max(1L, (tiles(p, tx, ty) + sms - 1) / sms));
  }
  // Resident blocks per SM by shared memory (with the driver's reserve per block) and threads.
  static int blocks_per_sm(const DeviceProfile& d, long smem, int threads) {
    const long by_smem = d.smem_per_sm / (smem + reserved_smem_per_block(d));
    const long by_threads = d.max_threads_per_sm / threads;
    return int(std::max(0L, std::min(by_smem, by_threads)));
  }
  bool devtile_;
};

}  // namespace

std::unique_ptr<Strategy> make_smtile3d_strategy() { return std::make_unique<Tile3d>(false); }
std::unique_ptr<Strategy> make_devtile3d_strategy() { return std::make_unique<Tile3d>(true); }

}  // namespace tbtune
