#include "tuner/tune.hpp"

#include <chrono>
#include <ctime>

#include <fmt/format.h>

#include "model/probe.hpp"
#include "tuner/error.hpp"
#include "tuner/nvrtc.hpp"
#include "tuner/verify.hpp"

namespace tbtune {
namespace {

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

// Compiles, runs and times one candidate; every expected failure becomes the trial's status.
Trial try_candidate(const RankedCandidate& c, const Problem& problem, Runner& runner,
                    const std::string& arch, const TuneOptions& options,
                    const std::vector<unsigned char>* reference) {
  Trial t;
  t.strategy = c.strategy->name();
  t.params = c.params;
  t.predicted = c.prediction;
  CompiledModule module;
  try {
    module = compile_cuda(c.strategy->source(problem, c.params), arch, options.compile_cache_dir);
  } catch (const CompileError& e) {
    t.status = TrialStatus::CompileError;
    t.message = e.what() + std::string("\n") + e.log();
    return t;
  }
  t.cubin = module.cubin;
  try {
    const Measurement m = runner.measure(*c.strategy, c.params, module, reference, options.timing);
    t.registers = m.registers;
    t.spill_bytes = m.spill_bytes;
    t.smem_bytes = m.smem_bytes;
    t.max_rel_error = m.max_error;
    t.repetitions = m.repetitions;
    t.seconds_median = m.seconds_median;
    t.gcells_median = problem.interior_cells() * double(problem.steps) / m.seconds_median / 1e9;
    t.gcells_best = problem.interior_cells() * double(problem.steps) / m.seconds_min / 1e9;
    if (reference && !(m.max_error <= tolerance(problem.dtype))) {
      t.status = TrialStatus::WrongResult;
      t.message = fmt::format("max error {:.3g} vs the naive kernel exceeds {:.0e}", m.max_error,
                              tolerance(problem.dtype));
    } else {
      t.status = TrialStatus::Ok;
    }
  } catch (const CudaError& e) {
    t.status = TrialStatus::LaunchError;
    t.message = e.what();
  } catch (const Error& e) {
    t.status = TrialStatus::Resources;
    t.message = e.what();
  }
  return t;
}

}  // namespace

DeviceProfile profile_for(const DeviceInfo& d) {
  std::string base = "h100";
  if (d.cc_major == 8) base = "a100";
  if (d.name.find("H200") != std::string::npos) base = "h200";
  DeviceProfile p = *builtin_profile(base);
  p.name = base + " (" + d.name + ")";
  p.cc_major = d.cc_major;
  p.cc_minor = d.cc_minor;
  p.sm_count = d.sm_count;
  p.smem_per_sm = d.smem_per_sm;
  p.smem_per_block = d.smem_per_block_optin;
  p.regs_per_sm = d.regs_per_sm;
  p.max_threads_per_sm = d.max_threads_per_sm;
  p.max_blocks_per_sm = d.max_blocks_per_sm;
  p.l2_bytes = d.l2_bytes;
  return p;
}

DeviceRecord device_record(const DeviceInfo& d) {
  DeviceRecord r;
  r.name = d.name;
  r.cc_major = d.cc_major;
  r.cc_minor = d.cc_minor;
  r.sm_count = d.sm_count;
  r.memory_bytes = d.memory_bytes;
  r.driver_version = d.driver_version;
  const std::string v = nvrtc_version();
  r.nvrtc_major = std::stoi(v.substr(0, v.find('.')));
  r.nvrtc_minor = std::stoi(v.substr(v.find('.') + 1));
  return r;
}

TuneResult tune(const Problem& problem, const TuneOptions& options, Cache& cache,
                const ProgressFn& progress) {
  TuneResult result;
  result.device = open_device(options.device);
  const DeviceRecord record = device_record(result.device);
  // The model uses this GPU's measured profile: stored by an earlier probe, else probed now.
  if (auto stored = cache.profile(record.fingerprint())) {
    result.profile = *stored;
  } else if (options.probe) {
    result.profile = probe_device(result.device, {9, options.compile_cache_dir}).profile;
    cache.put_profile(record.fingerprint(), result.profile);
  } else {
    result.profile = profile_for(result.device);
  }
  result.key = WinnerKey{problem.stencil.hash, record.fingerprint(), problem.dtype, problem.domain,
                         steps_class(problem.steps)};
  cache.put_device(record);
  cache.put_stencil(problem.stencil, options.spec_text);

  const auto ranked = rank_candidates(problem, result.profile, options.only_strategy);
  auto chosen = rank_candidates(problem, result.profile, "naive");
  for (auto& c : select_candidates(ranked, options.top)) chosen.push_back(std::move(c));

  const std::string arch = arch_for(result.device.cc_major, result.device.cc_minor);
  Runner runner(problem, result.device, options.seed);
  std::vector<unsigned char> reference;
  const int total = int(chosen.size());
  for (int i = 0; i < total; ++i) {
    if (progress) progress({TuneEvent::Kind::Start, i, total, nullptr});
    Trial t = try_candidate(chosen[i], problem, runner, arch, options, i == 0 ? nullptr : &reference);
    if (i == 0) {
      if (t.status != TrialStatus::Ok)
        throw Error("the naive reference kernel failed, so nothing can be verified: " + t.message);
      reference = runner.last_output();
    }
    cache.add_trial(result.key, problem.steps, t);
    const bool better = t.status == TrialStatus::Ok &&
                        (!result.winner || t.gcells_median > result.winner->trial.gcells_median);
    if (better) {
      result.winner = Winner{result.key, problem.stencil.name, problem.steps, t, TBTUNE_VERSION, utc_now()};
    }
    if (!better) t.cubin.clear();  // only the winner's image is worth keeping in memory
    result.trials.push_back(std::move(t));
    if (progress) progress({TuneEvent::Kind::Measured, i, total, &result.trials.back()});
  }
  if (result.winner) cache.put_winner(*result.winner);
  return result;
}

}  // namespace tbtune
