#pragma once
// Where the fuzz targets put the files they write per input: $TMPDIR if set, else /dev/shm where
// it can be written, else the system's temporary folder. On tmpfs a file written per input, and
// SQLite's fsyncs, cost no disk I/O; on a disk they were most of an input's time. The files are
// read through the product's ordinary code either way.
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace tbtune::fuzz {

inline std::filesystem::path scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::error_code ec;
  if (!(tmp && *tmp) && ::access("/dev/shm", W_OK) == 0 && std::filesystem::is_directory("/dev/shm", ec))
    return "/dev/shm";
  return std::filesystem::temp_directory_path();
}

}  // namespace tbtune::fuzz
