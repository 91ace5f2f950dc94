#pragma once
/// @file wpipe_model.hpp
/// Model terms the register-tiled, warp-pipelined strategies share (wpipe2d, wpipe3d): lanes
/// holding rx contiguous x cells, halos by shuffle, a shared-memory ring read and written a
/// strip per lane, and a pass cost fitted on the H100 (docs/bench-2d.md, "The model fitted");
/// and the shape of their rest pass.
#include <optional>
#include <vector>

#include "tuner/codegen/strategy.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {

/// Whether a strategy's strips of even length move two cells per shared access
/// (templates/common.cuh, tb_shared_load_strip): wpipe3d's always, wpipe2d's in float only.
[[nodiscard]] bool wpipe_pairs(const Problem& p, int dims);

/// How many ways the shared-memory banks serialise a warp's ring loads and stores: lane l
/// reads the rx cells from l x rx, one cell per instruction, or two where rx is even and the
/// strategy pairs (wpipe_pairs). The banks serve 128 bytes per wavefront: a warp's accesses of
/// 4 bytes at once, of 8 bytes by half warps, of 16 by quarter warps; lanes of one such part
/// whose addresses differ by a multiple of 128 bytes collide. So an odd rx has no conflict, an
/// even one gcd(rx, 32) ways for float, gcd(rx, 16) for double, and paired gcd(rx / 2, 16) and
/// gcd(rx / 2, 8).
[[nodiscard]] int wpipe_bank_conflicts(const Problem& p, int rx, bool pairs);

/// What those conflicts cost, in ring accesses: a quarter of an access per extra way. The ring
/// is not what bounds the loop, so only deep conflicts show: on the H100, with one double cell
/// per access, rx 10 (2 ways) ran within 3% of rx 11, rx 12 (4 ways) about 10% below, rx 8
/// (8 ways) 15-35% and rx 16 (16 ways) 35-70% below; charging every way in full ranked even
/// strips at half their speed.
[[nodiscard]] double wpipe_conflict_cost(const Problem& p, int rx, bool pairs);

/// Whether a strip of rx cells serialises its ring accesses too deeply for the space: more
/// than 32 bytes per bank and wavefront, ways x bytes per access > 32 (cell by cell: double 8
/// ways, rx 8, 16, 24; float 16 ways, rx 16; paired: double rx 8 and 16, float rx 16). The
/// quarter-access cost above ranks them too high where the ring does not bound the loop, but
/// the serialised accesses hold up their warp all the same. Float rx 16 paired (8 ways of 8
/// bytes) ran 1938-2090 GCells/s in j2d5pt's default tune where rx 22 ran 2761 (H200, docs/
/// bench-2d.md, "Double strips in pairs"). On the H100, with one cell per access, the best of
/// each rx in version 9's exhaustive runs
/// (docs/data/wpipe2d-h100-v9-exhaustive.csv, -float.csv):
/// double rx 16 at 0.27-0.66 of rx 15, rx 24 at 0.46-0.54 of rx 23, rx 8 at 0.76-0.90 of rx 7
/// and 9; float rx 16 at 0.79-0.92 of rx 15 and 17. Float rx 8 and 24 (8 ways of 4 bytes) ran
/// at or above their neighbours, double rx 4, 12 and 20 (4 ways) at 0.57-1.0 of theirs, mostly
/// above 0.8, and stay (the cost above ranks them below their odd neighbours). j2d49pt's default
/// tune on its own domain timed rx 16 alone of wpipe2d, at 155 GCells/s where rx 17 runs 210.
[[nodiscard]] bool wpipe_strip_too_conflicted(const Problem& p, int rx, bool pairs);

/// Shuffles per cell of a lane's strip of rx cells, per level: for each line of the stencil
/// across x (each (dy) in 2D, each (dy, dz) in 3D) the halo cells some point reads, 2 x the
/// widest |dx| on that line (a cell read by several points is shuffled once), over rx cells.
[[nodiscard]] double wpipe_shuffles_per_cell(const Problem& p, int rx);
/// The same over the terms of a stencil's folded form (tuner/spec/fold_rows.hpp, the `fold`
/// parameter): its lines are the folded rows (planes), whose halos are shuffled instead.
[[nodiscard]] double wpipe_shuffles_per_cell(const LinearForm& folded, int rx);

