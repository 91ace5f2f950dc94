// lookup(): the stored winner for a problem on the current GPU; on a miss, why, and what the
// miss policy serves instead. A hit reads the cache read-only (through the process's pooled
// connection to it after the first lookup: CacheReader), loads the CUBIN and compiles
// nothing (NVRTC stays unloaded); only a fallback compiles.
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include <fmt/format.h>

#include "tuner/api/fallback.hpp"
#include "tuner/api/internal.hpp"
#include "tuner/api/key_match.hpp"
#include "tuner/gpu/kernel_set.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

const char* env(const char* name) {
  const char* v = std::getenv(name);
  return v && *v ? v : nullptr;
}

MissPolicy policy_of(const LookupOptions& o) {
  if (o.policy) return *o.policy;
  if (const char* v = env("TBTUNE_MISS_POLICY")) {
    try {
      return parse_policy(v);
    } catch (const ApiError& e) {
      throw ApiError(ErrorCode::BadArgument, std::string("TBTUNE_MISS_POLICY: ") + e.what());
    }
  }
  return MissPolicy::Fail;
}

/// The current device, or nullopt without one. TBTUNE_FAKE_DRIVER (a test hook for
/// scripts/app-gpu-check.sh, never set otherwise) makes it report another driver version.
std::optional<DeviceInfo> device_here(std::string& why_not) {
  try {
    DeviceInfo d = current_device();
    if (const char* fake = env("TBTUNE_FAKE_DRIVER")) d.driver_version = std::atoi(fake);
    return d;
  } catch (const NoGpuError& e) {
    why_not = e.what();
    return std::nullopt;
  }
}

std::string asked_text(const Problem& p, const WantedKey& w) {
  return fmt::format("{} {} {}x{}x{} step class {} on {}", p.stencil.name, dtype_name(p.dtype),
                     p.domain[0], p.domain[1], p.domain[2], w.steps_class,
                     w.model.empty() ? std::string("no GPU") : w.model + " driver " + w.driver);
}

void report(const LookupOptions& o, const FallbackEvent& e) {
  if (o.on_fallback) o.on_fallback(e);
  // Opt-in, for applications that expose no callback: the library prints nothing otherwise.
  if (const char* v = env("TBTUNE_LOG_FALLBACK"); v && std::string_view(v) != "0")
    std::fprintf(stderr, "tbtune: %s\n", e.message.c_str());
}

Lookup serve_miss(const LookupOptions& o, MissPolicy policy, MissReason reason, const FallbackContext& ctx,
                  const std::string& path, const Cache* cache, const std::vector<Winner>& winners,
                  const WantedKey& want, const std::string& asked) {
  std::optional<Served> served;
  std::string notes;
  if (policy == MissPolicy::Nearest) {
    if (auto near = nearest(winners, want)) {
      try {
        served = serve_nearest(ctx, *near);
      } catch (const CompileError&) {
        throw;
      } catch (const Error& e) {
        notes = fmt::format("; nearest {} {} cannot be built here ({})", near->trial.strategy,
                            params_text(near->trial.params), e.what());
      }
    } else {
      notes = "; no stored winner for this stencil and precision on this GPU model";
    }
  }
  if (!served && (policy == MissPolicy::Nearest || policy == MissPolicy::Model)) {
    try {
      served = serve_model(ctx, cache);
    } catch (const CompileError&) {
      throw;
    } catch (const Error& e) {
      notes += fmt::format("; {}", e.what());
    }
  }
  if (!served && policy != MissPolicy::Fail) served = serve_naive(ctx);

  FallbackEvent e;
  e.reason = reason;
  e.policy = policy;
  e.asked = asked;
  Lookup l;
  l.reason = reason;
  if (!served) {
    e.used = "nothing";
    e.message = fmt::format("miss ({}): {} for {}; miss policy fail: no kernel{}", reason_name(reason),
                            reason == MissReason::StaleKernel
                                ? "the stored winner's kernel was built by an earlier tbtune (tune again)"
                                : "no stored winner",
                            asked, notes);
  } else {
    std::string stored = "not stored (the naive kernel is not a tuning result)";
    if (served->source != KernelSource::Naive) {
      const std::string why_not = store(path, ctx, served->kernel);
      e.stored = why_not.empty();
      stored = e.stored ? "compiled and stored: the next start is a hit"
                        : "compiled, not stored (" + why_not + ")";
    }
    e.served_by = served->source;
    e.used = served->used;
    e.message = fmt::format("miss ({}): {}; miss policy {} serves {}, {}{}", reason_name(reason), asked,
                            policy_name(policy), served->used, stored, notes);
    l.source = served->source;
    l.kernel = std::move(served->kernel);
  }
  l.message = e.message;
  report(o, e);
  return l;
}

