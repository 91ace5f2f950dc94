// The `wpipe2d` strategy: register-tiled, warp-pipelined temporal blocking for 2D stencils
// (templates/wpipe2d.cuh). Each lane keeps `rx` cells of a row in registers, x halos come by
// warp shuffle, y is streamed, and the block's `warps` warps form a pipeline in time, each
// advancing `tw` steps in registers and handing its rows to the next through a shared-memory
// ring. Parameters: rx, warps, tw (depth = warps x tw), rows (per iteration, i.e. per barrier),
// bps (blocks per SM to aim for), split (1: the blocks that meet the boundary ring in a
// kernel of their own, beside the others'; 0: one kernel, every block testing for the ring) and
// late (where the held rows' terms are summed: wpipe_model.hpp, late_of), sep (1: a separable
// stencil's rows summed across once each, tuner/spec/row_factors.hpp; every loop)
// and fold (1: a stencil whose rows above are combinations of the rows at and below the
// output, as a symmetric one's, summed over those folded rows: tuner/spec/fold_rows.hpp;
// every loop, late 0).
// Its model and space are fitted to H100 measurements (docs/bench-2d.md, "The model fitted").
#include "tuner/codegen/strategies/strategies.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "model/derived.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/codegen/strategies/naive_step.hpp"
#include "tuner/codegen/strategies/wpipe2d_grid.hpp"
#include "tuner/codegen/strategies/wpipe_model.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/fold_rows.hpp"
#include "tuner/spec/row_factors.hpp"

