// The `wpipe3d` strategy: register-tiled, warp-pipelined temporal blocking for 3D stencils
// (templates/wpipe3d.cuh, on the 2D template's machinery in templates/wpipe.cuh). Each lane
// keeps rx x cells of cy y rows (and their y halos) of a plane in registers, x halos come by
// warp shuffle, z is streamed, and the block's warps are `warps` pipeline stages in time of `wy`
// warps along y, each stage advancing `tw` steps in registers and handing its planes to the next
// through a shared-memory ring; a stage's warps swap their y halo rows between levels through a
// small shared area. Parameters: rx, cy, wy, warps (stages; depth = warps x tw), tw, bps (blocks
// per SM to aim for), late (where the held planes' terms are summed: wpipe_model.hpp, late_of)
// and fold (1: a stencil whose planes before the output are combinations of the planes at and
// after it, as a symmetric one's, summed over those folded planes: tuner/spec/fold_rows.hpp;
// every loop, late 0).
#include "tuner/codegen/strategies/strategies.hpp"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "model/derived.hpp"
#include "tuner/codegen/codegen.hpp"
#include "tuner/codegen/strategies/naive_step.hpp"
#include "tuner/codegen/strategies/wpipe_model.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/fold_rows.hpp"

namespace tbtune {
namespace {

// Planes cp.async loads ahead of the one the first stage takes (TB_PF_MIN in the template).
constexpr int kPrefetch = 2;

// A stage's warps meet at a named barrier of their own: 1 .. 15 (0 is __syncthreads()).
constexpr int kMaxStages = 15;
// The mark rest_params puts on the rest pass's parameters (see there).
constexpr const char* kRestMark = "rest";

struct Shape {
  int rx, cy, wy, warps, tw;
  int depth() const { return warps * tw; }
  int cols() const { return 32 * rx; }
  int rows(int r) const { return wy * cy + 2 * r; }  // of a plane in the ring
};
Shape shape_of(const Params& k) { return {k.at("rx"), k.at("cy"), k.at("wy"), k.at("warps"), k.at("tw")}; }

// The valid columns and rows of a tile: each level loses R per side in both.
int valid_x(const Shape& s, int depth, int r) { return s.cols() - 2 * depth * r; }
int valid_y(const Shape& s, int depth, int r) { return s.rows(r) - 2 * depth * r; }

// The ring (stages + prefetch + the plane being stored) and, with several levels per stage and
// several warps along y, each stage's exchange areas: per level but the last, per warp, its
// first and last R rows.
long smem_bytes(const Problem& p, const Shape& s, int stages, int tw) {
  const int r = p.stencil.radius;
  const long ring = long(stages + kPrefetch + 1) * s.rows(r) * s.cols();
  const long exchange = s.wy > 1 ? long(stages) * (tw - 1) * s.wy * 2 * r * s.cols() : 0;
  return (ring + exchange) * dtype_bytes(p.dtype);
}

// The tiles of one axis of n cells (valid `v` per tile, `ext` computed, depth x R overlap per
// side), and how many of them lie wholly between the ring's two sides: those run the kernel
// without the ring's row and cell tests (tb_full), the others beside it (tb_edge). As the
// template's w3_axis.
struct Axis {
  long tiles, plain;
};
Axis axis(long n, int v, int ext, int dr, int r) {
  Axis a;
  a.tiles = (n - 2 * r + v - 1) / v;
  const long lo = std::min<long>((dr + v - 1) / v, a.tiles);
  const long last = n - 2 * r - ext + dr;
  const long hi = std::max(lo - 1, std::min(a.tiles - 1, last >= 0 ? last / v : -1L));
  a.plain = hi - lo + 1;
  return a;
}
Axis axis_x(const Problem& p, const Shape& s, int depth) {
  const int r = p.stencil.radius;
  return axis(p.domain[0], valid_x(s, depth, r), s.cols(), depth * r, r);
}
Axis axis_y(const Problem& p, const Shape& s, int depth) {
  const int r = p.stencil.radius;
  return axis(p.domain[1], valid_y(s, depth, r), s.rows(r), depth * r, r);
}
long tiles(const Problem& p, const Shape& s, int depth) { return axis_x(p, s, depth).tiles * axis_y(p, s, depth).tiles; }

// The multiply-adds of the unrolled loop body (2R + 1 iterations of every level's cy x rx
// cells); NVRTC's time grows with it, so the space stops at kMaxBody. Of every wpipe3d shape
// timed on the H100 and H200 (docs/data/v14-v18, five 3D configs, float and double), the
// fastest per config has a body of 588-1782, and none above 3000 came within 0.8 of it (the
// best: float j3d17pt 3060 at 0.80, poisson 3192 at 0.65, j3d27pt 3888 at 0.65), while they
// compile slowest (float j3d27pt tw 4: 42 s on this build machine against 10-15 s) and
// most often spill; the float j3d27pt tune, over a minute, spent its time on them.
constexpr long kMaxBody = 3000;
long body_size(const Problem& p, const Shape& s) {
  return long(2 * p.stencil.radius + 1) * s.tw * s.cy * s.rx * long(p.stencil.points.size());
}

// Whether some point off the own plane reads another row (a box): then every held plane keeps
// its y halo rows, otherwise only the plane next used as dz = 0 does.
bool off_plane_rows(const Stencil& st) {
  for (const Offset& o : st.points)
    if (o[2] != 0 && o[1] != 0) return true;
  return false;
}

// The registers a thread needs, estimated from the values it holds across the barrier: after
// head(o) a level still needs the planes o - R + 1 .. o + R - 1, their cy x rx own cells (with
// the y halo rows for a box, otherwise those of the R - 1 planes not yet used as dz = 0), and
// the partial sums of its outputs; then the plane arriving. ptxas needs about 1.5 x that: of
// the model's best 96 candidates per 3D config on the H200 (docs/bench-3d.md, wpipe3d), those
// holding under 60% of the register cap fit, and nearly all holding 67% or more spilled. ptxas
// decides after compiling (the tuner drops kernels that spill); the model's resource check
// (`regs_per_thread`) keeps the searches to what may fit, and a shape asked for by name
// (`--param`) is compiled whatever the estimate.
// fold adds nothing here: with it ptxas took -6 to +20 registers at poisson's shapes (rx 2-3,
// cy 3-8; docs/bench-3d.md, "Mirrored planes"), within the 1.5x.
int estimated_regs(const Problem& p, const Shape& s) {
  const int r = p.stencil.radius, per_value = dtype_bytes(p.dtype) / 4;
  const int rows = off_plane_rows(p.stencil) ? s.cy + 2 * r : s.cy;
  const int level = (2 * r - 1) * rows * s.rx + (r - 1) * 2 * r * s.rx + s.cy * s.rx;
  return (s.tw * level + (s.cy + 2 * r) * s.rx) * per_value * 3 / 2;
}

// The space's grid (Wpipe3d::space): strips of 1 to kSpaceRx cells, from R to kSpaceCy rows per
// warp, kSpaceWy warps along y, 1 to kSpaceStages stages of 1 to kSpaceTw levels, 1 or 2 blocks
// per SM.
constexpr int kSpaceRx = 6, kSpaceCy = 12, kSpaceStages = 4, kSpaceTw = 4;
constexpr int kSpaceWy[] = {1, 2, 4, 8};

// What the space's rules ask of the stencil, worked out once per space: whether late 1 and fold
// may apply.
struct StencilWays {
  bool affine, symmetric;
  explicit StencilWays(const Problem& p)
      : affine(p.stencil.linear.has_value()), symmetric(fold_rows(p.stencil).has_value()) {}
};

// One point of the grid, as the space's rules read it (a plain struct: the grid is large).
struct Point {
  Shape shape;
  int bps, late, fold;
  Params params() const {
    return {{"rx", shape.rx}, {"cy", shape.cy}, {"wy", shape.wy}, {"warps", shape.warps},
            {"tw", shape.tw}, {"bps", bps},     {"late", late},   {"fold", fold}};
  }
};
Point point_of(const Params& k) { return {shape_of(k), k.at("bps"), k.at("late"), k.at("fold")}; }

// Why the grid leaves point k out of the space, or nullptr where it is in it: one rule for the
// space and for the error of a `--param` that names a shape outside it.
const char* excluded(const Problem& p, const DeviceProfile& d, const StencilWays& ways, const Point& k) {
  const Shape& s = k.shape;
  const int r = p.stencil.radius, rx = s.rx, cy = s.cy, wy = s.wy, warps = s.warps, tw = s.tw;
  const int bps = k.bps, late = k.late, fold = k.fold;
  if (rx > kSpaceRx) return "rx: the space holds strips of 1 to 6 cells";
  if (cy < std::max(1, r) || cy > kSpaceCy) return "cy: the space holds from the radius to 12 rows per warp";
  if (std::find(std::begin(kSpaceWy), std::end(kSpaceWy), wy) == std::end(kSpaceWy))
    return "wy: the space holds 1, 2, 4 and 8 warps along y";
  if (warps > kSpaceStages) return "warps: the space holds 1 to 4 stages";
  if (tw > kSpaceTw) return "tw: the space holds 1 to 4 levels per warp";
  if (bps > 2) return "bps: the space holds 1 and 2 blocks per SM";
  if (late && !ways.affine) return "late=1 needs an affine stencil";
  if (fold && !ways.symmetric) return "fold=1 needs a stencil symmetric in z";
  if (fold && late) return "fold=1 runs with late=0";
  const int threads = warps * wy * 32, t = s.depth();
  if (threads < 128 || threads > 1024) return "a block of under 128 or over 1024 threads (warps x wy x 32)";
  if (threads * bps > d.max_threads_per_sm) return "more threads per SM than the device runs";
  // At least half of a tile's columns and rows valid: below that the overlap costs more than the
  // depth saves.
  if (2 * valid_x(s, t, r) < s.cols() || 2 * valid_y(s, t, r) < s.rows(r))
    return "under half of the tile's columns or rows are valid at this depth (warps x tw)";
  if (wpipe_strip_too_conflicted(p, rx, wpipe_pairs(p, 3)))  // none at rx <= 6 today
    return "rx: the ring's accesses of this strip serialise too deeply on the shared-memory banks";
  if (smem_bytes(p, s, warps, tw) > d.smem_per_block) return "more shared memory per block than the device has";
  if (smem_bytes(p, s, warps, tw) * bps > d.smem_per_sm) return "more shared memory per SM than the device has";
  if (body_size(p, s) > kMaxBody) return "the unrolled loop body is over 3000 multiply-adds (NVRTC's time)";
  return nullptr;
}

class Wpipe3d final : public Strategy {
 public:
  std::string name() const override { return "wpipe3d"; }
  std::string summary() const override {
    return "3D register tiling, warp stages pipelined in time, z streamed, halos by shuffle; params rx, cy, wy, "
           "warps, tw, bps, late, fold";
  }
  bool supports(const Problem& p) const override { return p.dims() == 3; }

