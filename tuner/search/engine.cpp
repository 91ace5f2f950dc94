#include "tuner/search/engine.hpp"

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <future>

#include <fmt/format.h>

#include "tuner/gpu/verify.hpp"
#include "tuner/search/thread_pool.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

/// The folder for CUBIN files and the reference output: the given one, or a fresh temporary
/// one that is removed afterwards.
class WorkDir {
 public:
  explicit WorkDir(const std::string& given) {
    if (!given.empty()) {
      path_ = given;
      fs::create_directories(path_);
      return;
    }
    const char* tmp = std::getenv("TMPDIR");
    std::string templ = (fs::path(tmp && *tmp ? tmp : "/tmp") / "tbtune-XXXXXX").string();
    if (!::mkdtemp(templ.data()))
      throw Error(fmt::format("cannot create a temporary folder like '{}'", templ));
    path_ = templ;
    owned_ = true;
  }
  ~WorkDir() {
    std::error_code ec;
    if (owned_) fs::remove_all(path_, ec);
  }
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;
  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  fs::path path_;
  bool owned_ = false;
};

struct Compiled {
  CompiledModule module;
  std::string path;  ///< the CUBIN as a file, for the worker
};

Trial base_trial(const RankedCandidate& c) {
  Trial t;
  t.strategy = c.strategy->name();
  t.params = c.params;
  t.predicted = c.prediction;
  return t;
}

void take_measurement(Trial& t, const Measurement& m, const Problem& p, bool verify) {
  t.registers = m.registers;
  t.spill_bytes = m.spill_bytes;
  t.smem_bytes = m.smem_bytes;
  t.max_rel_error = m.max_error;
  t.repetitions = m.repetitions;
  t.seconds_median = m.seconds_median;
  const double cells = p.interior_cells() * double(p.steps);
  t.gcells_median = m.seconds_median > 0 ? cells / m.seconds_median / 1e9 : 0;
  t.gcells_best = m.seconds_min > 0 ? cells / m.seconds_min / 1e9 : 0;
  t.status = TrialStatus::Ok;
  if (verify && !(m.max_error <= tolerance(p.dtype))) {
    t.status = TrialStatus::WrongResult;
    t.message = fmt::format("max error {:.3g} vs the naive kernel exceeds {:.0e}", m.max_error,
                            tolerance(p.dtype));
  }
}

}  // namespace

