// CPU benchmarks of the cache side of a lookup hit (docs/api.md, "Where a hit's time goes"): open
// the cache read-only, list the stencil's winners, match the key, read the winner with its CUBIN.
// No GPU: the key is matched against the stored device's fingerprint instead of the current one.
//   build/bench/cache_read_bench [--benchmark_filter=...] [--benchmark_repetitions=N]
// Each benchmark works on a cache made here, in a temporary folder: one winner of j2d5pt (a
// 200 KB CUBIN), the 40 trials of its tune, and 19 winners of other keys, in three states:
//   Quiet     nobody else has the file open (a lookup creates the -shm and -wal, as usual)
//   Writer    a tune is connected (another connection holds the -wal and -shm open)
//   Locked    folder and file read-only, no -shm (the file is opened immutable); root may write
//             anywhere, so run these as another user, e.g.
//             setpriv --reuid=65534 --regid=65534 --clear-groups cache_read_bench --benchmark_filter=Locked
// HitReadFresh opens a Cache per read (as lookup() did until the pool); HitReadPooled goes
// through lookup()'s pool of readers: First empties it each time (a process's first lookup of the
// file), Later reuses the connection the previous lookup gave back (every later lookup).
#include <benchmark/benchmark.h>

#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <memory>
#include <string>

#include "db/cache.hpp"
#include "tuner/api/key_match.hpp"
#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