  std::vector<Params> space(const Problem& p, const DeviceProfile& d) const override {
    std::vector<Params> out;
    const StencilWays ways(p);
    for (int rx = 1; rx <= kSpaceRx; ++rx)
      for (int cy = std::max(1, p.stencil.radius); cy <= kSpaceCy; ++cy)
        for (int wy : kSpaceWy)
          for (int warps = 1; warps <= kSpaceStages; ++warps)
            for (int tw = 1; tw <= kSpaceTw; ++tw)
              for (int bps : {1, 2})
                for (int late : {1, 0})  // late 1 first: the model's ties keep this order
                  for (int fold : {0, 1}) {
                    const Point k{{rx, cy, wy, warps, tw}, bps, late, fold};
                    if (!excluded(p, d, ways, k)) out.push_back(k.params());
                  }
    return out;
  }

  std::string outside_space(const Problem& p, const DeviceProfile& d, const Params& k) const override {
    const char* why = excluded(p, d, StencilWays(p), point_of(k));
    return why ? why : "";
  }

  Params complete(const Problem& p, const Params& given) const override {
    const int r = p.stencil.radius;
    // Defaults that compile in seconds and fit the registers for any radius.
    Params k{{"rx", 2}, {"cy", std::max(4, r)}, {"wy", 4},
             {"warps", 2}, {"tw", 1}, {"bps", 1}, {"late", wpipe_late_values(p).front()}, {"fold", 0}};
    for (const auto& [name, v] : given) {
      if (!k.count(name))
        throw UsageError(
            fmt::format("strategy 'wpipe3d' has no parameter '{}' (rx, cy, wy, warps, tw, bps, late, fold)", name));
      k[name] = v;
    }
    if (k["fold"] && !given.count("late")) k["late"] = 0;
    if (k["rx"] < 1 || k["rx"] > 16 || k["cy"] < 1 || k["cy"] > 32 || k["wy"] < 1 || k["wy"] > 32 ||
        k["warps"] < 1 || k["warps"] > kMaxStages || k["tw"] < 1 || k["tw"] > 16 || k["bps"] < 1 || k["bps"] > 32 ||
        k["late"] < 0 || k["late"] > 1 || k["fold"] < 0 || k["fold"] > 1)
      throw UsageError(fmt::format("wpipe3d: need 1 <= rx <= 16, 1 <= cy <= 32, 1 <= wy <= 32, 1 <= warps <= {}, "
                                   "1 <= tw <= 16, 1 <= bps <= 32, late 0 or 1, fold 0 or 1",
                                   kMaxStages));
    if (k["fold"] && !fold_rows(p.stencil))
      throw UsageError(fmt::format("wpipe3d: fold=1 needs an affine stencil whose planes before the output are "
                                   "combinations of its planes at and after it (e.g. equal coefficients at (dx, dy, "
                                   "dz) and (dx, dy, -dz)), whose folded sums cannot amplify rounding, and which "
                                   "takes fewer operations so folded; '{}' is not one",
                                   p.stencil.name));
    if (k["fold"] && k["late"])
      throw UsageError("wpipe3d: fold=1 goes with late=0 (it sums all it can before the barrier)");
    if (k["cy"] < r)
      throw UsageError(fmt::format("wpipe3d: cy = {} rows per lane must hold the radius {} (a warp's y halo comes "
                                   "from its neighbours' rows)",
                                   k["cy"], r));
    if (k["warps"] * k["wy"] > 32)
      throw UsageError("wpipe3d: warps x wy must be at most 32 (1024 threads)");
    const Shape s = shape_of(k);
    if (valid_x(s, s.depth(), r) < 1 || valid_y(s, s.depth(), r) < 1)
      throw UsageError(fmt::format("wpipe3d: a tile of {} x {} cells has no valid cells at depth {} (it loses "
                                   "depth x radius = {} per side); lower warps x tw or raise rx, cy or wy",
                                   s.cols(), s.rows(r), s.depth(), s.depth() * r));
    return k;
  }
  int depth(const Params& k) const override { return k.at("warps") * k.at("tw"); }
  std::optional<Params> primary_of(const Problem& p, const DeviceProfile& d, const Params& k) const override {
    if (fold_of(k)) return std::nullopt;  // one way only: late 0
    return wpipe_primary_of(p, d, k, estimated_regs(p, shape_of(k)), k.at("warps") * k.at("wy") * 32);
  }
  bool variant_may_fit_where_primary_spills(const Params& k) const override { return wpipe_variant_may_fit(k); }
  double register_estimate_slack() const override { return kWpipe3dRegisterSlack; }
  // The step kernel: one thread per cell (templates/step.cuh), not the pass's loop again.
  const char* step_kernel() const override { return kCellStepKernel; }
  ModelTerms step_terms(const Problem& p, const Params&, const DeviceProfile&) const override {
    return naive_step_terms(p);
  }

