// The `wpipe2d` strategy: register-tiled, warp-pipelined temporal blocking for 2D stencils
// (templates/wpipe2d.cuh). Each lane keeps `rx` cells of a row in registers, x halos come by
// warp shuffle, y is streamed, and the block's `warps` warps form a pipeline in time, each
// advancing `tw` steps in registers and handing its rows to the next through shared memory.
// Parameters: rx, warps, tw (depth = warps x tw), rows (per iteration, i.e. per barrier), bps
// (blocks per SM to aim for) and sum (1: partial sums in registers, affine stencils only; 0: a
// window of rows, any stencil).
#include "tuner/codegen/strategies/strategies.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "model/derived.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// Rows the input ring prefetches ahead of the row warp 0 reads (TB_PF in the template): about
// one global-memory latency of iterations at the rates these kernels reach.
constexpr int kPrefetchRows = 3;

// What the terms below still miss: the median of measured / predicted GCells/s over the wpipe2d
// trials that default tunes timed on the H100 (j2d5pt and j2d9pt, docs/bench-2d.md), 0.65. Without
// it the model ranked wpipe2d above cmq2d candidates that ran 20-25% faster, which the search then
// never timed.
constexpr double kMeasuredShare = 0.65;

int tile_cols(int rx) { return 32 * rx; }
int valid_x(int rx, int depth, int radius) { return tile_cols(rx) - 2 * depth * radius; }

// The input ring (kPrefetchRows + 1 groups of `rows`) and two groups per warp boundary.
long smem_bytes(const Problem& p, int rx, int warps, int rows) {
  return long(kPrefetchRows + 1 + 2 * (warps - 1)) * rows * tile_cols(rx) * dtype_bytes(p.dtype);
}

// The multiply-adds in the unrolled loop body: register slots x rows x levels x cells x points.
// NVRTC's time grows with it (a minute and more past ~10000), so the space stops at kMaxBody.
constexpr long kMaxBody = 6000;
long body_size(const Problem& p, int rx, int tw, int rows, bool sum) {
  const int r = p.stencil.radius;
  return long(sum ? 2 * r : 2 * r + 1) * rows * tw * rx * long(p.stencil.points.size());
}

bool sum_possible(const Problem& p) { return p.stencil.linear && !p.stencil.linear->terms.empty(); }

// The registers a thread needs, estimated from the values it holds: per level, the partial sums
// of 2R rows (sum mode) or a window of 2R + 1 rows with their halos; plus the row being passed
// on, its halo extension and the level's finished row; plus addresses, masks and counters. The
// compiler's real count (ptxas) decides after compiling; this only keeps the space sensible.
int estimated_regs(const Problem& p, int rx, int tw, bool sum) {
  const int r = p.stencil.radius, per_value = dtype_bytes(p.dtype) / 4;
  const int held = sum ? tw * 2 * r * rx : tw * (2 * r + 1) * (rx + 2 * r);
  const int moving = sum ? 3 * rx + 2 * r : 2 * rx + 2 * r;
  return (held + moving) * per_value + 24;
}

class Wpipe2d final : public Strategy {
 public:
  std::string name() const override { return "wpipe2d"; }
  std::string summary() const override {
    return "2D register tiling, warps pipelined in time, halos by shuffle; params rx, warps, tw, rows, bps, sum";
  }
  bool supports(const Problem& p) const override { return p.dims() == 2; }

  std::vector<Params> space(const Problem& p, const DeviceProfile& d) const override {
    std::vector<Params> out;
    const int r = p.stencil.radius;
    // Odd strips keep a warp's strided shared-memory accesses free of bank conflicts.
    for (int rx = 1; rx <= 15; rx += 2)
      for (int warps : {1, 2, 4, 6, 8, 12, 16})
        for (int tw = 1; tw <= 8; ++tw)
          for (int rows : {1, 2, 4})
            for (int bps : {1, 2, 3, 4})
              for (int sum : {0, 1}) {
                if (sum && !sum_possible(p)) continue;
                if (valid_x(rx, warps * tw, r) < tile_cols(rx) / 2) continue;
                if (warps * 32 * bps > d.max_threads_per_sm) continue;
                if (smem_bytes(p, rx, warps, rows) > d.smem_per_block) continue;
                if (estimated_regs(p, rx, tw, sum) > 255) continue;
                if (body_size(p, rx, tw, rows, sum) > kMaxBody) continue;
                out.push_back({{"rx", rx}, {"warps", warps}, {"tw", tw}, {"rows", rows}, {"bps", bps}, {"sum", sum}});
              }
    return out;
  }

