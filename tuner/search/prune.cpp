// The post-compile check of the engine (declared in tuner/engine.hpp): what ptxas reports
// about the compiled kernel may rule a candidate out before any GPU time is spent on it.
#include <fmt/format.h>

#include "tuner/search/engine.hpp"

namespace tbtune {

Pruning prune_after_compile(const RankedCandidate& c, const CompiledModule& module,
                            const DeviceProfile& profile, bool allow_spills) {
  const auto it = module.kernels.find(kFullKernel);
  if (it == module.kernels.end()) return {};  // no ptxas report: nothing to judge by
  const KernelResources& k = it->second;
  if (k.spill_bytes() > 0 && !allow_spills)
    return {TrialStatus::Skipped,
            fmt::format("pruned after compiling: {} spills registers ({} bytes of spill stores, {} "
                        "of spill loads at {} registers per thread); --allow-spills times it anyway",
                        kFullKernel, k.spill_stores, k.spill_loads, k.registers)};
  // The model sized the candidate with an estimate of its registers; with ptxas' real figure
  // its threads x blocks per SM may no longer fit, and then it would run at fewer blocks per
  // SM than it was designed (and predicted) for.
  ModelTerms terms = c.terms;
  terms.regs_per_thread = k.registers;
  if (const std::string why = resource_check(terms, profile); !why.empty())
    return {TrialStatus::Resources,
            fmt::format("pruned after compiling: with ptxas' {} registers per thread, {} blocks of {} "
                        "threads per SM do not fit ({})",
                        k.registers, terms.blocks_per_sm, terms.threads, why)};
  return {};
}

}  // namespace tbtune
