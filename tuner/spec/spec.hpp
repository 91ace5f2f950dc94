#pragma once
/// @file spec.hpp
/// Reading a YAML stencil spec (format: README "Stencil spec") into a validated `Spec`.
#include <string>
#include <string_view>
#include <vector>

#include "tuner/spec/expr.hpp"

namespace tbtune {

enum class DType { Float, Double };

[[nodiscard]] inline const char* dtype_name(DType t) { return t == DType::Float ? "float" : "double"; }
[[nodiscard]] inline int dtype_bytes(DType t) { return t == DType::Float ? 4 : 8; }

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
  std::string path;           ///< file it came from ("<string>" when parsed from memory)
  std::string text;           ///< the file's text, kept for the cache
};

/// Reads and validates the spec at `path`. Throws SpecError ("file:line:col: message"); a file
/// that cannot be read throws a plain tbtune::Error ("cannot read 'path': <strerror>").
[[nodiscard]] Spec load_spec(const std::string& path);

/// Parses spec text; `path` is used only in error messages.
[[nodiscard]] Spec parse_spec(std::string_view text, const std::string& path);

}  // namespace tbtune