namespace {

namespace fs = std::filesystem;
using namespace tbtune;

enum class State { Quiet, Writer, Locked };

struct Fixture {
  fs::path dir;
  std::string db;
  WantedKey want;
  std::unique_ptr<Cache> writer;  ///< State::Writer: a connected tune
};

DeviceRecord device() {
  DeviceRecord d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.cc_major = 9;
  d.sm_count = 132;
  d.memory_bytes = 80L << 30;
  d.driver_version = 13000;
  d.nvrtc_major = 13;
  return d;
}

Winner winner_of(const Stencil& s, const DeviceRecord& d, std::array<long, 3> domain, std::size_t cubin_bytes) {
  Winner w;
  w.key = WinnerKey{s.hash, d.fingerprint(), DType::Double, domain, steps_class(1000)};
  w.stencil_name = s.name;
  w.steps = 1000;
  w.trial.strategy = "smtile2d";
  w.trial.params = {{"t", 4}, {"tx", 64}, {"ty", 8}};
  w.trial.status = TrialStatus::Ok;
  w.trial.gcells_median = 300;
  w.trial.cubin.assign(cubin_bytes, '\0');
  for (std::size_t i = 0; i < cubin_bytes; ++i) w.trial.cubin[i] = char(i * 2654435761u >> 24);
  w.tool_version = "bench";
  return w;
}

std::unique_ptr<Fixture> g_made[3];

/// Made once per state and kept for the whole run (each benchmark repeats on the same file).
Fixture& fixture(State state) {
  auto& f = g_made[int(state)];
  if (f) return *f;
  f = std::make_unique<Fixture>();
  f->dir = fs::temp_directory_path() / ("tbtune_cache_read_bench_" + std::to_string(::getpid()) + "_" +
                                        std::to_string(int(state)));
  fs::remove_all(f->dir);
  fs::create_directories(f->dir);
  f->db = (f->dir / "tbtune.db").string();
  const Spec spec = load_spec(std::string(TBTUNE_SOURCE_DIR) + "/configs/j2d5pt.yaml");
  const Stencil stencil = make_stencil(spec);
  const Spec other_spec = load_spec(std::string(TBTUNE_SOURCE_DIR) + "/configs/j3d7pt.yaml");
  const Stencil other = make_stencil(other_spec);
  const DeviceRecord d = device();
  {
    Cache c(f->db, Cache::Mode::ReadWrite);
    c.put_device(d);
    c.put_stencil(stencil, spec.text);
    c.put_stencil(other, other_spec.text);
    for (long i = 0; i < 19; ++i) c.put_winner(winner_of(other, d, {64 + i, 64, 64}, 200'000));
    const Winner w = winner_of(stencil, d, {4096, 4096, 1}, 200'000);
    for (int i = 0; i < 40; ++i) {
      Trial t = w.trial;
      t.params["t"] = i;
      t.cubin.clear();
      c.add_trial(w.key, w.steps, t);
    }
    c.put_winner(w);
    f->want = WantedKey{stencil.hash, DType::Double, w.key.domain, w.key.steps_class,
                        split_fingerprint(d.fingerprint()).model, std::to_string(d.driver_version)};
  }
  if (state == State::Writer) f->writer = std::make_unique<Cache>(f->db, Cache::Mode::ReadWrite);
  if (state == State::Locked) {
    ::chmod(f->db.c_str(), 0444);
    ::chmod(f->dir.c_str(), 0555);
    // A pooled immutable reader needs a file last changed over a second ago (CacheReader).
    ::sleep(2);
  }
  return *f;
}

/// What a lookup hit does before it loads the CUBIN (tuner/api/lookup.cpp), on a new connection.
std::size_t read_hit_fresh(const Fixture& f) {
  std::error_code ec;
  if (!fs::exists(f.db, ec)) return 0;
  const Cache cache(f.db, Cache::Mode::ReadOnly);
  const std::vector<Winner> winners = cache.winners_of(f.want.stencil_hash);
  const MatchResult m = match(winners, f.want);
  if (m.reason != MissReason::None) return 0;
  const auto w = cache.winner(*m.hit);
  return w ? w->trial.cubin.size() : 0;
}

void BM_HitReadFresh(benchmark::State& st, State state) {
  const Fixture& f = fixture(state);
  if (read_hit_fresh(f) != 200'000) {
    st.SkipWithError("the stored winner was not found");
    return;
  }
  for (auto _ : st) benchmark::DoNotOptimize(read_hit_fresh(f));
}
BENCHMARK_CAPTURE(BM_HitReadFresh, Quiet, State::Quiet)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadFresh, Writer, State::Writer)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadFresh, Locked, State::Locked)->Unit(benchmark::kMicrosecond);

/// What lookup() does before it loads the CUBIN, through the process's pool of readers
/// (CacheReader). `first`: the pool is emptied first (its connection closed), as in a process's
/// first lookup of that file; otherwise the connection the last lookup gave back is reused.
std::size_t read_hit_pooled(const Fixture& f, bool first, bool& reused) {
  if (first) CacheReader::close_idle();
  std::error_code ec;
  if (!fs::exists(f.db, ec)) return 0;
  auto reader = CacheReader::acquire(f.db);
  reused = reader->reused();
  const std::vector<Winner> winners = reader->winners_of(f.want.stencil_hash);
  const MatchResult m = match(winners, f.want);
  if (m.reason != MissReason::None) return 0;
  const auto w = reader->winner(*m.hit);
  return w ? w->trial.cubin.size() : 0;
}

void BM_HitReadPooled(benchmark::State& st, State state, bool first) {
  const Fixture& f = fixture(state);
  bool reused = false;
  if (read_hit_pooled(f, first, reused) != 200'000) {
    st.SkipWithError("the stored winner was not found");
    return;
  }
  long reuses = 0;
  for (auto _ : st) {
    benchmark::DoNotOptimize(read_hit_pooled(f, first, reused));
    reuses += reused ? 1 : 0;
  }
  // Later lookups must all have reused the connection, first ones none.
  st.counters["reused"] = double(reuses) / double(st.iterations());
  CacheReader::close_idle();
}
BENCHMARK_CAPTURE(BM_HitReadPooled, First/Quiet, State::Quiet, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadPooled, First/Writer, State::Writer, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadPooled, First/Locked, State::Locked, true)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadPooled, Later/Quiet, State::Quiet, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadPooled, Later/Writer, State::Writer, false)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_HitReadPooled, Later/Locked, State::Locked, false)->Unit(benchmark::kMicrosecond);

/// Opening alone: the connection and the checks that come with it, nothing listed.
void BM_OpenReadOnly(benchmark::State& st, State state) {
  const Fixture& f = fixture(state);
  for (auto _ : st) {
    const Cache cache(f.db, Cache::Mode::ReadOnly);
    benchmark::DoNotOptimize(&cache);
  }
}
BENCHMARK_CAPTURE(BM_OpenReadOnly, Quiet, State::Quiet)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_OpenReadOnly, Writer, State::Writer)->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_OpenReadOnly, Locked, State::Locked)->Unit(benchmark::kMicrosecond);

}  // namespace

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  for (auto& f : g_made) {
    if (!f) continue;
    f->writer.reset();
    std::error_code ec;
    fs::permissions(f->dir, fs::perms::owner_all, ec);
    fs::remove_all(f->dir, ec);
  }
  return 0;
}
