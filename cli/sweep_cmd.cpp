// `tbtune sweep FILE`: list a sweep's problems, or tune (or with --compile-only, compile) the
// problems of one shard into a cache of the task's own; made for Slurm job arrays.
#include <atomic>
#include <csignal>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/progress.hpp"
#include "tuner/search/tune.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/sweep/compile_ahead.hpp"
#include "tuner/sweep/shard.hpp"

namespace tbtune::cli {
namespace {

/// Exit codes of `sweep` beyond the common ones (README "Sweeps on a cluster").
enum SweepExit : int {
  kSomeFailed = 3,  ///< some problems failed; the others are stored
  kNoGpu = 4,       ///< timing was needed and no GPU is usable here
};

struct SweepArgs {
  std::string file;
  bool list = false;
  bool json = false;
  std::string shard;
  std::string db;
  std::string cubins;
  std::string summary;
  std::string profile;
  bool compile_only = false;
  int device = 0;
  int gpus = 1;
  unsigned threads = 0;
  bool quiet = false;
};

std::atomic<bool> g_stop{false};
extern "C" void on_sweep_signal(int) { g_stop.store(true); }

void install_stop_handlers() {
  struct sigaction sa {};
  sa.sa_handler = on_sweep_signal;
  sa.sa_flags = SA_RESETHAND;  // a second signal ends the process at once
  sigemptyset(&sa.sa_mask);
  sigaction(SIGINT, &sa, nullptr);
  sigaction(SIGTERM, &sa, nullptr);
}

std::string domain_text(const Problem& p) {
  return p.dims() == 3 ? fmt::format("{}x{}x{}", p.domain[0], p.domain[1], p.domain[2])
                       : fmt::format("{}x{}", p.domain[0], p.domain[1]);
}

std::string problem_text(const SweepProblem& sp) {
  return fmt::format("#{} {} {} {} {} steps", sp.index, sp.problem.stencil.name,
                     dtype_name(sp.problem.dtype), domain_text(sp.problem), sp.problem.steps);
}

nlohmann::json problem_json(const SweepProblem& sp) {
  return {{"index", sp.index}, {"spec", sp.spec_path}, {"stencil", sp.problem.stencil.name},
          {"hash", sp.problem.stencil.hash}, {"dtype", dtype_name(sp.problem.dtype)},
          {"domain", std::vector<long>(sp.problem.domain.begin(), sp.problem.domain.begin() + sp.problem.dims())},
          {"steps", sp.problem.steps}, {"selected", sp.selected}, {"compiles", sp.compiles},
          {"estimated_s", sp.estimated_s}};
}

/// The shard this task runs: --shard, else the Slurm array variables, else all of it.
ShardSpec choose_shard(const SweepArgs& a) {
  if (!a.shard.empty()) return parse_shard(a.shard);
  if (auto s = shard_from_slurm()) return *s;
  return ShardSpec{0, 1, 0, "", "the whole sweep"};
}

int run_list(const SweepArgs& a, const std::vector<SweepProblem>& all, const DeviceProfile& profile) {
  std::vector<int> shown;
  std::optional<ShardSpec> shard;
  if (!a.shard.empty()) shard = parse_shard(a.shard);
  std::vector<double> costs;
  for (const auto& sp : all) costs.push_back(sp.estimated_s);
  if (shard) shown = shard_problems(costs, shard->index, shard->count);
  else for (const auto& sp : all) shown.push_back(sp.index);
  double total = 0;
  for (int i : shown) total += all[std::size_t(i)].estimated_s;
  if (a.json) {
    nlohmann::json j{{"sweep", a.file}, {"profile", profile.name}, {"problems", nlohmann::json::array()},
                     {"estimated_s", total}};
    if (shard) j["shard"] = {{"index", shard->index}, {"count", shard->count}};
    for (int i : shown) j["problems"].push_back(problem_json(all[std::size_t(i)]));
    std::cout << j.dump(2) << '\n';
    return kOk;
  }
  std::vector<std::vector<std::string>> rows;
  for (int i : shown) {
    const SweepProblem& sp = all[std::size_t(i)];
    rows.push_back({std::to_string(sp.index), sp.problem.stencil.name, dtype_name(sp.problem.dtype),
                    domain_text(sp.problem), std::to_string(sp.problem.steps),
                    std::to_string(sp.selected), std::to_string(sp.compiles), fixed(sp.estimated_s)});
  }
  fmt::print("{}: {} problem(s){}; estimates with the {} profile\n", a.file, shown.size(),
             shard ? fmt::format(" in shard {}/{} (of {})", shard->index, shard->count, all.size()) : "",
             profile.name);
  print_table({"index", "stencil", "dtype", "domain", "steps", "timed", "compiled", "est. s"}, rows);
  fmt::print("estimated total: {:.0f} s (the model's run times plus 1 s per timed candidate; a guide "
             "for balancing shards, not a promise)\n", total);
  return kOk;
}

/// One problem's outcome, for the progress line and the summary.
struct Outcome {
  std::string status;  ///< tuned, compiled, no_winner, failed, interrupted
  nlohmann::json detail = nlohmann::json::object();
};

Outcome tune_one(const SweepProblem& sp, const SweepArgs& a, int device,
                 const std::optional<DeviceProfile>& named, const std::string& cubins, Cache& cache) {
  TuneOptions o = tune_options(sp);
  o.device = device;
  o.profile = named;
  o.compile_cache_dir = cubins;
  o.stop = &g_stop;
  const TuneResult r = tune(sp.problem, o, cache, Progress(a.quiet ? Verbosity::Quiet : Verbosity::Normal));
  Outcome out;
  out.status = r.interrupted ? "interrupted" : r.winner ? "tuned" : "no_winner";
  out.detail = {{"timed", r.record.tally.timed}, {"reused", r.record.tally.reused},
                {"pruned", r.record.tally.pruned}, {"compile_errors", r.record.tally.compile_errors},
                {"wall_s", r.record.wall_s}};
  if (r.winner)
    out.detail["winner"] = {{"strategy", r.winner->trial.strategy},
                            {"params", params_json(r.winner->trial.params)},
                            {"gcells", r.winner->trial.gcells_median}};
  return out;
}

Outcome compile_one(const SweepProblem& sp, const SweepArgs& a, const DeviceProfile& profile,
                    const std::string& cubins, Cache& cache) {
  bool complete = false;
  const CompileRecord r = compile_ahead(sp, profile, cubins, a.threads, &g_stop, &complete);
  Outcome out;
  out.status = complete ? "compiled" : "interrupted";
  out.detail = {{"candidates", r.candidates}, {"compiled", r.compiled},
                {"found", r.candidates - r.compiled - r.compile_errors},
                {"compile_errors", r.compile_errors}, {"spilled", r.spilled}, {"wall_s", r.wall_s}};
  if (complete) {
    cache.put_stencil(sp.problem.stencil, sp.spec_text);
    cache.put_compile(r);
  }
  return out;
}

int run_shard(const SweepArgs& a, const std::vector<SweepProblem>& all,
              const std::optional<DeviceProfile>& named) {
  const auto started = std::chrono::steady_clock::now();
  const ShardSpec shard = choose_shard(a);
  const std::string db = a.db.empty() ? Cache::default_path() : task_path(a.db, shard);
  const std::string cubins = !a.cubins.empty() ? task_path(a.cubins, shard)
                                               : (std::filesystem::path(db).parent_path() / "cubins").string();
  std::vector<double> costs;
  for (const auto& sp : all) costs.push_back(sp.estimated_s);
  const std::vector<int> mine = shard_problems(costs, shard.index, shard.count);
  const char* mode = a.compile_only ? "compile-only" : "tune";
  // The profile is said out loud: on a CPU node it stands in for a GPU nobody has seen.
  const std::string profile = named ? "the built-in " + named->name + " profile"
                                    : "this GPU's probed (or stored) profile";
  std::cerr << fmt::format("sweep {}: shard {}/{} (task {}, from {}): {} of {} problem(s), {}, ranked "
                           "with {}, db {}, CUBINs {}\n",
                           a.file, shard.index, shard.count, shard.task_id, shard.source, mine.size(),
                           all.size(), mode, profile, db, cubins) << std::flush;
  // One worker per GPU (--gpus; one for --compile-only), each with its own connection to the
  // task's cache (WAL: several writers on one node are safe), taking the shard's problems in order.
  const int workers = a.compile_only ? 1 : std::max(1, a.gpus);
  { Cache create(db, Cache::Mode::ReadWrite); }  // the file and its tables, before the workers
  install_stop_handlers();
  std::vector<nlohmann::json> results;
  for (int i : mine) results.push_back(problem_json(all[std::size_t(i)])), results.back()["status"] = "not_run";
  std::atomic<std::size_t> next{0};
  std::atomic<bool> no_gpu{false};
  std::mutex print;
  auto say = [&](const std::string& line) {
    const std::lock_guard<std::mutex> lock(print);
    std::cerr << line << std::flush;
  };
  auto work = [&](int device) {
    Cache cache(db, Cache::Mode::ReadWrite);
    for (std::size_t n = next++; n < mine.size() && !g_stop.load() && !no_gpu.load(); n = next++) {
      const SweepProblem& sp = all[std::size_t(mine[n])];
      const std::string head = fmt::format("sweep: {}/{} {}", n + 1, mine.size(), problem_text(sp));
      say(fmt::format("{}: {}{}\n", head, a.compile_only ? "compiling" : "tuning",
                      workers > 1 ? fmt::format(" on device {}", device) : ""));
      Outcome out;
      try {
        out = a.compile_only ? compile_one(sp, a, *named, cubins, cache)
                             : tune_one(sp, a, device, named, cubins, cache);
      } catch (const NoGpuError& e) {
        if (!no_gpu.exchange(true))
          say(fmt::format("sweep: timing needs a GPU and none is usable here: {} (exit {}; "
                          "--compile-only compiles without one)\n", e.what(), int(kNoGpu)));
        results[n]["status"] = "no_gpu";
        break;
      } catch (const Error& e) {  // this problem failed; the others go on
        out.status = "failed";
        out.detail = {{"message", e.what()}};
      }
      results[n]["status"] = out.status;
      results[n].update(out.detail);
      say(fmt::format("{}: {} {}\n", head, out.status, out.detail.dump()));
    }
  };
  std::vector<std::exception_ptr> errors(static_cast<std::size_t>(workers));
  std::vector<std::thread> threads;
  for (int k = 0; k < workers; ++k)
    threads.emplace_back([&, k] {
      try {
        work(a.device + k);
      } catch (...) {  // rethrown in this thread, for main to report
        errors[std::size_t(k)] = std::current_exception();
        g_stop.store(true);
      }
    });
  for (auto& t : threads) t.join();
  for (const auto& e : errors)
    if (e) std::rethrow_exception(e);
  int failed = 0, done = 0;
  for (const auto& r : results) {
    failed += r["status"] == "failed" || r["status"] == "no_winner";
    done += r["status"] == "tuned" || r["status"] == "compiled";
  }
  const nlohmann::json problems = results;
  int code = no_gpu.load() ? int(kNoGpu) : int(kOk);
  if (code == kOk) code = g_stop.load() ? int(kInterrupted) : failed > 0 ? int(kSomeFailed) : int(kOk);
  const double wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  nlohmann::json summary{{"sweep", a.file}, {"mode", mode},
                         {"shard", {{"index", shard.index}, {"count", shard.count}, {"task_id", shard.task_id},
                                    {"source", shard.source}}},
                         {"profile", named ? named->name : "probed"}, {"db", db}, {"cubins", cubins},
                         {"problems", problems}, {"done", done},
                         {"failed", failed}, {"exit_code", code}, {"wall_s", wall_s}};
  if (!a.summary.empty()) {
    const std::string path = task_path(a.summary, shard);
    std::ofstream f(path);
    f << summary.dump(2) << '\n';
    if (!f) throw Error(fmt::format("cannot write the summary '{}'", path));
  }
  if (a.json) std::cout << summary.dump(2) << '\n';
  std::cerr << fmt::format("sweep: shard {}/{} done: {} {}, {} failed, {} not run; {:.1f} s; exit {}\n",
                           shard.index, shard.count, done, a.compile_only ? "compiled" : "tuned", failed,
                           int(mine.size()) - done - failed, wall_s, code);
  return code;
}

int run_sweep(const SweepArgs& a) {
  const SweepFile sweep = load_sweep(a.file);
  const std::string name = a.profile.empty() ? sweep.profile : a.profile;
  std::optional<DeviceProfile> named;
  if (!name.empty()) {
    named = builtin_profile(name);
    if (!named) throw UsageError(fmt::format("--profile '{}': no such built-in profile (a100, h100, h200)", name));
  }
  if (a.compile_only && !named)
    throw UsageError("--compile-only needs a device profile to rank with, as no GPU is here to identify: "
                     "give --profile (e.g. h100) or `profile:` in the sweep file, and tune with the same one");
  // Without a named profile the estimates use the H100's; a tune then uses its GPU's own.
  const DeviceProfile estimate_with = named ? *named : *builtin_profile("h100");
  const std::vector<SweepProblem> all = expand_sweep(sweep, estimate_with);
  if (a.list) return run_list(a, all, estimate_with);
  return run_shard(a, all, named);
}

}  // namespace

void add_sweep_command(CLI::App& app, Action& action) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "Tune the problems of a sweep file (specs x dtypes x domains x steps; docs/sweeps.md), one "
      "shard of them per task of a Slurm job array, each task into a cache of its own; then "
      "`tbtune db merge` joins the caches. The shard is --shard I/N, else Slurm's "
      "SLURM_ARRAY_TASK_ID/_MIN/_MAX/_COUNT/_STEP, else the whole sweep. Exit codes: 0 every "
      "problem done, 3 some failed (the others are stored), 2 usage or setup error, 4 no GPU "
      "(timing needs one), 130 interrupted (run it again to resume).");
  cmd->add_option("FILE", args->file, "sweep file (YAML)")->required();
  cmd->add_flag("--list", args->list, "print the problems with their index and estimated tune cost; tune nothing");
  cmd->add_flag("--json", args->json, "print JSON: the list, or the task's summary at the end");
  cmd->add_option("--shard", args->shard, "I/N: tune shard I (0-based) of N, balanced by estimated cost");
  cmd->add_option("--db", args->db,
                  "the task's cache; %a is the array task id (the shard index with --shard), %A the "
                  "array job id, e.g. $TMPDIR/shard-%a.db (default: tbtune's default cache)");
  cmd->add_option("--cubins", args->cubins,
                  "folder of compiled CUBINs, read and filled (default: cubins/ beside the cache); "
                  "point the GPU array at the folder the --compile-only pass filled");
  cmd->add_option("--summary", args->summary, "also write the task's JSON summary to this file (%a, %A as in --db)");
  cmd->add_option("--profile", args->profile,
                  "built-in device profile to rank with (a100, h100, h200; default: the sweep file's "
                  "`profile:`, else the GPU's probed one). A --compile-only pass and the GPU pass "
                  "after it must use the same one");
  cmd->add_flag("--compile-only", args->compile_only,
                "no GPU: compile every candidate a tune would compile into the CUBIN folder, so the "
                "GPU pass compiles nothing; needs a profile (the GPU's is unknown here)");
  cmd->add_option("--device", args->device, "CUDA device number (within CUDA_VISIBLE_DEVICES)")->capture_default_str();
  cmd->add_option("--gpus", args->gpus,
                  "tune on this many GPUs at once, devices --device to --device + N - 1 (within "
                  "CUDA_VISIBLE_DEVICES), one worker each, problems taken in order")
      ->capture_default_str()->check(CLI::Range(1, 64));
  cmd->add_option("--threads", args->threads, "compile threads for --compile-only (0: one per core)");
  cmd->add_flag("-q,--quiet", args->quiet, "no per-candidate progress, only one line per problem");
  cmd->callback([&action, args] { action = [args] { return run_sweep(*args); }; });
}

}  // namespace tbtune::cli
