#include "tuner/spec/stencil.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

/// Offsets ordered (z, y, x), the order of `Stencil::points` and of the canonical terms.
struct ZyxLess {
  bool operator()(const Offset& a, const Offset& b) const {
    return std::tie(a[2], a[1], a[0]) < std::tie(b[2], b[1], b[0]);
  }
};

std::string num(double v) {
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

bool reads_u(const Expr& e) {
  if (e.kind == Expr::Kind::Access) return true;
  return std::any_of(e.args.begin(), e.args.end(), reads_u);
}

/// An expression affine in u: sum of coef[o] * u[o] plus a constant.
struct Affine {
  std::map<Offset, double, ZyxLess> coef;
  double constant = 0;

  void scale(double s, bool divide) {
    for (auto& [o, c] : coef) c = divide ? c / s : c * s;
    constant = divide ? constant / s : constant * s;
  }
  void add(const Affine& other, double sign) {
    for (const auto& [o, c] : other.coef) coef[o] += sign * c;
    constant += sign * other.constant;
  }
};

/// The affine form of `e`, or nothing when u appears under a call, a divisor or a product
/// of two u-dependent factors.
std::optional<Affine> affine(const Expr& e) {
  Affine out;
  if (!reads_u(e)) {
    out.constant = eval_const(e);
    return out;
  }
  switch (e.kind) {
    case Expr::Kind::Access: out.coef[e.offset] = 1; return out;
    case Expr::Kind::Neg: {
      auto a = affine(e.args[0]);
      if (a) a->scale(-1, false);
      return a;
    }
    case Expr::Kind::Add:
    case Expr::Kind::Sub: {
      auto a = affine(e.args[0]), b = affine(e.args[1]);
      if (!a || !b) return std::nullopt;
      a->add(*b, e.kind == Expr::Kind::Add ? 1 : -1);
      return a;
    }
    case Expr::Kind::Mul: {
      // Exactly one side reads u here (both would be quadratic).
      const bool left_u = reads_u(e.args[0]);
      if (left_u && reads_u(e.args[1])) return std::nullopt;
      auto a = affine(e.args[left_u ? 0 : 1]);
      if (a) a->scale(eval_const(e.args[left_u ? 1 : 0]), false);
      return a;
    }
    case Expr::Kind::Div: {
      if (reads_u(e.args[1])) return std::nullopt;
      auto a = affine(e.args[0]);
      // Divide (not multiply by the reciprocal), so "5*u/118" and "c: 5/118" agree to the bit.
      if (a) a->scale(eval_const(e.args[1]), true);
      return a;
    }
    default: return std::nullopt;
  }
}

/// Appends the tree fully parenthesised, numbers and parameter values as %.17g.
void print(const Expr& e, std::string& out) {
  auto bin = [&](char op) {
    out += '(';
    print(e.args[0], out);
    out += op;
    print(e.args[1], out);
    out += ')';
  };
  switch (e.kind) {
    case Expr::Kind::Number:
    case Expr::Kind::Param: out += num(e.value); return;
    case Expr::Kind::Access:
      out += "u[";
      for (std::size_t d = 0; d < 3; ++d) (out += d ? "," : "") += std::to_string(e.offset[d]);
      out += ']';
      return;
    case Expr::Kind::Neg:
      out += "(-";
      print(e.args[0], out);
      out += ')';
      return;
    case Expr::Kind::Add: return bin('+');
    case Expr::Kind::Sub: return bin('-');
    case Expr::Kind::Mul: return bin('*');
    case Expr::Kind::Div: return bin('/');
    case Expr::Kind::Call: break;
  }
  out += e.name;
  out += '(';
  for (std::size_t i = 0; i < e.args.size(); ++i) {
    if (i) out += ',';
    print(e.args[i], out);
  }
  out += ')';
}

int count_flops(const Expr& e) {
  int n = (e.kind == Expr::Kind::Number || e.kind == Expr::Kind::Param ||
           e.kind == Expr::Kind::Access)
              ? 0
              : 1;
  for (const Expr& a : e.args) n += count_flops(a);
  return n;
}

// Canonical form (what the cache key hashes):
//  - affine in u (every u access reachable only through +, -, unary -, and * or / by u-free
//    subtrees): "dims=D;" then one "dx,dy,dz:coef;" per offset in (z, y, x) order, coef the sum
//    of that offset's coefficients as %.17g, then "const:c;" when the constant part is nonzero.
//    Term order, grouping and expr-vs-points spelling vanish.
//    Offsets whose weights are zero or cancel stay, as "dx,dy,dz:0;": the radius counts every
//    offset the expression reads (the CPU reference and non-affine kernels read them all), and
//    the radius shapes the kernel (halo, boundary ring), so the key must change with it. Dropping
//    them from both instead would need a second, rewritten tree for the reference to evaluate.
//  - otherwise: "dims=D;expr=" + the fully parenthesised tree, params replaced by values.
std::string canonical_form(const Expr& expr, int dims) {
  std::string out = "dims=" + std::to_string(dims) + ";";
  const auto a = affine(expr);
  if (!a) {
    out += "expr=";
    print(expr, out);
    return out;
  }
  for (const auto& [o, c] : a->coef) {
    for (std::size_t d = 0; d < 3; ++d) (out += d ? "," : "") += std::to_string(o[d]);
    // -0 and 0 are the same weight; %.17g would print them apart.
    ((out += ':') += num(c == 0 ? 0.0 : c)) += ';';
  }
  if (a->constant != 0) out += "const:" + num(a->constant) + ";";
  return out;
}

std::optional<LinearForm> linear_form(const Expr& expr) {
  const auto a = affine(expr);
  if (!a) return std::nullopt;
  LinearForm f;
  for (const auto& [o, c] : a->coef)
    if (c != 0) f.terms.push_back({o, c});
  f.constant = a->constant;
  return f;
}

/// The parser rejects non-finite constants; folding finite ones into coefficients can still
/// overflow (1e300 * (1e300 * u[0,0])) or underflow a divisor's reciprocal (u[0,0] / 1e-320).
void check_finite(const LinearForm& f, const Spec& spec) {
  auto fail = [&](const std::string& what, double v) {
    throw SpecError(spec.path, spec.stencil_loc.line, spec.stencil_loc.col,
                    what + " is " + num(v) + " once the constants are folded; it must be finite");
  };
  for (const LinearForm::Term& t : f.terms) {
    if (std::isfinite(t.coef)) continue;
    std::string access = "the weight of u[";
    for (int d = 0; d < spec.dims; ++d) (access += d ? "," : "") += std::to_string(t.at[std::size_t(d)]);
    fail(access + "]", t.coef);
  }
  if (!std::isfinite(f.constant)) fail("the constant term", f.constant);
}

Shape classify(const std::vector<Offset>& points, int radius, int dims) {
  const bool star = std::all_of(points.begin(), points.end(), [](const Offset& o) {
    return (o[0] != 0) + (o[1] != 0) + (o[2] != 0) <= 1;
  });
  if (star) return Shape::Star;
  // Points are distinct and within the radius, so the box is full exactly when the count is.
  std::size_t box = 1;
  for (int d = 0; d < dims; ++d) box *= static_cast<std::size_t>(2 * radius + 1);
  return points.size() == box ? Shape::Box : Shape::General;
}

}  // namespace