namespace tbtune {
namespace {

// The fewest row groups cp.async loads ahead of the group warp 0 takes (TB_PF_MIN in the
// template, which prefetches into every slot the ring's rounding leaves spare: wp_prefetch).
constexpr int kMinPrefetch = 2;

int tile_cols(int rx) { return 32 * rx; }
int valid_x(int rx, int depth, int radius) { return tile_cols(rx) - 2 * depth * radius; }

// The template keeps the boundary ring at fixed cells of the first and the last tile
// (wpipe2d.cuh, wp_tile_c0), which needs an interior at least one tile wide: then no tile holds
// both sides of the ring, and no tile between them reaches either.
bool fits_domain(const Problem& p, int rx) { return p.domain[0] - 2 * p.stencil.radius >= tile_cols(rx); }

// The conveyor ring: a group per warp, the groups in flight from global memory, the one being
// stored, rounded up to a power of two (the template's wp_ring_groups: a slot is then one AND).
long ring_groups(int warps) {
  long m = 1;
  while (m < warps + kMinPrefetch + 1) m *= 2;
  return m;
}
long smem_bytes(const Problem& p, int rx, int warps, int rows) {
  return ring_groups(warps) * rows * tile_cols(rx) * dtype_bytes(p.dtype);
}

// Rows per unrolled loop body: the window's slot pattern repeats after lcm(rows, 2R + rows)
// rows, and the body holds that many rows of every level.
long body_rows(const Problem& p, int rows) { return std::lcm(long(rows), long(2 * p.stencil.radius + rows)); }

// The multiply-adds in the unrolled loop body: rows x levels x cells x points. NVRTC's time
// grows with it (a minute and more past ~10000), so the space stops at kMaxBody.
constexpr long kMaxBody = 6000;
long body_size(const Problem& p, int rx, int tw, int rows) {
  return body_rows(p, rows) * tw * rx * long(p.stencil.points.size());
}

// The registers a thread needs, estimated from the values it holds across the barrier: per
// level, max(2R, rows) rows of rx cells (the rows later outputs read, and the partial sums of
// the next outputs), plus the rows arriving. Halo cells are shuffled when read, not kept. The
// compiler's real count (ptxas) decides after compiling; the model's resource check
// (`regs_per_thread`) keeps the searches to what may fit, and a shape asked for by name
// (`--param`) is compiled whatever the estimate.
// With fold, R rows of rx cells more per level: the folded rows in the making (ptxas, j2d25pt
// double, 2 rows, tw 1: rx 7 +34-36 registers, rx 9 +44, rx 11 +62 at 8 warps; tw 2 at rx 10
// spilled 8-204 bytes at 255).
int estimated_regs(const Problem& p, int rx, int tw, int rows, bool fold) {
  const int r = p.stencil.radius, per_value = dtype_bytes(p.dtype) / 4;
  return (tw * std::max(2 * r, rows) * rx + rows * rx + (fold ? tw * r * rx : 0)) * per_value;
}

// Whether the ring's tests cost enough for a pass to run the blocks that meet it as a kernel of
// their own (split 1), by the loop's multiply-adds (loop_ops). Where they cost less than 10% of
// the loop, two kernels lost: j2d49pt (0.93) ran 20-35% slower split at rx 9-14 on the H100
// (docs/bench-2d.md, version 9), and j2d25pt (0.87) ran within 5% either way.
constexpr double kSplitBelow = 0.9;

// Whether a pass is two kernels (the `split` parameter). Kernels cached before it existed
// were one kernel with the geometry of split 0.
bool split_of(const Params& k) { return k.count("split") && k.at("split") != 0; }

// Whether the loops sum a separable stencil's rows across once each (the `sep` parameter).
bool sep_of(const Params& k) { return k.count("sep") && k.at("sep") != 0; }

// Multiply-adds (and adds) per cell and step of the pass's loops: the stencil's points, with sep
// its factors' terms, with fold its folded terms and the mirrored rows' adds.
int loop_ops(const Problem& p, const Params& k) {
  if (sep_of(k))
    if (const auto f = row_factors(p.stencil)) return f->ops();
  if (fold_of(k))
    if (const auto f = fold_rows(p.stencil)) return f->ops();
  return int(p.stencil.points.size());
}

// Shuffles per cell and level with sep: the halo of each arriving row's sum across, 2 x its
// widest |dx|, over the strip's rx cells.
double sep_shuffles_per_cell(const RowFactors& f, int rx) {
  int widest = 0;
  for (const auto& t : f.across.terms) widest = std::max(widest, std::abs(t.at[0]));
  return 2.0 * widest / rx;
}

// The model's compute per cell and step of a loop of `ops` multiply-adds in a pass of `depth`
// steps: 2 flops each and the pass's own cost, which scales with them (wpipe_pass_flops).
double loop_flops(int ops, int depth) { return 2.0 * ops + wpipe_pass_flops(ops) / depth; }

// How fast the loop with the ring's tests runs, as a share of the loop without them: the tests
// cost the same whatever the loop sums, so a loop of fewer multiply-adds (sep, fold) pays more.
double ring_speed_of(const Problem& p, const Params& k) { return ring_loop_speed(loop_ops(p, k)); }

// A pass's grid: both kernels run the same loop (sep and fold in each), tb_edge's with the tests.
Wpipe2dGrid grid_of(const Problem& p, const Params& k, long resident, int rx, int depth, bool split) {
  return wpipe2d_grid(p.domain[0], p.domain[1], p.stencil.radius, rx, depth, k.at("rows"), resident,
                      ring_speed_of(p, k), split);
}

// The space's grid (Wpipe2d::space): strips of 1 to kSpaceRx cells, kSpaceWarps warps, 1 to
// kSpaceTw levels per warp, 1 or 2 rows per iteration and blocks per SM. Warps and blocks per SM
// as measured on the H100 (docs/bench-2d.md, "The model fitted"): 2 warps ran 15-40% below the
// best and 16 warps 7-16% below; a third or fourth block per SM gained at most 2% over the best
// at one or two, and pipelines of 4-12 warps won. On the H200, float j2d49pt's best at three
// blocks (4 warps) ran 856.6 GCells/s, at two (6 warps) 929.4 (docs/bench-2d.md, "Two blocks per
// SM for float j2d49pt").
constexpr int kSpaceRx = 27, kSpaceTw = 8;
constexpr int kSpaceWarps[] = {4, 6, 8, 12};

// What the space's rules ask of the stencil, worked out once per space: whether late 1, sep
// and fold may apply.
struct StencilWays {
  bool affine, separable, symmetric;
  explicit StencilWays(const Problem& p)
      : affine(p.stencil.linear.has_value()), separable(row_factors(p.stencil).has_value()),
        symmetric(fold_rows(p.stencil).has_value()) {}
};

// One point of the grid, as the space's rules read it (a plain struct: the grid has 110,592).
struct Point {
  int rx, warps, tw, rows, bps, split, late, sep, fold;
  Params params() const {
    return {{"rx", rx},       {"warps", warps}, {"tw", tw},   {"rows", rows}, {"bps", bps},
            {"split", split}, {"late", late},   {"sep", sep}, {"fold", fold}};
  }
};
Point point_of(const Params& k) {
  return {k.at("rx"),    k.at("warps"), k.at("tw"),  k.at("rows"), k.at("bps"),
          k.at("split"), k.at("late"),  k.at("sep"), k.at("fold")};
}

// Why the grid leaves point k out of the space, or nullptr where it is in it: one rule for the
// space and for the error of a `--param` that names a shape outside it.
const char* excluded(const Problem& p, const DeviceProfile& d, const StencilWays& ways, const Point& k) {
  const auto [rx, warps, tw, rows, bps, split, late, sep, fold] = k;
  if (rx > kSpaceRx) return "rx: the space holds strips of 1 to 27 cells";
  if (std::find(std::begin(kSpaceWarps), std::end(kSpaceWarps), warps) == std::end(kSpaceWarps))
    return "warps: the space holds 4, 6, 8 and 12 warps";
  if (tw > kSpaceTw) return "tw: the space holds 1 to 8 levels per warp";
  if (rows > 2) return "rows: the space holds 1 and 2 rows per iteration";
  if (bps > 2) return "bps: the space holds 1 and 2 blocks per SM";
  if (late && !ways.affine) return "late=1 needs an affine stencil";
  if (sep && !ways.separable) return "sep=1 needs a separable stencil";
  if (fold && !ways.symmetric) return "fold=1 needs a stencil symmetric in y";
  if (fold && (sep || late)) return "fold=1 runs with late=0 and sep=0";
  // sep in one kernel (split 0) only: j2d49pt's best known shape (rx 10, 8 warps, 2 rows, late
  // 1) ran 532.0 GCells/s so and 501.4 split, and the later winners 895.9 / 718.2 (float) and
  // 590.5 / 489.7 (double) (H200, docs/bench-2d.md, "Separable rows in every loop" and "Two
  // blocks per SM for float j2d49pt").
  if (sep && split) return "sep=1 runs as one kernel (split=0), which ran faster than two";
  if (wpipe_strip_too_conflicted(p, rx, wpipe_pairs(p, 2)))
    return "rx: the ring's accesses of this strip serialise too deeply on the shared-memory banks";
  if (valid_x(rx, warps * tw, p.stencil.radius) < tile_cols(rx) / 2)
    return "under half of the tile's columns are valid at this depth (warps x tw) and rx";
  if (!fits_domain(p, rx)) return "rx: the interior is narrower than one tile (32 x rx columns)";
  if (warps * 32 * bps > d.max_threads_per_sm) return "more threads per SM than the device runs";
  if (smem_bytes(p, rx, warps, rows) > d.smem_per_block) return "more shared memory per block than the device has";
  if (body_size(p, rx, tw, rows) > kMaxBody) return "the unrolled loop body is over 6000 multiply-adds (NVRTC's time)";
  if (split && ring_speed_of(p, k.params()) >= kSplitBelow)
    return "split=1: the ring's tests cost under a tenth of this loop, and there one kernel ran faster";
  return nullptr;
}

class Wpipe2d final : public Strategy {
 public:
  std::string name() const override { return "wpipe2d"; }
  std::string summary() const override {
    return "2D register tiling, warps pipelined in time, halos by shuffle; params rx, warps, tw, rows, bps, split, "
           "late, sep, fold";
  }
  // A strip of one cell per lane is the narrowest tile, and the interior must hold one tile.
  bool supports(const Problem& p) const override { return p.dims() == 2 && fits_domain(p, 1); }

