#include "tuner/codegen/codegen.hpp"

#include <algorithm>
#include <map>
#include <tuple>
#include <vector>

#include <fmt/format.h>

#include "tuner/codegen/templates.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/fold_rows.hpp"
#include "tuner/spec/row_factors.hpp"

namespace tbtune {
namespace {

// Whitelisted functions map to overloads defined in templates/common.cuh, so float stencils
// stay in float arithmetic.
std::string device_function(const std::string& name) {
  if (name == "sqrt" || name == "exp" || name == "log" || name == "sin" || name == "cos" ||
      name == "tanh" || name == "abs" || name == "min" || name == "max" || name == "pow") {
    return "tb_" + name;
  }
  throw Error("internal: function '" + name + "' has no CUDA mapping");
}

std::string number(double v) {
  // %.17g round-trips a double; the cast keeps float stencils in float.
  return fmt::format("real({:.17g})", v);
}

void print(const Expr& e, std::string& out) {
  using K = Expr::Kind;
  switch (e.kind) {
    case K::Number:
    case K::Param: out += number(e.value); return;
    case K::Access:
      out += fmt::format("u({}, {}, {})", e.offset[0], e.offset[1], e.offset[2]);
      return;
    case K::Neg:
      out += "(-";
      print(e.args.at(0), out);
      out += ")";
      return;
    case K::Add:
    case K::Sub:
    case K::Mul:
    case K::Div: {
      const char* op = e.kind == K::Add ? " + " : e.kind == K::Sub ? " - " : e.kind == K::Mul ? " * " : " / ";
      out += "(";
      print(e.args.at(0), out);
      out += op;
      print(e.args.at(1), out);
      out += ")";
      return;
    }
    case K::Call: {
      out += device_function(e.name) + "(";
      for (std::size_t i = 0; i < e.args.size(); ++i) {
        if (i) out += ", ";
        print(e.args[i], out);
      }
      out += ")";
      return;
    }
  }
}

const std::string& template_text(const std::string& name) {
  const std::string* text = embedded_template(name);
  if (!text) throw Error("internal: no kernel template '" + name + "'");
  return *text;
}

// The order every generated kernel sums an affine stencil's terms in: by (dz, dx), then dy.
// `apply` and `apply_rows` both follow it, so a candidate and the naive kernel round the same
// way and agree to the bit (all but wpipe2d's sep and fold, which sum a separable stencil's
// factors and a symmetric one's mirrored rows first: tuner/spec/row_factors.hpp and
// fold_rows.hpp): an unstable stencil (j3d7pt amplifies its highest mode 1.3x per step) would
// otherwise turn a different rounding into a visible difference.
std::vector<LinearForm::Term> column_order(const LinearForm& f) {
  std::vector<LinearForm::Term> terms = f.terms;
  std::stable_sort(terms.begin(), terms.end(), [](const auto& a, const auto& b) {
    return std::tie(a.at[2], a.at[0], a.at[1]) < std::tie(b.at[2], b.at[0], b.at[1]);
  });
  return terms;
}

// The affine form as one accumulation: a product, then explicit fused multiply-adds. Left to
// contraction, `c0*u0 + c1*u1` may fuse either product; explicit FMAs make every kernel round
// the same way whatever order its terms arrive in (sum mode gets them a plane at a time).
std::string linear_body(const LinearForm& f) {
  std::string out;
  const auto terms = column_order(f);
  for (std::size_t i = 0; i < terms.size(); ++i) {
    const auto& t = terms[i];
    const std::string access = fmt::format("u({}, {}, {})", t.at[0], t.at[1], t.at[2]);
    out += i == 0 ? fmt::format("    real acc = {} * {};\n", number(t.coef), access)
                  : fmt::format("    acc = tb_fma({}, {}, acc);\n", number(t.coef), access);
  }
  if (f.terms.empty()) out += "    real acc = real(0);\n";
  if (f.constant != 0) out += "    acc += " + number(f.constant) + ";\n";
  return out + "    return acc;\n";
}

// `apply_rows<N>(u, acc)`: the stencil at N consecutive rows (acc[j] at row j of u), reading
// every input cell once. For an affine stencil the loops run over the input: for each (dx, dz)
// column and each row, one read, then a multiply-add into every output row that point reaches.
// Each output sums its terms in the same order as `apply` (column_order), and the loop
// holds N accumulators instead of N x (rows + 2R) inputs in registers, which is what lets
// the compiler keep one read per input for box stencils. Otherwise: `apply` at each row.
std::string rows_body(const Stencil& s) {
  std::string out = "  template <int N, class U>\n"
                    "  __device__ __forceinline__ static void apply_rows(const U& u, real (&acc)[N]) {\n";
  if (!s.linear || s.linear->terms.empty()) {
    out += "#pragma unroll\n    for (int j = 0; j < N; ++j) acc[j] = apply(TbRowShift<U>{u, j});\n  }\n";
    return out;
  }
  // Terms grouped by column (dz, dx), each column's terms by dy: the order of column_order().
  const auto ordered = column_order(*s.linear);
  std::map<std::pair<int, int>, std::vector<const LinearForm::Term*>> columns;
  for (const auto& t : ordered) columns[{t.at[2], t.at[0]}].push_back(&t);
  bool first_column = true;
  for (const auto& [col, terms] : columns) {
    int lo = terms.front()->at[1], hi = lo;
    for (const auto* t : terms) lo = std::min(lo, t->at[1]), hi = std::max(hi, t->at[1]);
    out += fmt::format("#pragma unroll\n    for (int row = {}; row < N + {}; ++row) {{\n", lo, hi);
    out += fmt::format("      const real x = u({}, row, {});\n", col.second, col.first);
    for (const auto* t : terms) {
      // In the first column, the term with the lowest dy is each output's first term.
      const bool assign = first_column && t->at[1] == lo;
      const std::string target = fmt::format("acc[row - ({})]", t->at[1]);
      out += fmt::format("      if (row - ({}) >= 0 && row - ({}) < N) {} = {};\n", t->at[1], t->at[1], target,
                         assign ? number(t->coef) + " * x" : fmt::format("tb_fma({}, x, {})", number(t->coef), target));
    }
    out += "    }\n";
    first_column = false;
  }
  if (s.linear->constant != 0)
    out += "#pragma unroll\n    for (int j = 0; j < N; ++j) acc[j] += " + number(s.linear->constant) + ";\n";
  return out + "  }\n";
}

// `plane_sums<N>(u, acc)` (3D affine stencils, templates/tile3d.cuh's sum mode): adds one
// input plane's contributions to the 2R + 1 output planes it reaches; acc[R - dz][row] is the
// partial sum of the output dz planes behind u's plane, at the thread's row `row`. Each plane
// cell is read once: for each dx column, each row, then a multiply-add into every (dz, dy) term
// of that column. The planes arrive in z order, so every output still sums its terms in
// column_order (dz, dx, dy) and rounds exactly like `apply`.
std::string plane_sums_body(const Stencil& s) {
  if (s.dims != 3 || !s.linear) return "";
  const int r = s.radius;
  std::map<int, std::vector<const LinearForm::Term*>> columns;  // by dx, each in (dz, dy) order
  const auto ordered = column_order(*s.linear);
  for (const auto& t : ordered) columns[t.at[0]].push_back(&t);
  std::string out = fmt::format(
      "  template <int N, class U>\n"
      "  __device__ __forceinline__ static void plane_sums(const U& u, real (&acc)[{}][N]) {{\n",
      2 * r + 1);
  for (const auto& [dx, terms] : columns) {
    int lo = terms.front()->at[1], hi = lo;
    for (const auto* t : terms) lo = std::min(lo, t->at[1]), hi = std::max(hi, t->at[1]);
    out += fmt::format("#pragma unroll\n    for (int row = {}; row < N + {}; ++row) {{\n", lo, hi);
    out += fmt::format("      const real x = u({}, row, 0);\n", dx);
    // The sums start at zero: fma(c, x, 0) rounds like the product that starts `apply`.
    for (const auto* t : terms) {
      const std::string target = fmt::format("acc[{}][row - ({})]", r - t->at[2], t->at[1]);
      out += fmt::format("      if (row - ({}) >= 0 && row - ({}) < N) {} = tb_fma({}, x, {});\n", t->at[1], t->at[1],
                         target, number(t->coef), target);
    }
    out += "    }\n";
  }
  return out + "  }\n";
}

// `head(u, split)`, `part(u, lo, hi, acc)` and `tail(u, split, acc)` (templates/wpipe2d.cuh
// and wpipe3d.cuh): the stencil in parts along the axis those kernels stream (y in 2D, z in
// 3D), so that they can sum the terms that read the rows or planes already held (offset along
// it < split) before the newest ones arrive. head's sum starts from zero (an FMA onto zero
// rounds like the product); part adds the terms with lo <= offset < hi; tail adds the remaining
// terms and the constant. All walk the terms in one order led by the streamed offset, so every
// output rounds the same way wherever the splits fall. `split`, `lo` and `hi` are constants
// once the caller's loops are unrolled. A stencil that is not affine has no parts: head is
// zero, part adds nothing and tail evaluates it whole.
std::string stream_split_of(const LinearForm* linear, int dims) {
  const int axis = dims - 1;
  std::string head = "  template <class U>\n  __device__ __forceinline__ static real head(const U& u, int split) {\n";
  std::string tail =
      "  template <class U>\n  __device__ __forceinline__ static real tail(const U& u, int split, real acc) {\n";
  std::string part =
      "  template <class U>\n  __device__ __forceinline__ static real part(const U& u, int lo, int hi, real acc) {\n";
  if (!linear) {
    head += "    return real(0);\n  }\n";
    tail += "    return apply(u);\n  }\n";
    part += "    return acc;\n  }\n";
    return head + part + tail;
  }
  // 3D: apply's own order (column_order), in which dz leads, so that the split sums exactly
  // what the naive kernel does in the same order and agrees to the bit (j3d7pt amplifies a
  // rounding difference to 1e-8 in 100 steps). 2D: by (dy, dx).
  std::vector<LinearForm::Term> terms = column_order(*linear);
  if (dims == 2)
    std::stable_sort(terms.begin(), terms.end(),
                     [](const auto& a, const auto& b) { return std::tie(a.at[1], a.at[0]) < std::tie(b.at[1], b.at[0]); });
  head += "    real acc = real(0);\n";
  for (const auto& t : terms) {
    const std::string term =
        fmt::format("acc = tb_fma({}, u({}, {}, {}), acc);\n", number(t.coef), t.at[0], t.at[1], t.at[2]);
    head += fmt::format("    if ({} < split) {}", t.at[axis], term);
    part += fmt::format("    if (lo <= {} && {} < hi) {}", t.at[axis], t.at[axis], term);
    tail += fmt::format("    if ({} >= split) {}", t.at[axis], term);
  }
  if (linear->constant != 0) tail += "    acc += " + number(linear->constant) + ";\n";
  return head + "    return acc;\n  }\n" + part + "    return acc;\n  }\n" + tail + "    return acc;\n  }\n";
}

std::string stream_split_body(const Stencil& s) {
  if (s.dims < 2) return "";
  return stream_split_of(s.linear ? &*s.linear : nullptr, s.dims);
}

// `finish(sum)` (3D affine stencils, templates/tile3d.cuh's sum mode): the constant term, added when an output is
// complete (after all its terms, as `apply` does).
std::string finish_body(const Stencil& s) {
  if (!s.linear || s.dims != 3) return "";
  std::string out = "  __device__ __forceinline__ static real finish(real sum) { return sum";
  if (s.linear->constant != 0) out += " + " + number(s.linear->constant);
  return out + "; }\n";
}

// `struct TbRows` (templates/wpipe2d.cuh's `sep`): a separable stencil's factors
// (tuner/spec/row_factors.hpp), `across(u)` the sum of a row's cells across x, and head, part
// and tail of the sum down y of those row sums, as for TbStencil. Every other stencil has the
// struct declared only, so that the template can name it in code it never instantiates.
std::string rows_struct(const Stencil& s) {
  const auto f = row_factors(s);
  if (!f) return "struct TbRows;\n\n";
  return "// The stencil as a(dy) x b(dx): rows of coefficients that are multiples of one.\nstruct TbRows {\n"
         "  template <class U>\n  __device__ __forceinline__ static real across(const U& u) {\n" +
         linear_body(f->across) + "  }\n" + stream_split_of(&f->down, 2) + "};\n\n";
}

// `struct TbFold` (the `fold` of templates/wpipe2d.cuh and wpipe3d.cuh): the stencil over its
// folded rows or planes (tuner/spec/fold_rows.hpp), u(dx, d) or u(dx, dy, d) reading folded row
// or plane d, with head, part and tail as for TbStencil, and `row(d, p)` forming folded row d's
// cell from the window's (p(e): the row at offset e): row d, then each row before it in its
// weight, an add where that is 1. Every other stencil has the struct declared only.
std::string fold_struct(const Stencil& s) {
  const auto f = fold_rows(s);
  if (!f) return "struct TbFold;\n\n";
  const int r = s.radius;
  std::string row;
  for (int d = 0; d <= r; ++d) {
    std::string sum = fmt::format("p({})", d);
    bool combined = false;
    for (int e = -1; e >= -r; --e) {
      const double w = f->weight[d][r + e];
      if (w == 0) continue;
      sum = w == 1 ? fmt::format("{} + p({})", sum, e) : fmt::format("tb_fma({}, p({}), {})", number(w), e, sum);
      combined = true;
    }
    if (combined) row += fmt::format("    if (d == {}) return {};\n", d, sum);
  }
  return "// The stencil over folded rows (planes): folded row d is row d plus rows before it in their weights.\n"
         "struct TbFold {\n" +
         stream_split_of(&f->rows, s.dims) +
         "  template <class P>\n  __device__ __forceinline__ static real row(int d, const P& p) {\n" + row +
         "    return p(d);\n  }\n};\n\n";
}

}  // namespace

std::string cuda_expr(const Expr& e) {
  std::string out;
  print(e, out);
  return out;
}

std::string assemble_source(const Problem& problem, const Defines& defines,
                            const std::vector<std::string>& templates) {
  const Stencil& s = problem.stencil;
  std::string src;
  src += fmt::format("// Generated by tbtune: stencil '{}' (hash {}), {}, template {}\n", s.name, s.hash,
                     dtype_name(problem.dtype), templates.empty() ? std::string() : templates.back());
  src += fmt::format("typedef {} real;\n", dtype_name(problem.dtype));
  src += fmt::format("#define TB_DIMS {}\n#define TB_RADIUS {}\n", s.dims, s.radius);
  for (const auto& [name, value] : defines) src += fmt::format("#define {} {}\n", name, value);
  src += template_text("common.cuh");
  src += "\n// The stencil, printed from the parsed spec.\nstruct TbStencil {\n";
  src += "  template <class U>\n  __device__ __forceinline__ static real apply(const U& u) {\n";
  src += s.linear ? linear_body(*s.linear) : "    return " + cuda_expr(s.expr) + ";\n";
  src += "  }\n" + rows_body(s) + plane_sums_body(s) + stream_split_body(s) + finish_body(s) + "};\n\n";
  src += rows_struct(s) + fold_struct(s);
  for (const std::string& name : templates) src += template_text(name);
  return src;
}

}  // namespace tbtune
