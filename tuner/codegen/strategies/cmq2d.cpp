// The `cmq2d` strategy: EBISU SM tiling for 2D stencils with a circular multi-queue in shared
// memory (templates/cmq2d.cuh). Parameters: t (time steps per pass), tile_x (columns per block,
// one thread each), ilp (rows per thread per iteration), bps (blocks per SM to aim for) and rrs
// (1: redundant register streaming, the thread's own column kept in registers).
#include "tuner/codegen/strategies/strategies.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "model/derived.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {


long smem_bytes(const Problem& p, int depth, int tile_x, int ilp) {
  const int r = p.stencil.radius;
  return long(depth) * ring_slots(ilp, r) * (tile_x + 2 * r) * dtype_bytes(p.dtype);
}

int valid_x(int tile_x, int depth, int radius) { return tile_x - 2 * depth * radius; }

// Shared-memory loads per cell: each thread computes `ilp` rows of one column, and the compiler
// reads every distinct (dx, row) of the level below once for the whole group. With redundant
// register streaming the thread's own column (dx = 0) comes from registers.
double smem_loads_per_cell(const Stencil& s, int ilp, bool rrs) {
  std::set<std::pair<int, int>> cells;
  for (const Offset& o : s.points)
    for (int j = 0; j < ilp; ++j)
      if (!(rrs && o[0] == 0)) cells.insert({o[0], j + o[1]});
  return double(cells.size()) / ilp;
}

class Cmq2d final : public Strategy {
 public:
  std::string name() const override { return "cmq2d"; }
  std::string summary() const override {
    return "2D temporal blocking, circular multi-queue in shared memory; params t, tile_x, ilp, bps, rrs";
  }
  bool supports(const Problem& p) const override { return p.dims() == 2; }

  std::vector<Params> space(const Problem& p, const DeviceProfile& d) const override {
    std::vector<Params> out;
    const int r = p.stencil.radius;
    // 128 columns are 4 warps: too few to hide shared-memory and FMA latency at one block per SM
    // (reachable by hand with --param).
    for (int tile_x : {256, 512, 1024})
      for (int ilp : {1, 2, 4, 8})
        for (int bps : {1, 2})
          for (int rrs : {0, 1})
          for (int t = 1; t <= 32; ++t) {
            if (valid_x(tile_x, t, r) < tile_x / 4) break;
            if (smem_bytes(p, t, tile_x, ilp) > d.smem_per_block) break;
            if (tile_x * bps > d.max_threads_per_sm) continue;
            out.push_back({{"t", t}, {"tile_x", tile_x}, {"ilp", ilp}, {"bps", bps}, {"rrs", rrs}});
          }
    return out;
  }

  Params complete(const Problem& p, const Params& given) const override {
    Params k{{"t", 4}, {"tile_x", 256}, {"ilp", 4}, {"bps", 1}, {"rrs", 1}};
    for (const auto& [name, v] : given) {
      if (!k.count(name))
        throw UsageError(fmt::format("strategy 'cmq2d' has no parameter '{}' (t, tile_x, ilp, bps, rrs)", name));
      k[name] = v;
    }
    const int r = p.stencil.radius;
    if (k["t"] < 1 || k["ilp"] < 1 || k["ilp"] > 16 || k["bps"] < 1 || k["tile_x"] % 32 != 0 ||
        k["tile_x"] < 32 || k["tile_x"] > 1024 || (k["rrs"] != 0 && k["rrs"] != 1))
      throw UsageError("cmq2d: need t >= 1, 1 <= ilp <= 16, bps >= 1, rrs 0 or 1, tile_x a multiple of 32 in 32..1024");
    if (valid_x(k["tile_x"], k["t"], r) < 1)
      throw UsageError(fmt::format("cmq2d: tile_x {} leaves no valid columns at t {} and radius {}",
                                   k["tile_x"], k["t"], r));
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
    const int t = k.at("t"), tile_x = k.at("tile_x"), ilp = k.at("ilp");
    const int r = p.stencil.radius;
    ModelTerms m;
    m.depth = t;
    // Eq. 5.8's valid share, times the share of block-slot time the row split keeps useful.
    const long gx = ceil_div(p.domain[0] - 2 * r, valid_x(tile_x, t, r));
    const double vx = overlapped_valid_2d(tile_x, t, r);
    const double busy = split_stream(p.domain[1] - 2 * r, gx, long(d.sm_count) * k.at("bps"), t, r, ilp).efficiency;
    // Per computed cell: every tile cell is read once, only the valid ones are written.
    m.a_gm = 1 + vx;
    m.a_sm = smem_loads_per_cell(p.stencil, ilp, k.at("rrs") != 0) + 1;  // loads of the level below + one store
    m.a_cmp = p.stencil.flops;
    m.valid = vx * busy;
    m.smem_bytes = smem_bytes(p, t, tile_x, ilp);
    m.threads = tile_x;
    m.blocks_per_sm = k.at("bps");
    m.ilp = ilp;
    return m;
  }

  std::string source(const Problem& p, const Params& k) const override {
    return assemble_source(p, {{"TB_DEPTH", k.at("t")}, {"TB_TILE_X", k.at("tile_x")},
                               {"TB_ILP", k.at("ilp")},
                               {"TB_RING", ring_slots(k.at("ilp"), p.stencil.radius)}, {"TB_RRS", k.at("rrs")},
                               {"TB_BPS", k.at("bps")}},
                           {"cmq2d.cuh"});
  }

  Launch launch(const Problem& p, const Params& k, bool full, const LaunchContext& ctx) const override {
    const int r = p.stencil.radius;
    const int depth = full ? k.at("t") : 1;
    const int tile_x = k.at("tile_x");
    Launch l;
    l.block = {unsigned(tile_x), 1, 1};
    l.dynamic_smem = std::size_t(smem_bytes(p, depth, tile_x, k.at("ilp")));
    const unsigned gx = ceil_div(p.domain[0] - 2 * r, valid_x(tile_x, depth, r));
    const long resident = long(ctx.sm_count) * std::min(k.at("bps"), ctx.resident_blocks_per_sm);
    const StreamSplit split = split_stream(p.domain[1] - 2 * r, gx, resident, depth, r, k.at("ilp"));
    l.grid = {gx, unsigned(split.segments), 1};
    return l;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_cmq2d_strategy() { return std::make_unique<Cmq2d>(); }

}  // namespace tbtune
