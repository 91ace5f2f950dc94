#include "tuner/spec/spec.hpp"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>

#include "tuner/spec/error.hpp"
#include "tuner/spec/scalar_pos.hpp"
#include "tuner/spec/yaml_text.hpp"

namespace tbtune {
namespace {

constexpr const char* kKeys[] = {"name",   "dims",   "dtype", "expr",    "points",
                                 "params", "domain", "steps", "boundary"};

/// Levenshtein distance with adjacent transpositions ("stpes" is one edit from "steps").
int edit_distance(std::string_view a, std::string_view b) {
  const std::size_t w = b.size() + 1;
  std::vector<int> d((a.size() + 1) * w);  // row i, column j at d[i * w + j]
  for (std::size_t i = 0; i <= a.size(); ++i) d[i * w] = static_cast<int>(i);
  for (std::size_t j = 0; j <= b.size(); ++j) d[j] = static_cast<int>(j);
  for (std::size_t i = 1; i <= a.size(); ++i)
    for (std::size_t j = 1; j <= b.size(); ++j) {
      int& x = d[i * w + j];
      x = std::min({d[(i - 1) * w + j] + 1, d[i * w + j - 1] + 1,
                    d[(i - 1) * w + j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        x = std::min(x, d[(i - 2) * w + j - 2] + 1);
    }
  return d[a.size() * w + b.size()];
}

bool is_identifier(const std::string& s) {
  if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

/// Validation of one document; every failure is a SpecError at a node's mark.
class Reader {
 public:
  Reader(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& message) const {
    if (m.is_null()) throw SpecError(path_, 1, 1, message);
    throw SpecError(path_, m.line + 1, m.column + 1, message);
  }

  /// The value's mark, or its key's when the value is empty (yaml-cpp marks the next token).
  YAML::Mark mark(const std::string& key) const {
    const YAML::Node v = root_[key];
    return v.IsNull() ? keys_.at(key) : v.Mark();
  }

  static std::string shown(const YAML::Node& n) {
    if (n.IsScalar()) return "'" + printable(n.Scalar()) + "'";
    if (n.IsSequence()) return "a list";
    if (n.IsMap()) return "a map";
    return "nothing";
  }

  /// A strict decimal integer (no hex, no fraction), or false.
  static bool to_long(const YAML::Node& n, long& out) {
    if (!n.IsScalar()) return false;
    std::string s = n.Scalar();
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty();
  }

  /// A finite decimal number, or false.
  static bool to_double(const YAML::Node& n, double& out) {
    if (!n.IsScalar()) return false;
    std::string s = n.Scalar();
    if (!s.empty() && s[0] == '+') s.erase(0, 1);
    const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
    return ec == std::errc() && ptr == s.data() + s.size() && !s.empty() && std::isfinite(out);
  }

  Spec read(const YAML::Node& root) {
    root_ = root;
    if (!root.IsDefined() || root.IsNull()) throw SpecError(path_, 1, 1, "file is empty");
    if (!root.IsMap())
      fail(root.Mark(), "the top level must be a map of keys (name: ..., dims: ..., ...), got " +
                            shown(root));
    check_keys();
    Spec spec;
    spec.path = path_;
    spec.text = std::string(text_);
    spec.name = read_name();
    spec.dims = read_dims();
    spec.dtype = read_dtype();
    if (root["boundary"] && root["boundary"].Scalar() != "dirichlet")
      fail(mark("boundary"), "'boundary' must be dirichlet (the only one supported), got " +
                                 shown(root["boundary"]));
    spec.params = read_params();
    spec.expr = root["expr"] ? read_expr(spec.params, spec.dims) : read_points(spec.dims);
    spec.stencil_loc = stencil_loc_;
    int radius = 0;
    for_each_access(spec.expr, [&](const Offset& o) {
      for (int v : o) radius = std::max(radius, std::abs(v));
    });
    spec.domain = read_domain(spec.dims, radius);
    long steps = 0;
    if (!to_long(root["steps"], steps) || steps < 1)
      fail(mark("steps"), "'steps' must be an integer >= 1, got " + shown(root["steps"]));
    if (const std::string why = steps_problem(steps); !why.empty())
      fail(mark("steps"), "'steps': " + why);
    spec.steps = steps;
    return spec;
  }

 private:
  void check_keys() {
    for (auto it = root_.begin(); it != root_.end(); ++it) {
      // A copy: `it->first` lives in a temporary that dies at the end of this statement.
      const YAML::Node k = it->first;
      if (!k.IsScalar()) fail(k.Mark(), "keys must be plain names, got " + shown(k));
      const std::string key = printable(k.Scalar());
      if (const auto seen = keys_.find(key); seen != keys_.end())
        fail(k.Mark(), "duplicate key '" + key + "' (first at line " +
                           std::to_string(seen->second.line + 1) + ")");
      keys_.emplace(key, k.Mark());
      if (std::find(std::begin(kKeys), std::end(kKeys), key) != std::end(kKeys)) continue;
      std::string msg = "unknown key '" + key + "' (expected one of:";
      std::string best;
      int best_d = 3;
      for (const char* known : kKeys) {
        msg += std::string(known == kKeys[0] ? " " : ", ") + known;
        // The distance is at least the difference in length, so a long key is not compared.
        const std::size_t n = std::string_view(known).size();
        if ((key.size() > n ? key.size() - n : n - key.size()) >= static_cast<std::size_t>(best_d))
          continue;
        if (const int d = edit_distance(key, known); d < best_d) best_d = d, best = known;
      }
      msg += ")";
      if (!best.empty()) msg += "; did you mean '" + best + "'?";
      fail(k.Mark(), msg);
    }
    for (const char* required : {"name", "dims", "dtype", "domain", "steps"})
      if (!keys_.count(required))
        fail(root_.Mark(), std::string("missing required key '") + required + "'");
    const bool has_expr = keys_.count("expr") != 0, has_points = keys_.count("points") != 0;
    if (has_expr && has_points) {
      const YAML::Mark& e = keys_.at("expr");
      const YAML::Mark& p = keys_.at("points");
      fail(e.pos > p.pos ? e : p, "give either 'expr' or 'points', not both");
    }
    if (!has_expr && !has_points)
      fail(root_.Mark(), "missing the stencil: give 'expr' (an expression) or 'points' (a list)");
  }

  std::string read_name() const {
    const YAML::Node n = root_["name"];
    const std::string s = n.IsScalar() ? n.Scalar() : "";
    const bool ok = !s.empty() && std::all_of(s.begin(), s.end(), [](char c) {
      return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-';
    });
    if (!ok || s.size() > 64)
      fail(mark("name"), "'name' must be 1 to 64 of [A-Za-z0-9_-], got " + shown(n));
    return s;
  }

  int read_dims() const {
    long d = 0;
    if (!to_long(root_["dims"], d) || d < 2 || d > 3)
      fail(mark("dims"), "'dims' must be 2 or 3, got " + shown(root_["dims"]));
    return static_cast<int>(d);
  }

  DType read_dtype() const {
    const YAML::Node n = root_["dtype"];
    if (n.IsScalar() && n.Scalar() == "float") return DType::Float;
    if (n.IsScalar() && n.Scalar() == "double") return DType::Double;
    fail(mark("dtype"), "'dtype' must be float or double, got " + shown(n));
  }

  ParamMap read_params() const {
    ParamMap params;
    const YAML::Node n = root_["params"];
    if (!n) return params;
    if (!n.IsMap()) fail(mark("params"), "'params' must be a map of name: number, got " + shown(n));
    for (auto it = n.begin(); it != n.end(); ++it) {
      const std::string name = it->first.IsScalar() ? it->first.Scalar() : "";
      if (!is_identifier(name) || name == "u" || function_arity(name) >= 0)
        fail(it->first.Mark(), "parameter name '" + printable(name) +
                                   "' must be an identifier other than u and the function names");
      if (params.count(name))
        fail(it->first.Mark(), "duplicate parameter '" + name + "'");
      double v = 0;
      if (!to_double(it->second, v))
        fail(it->second.IsNull() ? it->first.Mark() : it->second.Mark(),
             "parameter '" + name + "' must be a finite number, got " + shown(it->second));
      params.emplace(name, v);
    }
    return params;
  }

  Expr read_expr(const ParamMap& params, int dims) {
    const YAML::Node n = root_["expr"];
    if (!n.IsScalar()) fail(mark("expr"), "'expr' must be a string, got " + shown(n));
    const std::string& s = n.Scalar();
    const YAML::Mark m = n.Mark();
    stencil_loc_ = SourceLoc{path_, m.line + 1, m.column + 1};
    const auto pos = detail::scalar_positions(text_, m.line, m.column, s);
    if (pos.empty()) {
      // Unhandled scalar style: point relative to the token (past a quote if there is one).
      const std::size_t p = static_cast<std::size_t>(m.pos);
      const bool quoted = p < text_.size() && (text_[p] == '"' || text_[p] == '\'');
      return parse_expr(s, params, dims, SourceLoc{path_, m.line + 1, m.column + 1 + quoted});
    }
    try {
      return parse_expr(s, params, dims, SourceLoc{path_, 1, 1});
    } catch (const SpecError& e) {
      // Back from (line, col) in the value to the index, then to the file position.
      std::size_t i = 0;
      for (int l = 1; l < e.line(); ++l) i = s.find('\n', i) + 1;
      i = std::min(i + static_cast<std::size_t>(e.col() - 1), s.size());
      throw SpecError(path_, pos[i].line, pos[i].col, e.message());
    }
  }

  Expr read_points(int dims) {
    const YAML::Node n = root_["points"];
    if (!n.IsSequence() || n.size() == 0)
      fail(mark("points"), "'points' must be a non-empty list of {at: [dx, dy" +
                               std::string(dims == 3 ? ", dz" : "") + "], c: number}");
    stencil_loc_ = SourceLoc{path_, n.Mark().line + 1, n.Mark().column + 1};
    Expr sum;
    std::map<Offset, int> seen;
    for (std::size_t i = 0; i < n.size(); ++i) {
      const YAML::Node p = n[i];
      if (!p.IsMap()) fail(p.Mark(), "each point must be a map {at: [...], c: number}, got " + shown(p));
      for (auto it = p.begin(); it != p.end(); ++it)
        if (!it->first.IsScalar() || (it->first.Scalar() != "at" && it->first.Scalar() != "c"))
          fail(it->first.Mark(), "unknown key " + shown(it->first) + " in a point (expected at, c)");
      const YAML::Node at = p["at"];
      if (!at.IsSequence() || at.size() != static_cast<std::size_t>(dims))
        fail(at ? at.Mark() : p.Mark(), "'at' must list " + std::to_string(dims) +
                                            " integer offsets, got " + shown(at));
      Expr access;
      access.kind = Expr::Kind::Access;
      for (std::size_t d = 0; d < at.size(); ++d) {
        long v = 0;
        if (!to_long(at[d], v)) fail(at[d].Mark(), "offset must be an integer, got " + shown(at[d]));
        // Compared both ways: std::abs(LONG_MIN) overflows.
        if (v < -kMaxRadius || v > kMaxRadius)
          fail(at[d].Mark(), "offset " + std::to_string(v) + " exceeds the maximum radius " +
                                 std::to_string(kMaxRadius));
        access.offset[d] = static_cast<int>(v);
      }
      if (const auto [it, fresh] = seen.emplace(access.offset, p.Mark().line + 1); !fresh)
        fail(p.Mark(), "duplicate point (first at line " + std::to_string(it->second) + ")");
      Expr coef;
      if (!to_double(p["c"], coef.value))
        fail(p["c"] ? p["c"].Mark() : p.Mark(), "'c' must be a finite number, got " + shown(p["c"]));
      Expr term;
      term.kind = Expr::Kind::Mul;
      term.args.push_back(std::move(coef));
      term.args.push_back(std::move(access));
      if (i == 0) {
        sum = std::move(term);
        continue;
      }
      // push_back, not `args = {...}`: an initializer list would copy the whole sum each time.
      Expr add;
      add.kind = Expr::Kind::Add;
      add.args.reserve(2);
      add.args.push_back(std::move(sum));
      add.args.push_back(std::move(term));
      sum = std::move(add);
    }
    return sum;
  }

  std::vector<long> read_domain(int dims, int radius) const {
    const YAML::Node n = root_["domain"];
    const char* names = dims == 2 ? "nx, ny" : "nx, ny, nz";
    if (!n.IsSequence() || n.size() != static_cast<std::size_t>(dims))
      fail(mark("domain"), "'domain' must list " + std::to_string(dims) + " extents (" + names +
                               ") for a " + std::to_string(dims) + "D stencil, got " +
                               (n.IsSequence() ? std::to_string(n.size()) : shown(n)));
    std::vector<long> out;
    double cells = 1;
    for (std::size_t d = 0; d < n.size(); ++d) {
      long v = 0;
      if (!to_long(n[d], v) || v < 1)
        fail(n[d].Mark(), "domain extents must be positive integers, got " + shown(n[d]));
      if (const std::string why = extent_problem(v, radius); !why.empty())
        fail(n[d].Mark(), why);
      cells *= double(v);
      out.push_back(v);
    }
    if (const std::string why = cells_problem(cells); !why.empty())
      fail(mark("domain"), "'domain': " + why);
    return out;
  }

  std::string_view text_;
  const std::string& path_;
  YAML::Node root_;
  std::map<std::string, YAML::Mark> keys_;
  SourceLoc stencil_loc_;  ///< set by read_expr / read_points
};

}  // namespace

Spec parse_spec(std::string_view text, const std::string& path) {
  // A NUL or other control byte first, at its own line:col: yaml-cpp misreads the text around it.
  if (const auto bad = find_control_byte(text, "spec")) throw SpecError(path, bad->line, bad->col, bad->message);
  // yaml-cpp reports problems as exceptions with a mark; none may leave this function raw.
  try {
    const std::string copy(text);
    const YAML::Node root = YAML::Load(copy);
    if (const auto second = find_second_document(copy, "spec"))
      throw SpecError(path, second->line, second->col, second->message);
    return Reader(text, path).read(root);
  } catch (const YAML::Exception& e) {
    if (e.mark.is_null()) throw SpecError(path, 1, 1, "invalid YAML: " + e.msg);
    throw SpecError(path, e.mark.line + 1, e.mark.column + 1, "invalid YAML: " + e.msg);
  }
}

// An unreadable file is not a spec problem with a position: it throws a plain tbtune::Error
// ("cannot read 'path': <why>"), also when it is larger than a spec may be.
Spec load_spec(const std::string& path) { return parse_spec(read_bounded(path, kMaxSpecBytes, "spec"), path); }

std::string extent_problem(long extent, int radius) {
  if (extent <= 2L * radius)
    return "domain extent " + std::to_string(extent) + " is too small for radius " +
           std::to_string(radius) + ": it must be > " + std::to_string(2 * radius) +
           " (at least one interior cell)";
  if (extent > kMaxExtent)
    return "domain extent " + std::to_string(extent) + " is too large: at most " +
           std::to_string(kMaxExtent);
  return "";
}

std::string cells_problem(double cells) {
  if (cells > kMaxCells) return "too large: more than 1e10 cells";
  return "";
}

std::string steps_problem(long steps) {
  if (steps < 1) return "must be at least 1, got " + std::to_string(steps);
  if (steps > kMaxSteps)
    return "must be at most " + std::to_string(kMaxSteps) + ", got " + std::to_string(steps);
  return "";
}

}  // namespace tbtune
