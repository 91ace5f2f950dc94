#include "tuner/search/engine.hpp"

#include <chrono>
#include <ctime>
#include <fstream>
#include <future>
#include <map>
#include <mutex>

#include <fmt/format.h>

#include "tuner/gpu/verify.hpp"
#include "tuner/search/thread_pool.hpp"
#include "tuner/search/work_dir.hpp"
#include "tuner/spec/error.hpp"

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

struct Compiled {
  CompiledModule module;
  std::string path;  ///< the CUBIN as a file, for the worker
  Pruning pruning;   ///< prune_after_compile's verdict (none for the naive reference)
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

/// One run of the engine over a candidate list, in the steps of its algorithm: find the stored
/// trials to resume from, queue the compiles, then take the candidates in rank order (reuse a
/// stored trial, or compile, prune, verify and time) until the search has settled enough of
/// them, and store the fastest verified one as the winner.
class EngineRun {
 public:
  EngineRun(const Problem& problem, const WinnerKey& key,
            const std::vector<RankedCandidate>& candidates, Measurer& measurer, Cache& cache,
            const EngineOptions& options, const ProgressFn& progress)
      : problem_(problem), key_(key), candidates_(candidates), measurer_(measurer), cache_(cache),
        o_(options), progress_(progress), n_(int(candidates.size())),
        stored_(candidates.size()), dir_(options.work_dir),
        reference_path_(dir_.file("reference.bin")), compiled_(candidates.size()),
        queued_ahead_(candidates.size(), 0), pool_(options.compile_threads) {
    if (o_.max_timed > 0)
      for (int i = o_.max_timed + 1; i < n_; ++i) stand_ins_[candidate(i).strategy].push_back(i);
  }
  ~EngineRun() {
    if (!o_.stop_compiles) return;
    try {
      o_.stop_compiles();
    } catch (...) {  // the compiles then run to their end: slower, not wrong
    }
  }
  EngineRun(const EngineRun&) = delete;
  EngineRun& operator=(const EngineRun&) = delete;

  EngineResult run() {
    const bool anything_to_run = find_stored_trials();
    if (anything_to_run) queue_first_compiles();
    try {
      for (int i = 0; i < n_ && !search_settled(); ++i) {
        if (!needed(i)) continue;
        if (stored_[std::size_t(i)]) {
          reuse_stored_trial(i);
        } else if (stopped_or_out_of_budget()) {
          leave_out(i);
          continue;
        } else if (!try_candidate(i)) {
          leave_out(i);  // a stop came while its compile ran
          continue;
        }
        settle(i);
      }
    } catch (...) {
      // What was measured before the GPU side failed as a whole is kept.
      try {
        store_winner();
      } catch (...) {  // the first failure is the one to report
      }
      throw;
    }
    store_winner();
    return std::move(result_);
  }

 private:
  using clock = std::chrono::steady_clock;

  [[nodiscard]] double elapsed() const {
    return std::chrono::duration<double>(clock::now() - started_).count();
  }
  [[nodiscard]] const RankedCandidate& candidate(int i) const { return candidates_[std::size_t(i)]; }

  /// Resume: a candidate with a stored trial under the same key and step count is not run
  /// again. Skipped trials are not reused: pruning is cheap, and --allow-spills changes it.
  /// Returns whether any candidate before the stand-ins lacks a stored trial: a finished tune
  /// run again compiles nothing.
  bool find_stored_trials() {
    const int first_stand_in = o_.max_timed > 0 ? std::min(n_, 1 + o_.max_timed) : n_;
    bool any_to_run = false;
    for (int i = 0; i < n_; ++i) {
      const RankedCandidate& c = candidate(i);
      if (!o_.fresh)
        stored_[std::size_t(i)] = cache_.find_trial(key_, problem_.steps, c.strategy->name(), c.params);
      if (i < first_stand_in) any_to_run = any_to_run || !stored_[std::size_t(i)];
    }
    return any_to_run;
  }

  /// Whenever anything runs, the compiles of the candidates every search looks at are queued up
  /// front, in rank order, so they overlap the GPU timing; the naive one too, as its output is
  /// the reference. A stand-in's compile is queued as soon as a candidate of its strategy is
  /// known to be passed over: when that one's compile fails or prunes it (on the compiling
  /// thread), when its trial settles so (settle), or when the stand-in is reached. Queued up
  /// front as well, the stand-ins that no search needed took cores from those that were, and
  /// the tune waited at its end for the ones still compiling (docs/tuning.md).
  void queue_first_compiles() {
    const int last = o_.max_timed > 0 ? std::min(n_ - 1, o_.max_timed) : n_ - 1;
    for (int i = 0; i <= last; ++i)
      if (i == 0 || !stored_[std::size_t(i)]) queue_compile(i);
  }

