// libFuzzer target: arbitrary bytes as a cache file. They are written to a scratch file that
// is opened with the Cache API, read-only and then read-write, and looked up as `tbtune lookup`
// and `tbtune db list` would. Any input may be refused with a tbtune::Error; nothing may crash.
// Build and run: scripts/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "db/cache.hpp"
#include "tests/fuzz/scratch_dir.hpp"
#include "tuner/spec/error.hpp"

namespace {

/// One file per fuzzing process, removed (with SQLite's -wal and -shm) after every input.
const std::string& scratch_path() {
  static const std::string path =
      (tbtune::fuzz::scratch_dir() / ("tbtune_cache_fuzz_" + std::to_string(getpid()) + ".db")).string();
  return path;
}

void remove_scratch() {
  for (const char* suffix : {"", "-wal", "-shm", "-journal"})
    std::remove((scratch_path() + suffix).c_str());
}

/// Every read a lookup, `db list`, `db show` or `report` makes, with the file's own keys.
void look_up(const tbtune::Cache& cache) {
  (void)cache.tunes();
  for (const tbtune::Winner& w : cache.winners()) {
    (void)cache.winner(w.key);
    (void)cache.trials(w.key);
    (void)cache.profile(w.key.device_fingerprint);
    (void)cache.spec_text(w.key.stencil_hash);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  remove_scratch();
  if (std::FILE* f = std::fopen(scratch_path().c_str(), "wb")) {
    std::fwrite(data, 1, size, f);
    std::fclose(f);
  }
  for (const auto mode : {tbtune::Cache::Mode::ReadOnly, tbtune::Cache::Mode::ReadWrite}) {
    try {
      const tbtune::Cache cache(scratch_path(), mode);
      look_up(cache);
    } catch (const tbtune::Error&) {
      // A damaged or foreign file, refused with a message: fine.
    }
  }
  remove_scratch();
  return 0;
}
