#include "tuner/api/fallback.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "tuner/api/internal.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/gpu/probe.hpp"
#include "tuner/search/search.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

std::string describe(const Winner& w) {
  return fmt::format("{} {}", w.trial.strategy, params_text(w.trial.params));
}

/// How many of the model's best candidates a `model` fallback tries before giving up.
constexpr int kModelTries = 3;

}  // namespace

TunedKernel build_kernel(const FallbackContext& ctx, const Strategy& strategy, const Params& params,
                         KernelSource source) {
  const Problem& p = ctx.problem;
  if (!strategy.supports(p))
    throw Error(fmt::format("strategy {} does not support this problem", strategy.name()));
  const CompiledModule m = compile_cuda(strategy.source(p, params),
                                        arch_for(ctx.device.cc_major, ctx.device.cc_minor),
                                        ctx.compile_cache);
  Winner w;
  w.key = WinnerKey{p.stencil.hash, device_record(ctx.device).fingerprint(), p.dtype, p.domain,
                    steps_class(p.steps)};
  w.stencil_name = p.stencil.name;
  w.steps = p.steps;
  w.trial.strategy = strategy.name();
  w.trial.params = params;
  w.trial.status = TrialStatus::Ok;  // as the winner row needs; gcells 0 says it was never timed
  if (auto k = m.kernels.find(kFullKernel); k != m.kernels.end()) {
    w.trial.registers = k->second.registers;
    w.trial.spill_bytes = k->second.spill_bytes();
    w.trial.smem_bytes = k->second.smem_bytes;
  }
  w.trial.cubin = m.cubin;
  w.tool_version = TBTUNE_VERSION;
  return make_kernel(p, std::move(w), source, ctx.device);
}

Served serve_naive(const FallbackContext& ctx) {
  const Strategy* naive = find_strategy("naive");
  if (!naive) throw Error("the naive strategy is not registered");
  return {build_kernel(ctx, *naive, {}, KernelSource::Naive), KernelSource::Naive, "naive"};
}

Served serve_nearest(const FallbackContext& ctx, const Winner& near) {
  const Strategy* s = find_strategy(near.trial.strategy);
  if (!s) throw Error("stored winner uses unknown strategy '" + near.trial.strategy + "'");
  TunedKernel k = build_kernel(ctx, *s, near.trial.params, KernelSource::Nearest);
  return {std::move(k), KernelSource::Nearest,
          fmt::format("{} (the winner for {}x{}x{}, step class {}, on {})", describe(near),
                      near.key.domain[0], near.key.domain[1], near.key.domain[2],
                      near.key.steps_class, near.key.device_fingerprint)};
}

Served serve_model(const FallbackContext& ctx, const Cache* profile_from) {
  DeviceProfile profile = profile_for(ctx.device);
  std::string profile_name = "built-in";
  if (profile_from) {
    if (auto stored = profile_from->profile(device_record(ctx.device).fingerprint(), profile)) {
      profile = *stored;
      profile_name = "probed";
    }
  }
  std::string failures;
  int tried = 0;
  for (const RankedCandidate& c : rank_candidates(ctx.problem, profile)) {
    if (!is_feasible(c)) continue;
    if (tried++ == kModelTries) break;
    try {
      TunedKernel k = build_kernel(ctx, *c.strategy, c.params, KernelSource::Model);
      return {std::move(k), KernelSource::Model,
              fmt::format("{} {} (the model's #{} with the {} profile, {:.0f} GCells/s predicted)",
                          c.strategy->name(), params_text(c.params), tried, profile_name,
                          c.prediction.PP_gcells)};
    } catch (const CompileError&) {
      throw;  // NVRTC missing or broken: the next candidate would fail the same way
    } catch (const Error& e) {
      failures += fmt::format("{}{} {}: {}", failures.empty() ? "" : "; ", c.strategy->name(),
                              params_text(c.params), e.what());
    }
  }
  throw Error("no model candidate could be built" + (failures.empty() ? "" : ": " + failures));
}

std::string store(const std::string& path, const FallbackContext& ctx, const TunedKernel& kernel) {
  try {
    Cache cache(path, Cache::Mode::ReadWrite);
    const Winner& w = kernel.impl().winner;
    cache.put_device(device_record(ctx.device));
    if (!cache.spec_text(w.key.stencil_hash)) cache.put_stencil(ctx.problem.stencil, ctx.spec_text);
    cache.put_winner(w);
    return {};
  } catch (const Error& e) {
    return e.what();
  }
}

}  // namespace tbtune