  std::vector<Params> space(const Problem& p, const DeviceProfile& d) const override {
    std::vector<Params> out;
    const StencilWays ways(p);
    for (int rx = 1; rx <= kSpaceRx; ++rx)
      for (int warps : kSpaceWarps)
        for (int tw = 1; tw <= kSpaceTw; ++tw)
          for (int rows : {1, 2})
            for (int bps : {1, 2})
              for (int split : {0, 1})
                for (int late : {1, 0})  // late 1 first: the model's ties keep this order
                  for (int sep : {0, 1})
                    for (int fold : {0, 1}) {
                      const Point k{rx, warps, tw, rows, bps, split, late, sep, fold};
                      if (!excluded(p, d, ways, k)) out.push_back(k.params());
                    }
    return out;
  }

  std::string outside_space(const Problem& p, const DeviceProfile& d, const Params& k) const override {
    const char* why = excluded(p, d, StencilWays(p), point_of(k));
    return why ? why : "";
  }

  Params complete(const Problem& p, const Params& given) const override {
    // Defaults that compile in seconds and fit the registers for any radius: deeper per warp
    // only at radius 1 (the loop body holds 2R + 1 rows of every level).
    // On a narrow domain the default strip and pipeline shrink to what it allows (a tile at most
    // the interior's width, valid columns at least the overlap); values given by hand are kept
    // and checked below.
    const int r = p.stencil.radius;
    Params k{{"rx", 7},   {"warps", 8}, {"tw", r <= 1 ? 2 : 1},
             {"rows", 1}, {"bps", 1},   {"split", 1}, {"late", wpipe_late_values(p).front()}, {"sep", 0}, {"fold", 0}};
    for (const auto& [name, v] : given) {
      if (!k.count(name))
        throw UsageError(
            fmt::format("strategy 'wpipe2d' has no parameter '{}' (rx, warps, tw, rows, bps, split, late, sep, fold)", name));
      k[name] = v;
    }
    if (k["fold"] && !given.count("late")) k["late"] = 0;
    if (k["sep"] && !given.count("split")) k["split"] = 0;
    if (!given.count("rx")) k["rx"] = int(std::clamp((p.domain[0] - 2 * r) / 32, 1L, 7L));
    if (!given.count("tw"))
      while (k["tw"] > 1 && valid_x(k["rx"], k["warps"] * k["tw"], r) < k["warps"] * k["tw"] * r) --k["tw"];
    if (!given.count("warps"))
      while (k["warps"] > 1 && valid_x(k["rx"], k["warps"] * k["tw"], r) < k["warps"] * k["tw"] * r) --k["warps"];
    if (k["rx"] < 1 || k["rx"] > 32 || k["warps"] < 1 || k["warps"] > 32 || k["tw"] < 1 || k["tw"] > 32 ||
        k["rows"] < 1 || k["rows"] > 16 || k["bps"] < 1 || k["bps"] > 32 || k["split"] < 0 || k["split"] > 1 ||
        k["late"] < 0 || k["late"] > 1 || k["sep"] < 0 || k["sep"] > 1 || k["fold"] < 0 || k["fold"] > 1)
      throw UsageError("wpipe2d: need 1 <= rx <= 32, 1 <= warps <= 32, 1 <= tw <= 32, 1 <= rows <= 16, 1 <= bps <= 32, "
                       "split 0 or 1, late 0 or 1, sep 0 or 1, fold 0 or 1");
    if (k["sep"] && !row_factors(p.stencil))
      throw UsageError(fmt::format("wpipe2d: sep=1 needs a 2D affine stencil whose rows of coefficients are multiples "
                                   "of one row, whose coefficients' magnitudes sum to at most 1, and which takes "
                                   "fewer multiply-adds so factored; '{}' is not one",
                                   p.stencil.name));
    if (k["fold"] && !fold_rows(p.stencil))
      throw UsageError(fmt::format("wpipe2d: fold=1 needs a 2D affine stencil whose rows above the output are "
                                   "combinations of its rows at and below it (e.g. equal coefficients at (dx, dy) and "
                                   "(dx, -dy)), whose folded sums cannot amplify rounding, and which takes fewer "
                                   "operations so folded; '{}' is not one",
                                   p.stencil.name));
    if (k["fold"] && (k["sep"] || k["late"]))
      throw UsageError("wpipe2d: fold=1 goes with sep=0 and late=0 (it sums the rows its own way, all it can before "
                       "the barrier)");
    const int overlap = k["warps"] * k["tw"] * r;
    if (valid_x(k["rx"], k["warps"] * k["tw"], r) < overlap)
      throw UsageError(fmt::format("wpipe2d: a tile of 32 x rx = {} columns needs at least as many valid columns "
                                   "as its overlap per side, depth x radius = {}; lower warps x tw or raise rx",
                                   tile_cols(k["rx"]), overlap));
    if (!fits_domain(p, 1))
      throw UsageError(fmt::format("wpipe2d: the interior ({} columns) must be at least 32 columns wide, a cell "
                                   "per lane",
                                   p.domain[0] - 2 * r));
    if (!fits_domain(p, k["rx"]))
      throw UsageError(fmt::format("wpipe2d: the interior ({} columns) must be at least one tile (32 x rx = {}) "
                                   "wide; lower rx",
                                   p.domain[0] - 2 * r, tile_cols(k["rx"])));
    return k;
  }
  int depth(const Params& k) const override { return k.at("warps") * k.at("tw"); }
  std::optional<Params> primary_of(const Problem& p, const DeviceProfile& d, const Params& k) const override {
    if (fold_of(k)) return std::nullopt;  // one way only: late 0
    const int regs = estimated_regs(p, k.at("rx"), k.at("tw"), k.at("rows"), fold_of(k));
    return wpipe_primary_of(p, d, k, regs, k.at("warps") * 32);
  }
  bool variant_may_fit_where_primary_spills(const Params& k) const override { return wpipe_variant_may_fit(k); }
  // The step kernel: one thread per cell (templates/step.cuh), not the pass's loop again.
  const char* step_kernel() const override { return kCellStepKernel; }
  ModelTerms step_terms(const Problem& p, const Params&, const DeviceProfile&) const override {
    return naive_step_terms(p);
  }