  /// Queues candidate i's compile unless it is queued already (`ahead`: before any place needs
  /// it); called from the compiling threads too (stand_in_for).
  void queue_compile(int i, bool ahead = false) {
    const std::lock_guard lock(queue_mutex_);
    if (compiled_[std::size_t(i)].valid()) return;
    queued_ahead_[std::size_t(i)] = ahead;
    const RankedCandidate* c = &candidate(i);
    const std::string path = dir_.file(fmt::format("c{}.cubin", i));
    compiled_[std::size_t(i)] = pool_.submit([c, i, path, this] {
      Compiled out;
      try {
        out.module = o_.compile(c->strategy->source(problem_, c->params), o_.arch, o_.compile_cache_dir);
        out.path = path;
      } catch (...) {
        stand_in_for(i);  // a compile error passes the candidate over (try_candidate)
        throw;
      }
      if (i > 0) out.pruning = prune_after_compile(*c, out.module, o_.profile, o_.allow_spills);
      if (out.pruning.status != TrialStatus::Ok) stand_in_for(i);
      std::ofstream f(path, std::ios::binary);
      f.write(out.module.cubin.data(), std::streamsize(out.module.cubin.size()));
      if (!f) throw Error(fmt::format("cannot write '{}'", path));
      return out;
    });
  }

  /// Candidate i will be passed over: the next of its strategy's stand-ins not yet spoken for
  /// starts compiling, and with compile_ahead the ones after it too while threads are idle, so
  /// that where the one taking the place is passed over as well, the next is compiling already
  /// (j2d49pt's winner was a stand-in's stand-in, queued 20 s after the first). A call for a
  /// needed candidate answers one pass-over, so no more stand-ins compile than take places but
  /// those compiled ahead; one for a stand-in compiled ahead, which may never be needed, only
  /// compiles ahead, so that no needed compile queues behind speculative ones (if its place is
  /// reached, settle answers it). settle's own queueing of the same ones finds them queued.
  void stand_in_for(int i) {
    const auto it = stand_ins_.find(candidate(i).strategy);
    if (it == stand_ins_.end()) return;
    const std::vector<int>& list = it->second;
    int next = -1, spoken = 0;
    {
      const std::lock_guard lock(queue_mutex_);
      int& spoken_for = spoken_for_[candidate(i).strategy];
      if (!queued_ahead_[std::size_t(i)] && spoken_for < int(list.size()))
        next = list[std::size_t(spoken_for++)];
      spoken = spoken_for;
    }
    if (next >= 0 && !stored_[std::size_t(next)]) queue_compile(next);
    for (int k = spoken; k < std::min(int(list.size()), spoken + o_.compile_ahead) && pool_.idle() > 0; ++k)
      if (!stored_[std::size_t(list[std::size_t(k)])]) queue_compile(list[std::size_t(k)], true);
  }

  /// Whether candidate i is to be looked at: every one before the stand-ins; a stand-in only
  /// while a candidate of its own strategy was passed over and not yet replaced, so that a
  /// strategy whose best shapes spill is still timed (its next shapes) rather than losing its
  /// places to another strategy's.
  bool needed(int i) {
    if (o_.max_timed <= 0 || i <= o_.max_timed) return true;
    Places& p = places_[candidate(i).strategy];
    if (p.taken >= p.passed_over) return false;
    ++p.taken;
    return true;
  }

  /// Where candidate i stands among those looked at (0: naive), for the progress display.
  [[nodiscard]] int position() const { return int(result_.trials.size()); }

  /// With stand-ins, the search ends once max_timed candidates are settled.
  [[nodiscard]] bool search_settled() const { return o_.max_timed > 0 && settled_ >= o_.max_timed; }

  /// What the progress display counts to: every candidate, or with stand-ins the ones that will
  /// have been looked at once max_timed are settled.
  [[nodiscard]] int expected() const {
    if (o_.max_timed <= 0) return n_;
    int more = 0;  // the stand-ins that will be looked at: one per place passed over, while any
    for (const auto& [strategy, p] : places_) more += std::min(p.passed_over, stand_ins_of(strategy));
    return std::min(n_, 1 + o_.max_timed + more);
  }

  /// Counts candidate i's outcome in the tally, which leaves out the naive reference: it is not
  /// part of any search.
  void count(int i, int SearchTally::*outcome) {
    if (i > 0) ++(result_.tally.*outcome);
  }

  void reuse_stored_trial(int i) {
    Trial t = *stored_[std::size_t(i)];
    t.reused = true;
    ++result_.reused;
    count(i, &SearchTally::reused);
    result_.trials.push_back(std::move(t));
  }