const char* shape_name(Shape s) {
  switch (s) {
    case Shape::Star: return "star";
    case Shape::Box: return "box";
    case Shape::General: break;
  }
  return "general";
}

Stencil make_stencil(const Spec& spec) {
  Stencil s;
  s.name = spec.name;
  s.dims = spec.dims;
  s.expr = spec.expr;
  std::set<Offset, ZyxLess> seen;
  for_each_access(s.expr, [&](const Offset& o) { seen.insert(o); });
  s.points.assign(seen.begin(), seen.end());
  for (const Offset& o : s.points)
    for (int v : o) s.radius = std::max(s.radius, std::abs(v));
  s.flops = count_flops(s.expr);
  s.shape = classify(s.points, s.radius, s.dims);
  s.linear = linear_form(s.expr);
  if (s.linear) check_finite(*s.linear, spec);
  s.canonical = canonical_form(s.expr, s.dims);
  s.hash = hex64(fnv1a64(s.canonical));
  return s;
}

double Problem::interior_cells() const {
  const long r2 = 2L * stencil.radius;
  double cells = double(domain[0] - r2) * double(domain[1] - r2);
  if (dims() == 3) cells *= double(domain[2] - r2);
  return cells;
}

Problem make_problem(const Spec& spec) {
  Problem p;
  p.stencil = make_stencil(spec);
  p.dtype = spec.dtype;
  for (std::size_t d = 0; d < spec.domain.size() && d < 3; ++d) p.domain[d] = spec.domain[d];
  if (spec.dims == 2) p.domain[2] = 1;
  p.steps = spec.steps;
  return p;
}

std::uint64_t fnv1a64(std::string_view text) {
  std::uint64_t h = 0xcbf29ce484222325ULL;
  for (char c : text) {
    h ^= static_cast<unsigned char>(c);
    h *= 0x100000001b3ULL;
  }
  return h;
}

std::string hex64(std::uint64_t v) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace tbtune
