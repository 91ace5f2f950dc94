#pragma once
/// @file spec.hpp
/// Reading a YAML stencil spec (format: README "Stencil spec") into a validated `Spec`.
#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "tuner/spec/expr.hpp"

namespace tbtune {

enum class DType { Float, Double };

[[nodiscard]] inline const char* dtype_name(DType t) { return t == DType::Float ? "float" : "double"; }
[[nodiscard]] inline int dtype_bytes(DType t) { return t == DType::Float ? 4 : 8; }

/// Limits shared by the spec and the command-line overrides (--domain, --steps), so both accept
/// the same problems. Kernels take extents and step counts as 32-bit ints.
inline constexpr long kMaxExtent = 2147483647;
inline constexpr long kMaxSteps = 2147483647;
/// Two arrays of 1e10 doubles are 160 GB, more than any GPU tbtune tunes holds.
inline constexpr double kMaxCells = 1e10;
/// Largest spec file read; real specs are a few hundred bytes (a full radius-8 3D box ~150 KB).
inline constexpr std::size_t kMaxSpecBytes = 1 << 20;

/// Why `extent` cannot be a domain extent for a radius-`radius` stencil, or "" when it can.
[[nodiscard]] std::string extent_problem(long extent, int radius);
/// Why a domain of `cells` cells is refused, or "" when it is not.
[[nodiscard]] std::string cells_problem(double cells);
/// Why `steps` cannot be a step count, or "" when it can.
[[nodiscard]] std::string steps_problem(long steps);

/// A parsed and validated spec. A `points:` list is turned into the equivalent expression
/// (a sum of c * u[...]), so everything downstream sees one form.
struct Spec {
  std::string name;
  int dims = 2;
  DType dtype = DType::Double;
  ParamMap params;
  Expr expr;
  std::vector<long> domain;   ///< nx, ny[, nz], boundary ring included; size == dims
  long steps = 1;
  std::string boundary = "dirichlet";
  SourceLoc stencil_loc;      ///< where `expr` or `points` starts, for errors found later
  std::string path;           ///< file it came from ("<string>" when parsed from memory)
  std::string text;           ///< the file's text, kept for the cache
};

/// Reads and validates the spec at `path`. Throws SpecError ("file:line:col: message"); a file
/// that cannot be read, or is larger than kMaxSpecBytes, throws a plain tbtune::Error
/// ("cannot read 'path': <why>").
[[nodiscard]] Spec load_spec(const std::string& path);

/// Parses spec text; `path` is used only in error messages.
[[nodiscard]] Spec parse_spec(std::string_view text, const std::string& path);

}  // namespace tbtune