  /// A stop request or the spent budget: once set, every candidate still to run is left out.
  bool stopped_or_out_of_budget() {
    if (o_.stop && o_.stop->load()) result_.interrupted = true;
    if (o_.budget_s > 0 && elapsed() >= o_.budget_s) result_.out_of_budget = true;
    return result_.interrupted || result_.out_of_budget;
  }

  void leave_out(int i) {
    ++result_.not_run;
    count(i, &SearchTally::not_run);
    if (i > 0) ++settled_;
  }

  /// Runs the naive kernel, whose output becomes the reference the others are verified against.
  MeasureOutcome run_reference(Compiled& naive) {
    MeasureJob job{0, &candidates_.front(), naive.path, naive.module.log, true, reference_path_};
    MeasureOutcome out = measurer_.measure(job);
    if (out.status != TrialStatus::Ok)
      throw Error("the naive reference kernel failed, so nothing can be verified: " + out.message);
    reference_ready_ = true;
    return out;
  }

  /// The reference for a candidate run after a resumed (reused) naive trial: run naive now.
  void ensure_reference() {
    if (reference_ready_) return;
    if (!naive_) {
      queue_compile(0);
      naive_ = compiled_.front().get();
    }
    (void)run_reference(*naive_);
  }

  /// Waits for candidate i's compile, or until a stop request comes: then it ends the compiles
  /// (stop_compiles) and returns false, so that a Ctrl-C during a long compile (a large wpipe3d
  /// module takes 10-30 s) stops the tune at once rather than after that compile.
  bool compiled_or_stopped(int i) {
    if (!o_.stop) return true;
    const std::future<Compiled>& f = compiled_[std::size_t(i)];
    while (f.wait_for(std::chrono::milliseconds(50)) != std::future_status::ready)
      if (o_.stop->load()) {
        result_.interrupted = true;
        if (o_.stop_compiles) {
          try {
            o_.stop_compiles();
          } catch (...) {  // the compiles then run to their end (the thread pool waits for them)
          }
        }
        return false;
      }
    return true;
  }

  /// Waits for candidate i's compile; a compile failure becomes the trial's status.
  std::optional<Compiled> wait_for_compile(int i, Trial& t) {
    try {
      return compiled_[std::size_t(i)].get();
    } catch (const CompileError& e) {
      t.status = TrialStatus::CompileError;
      t.message = e.what() + std::string("\n") + e.log();
    } catch (const Error& e) {
      if (i == 0) throw;
      t.status = TrialStatus::CompileError;
      t.message = e.what();
    }
    count(i, &SearchTally::compile_errors);
    return std::nullopt;
  }

  /// Compiles, prunes, verifies and times candidate i, and stores its trial; false (nothing
  /// stored) when a stop request came while it compiled.
  bool try_candidate(int i) {
    const RankedCandidate& c = candidate(i);
    if (progress_) progress_({TuneEvent::Kind::Start, position(), expected(), nullptr, elapsed()});
    queue_compile(i);
    if (!compiled_or_stopped(i)) return false;
    Trial t = base_trial(c);
    std::optional<Compiled> cc = wait_for_compile(i, t);
    if (cc) {
      const Pruning& pr = cc->pruning;
      if (pr.status != TrialStatus::Ok) {
        count(i, &SearchTally::pruned);
        t.status = pr.status;
        t.message = pr.message;
        const auto& k = cc->module.kernels.at(kFullKernel);
        t.registers = k.registers;
        t.spill_bytes = k.spill_bytes();
        t.smem_bytes = k.smem_bytes;
      } else if (i == 0) {
        take_measurement(t, run_reference(*cc).measurement, problem_, false);
      } else {
        ensure_reference();
        count(i, &SearchTally::timed);
        const MeasureOutcome out =
            measurer_.measure({i, &c, cc->path, cc->module.log, false, reference_path_});
        if (out.status == TrialStatus::Ok) {
          take_measurement(t, out.measurement, problem_, true);
        } else {
          t.status = out.status;
          t.message = out.message;
        }
      }
    }
    if (i == 0 && t.status != TrialStatus::Ok)
      throw Error("the naive reference kernel failed, so nothing can be verified: " + t.message);
    cache_.add_trial(key_, problem_.steps, t);  // its own transaction: kill -9 loses only the next
    if (t.status == TrialStatus::Ok && cc) t.cubin = cc->module.cubin;
    result_.trials.push_back(std::move(t));
    return true;
  }

