// Writes the seed of the cache fuzzer (scripts/fuzz.sh): a small cache holding one of every row
// kind (device, stencil, trials, winner with a CUBIN, profile, tune run), so that mutations
// start from a valid file. Usage: cache_seed OUT.db SPEC.yaml
#include <cstdio>
#include <string>

#include "db/cache.hpp"
#include "model/device_profile.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/stencil.hpp"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: cache_seed OUT.db SPEC.yaml\n");
    return 2;
  }
  try {
    const tbtune::Spec spec = tbtune::load_spec(argv[2]);
    const tbtune::Problem problem = tbtune::make_problem(spec);
    tbtune::DeviceRecord device;
    device.name = "NVIDIA H100 80GB HBM3";
    device.cc_major = 9;
    device.sm_count = 132;
    device.memory_bytes = 85'000'000'000L;
    device.driver_version = 13000;
    device.nvrtc_major = 13;
    tbtune::WinnerKey key{problem.stencil.hash, device.fingerprint(), problem.dtype,
                          problem.domain, tbtune::steps_class(problem.steps)};
    tbtune::Cache cache(argv[1], tbtune::Cache::Mode::ReadWrite);
    cache.put_device(device);
    cache.put_stencil(problem.stencil, spec.text);
    tbtune::Trial ok;
    ok.strategy = "cmq2d";
    ok.params = {{"t", 4}, {"tile_x", 128}};
    ok.status = tbtune::TrialStatus::Ok;
    ok.gcells_median = 250;
    ok.repetitions = 3;
    ok.cubin = std::string("\x7f" "ELF", 4) + std::string(60, '\0');
    tbtune::Trial failed = ok;
    failed.status = tbtune::TrialStatus::CompileError;
    failed.message = "error: identifier \"x\" is undefined";
    cache.add_trial(key, problem.steps, ok);
    cache.add_trial(key, problem.steps, failed);
    tbtune::Winner w;
    w.key = key;
    w.stencil_name = problem.stencil.name;
    w.steps = problem.steps;
    w.trial = ok;
    w.tool_version = "seed";
    cache.put_winner(w);
    cache.put_profile(key.device_fingerprint, *tbtune::builtin_profile("h100"));
    tbtune::TuneRecord run;
    run.key = key;
    run.steps = problem.steps;
    run.stencil_name = problem.stencil.name;
    run.winner_strategy = ok.strategy;
    run.winner_params = ok.params;
    run.tool_version = "seed";
    cache.add_tune(run);
  } catch (const tbtune::Error& e) {
    std::fprintf(stderr, "cache_seed: %s\n", e.what());
    return 2;
  }
  return 0;
}