  // The run's last steps % depth steps as one pass (wpipe_rest_params), one kernel with the
  // ring's tests in every block.
  std::optional<Params> rest_params(const Problem& p, const Params& k) const override {
    auto rest = wpipe_rest_params(p, k);
    if (rest) (*rest)["split"] = 0;
    return rest;
  }

  ModelTerms model_terms(const Problem& p, const Params& k, const DeviceProfile& d) const override {
    const int rx = k.at("rx"), warps = k.at("warps"), tw = k.at("tw"), rows = k.at("rows"), t = warps * tw;
    const int r = p.stencil.radius, words = dtype_bytes(p.dtype) / 4;
    ModelTerms m;
    m.depth = t;
    const double vx = double(valid_x(rx, t, r)) / tile_cols(rx);
    // One wave of blocks shares the tiles; a y segment streams depth x R rows more at each end
    // and fills the pipeline. The loop with the tests for the boundary ring's columns runs
    // slower: with split only the first and last tiles', in blocks of their own; without, every
    // block's.
    const long resident = long(d.sm_count) * k.at("bps");
    const double busy = grid_of(p, k, resident, rx, t, split_of(k)).efficiency;
    // Per computed cell and pass: the tile is read once, the valid part written once.
    m.a_gm = 1 + vx;
    // Per cell and step, on the shared-memory pipe: each warp loads and stores its rows once per
    // tw steps, lane l at cell l x rx, which the banks serialise (wpipe_conflict_cost); the
    // ring is filled and emptied once per pass (rows, coalesced); and each level shuffles the
    // halo cells its rows need (wpipe_shuffles_per_cell), a word at a time.
    // With sep a level shuffles only the halo of each row's sum across.
    // With fold, the halo of each folded row.
    const auto factors = sep_of(k) ? row_factors(p.stencil) : std::nullopt;
    const auto folded = fold_of(k) ? fold_rows(p.stencil) : std::nullopt;
    const double shuffles = factors  ? sep_shuffles_per_cell(*factors, rx)
                            : folded ? wpipe_shuffles_per_cell(folded->rows, rx)
                                     : wpipe_shuffles_per_cell(p, rx);
    m.a_sm = 2.0 / tw * wpipe_conflict_cost(p, rx, wpipe_pairs(p, 2)) + 2.0 / t + shuffles * words;
    // One multiply-add per point, or with sep per term of the factors, with fold per folded term
    // and mirrored row (2 flops of the FP pipe's rate), and the pass's own cost, which scales with them, spread over its t steps.
    m.a_cmp = loop_flops(loop_ops(p, k), t);
    const int regs = estimated_regs(p, rx, tw, rows, fold_of(k));
    // A partial last tile costs a whole one.
    const double filled = whole_tiles_share(p.domain[0] - 2 * r, valid_x(rx, t, r), wpipe2d_tiles(p.domain[0], r, rx, t));
    m.valid = vx * busy * filled;
    m.smem_bytes = smem_bytes(p, rx, warps, rows);
    m.threads = warps * 32;
    m.blocks_per_sm = k.at("bps");
    m.regs_per_thread = regs;
    // Cells in flight per thread: a loop iteration updates rows x rx cells at each of the tw
    // levels, and the terms that read rows a level already holds are issued for every level
    // apart from the chain of tails (before the barrier, or with `late` beside the chain after
    // it: templates/wpipe2d.cuh), so the levels' updates overlap. Counting the
    // levels ranks FastStencil's j2d5pt shape (one row, 4 levels) first, as measured
    // (docs/bench-2d.md, version 13).
    m.ilp = rx * rows * tw;
    return m;
  }