EngineResult run_engine(const Problem& problem, const WinnerKey& key,
                        const std::vector<RankedCandidate>& candidates, Measurer& measurer,
                        Cache& cache, const EngineOptions& o, const ProgressFn& progress) {
  using clock = std::chrono::steady_clock;
  const auto started = clock::now();
  const auto elapsed = [&] { return std::chrono::duration<double>(clock::now() - started).count(); };
  if (candidates.empty() || candidates.front().strategy->name() != "naive")
    throw Error("the engine needs the naive reference as its first candidate");
  const int n = int(candidates.size());
  EngineResult result;

  // Resume: a candidate with a stored trial under the same key and step count is not run
  // again. Skipped trials are not reused: pruning is cheap, and --allow-spills changes it. The
  // stand-ins (after the first max_timed) do not count here: a finished tune run again compiles
  // nothing.
  std::vector<std::optional<Trial>> stored(static_cast<std::size_t>(n));
  const int first_stand_in = o.max_timed > 0 ? std::min(n, 1 + o.max_timed) : n;
  bool any_to_run = false;
  for (int i = 0; i < n; ++i) {
    const RankedCandidate& c = candidates[std::size_t(i)];
    if (!o.fresh) stored[std::size_t(i)] = cache.find_trial(key, problem.steps, c.strategy->name(), c.params);
    if (i < first_stand_in) any_to_run = any_to_run || !stored[std::size_t(i)];
  }

  WorkDir dir(o.work_dir);
  const std::string reference_path = dir.file("reference.bin");
  // Whenever anything runs, all compiles are queued up front, in rank order, so they overlap the
  // GPU timing; the naive one too, as its output is the reference. A stand-in needed although
  // nothing else ran (its place held by a stored `resources` trial) is queued when reached.
  // Declared last among the locals its tasks use, so it is destroyed (pending tasks dropped,
  // running ones joined) first.
  std::vector<std::future<Compiled>> compiled(static_cast<std::size_t>(n));
  ThreadPool pool(o.compile_threads);
  const auto submit = [&](int i) {
    if (compiled[std::size_t(i)].valid()) return;
    const RankedCandidate* c = &candidates[std::size_t(i)];
    const std::string path = dir.file(fmt::format("c{}.cubin", i));
    compiled[std::size_t(i)] = pool.submit([c, path, &problem, &o] {
      Compiled out{o.compile(c->strategy->source(problem, c->params), o.arch, o.compile_cache_dir), path};
      std::ofstream f(path, std::ios::binary);
      f.write(out.module.cubin.data(), std::streamsize(out.module.cubin.size()));
      if (!f) throw Error(fmt::format("cannot write '{}'", path));
      return out;
    });
  };
  if (any_to_run)
    for (int i = 0; i < n; ++i)
      if (i == 0 || !stored[std::size_t(i)]) submit(i);

  bool reference_ready = false;
  auto run_reference = [&](Compiled& naive) {
    MeasureJob job{0, &candidates.front(), naive.path, naive.module.log, true, reference_path};
    MeasureOutcome out = measurer.measure(job);
    if (out.status != TrialStatus::Ok)
      throw Error("the naive reference kernel failed, so nothing can be verified: " + out.message);
    reference_ready = true;
    return out;
  };
  // Stores the fastest verified trial as the winner, also when the loop below ends in an
  // exception (the GPU side failing as a whole): what was measured so far is kept.
  int best = -1;  // index into result.trials of the fastest verified trial
  auto store_winner = [&] {
    if (best >= 0) {
      Trial& w = result.trials[std::size_t(best)];
      if (w.cubin.empty()) {
        // A reused winner: the cache keeps no image with trials, so build it again (usually a
        // hit in the CUBIN folder).
        const Strategy* s = find_strategy(w.strategy);
        if (!s) throw Error(fmt::format("stored trial names unknown strategy '{}'", w.strategy));
        w.cubin = o.compile(s->source(problem, w.params), o.arch, o.compile_cache_dir).cubin;
      }
      result.winner = Winner{key, problem.stencil.name, problem.steps, w, TBTUNE_VERSION, utc_now()};
      if (o.keep_faster_winner) {
        auto previous = cache.winner(key);
        if (previous && previous->trial.gcells_median > w.gcells_median) {
          result.kept = std::move(previous);
          return;
        }
      }
      cache.put_winner(*result.winner);
    }
  };
  std::optional<Compiled> naive;  // kept for a later reference run when naive itself is reused
  // Candidates (naive left out) that went to the GPU, now or in a stored trial, or that a stop or
  // the budget left out; and those passed over (pruned, not compiled), for which one more stands in.
  int settled = 0, passed_over = 0;
  // What the progress display counts to: every candidate, or with stand-ins the ones that will
  // have been looked at once max_timed are settled.
  const auto expected = [&] { return o.max_timed > 0 ? std::min(n, 1 + o.max_timed + passed_over) : n; };
  try {
    for (int i = 0; i < n; ++i) {
      if (o.max_timed > 0 && settled >= o.max_timed) break;
      const RankedCandidate& c = candidates[std::size_t(i)];
      // Counts candidate i's outcome in the tally, which leaves out the naive reference: it is
      // not part of any search.
      const auto count = [&](int SearchTally::*outcome) {
        if (i > 0) ++(result.tally.*outcome);
      };
      if (stored[std::size_t(i)]) {
        Trial t = *stored[std::size_t(i)];
        t.reused = true;
        ++result.reused;
        count(&SearchTally::reused);
        result.trials.push_back(std::move(t));
      } else {
        if (o.stop && o.stop->load()) result.interrupted = true;
        if (o.budget_s > 0 && elapsed() >= o.budget_s) result.out_of_budget = true;
        if (result.interrupted || result.out_of_budget) {
          ++result.not_run;
          count(&SearchTally::not_run);
          if (i > 0) ++settled;
          continue;
        }
        if (progress) progress({TuneEvent::Kind::Start, i, expected(), nullptr, elapsed()});
        Trial t = base_trial(c);
        std::optional<Compiled> cc;
        submit(i);
        try {
          cc = compiled[std::size_t(i)].get();
        } catch (const CompileError& e) {
          t.status = TrialStatus::CompileError;
          t.message = e.what() + std::string("\n") + e.log();
          count(&SearchTally::compile_errors);
        } catch (const Error& e) {
          if (i == 0) throw;
          t.status = TrialStatus::CompileError;
          t.message = e.what();
          count(&SearchTally::compile_errors);
        }
        if (cc) {
          const Pruning pr = i == 0 ? Pruning{} : prune_after_compile(c, cc->module, o.profile, o.allow_spills);
          if (pr.status != TrialStatus::Ok) {
            count(&SearchTally::pruned);
            t.status = pr.status;
            t.message = pr.message;
            const auto& k = cc->module.kernels.at(kFullKernel);
            t.registers = k.registers;
            t.spill_bytes = k.spill_bytes();
            t.smem_bytes = k.smem_bytes;
          } else if (i == 0) {
            take_measurement(t, run_reference(*cc).measurement, problem, false);
          } else {
            if (!reference_ready) {
              if (!naive) {
                submit(0);
                naive = compiled.front().get();
              }
              (void)run_reference(*naive);
            }
            count(&SearchTally::timed);
            const MeasureOutcome out = measurer.measure(
                {i, &c, cc->path, cc->module.log, false, reference_path});
            if (out.status == TrialStatus::Ok) {
              take_measurement(t, out.measurement, problem, true);
            } else {
              t.status = out.status;
              t.message = out.message;
            }
          }
        }
        if (i == 0 && t.status != TrialStatus::Ok)
          throw Error("the naive reference kernel failed, so nothing can be verified: " + t.message);
        cache.add_trial(key, problem.steps, t);  // its own transaction: kill -9 loses only the next
        if (t.status == TrialStatus::Ok && cc) t.cubin = cc->module.cubin;
        result.trials.push_back(std::move(t));
      }
      Trial& t = result.trials.back();
      if (i > 0) {
        const bool passed = t.status == TrialStatus::Skipped || t.status == TrialStatus::Resources ||
                            t.status == TrialStatus::CompileError;
        ++(passed ? passed_over : settled);
      }
      if (t.status == TrialStatus::Ok &&
          (best < 0 || t.gcells_median > result.trials[std::size_t(best)].gcells_median)) {
        if (best >= 0) result.trials[std::size_t(best)].cubin.clear();  // keep one image only
        best = int(result.trials.size()) - 1;
      } else {
        t.cubin.clear();
      }
      if (progress) progress({TuneEvent::Kind::Measured, i, expected(), &t, elapsed()});
    }
  } catch (...) {
    try {
      store_winner();
    } catch (...) {  // the first failure is the one to report
    }
    throw;
  }
  store_winner();
  return result;
}

}  // namespace tbtune