  // The run's last steps % depth steps as one pass (wpipe_rest_params) over every tile with the
  // ring's tests: `kRestMark` says so to launch(), which otherwise splits a full pass in two
  // kernels. Not a parameter of the space.
  std::optional<Params> rest_params(const Problem& p, const Params& k) const override {
    auto rest = wpipe_rest_params(p, k);
    if (rest) (*rest)[kRestMark] = 1;
    return rest;
  }

  ModelTerms model_terms(const Problem& p, const Params& k, const DeviceProfile& d) const override {
    const Shape s = shape_of(k);
    const int t = s.depth(), r = p.stencil.radius, words = dtype_bytes(p.dtype) / 4;
    ModelTerms m;
    m.depth = t;
    const double vx = double(valid_x(s, t, r)) / s.cols(), vy = double(valid_y(s, t, r)) / s.rows(r);
    // A z segment streams depth x R planes more at each end and `warps` iterations fill the
    // pipeline (split_stream weighs both against whole waves).
    const long resident = long(d.sm_count) * k.at("bps");
    const double busy = split_stream(p.domain[2] - 2 * r, tiles(p, s, t), resident, t, r, 1).efficiency;
    // Per computed cell and pass: the tile is read once, the valid part written once.
    m.a_gm = 1 + vx * vy;
    // Per cell and step, on the shared-memory pipe: each stage reads a plane's rows with their y
    // halos and writes its own rows back once per tw steps (a strip per lane, which the banks
    // may serialise); between its levels each warp writes and reads 2R halo rows per cy rows;
    // the ring is filled and emptied once per pass; and each level shuffles its x halos.
    const double ring = (1.0 + double(s.cy + 2 * r) / s.cy) * wpipe_conflict_cost(p, s.rx, wpipe_pairs(p, 3));
    const double exchange = s.wy > 1 ? 4.0 * r / s.cy : 0.0;
    // With fold, the halos of the folded planes are shuffled, fewer than the planes'; the model
    // charges half way between the two counts (below).
    const auto folded = fold_of(k) ? fold_rows(p.stencil) : std::nullopt;
    const double plain_shuffles = wpipe_shuffles_per_cell(p, s.rx);
    const double shuffles =
        folded ? 0.5 * (wpipe_shuffles_per_cell(folded->rows, s.rx) + plain_shuffles) : plain_shuffles;
    m.a_sm = ring / s.tw + exchange * (s.tw - 1) / s.tw + 2.0 / t + shuffles * words;
    // The FP pipe: a multiply-add per point, and the pass's own cost spread over its t steps.
    // That cost is instructions, which in float take twice the flops they do in double, the
    // FP32 pipe's rate being twice FP64's: without the factor float j3d7pt ran at 0.57 of its
    // prediction, with it 0.98 (H100, 15 trials; docs/bench-3d.md, "wpipe3d"). wpipe2d's fit
    // (64 + 1.9 x points multiply-adds per cell) over-counted it once the global traffic was
    // worked out once per pass and each halo cell shuffled once: the measured ran at
    // exp(+0.08 .. +0.41) times the predicted, by the number of points; without the points'
    // share at exp(-0.04 .. +0.27) (H100, 16 shapes of each 3D config, docs/bench-3d.md).
    const double overhead = 2.0 * 64.0 / t * (p.dtype == DType::Float ? 2 : 1);
    // With fold, a multiply-add per folded term and an add or multiply-add per combine of a
    // folded plane's cell, y halo rows included. Its shuffles (above): charged as the folded
    // planes', which favours narrow strips, poisson's default tune picked rx 2 shapes that ran
    // 309.7-317.4 GCells/s where rx 3 ran 325.9 without fold; charged as without fold, the
    // rx 3 shapes of j3d27pt, whose folded planes halve its shuffles, stayed bound by the
    // shared-memory pipe in the model, and its tune timed only rx 4 shapes, at 225 where rx 3
    // ran 297-299 with fold (H200, docs/bench-3d.md, "Mirrored planes", "Planes folded as
    // combinations"). Half way, both tunes time their rx 3 shapes.
    const double ops = folded ? double(folded->rows.terms.size()) + folded->combines * double(s.cy + 2 * r) / s.cy
                              : double(p.stencil.points.size());
    m.a_cmp = 2.0 * ops + overhead;
    // A partial last tile costs a whole one, as in wpipe2d, but counting it here (in x and y)
    // made j3d7pt's default tune on FastStencil's domain time one wpipe3d shape instead of
    // three and pick smtile3d at 355 GCells/s where wpipe3d's runs 370 (H100, docs/bench-3d.md):
    // the term is right, but the rest of this model ranks wpipe3d's shapes too loosely for it.
    m.valid = vx * vy * busy;
    m.smem_bytes = smem_bytes(p, s, s.warps, s.tw);
    m.threads = s.warps * s.wy * 32;
    m.blocks_per_sm = k.at("bps");
    m.regs_per_thread = estimated_regs(p, s);
    // A shape that leaves ptxas no room runs below its share (kWpipe3dTightShare).
    if (!wpipe_regs_roomy(d, m.regs_per_thread, m.threads, m.blocks_per_sm)) m.valid *= kWpipe3dTightShare;
    m.ilp = s.rx * s.cy;
    return m;
  }

