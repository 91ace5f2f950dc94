// libFuzzer target: arbitrary bytes as a sweep file (docs/sweeps.md). They are written into a
// scratch folder that also holds copies of configs/j2d5pt.yaml and configs/j3d7pt.yaml, so
// that paths and globs can resolve, and read with load_sweep. Any input may be refused with a
// tbtune::Error; nothing may crash or hang. Build and run: scripts/fuzz.sh.
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "tests/fuzz/scratch_dir.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/sweep/sweep_file.hpp"

namespace {

namespace fs = std::filesystem;

/// The scratch folder, made once per process with the two specs a sweep can name.
const fs::path& scratch() {
  static const fs::path dir = [] {
    const fs::path d = tbtune::fuzz::scratch_dir() / ("tbtune_sweep_fuzz_" + std::to_string(getpid()));
    fs::create_directories(d);
    std::atexit([] {
      std::error_code ec;
      fs::remove_all(scratch(), ec);
    });
    const char* src = std::getenv("TBTUNE_SOURCE_DIR");
    const fs::path configs = fs::path(src && *src ? src : ".") / "configs";
    for (const char* name : {"j2d5pt.yaml", "j3d7pt.yaml"})
      fs::copy_file(configs / name, d / name, fs::copy_options::overwrite_existing);
    return d;
  }();
  return dir;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const fs::path file = scratch() / "sweep.yaml";
  std::ofstream(file, std::ios::binary | std::ios::trunc)
      .write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  try {
    (void)tbtune::load_sweep(file.string());
  } catch (const tbtune::Error&) {
    // Refused with a message: fine.
  }
  return 0;
}