/// What a pass costs per cell beyond its steps, in flops of the FP pipe (a multiply-add is 2):
/// filling and draining the block's pipeline, the tile's load and copy-out, the last wave's
/// tail. Fitted, not derived: over 674 candidates of the five 2D configs on the H100 a pass
/// cost as much issue as 64 + 1.9 x points multiply-adds per cell, so deep pipelines won by
/// more than the overlap they recompute. `multiply_adds`: what the loop computes per cell and
/// step, the stencil's points (fewer with wpipe2d's sep: counting its factors' terms put the
/// model's order of run 66's 24 sep shapes at Spearman 0.84 instead of 0.40, docs/bench-2d.md).
[[nodiscard]] double wpipe_pass_flops(int multiply_adds);

/// The parameters of the rest pass (Strategy::rest_params) for the problem's last steps % depth
/// steps, depth = warps x tw: `params` with (warps', tw') of the most steps warps' x tw' within
/// them, warps' <= warps and tw' <= tw (no level holds more registers than the full kernel's),
/// more warps first on a tie. None for a remainder of 0 or 1: that is the one-step kernel's.
[[nodiscard]] std::optional<Params> wpipe_rest_params(const Problem& p, const Params& params);

/// The `late` parameter (templates/wpipe2d.cuh, wp_early_split): 1 sums only the oldest held
/// row's (plane's) terms before the barrier and the rest after it, 0 all the held ones before.
/// Kernels cached before the parameter existed were built without it: late 0.
[[nodiscard]] bool late_of(const Params& k);

/// The `fold` parameter: 1 sums a stencil symmetric along the streamed axis over its mirrored
/// rows' (planes') sums (tuner/spec/fold_rows.hpp), in every loop, with late 0 and no variant.
/// Kernels cached before the parameter existed were built without it.
[[nodiscard]] bool fold_of(const Params& k);

/// Strategy::primary_of for wpipe2d and wpipe3d: every shape is in the space with late 1 and
/// late 0, one the primary and the other its variant. Late 1 ran 1-4% faster on the H100 where
/// the registers leave room, and it holds more: where they are tight it spilled or ran slower
/// (docs/bench-2d.md and docs/bench-3d.md, "`late`"). So late 1 is the primary where the
/// model's register estimate `estimated_regs` is at most kWpipeLateRegs of the cap per thread
/// that `threads` x `bps` leave (regs_cap), late 0 elsewhere. A stencil that is not affine is
/// evaluated whole after the barrier either way, so its shapes are in the space once, late 0
/// (wpipe_late_values), and have no variant.
[[nodiscard]] std::optional<Params> wpipe_primary_of(const Problem& p, const DeviceProfile& d, const Params& k,
                                                     int estimated_regs, int threads);

/// Strategy::variant_may_fit_where_primary_spills for wpipe2d and wpipe3d: late 0 holds no
/// more registers than late 1, so a late 0 variant may fit where its primary spilled, and a
/// late 1 variant (of a shape whose registers are tight) would spill too (j2d49pt's sep shapes
/// at 12 warps, rx 10 and 12, both ways: docs/tuning.md, "Tune time").
[[nodiscard]] bool wpipe_variant_may_fit(const Params& variant);
/// The values of `late` in the space: 1 and 0, or 0 alone for a stencil that is not affine.
[[nodiscard]] std::vector<int> wpipe_late_values(const Problem& p);