  std::string source(const Problem& p, const Params& k) const override {
    Defines defines = naive_step_defines(p);  // the cell step kernel's block
    defines.insert(defines.end(), {{"TB_RX", k.at("rx")}, {"TB_CY", k.at("cy")}, {"TB_WY", k.at("wy")},
                                   {"TB_WARPS", k.at("warps")}, {"TB_TW", k.at("tw")}, {"TB_PF_MIN", kPrefetch},
                                   {"TB_BPS", k.at("bps")}, {"TB_WP_LATE", late_of(k)}, {"TB_WP_FOLD", fold_of(k)},
                                   {"TB_WP_EAGER", wpipe_eager_heads(p, k)}});
    if (const auto rest = rest_params(p, k)) {
      defines.emplace_back("TB_REST_WARPS", rest->at("warps"));
      defines.emplace_back("TB_REST_TW", rest->at("tw"));
      defines.emplace_back("TB_REST_DEPTH", depth(*rest));  // a literal, for the kernel's name
    }
    return assemble_source(p, defines, {"step.cuh", "wpipe.cuh", "wpipe3d.cuh"});
  }

  Launch launch(const Problem& p, const Params& k, bool full, const LaunchContext& ctx) const override {
    if (!full) return naive_step_launch(p);
    const int r = p.stencil.radius;
    const Shape s = shape_of(k);
    const int t = s.depth();
    Launch l;
    l.block = {unsigned(s.warps * s.wy * 32), 1, 1};
    l.dynamic_smem = std::size_t(smem_bytes(p, s, s.warps, s.tw));
    const long resident = long(ctx.sm_count) * std::max(1, std::min(k.at("bps"), ctx.resident_blocks_per_sm));
    const Axis x = axis_x(p, s, t), y = axis_y(p, s, t);
    const unsigned segments = unsigned(split_stream(p.domain[2] - 2 * r, x.tiles * y.tiles, resident, t, r, 1).segments);
    if (k.count(kRestMark)) {
      l.grid = {unsigned(x.tiles), unsigned(y.tiles), segments};  // every tile, with the tests
      return l;
    }
    // The tiles away from the ring, and beside them the frame of those that reach it.
    l.grid = {unsigned(x.plain), unsigned(y.plain), segments};
    const long frame = x.tiles * y.tiles - x.plain * y.plain;
    if (frame > 0) l.edge_grid = {unsigned(frame), 1, segments};
    return l;
  }
};

}  // namespace

std::unique_ptr<Strategy> make_wpipe3d_strategy() { return std::make_unique<Wpipe3d>(); }

}  // namespace tbtune
