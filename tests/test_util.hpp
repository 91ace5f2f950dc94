#pragma once
// Helpers shared by the tests that need the shipped configs.
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "tuner/spec/spec.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune::test {

/// The source tree: $TBTUNE_SOURCE_DIR when set (test binaries copied to a GPU machine), else
/// where they were built from.
inline std::string source_dir() {
  const char* env = std::getenv("TBTUNE_SOURCE_DIR");
  return env && *env ? env : TBTUNE_SOURCE_DIR;
}

/// Every configs/*.yaml, sorted.
inline std::vector<std::string> config_paths() {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(source_dir() + "/configs"))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// The config at `path` as a problem with the given dtype, domain and steps.
inline Problem small_problem(const std::string& path, DType dtype, std::array<long, 3> domain, long steps) {
  Problem p = make_problem(load_spec(path));
  p.dtype = dtype;
  p.domain = domain;
  if (p.dims() == 2) p.domain[2] = 1;
  p.steps = steps;
  return p;
}

// The stencil of a spec with expression `expr` (double, a small domain), for tests of the
// stencil analyses.
inline Stencil stencil_of(const std::string& expr, int dims = 2) {
  const std::string domain = dims == 2 ? "[20, 30]" : "[20, 30, 40]";
  return make_stencil(parse_spec("name: t\ndims: " + std::to_string(dims) + "\ndtype: double\nexpr: \"" + expr +
                                     "\"\ndomain: " + domain + "\nsteps: 3\n",
                                 "mem.yaml"));
}

}  // namespace tbtune::test
