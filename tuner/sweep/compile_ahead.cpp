#include "tuner/sweep/compile_ahead.hpp"

#include <chrono>
#include <future>
#include <vector>

#include "tuner/codegen/templates.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/search/engine.hpp"
#include "tuner/search/thread_pool.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {

CompileRecord compile_ahead(const SweepProblem& sp, const DeviceProfile& profile,
                            const std::string& cubins_dir, unsigned threads,
                            const std::atomic<bool>* stop, bool* complete) {
  const auto started = std::chrono::steady_clock::now();
  const TuneOptions options = tune_options(sp);
  const CandidateChoice choice = choose_candidates(sp.problem, profile, options);
  const std::string arch = arch_for(profile.cc_major, profile.cc_minor);

  CompileRecord r;
  r.stencil_hash = sp.problem.stencil.hash;
  r.stencil_name = sp.problem.stencil.name;
  r.profile = profile.name;
  r.arch = arch;
  r.dtype = sp.problem.dtype;
  r.domain = sp.problem.domain;
  r.steps = sp.problem.steps;
  r.tool_version = TBTUNE_VERSION;

  // The GPU worker compiles this one when it starts verifying (tuner/gpu/device_compare.cpp).
  const std::string* compare = embedded_template("compare.cuh");
  if (!compare) throw Error("the template compare.cuh is not embedded in this build");
  (void)compile_cuda(*compare, arch, cubins_dir);

  ThreadPool pool(threads);
  std::vector<std::future<CompiledModule>> pending;
  for (const RankedCandidate& c : choice.chosen)
    pending.push_back(pool.submit([&c, &sp, &arch, &cubins_dir, stop] {
      if (stop && stop->load()) return CompiledModule{};  // left out: an empty image
      return compile_cuda(c.strategy->source(sp.problem, c.params), arch, cubins_dir);
    }));
  bool all = true;
  for (std::size_t i = 0; i < pending.size(); ++i) {
    try {
      const CompiledModule m = pending[i].get();
      if (m.cubin.empty()) {
        all = false;
        continue;
      }
      ++r.candidates;
      if (!m.from_cache) ++r.compiled;
      if (i > 0 && prune_after_compile(choice.chosen[i], m, profile, options.allow_spills).status ==
                       TrialStatus::Skipped)
        ++r.spilled;
    } catch (const CompileError&) {
      ++r.candidates;
      ++r.compile_errors;
    }
  }
  r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  if (complete) *complete = all;
  return r;
}

}  // namespace tbtune