Lookup run_lookup(const StencilSpec::Impl& spec, const LookupOptions& o) {
  const Problem problem = problem_for(spec, o);
  const MissPolicy policy = policy_of(o);
  const std::string path = o.db.empty() ? Cache::default_path() : o.db;
  std::string no_gpu;
  const std::optional<DeviceInfo> device = device_here(no_gpu);

  WantedKey want{problem.stencil.hash, problem.dtype, problem.domain, steps_class(problem.steps), {}, {}};
  if (device) {
    want.model = device_model(*device);
    want.driver = std::to_string(device->driver_version);
  }
  const std::string asked = asked_text(problem, want);

  std::error_code ec;
  // The process's pooled read-only connection to this file when it has one, so a later lookup
  // skips the open (CacheReader says when one is reused).
  CacheReader::Lease cache;
  std::vector<Winner> winners;
  MatchResult m{MissReason::NoCache, std::nullopt};
  if (std::filesystem::exists(path, ec)) {
    cache = CacheReader::acquire(path);
    winners = cache->winners_of(problem.stencil.hash);  // no CUBIN read but the one served
    m = match(winners, want);
  }
  if (m.reason == MissReason::None) {
    auto w = cache->winner(*m.hit);
    if (!w) throw CacheError("cache '" + path + "': the winner vanished while being read", 0);
    const Strategy* strategy = find_strategy(w->trial.strategy);
    if (strategy && !cubin_names_kernel(w->trial.cubin, strategy->step_kernel())) {
      // Built by an earlier tbtune under the kernel names of a geometry this one does not launch.
      m.reason = MissReason::StaleKernel;
    } else {
      cache.reset();  // back to the pool before the CUBIN loads: another thread may look up
      Lookup l;
      l.source = KernelSource::Cache;
      l.message = fmt::format("hit: {} {} ({:.1f} GCells/s when tuned, {})", w->trial.strategy,
                              params_text(w->trial.params), w->trial.gcells_median, asked);
      l.kernel = make_kernel(problem, std::move(*w), KernelSource::Cache, *device);
      return l;
    }
  }
  if (!device) {
    // Nothing can be compiled or run: say why, whatever the policy.
    Lookup l;
    l.reason = m.reason == MissReason::StencilUnknown || m.reason == MissReason::NoCache ? m.reason
                                                                                         : MissReason::NoGpu;
    l.message = fmt::format("miss ({}): {}; {}", reason_name(l.reason), asked, no_gpu);
    return l;
  }
  const std::string cubins = !o.compile_cache_dir.empty()
                                 ? o.compile_cache_dir
                                 : (std::filesystem::path(path).parent_path() / "cubins").string();
  const FallbackContext ctx{problem, *device, cubins, spec.spec.text};
  return serve_miss(o, policy, m.reason, ctx, path, cache ? &cache->cache() : nullptr, winners, want, asked);
}

}  // namespace

Lookup lookup(const StencilSpec& spec, const LookupOptions& options) {
  try {
    return run_lookup(spec.impl(), options);
  } catch (...) {
    rethrow_as_api_error();
  }
}

Lookup lookup(const std::string& spec_path, const LookupOptions& options) {
  return lookup(StencilSpec::from_file(spec_path), options);
}

Lookup lookup_text(std::string_view spec_text, const LookupOptions& options) {
  return lookup(StencilSpec::from_text(spec_text), options);
}

}  // namespace tbtune