/// Where the templates sum a level's heads of the next iteration (TB_WP_EAGER): right after the
/// level's tail (true), or at the next iteration's top, before its barrier (false). A rule
/// fitted to the shapes measured both ways (H200, docs/bench-2d.md and docs/bench-3d.md,
/// "Heads after the tail"), not derived: right after the tail where a head shuffles, i.e.
/// reads cells beyond the lane's strip in the rows (planes) it sums, whose shuffles then fill
/// the latency of the levels' chain, and a 2D iteration takes one row. So j2d9pt's late head
/// (the oldest row's three terms) gained 8%, j2d25pt's folded rows' 0.6%, wpipe3d's late 0 and
/// fold heads of j3d7pt, j3d13pt, poisson and j3d27pt 1-2% (j3d17pt's lost 0.9%); j2d5pt's
/// shapes of 2 rows lost 14-16% late 0 and late 1 (its edge kernel spilled 468 bytes instead
/// of 84), float 1.6%, and j2d49pt's (2 rows, sep) gained 2.3%, which the rule gives up. A
/// stencil that is not affine has no head (it is evaluated after the barrier).
[[nodiscard]] bool wpipe_eager_heads(const Problem& p, const Params& k);

/// The share of the register cap up to which late 1 is the primary. Run 53's shapes (H100,
/// double) by estimate over cap: late 1 gained at 0.74-0.89 (j3d27pt 0.74 +3.9%; j2ds9pt 0.78,
/// j2d9pt 0.82 and 0.89, j2d49pt 0.82: +1-4%), was even at 0.87-0.93 (j3d7pt, poisson,
/// j2d25pt) and lost from 0.92 (FastStencil's j2d5pt shape spilled; j3d7pt, j3d27pt and
/// poisson at cy 8, 0.99: 1-9% slower).
inline constexpr double kWpipeLateRegs = 0.9;

/// Whether the model's register estimate leaves ptxas room: at most kWpipeLateRegs of the cap
/// per thread that `threads` x `bps` leave. Above it the kernels that compile hold 240-255
/// registers and schedule worse (late 1 loses, and in 3D the shape itself runs slower).
[[nodiscard]] bool wpipe_regs_roomy(const DeviceProfile& d, int estimated_regs, int threads, int bps);

/// wpipe3d's share for a shape whose estimate leaves no room (wpipe_regs_roomy false). In the 3D
/// double trials of docs/data/v19-tunes.csv and v20-tunes.csv (H100, FastStencil's domains and
/// j3d17pt's own), in each of the five configs the best of those shapes ran 1.6-15% below the
/// best roomy shape, which the model had ranked under it (j3d7pt cy 8 464 against cy 7 472,
/// j3d17pt 251 against 256, poisson 249 against 267, j3d27pt 246 against 265, j3d13pt 200
/// against 235). With it j3d27pt's default tune went from 245 to 260 (docs/bench-3d.md, "Tight
/// registers"). 2D shows no such step (FastStencil's j2d5pt shape and the j2d49pt winner are
/// tight), so wpipe2d has none.
inline constexpr double kWpipe3dTightShare = 0.9;

/// wpipe3d's Strategy::register_estimate_slack. Its estimate (1.5 x the values a thread holds
/// across the barrier) overshoots ptxas' count where the count nears the cap: in exhaustive
/// slices of the five 3D configs at two stages of four warps (H200, NVRTC 13.0; docs/tuning.md,
/// "Slices of every 3D config"), 45 of the 135 shapes estimated at 1.0-1.2 times the cap
/// compiled without spilling and 4 of the 154 at 1.2-1.4, and the fastest shapes of j3d13pt's
/// slice (rx 3, cy 5, tw 1 at 278.1 GCells/s, estimated 297 registers, compiled at 255; its
/// five fastest trials all over the cap) and j3d7pt's (553.8, 288 estimated) were among them. The
/// model search replayed over j3d13pt's slice reached 0.87 of its best held to the estimate and
/// 0.98 with the slack. wpipe2d's estimate (the values alone) has none: over its cap few fit
/// (j2d5pt's slice: 9 of 52 at 1.05-1.25), and with a slack of 1.2 its model search chose
/// almost only such shapes.
inline constexpr double kWpipe3dRegisterSlack = 1.2;

/// The registers a thread may hold with `threads` x `bps` threads per SM: the register file
/// shared out in steps of 8, at most 255.
[[nodiscard]] int regs_cap(const DeviceProfile& d, int threads, int bps);

}  // namespace tbtune