  /// Counts candidate i's trial as settled or passed over (one more of its strategy stands in
  /// for it, if the list holds one), keeps it as the best so far if it is the fastest verified
  /// one, and reports it.
  void settle(int i) {
    Trial& t = result_.trials.back();
    if (i > 0) {
      const bool passed = t.status == TrialStatus::Skipped || t.status == TrialStatus::Resources ||
                          t.status == TrialStatus::CompileError;
      if (passed) {
        // The stand-in that takes this place (needed) compiles from now, if not already.
        const Strategy* s = candidate(i).strategy;
        const int owed = ++places_[s].passed_over;
        if (owed <= stand_ins_of(s)) {
          const int next = stand_ins_.at(s)[std::size_t(owed - 1)];
          if (!stored_[std::size_t(next)]) queue_compile(next);
        }
      } else {
        ++settled_;
      }
    }
    if (t.status == TrialStatus::Ok &&
        (best_ < 0 || t.gcells_median > result_.trials[std::size_t(best_)].gcells_median)) {
      if (best_ >= 0) result_.trials[std::size_t(best_)].cubin.clear();  // keep one image only
      best_ = int(result_.trials.size()) - 1;
    } else {
      t.cubin.clear();
    }
    if (progress_) progress_({TuneEvent::Kind::Measured, position() - 1, expected(), &t, elapsed()});
  }

  /// Stores the fastest verified trial as the winner (unless a faster stored one is kept).
  void store_winner() {
    if (best_ < 0) return;
    Trial& w = result_.trials[std::size_t(best_)];
    if (w.cubin.empty()) {
      // A reused winner: the cache keeps no image with trials, so build it again (usually a
      // hit in the CUBIN folder).
      const Strategy* s = find_strategy(w.strategy);
      if (!s) throw Error(fmt::format("stored trial names unknown strategy '{}'", w.strategy));
      w.cubin = o_.compile(s->source(problem_, w.params), o_.arch, o_.compile_cache_dir).cubin;
    }
    result_.winner = Winner{key_, problem_.stencil.name, problem_.steps, w, TBTUNE_VERSION, utc_now()};
    if (o_.keep_faster_winner) {
      auto previous = cache_.winner(key_);
      if (previous && previous->trial.gcells_median > w.gcells_median) {
        result_.kept = std::move(previous);
        return;
      }
    }
    cache_.put_winner(*result_.winner);
  }

  const Problem& problem_;
  const WinnerKey& key_;
  const std::vector<RankedCandidate>& candidates_;
  Measurer& measurer_;
  Cache& cache_;
  const EngineOptions& o_;
  const ProgressFn& progress_;
  const int n_;
  const clock::time_point started_ = clock::now();
  EngineResult result_;
  std::vector<std::optional<Trial>> stored_;
  WorkDir dir_;
  const std::string reference_path_;
  bool reference_ready_ = false;
  std::optional<Compiled> naive_;  // kept for a later reference run when naive itself is reused
  int best_ = -1;                  // index into result_.trials of the fastest verified trial
  // Candidates (naive left out) that went to the GPU, now or in a stored trial, or that a stop or
  // the budget left out.
  int settled_ = 0;
  // Per strategy: its candidates passed over (each owed one more place), and the stand-ins
  // that took those places.
  struct Places {
    int passed_over = 0, taken = 0;
  };
  std::map<const Strategy*, Places> places_;
  // Per strategy, its stand-ins' places in the list, in order (not changed after construction:
  // the compiling threads read it).
  std::map<const Strategy*, std::vector<int>> stand_ins_;
  [[nodiscard]] int stand_ins_of(const Strategy* s) const {
    const auto it = stand_ins_.find(s);
    return it == stand_ins_.end() ? 0 : int(it->second.size());
  }
  // Guards compiled_, queued_ahead_ and spoken_for_ (the stand-ins queued by stand_in_for, per
  // strategy).
  std::mutex queue_mutex_;
  std::map<const Strategy*, int> spoken_for_;
  std::vector<std::future<Compiled>> compiled_;
  std::vector<char> queued_ahead_;  // per candidate: its compile was queued ahead of need
  // Declared last, so it is destroyed (pending tasks dropped, running ones joined) before the
  // futures, folder and options its tasks use.
  ThreadPool pool_;
};

}  // namespace

EngineResult run_engine(const Problem& problem, const WinnerKey& key,
                        const std::vector<RankedCandidate>& candidates, Measurer& measurer,
                        Cache& cache, const EngineOptions& options, const ProgressFn& progress) {
  if (candidates.empty() || candidates.front().strategy->name() != "naive")
    throw Error("the engine needs the naive reference as its first candidate");
  return EngineRun(problem, key, candidates, measurer, cache, options, progress).run();
}

}  // namespace tbtune