  std::string source(const Problem& p, const Params& k) const override {
    Defines defines = naive_step_defines(p);  // the cell step kernel's block
    defines.insert(defines.end(),
                   {{"TB_RX", k.at("rx")}, {"TB_WARPS", k.at("warps")}, {"TB_TW", k.at("tw")},
                    {"TB_ROWS", k.at("rows")}, {"TB_PF_MIN", kMinPrefetch}, {"TB_BPS", k.at("bps")},
                    {"TB_WP_SPLIT", split_of(k)}, {"TB_WP_LATE", late_of(k)}, {"TB_WP_SEP", sep_of(k)},
                    {"TB_WP_FOLD", fold_of(k)}, {"TB_WP_OPS", loop_ops(p, k)},
                    {"TB_WP_EAGER", wpipe_eager_heads(p, k)},
                    {"TB_WP_EDGE_BY_ROWS", edge_columns_apart(ring_speed_of(p, k))}});
    if (const auto rest = rest_params(p, k)) {
      defines.emplace_back("TB_REST_WARPS", rest->at("warps"));
      defines.emplace_back("TB_REST_TW", rest->at("tw"));
      defines.emplace_back("TB_REST_DEPTH", depth(*rest));  // a literal, for the kernel's name
    }
    return assemble_source(p, defines, {"step.cuh", "wpipe.cuh", "wpipe2d.cuh"});
  }

  Launch launch(const Problem& p, const Params& k, bool full, const LaunchContext& ctx) const override {
    if (!full) return naive_step_launch(p);
    const int rx = k.at("rx"), warps = k.at("warps");
    Launch l;
    l.block = {unsigned(warps * 32), 1, 1};
    l.dynamic_smem = std::size_t(smem_bytes(p, rx, warps, k.at("rows")));
    const long resident = long(ctx.sm_count) * std::min(k.at("bps"), ctx.resident_blocks_per_sm);
    // One wave of blocks sharing the tiles; with split, two kernels: the tiles between the first
    // and the last, and those two.
    const Wpipe2dGrid g = grid_of(p, k, resident, rx, depth(k), split_of(k));
    l.grid = g.full_grid();
    if (g.edge > 0) l.edge_grid = g.edge_grid();
    return l;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_wpipe2d_strategy() { return std::make_unique<Wpipe2d>(); }

}  // namespace tbtune