  Params complete(const Problem& p, const Params& given) const override {
    Params k{{"rx", 7}, {"warps", 8}, {"tw", 2}, {"rows", 2}, {"bps", 1}, {"sum", sum_possible(p) ? 1 : 0}};
    for (const auto& [name, v] : given) {
      if (!k.count(name))
        throw UsageError(fmt::format("strategy 'wpipe2d' has no parameter '{}' (rx, warps, tw, rows, bps, sum)", name));
      k[name] = v;
    }
    if (k["rx"] < 1 || k["rx"] > 32 || k["warps"] < 1 || k["warps"] > 32 || k["tw"] < 1 || k["rows"] < 1 ||
        k["rows"] > 16 || k["bps"] < 1 || (k["sum"] != 0 && k["sum"] != 1))
      throw UsageError("wpipe2d: need 1 <= rx <= 32, 1 <= warps <= 32, tw >= 1, 1 <= rows <= 16, bps >= 1, sum 0 or 1");
    if (k["sum"] && !sum_possible(p))
      throw UsageError("wpipe2d: sum=1 needs an affine stencil (a weighted sum of points plus a constant)");
    const int r = p.stencil.radius;
    if (valid_x(k["rx"], k["warps"] * k["tw"], r) < 1)
      throw UsageError(fmt::format("wpipe2d: a tile of 32 x rx = {} columns leaves no valid columns at depth {} "
                                   "and radius {}",
                                   tile_cols(k["rx"]), k["warps"] * k["tw"], r));
    return k;
  }
  int depth(const Params& k) const override { return k.at("warps") * k.at("tw"); }
  Params step_params(const Params& k) const override {
    Params one = k;
    one["warps"] = 1;  // launch(full = false): one warp advancing one step
    one["tw"] = 1;
    one["bps"] = 8;  // one-warp blocks: several per SM
    return one;
  }

  ModelTerms model_terms(const Problem& p, const Params& k, const DeviceProfile& d) const override {
    const int rx = k.at("rx"), warps = k.at("warps"), tw = k.at("tw"), t = warps * tw;
    const int r = p.stencil.radius;
    const bool sum = k.at("sum") != 0;
    ModelTerms m;
    m.depth = t;
    const double vx = double(valid_x(rx, t, r)) / tile_cols(rx);
    const long gx = ceil_div(p.domain[0] - 2 * r, valid_x(rx, t, r));
    // A y segment streams depth x R rows more at each end and fills a pipeline of `warps` stages.
    const double busy =
        split_stream(p.domain[1] - 2 * r, gx, long(d.sm_count) * k.at("bps"), t, r, k.at("rows")).efficiency;
    // Per computed cell and pass: the tile is read once, the valid part written once.
    m.a_gm = 1 + vx;
    // Per cell and step: the rings' store and load at each of the `warps` stages (per pass), and
    // the halo's 2R shuffles per strip of rx cells, each a shared-memory-pipe access per word.
    m.a_sm = 2.0 / tw + 2.0 * r / rx * (dtype_bytes(p.dtype) / 4);
    // Issue: besides its multiply-adds a level runs shuffles, ring loads and stores, moves and
    // loop control; ncu on the H100 (j2d5pt, rx 13) counted 2.7 instructions per FP64 one, so the
    // issue slots (4 per cycle per SM) bound it before the FP64 pipe (2 per cycle): 1.33x.
    m.a_cmp = p.stencil.flops * 1.33;
    // Latency: a level's rows wait on shuffles and on chains of multiply-adds through the same
    // partial sums, so the FP64 pipe needs many warps to stay busy. On the H100 (ncu, j2d5pt,
    // docs/bench-2d.md) one block of 8 warps per SM had no eligible warp 58% of the time and ran
    // at 0.36 of this model's rate without the factor; 16 warps per SM at 0.71. The share of
    // resident warps out of 24 reproduces both.
    const int regs = estimated_regs(p, rx, tw, sum);
    const int resident = std::max(1, std::min({k.at("bps"), d.regs_per_sm / (std::max(regs, 1) * 32 * warps),
                                               d.max_threads_per_sm / (32 * warps)}));
    const double warps_busy = std::min(1.0, double(resident * warps) / 24.0);
    m.valid = vx * busy * warps_busy * kMeasuredShare;
    m.smem_bytes = smem_bytes(p, rx, warps, k.at("rows"));
    m.threads = warps * 32;
    m.blocks_per_sm = k.at("bps");
    m.regs_per_thread = regs;
    m.ilp = rx;
    return m;
  }

  std::string source(const Problem& p, const Params& k) const override {
    return assemble_source(p, {{"TB_RX", k.at("rx")}, {"TB_WARPS", k.at("warps")}, {"TB_TW", k.at("tw")},
                               {"TB_ROWS", k.at("rows")}, {"TB_PF", kPrefetchRows}, {"TB_BPS", k.at("bps")}, {"TB_SUM", k.at("sum")}},
                           "wpipe2d.cuh");
  }

  Launch launch(const Problem& p, const Params& k, bool full, const LaunchContext& ctx) const override {
    const int r = p.stencil.radius, rx = k.at("rx");
    const int warps = full ? k.at("warps") : 1;
    const int t = full ? depth(k) : 1;
    Launch l;
    l.block = {unsigned(warps * 32), 1, 1};
    l.dynamic_smem = std::size_t(smem_bytes(p, rx, warps, k.at("rows")));
    const unsigned gx = ceil_div(p.domain[0] - 2 * r, valid_x(rx, t, r));
    // The step kernel's one-warp blocks run as many per SM as fit.
    const int bps = full ? std::min(k.at("bps"), ctx.resident_blocks_per_sm) : ctx.resident_blocks_per_sm;
    const long resident = long(ctx.sm_count) * bps;
    const StreamSplit split = split_stream(p.domain[1] - 2 * r, gx, resident, t, r, k.at("rows"));
    l.grid = {gx, unsigned(split.segments), 1};
    return l;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_wpipe2d_strategy() { return std::make_unique<Wpipe2d>(); }

}  // namespace tbtune
