#include "tuner/gpu/reference.hpp"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

enum class Op { Const, Load, ScaledLoad, AddLoad, AddScaledLoad, Neg, Add, Sub, Mul, Div, Sqrt, Exp, Log, Sin, Cos, Tanh, Abs, Min,
                Max, Pow };

struct Instr {
  Op op = Op::Const;
  double value = 0;  ///< Const, *ScaledLoad: the constant
  long delta = 0;    ///< *Load: linear index offset of u[dx,dy,dz]
};

/// The expression as a postfix program over a stack of rows.
struct Program {
  std::vector<Instr> code;
  int depth = 0;
};

Op call_op(const std::string& f) {
  if (f == "sqrt") return Op::Sqrt;
  if (f == "exp") return Op::Exp;
  if (f == "log") return Op::Log;
  if (f == "sin") return Op::Sin;
  if (f == "cos") return Op::Cos;
  if (f == "tanh") return Op::Tanh;
  if (f == "abs") return Op::Abs;
  if (f == "min") return Op::Min;
  if (f == "max") return Op::Max;
  if (f == "pow") return Op::Pow;
  throw Error("reference: unknown function '" + f + "'");
}

/// Peephole fusion of the weighted-sum pattern, c*u[d] and acc + c*u[d]. IEEE products commute
/// and the fused forms do the same operations in the same order, so results are bit-identical.
void fuse(std::vector<Instr>& code) {
  auto op = [&](std::size_t back) { return code[code.size() - 1 - back].op; };
  const std::size_t n = code.size();
  if (n >= 3 && op(0) == Op::Mul && ((op(2) == Op::Const && op(1) == Op::Load) ||
                                     (op(2) == Op::Load && op(1) == Op::Const))) {
    const Instr& c = op(2) == Op::Const ? code[n - 3] : code[n - 2];
    const Instr& l = op(2) == Op::Load ? code[n - 3] : code[n - 2];
    const Instr fused{Op::ScaledLoad, c.value, l.delta};
    code.resize(n - 3);
    code.push_back(fused);
  } else if (n >= 2 && op(0) == Op::Add && (op(1) == Op::Load || op(1) == Op::ScaledLoad)) {
    Instr fused = code[n - 2];
    fused.op = fused.op == Op::Load ? Op::AddLoad : Op::AddScaledLoad;
    code.resize(n - 2);
    code.push_back(fused);
  }
}

void compile(const Expr& e, long sy, long sz, Program& p, int& sp) {
  for (const Expr& a : e.args) compile(a, sy, sz, p, sp);
  Instr in;
  switch (e.kind) {
    case Expr::Kind::Number:
    case Expr::Kind::Param: in.op = Op::Const, in.value = e.value; break;
    case Expr::Kind::Access:
      in.op = Op::Load;
      in.delta = e.offset[0] + sy * e.offset[1] + sz * e.offset[2];
      break;
    case Expr::Kind::Neg: in.op = Op::Neg; break;
    case Expr::Kind::Add: in.op = Op::Add; break;
    case Expr::Kind::Sub: in.op = Op::Sub; break;
    case Expr::Kind::Mul: in.op = Op::Mul; break;
    case Expr::Kind::Div: in.op = Op::Div; break;
    case Expr::Kind::Call: in.op = call_op(e.name); break;
  }
  // Leaves push one row; operators pop their operands and push the result.
  sp += 1 - static_cast<int>(e.args.size());
  p.depth = std::max(p.depth, sp);
  p.code.push_back(in);
  fuse(p.code);
}

template <class T, class F>
void unary(T* a, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) a[i] = f(a[i]);
}
template <class T, class F>
void binary(T* a, const T* b, std::size_t n, F f) {
  for (std::size_t i = 0; i < n; ++i) a[i] = f(a[i], b[i]);
}

/// Runs the program on `n` consecutive cells starting at `src`, writing to `dst`. The
/// interpreter works a row at a time so its dispatch cost is paid once per row, not per cell.
template <class T>
void run_row(const Program& p, const T* src, T* dst, std::size_t n, std::vector<T>& stack) {
  int sp = 0;
  for (const Instr& in : p.code) {
    // Rows of the stack: `top` is the next free one, `b` the last pushed, `a` the one below.
    T* top = stack.data() + static_cast<std::size_t>(sp) * n;
    T* b = sp >= 1 ? top - n : top;
    T* a = sp >= 2 ? b - n : b;
    switch (in.op) {
      case Op::Const: std::fill(top, top + n, static_cast<T>(in.value)); ++sp; break;
      case Op::Load: std::copy(src + in.delta, src + in.delta + static_cast<long>(n), top); ++sp; break;
      case Op::ScaledLoad: {
        const T c = static_cast<T>(in.value);
        const T* u = src + in.delta;
        for (std::size_t i = 0; i < n; ++i) top[i] = c * u[i];
        ++sp;
        break;
      }
      case Op::AddLoad: binary(b, src + in.delta, n, [](T x, T y) { return x + y; }); break;
      case Op::AddScaledLoad: {
        const T c = static_cast<T>(in.value);
        const T* u = src + in.delta;
        for (std::size_t i = 0; i < n; ++i) b[i] = b[i] + c * u[i];
        break;
      }
      case Op::Neg: unary(b, n, [](T x) { return -x; }); break;
      case Op::Sqrt: unary(b, n, [](T x) { return std::sqrt(x); }); break;
      case Op::Exp: unary(b, n, [](T x) { return std::exp(x); }); break;
      case Op::Log: unary(b, n, [](T x) { return std::log(x); }); break;
      case Op::Sin: unary(b, n, [](T x) { return std::sin(x); }); break;
      case Op::Cos: unary(b, n, [](T x) { return std::cos(x); }); break;
      case Op::Tanh: unary(b, n, [](T x) { return std::tanh(x); }); break;
      case Op::Abs: unary(b, n, [](T x) { return std::abs(x); }); break;
      case Op::Add: binary(a, b, n, [](T x, T y) { return x + y; }), --sp; break;
      case Op::Sub: binary(a, b, n, [](T x, T y) { return x - y; }), --sp; break;
      case Op::Mul: binary(a, b, n, [](T x, T y) { return x * y; }), --sp; break;
      case Op::Div: binary(a, b, n, [](T x, T y) { return x / y; }), --sp; break;
      case Op::Min: binary(a, b, n, [](T x, T y) { return std::fmin(x, y); }), --sp; break;
      case Op::Max: binary(a, b, n, [](T x, T y) { return std::fmax(x, y); }), --sp; break;
      case Op::Pow: binary(a, b, n, [](T x, T y) { return std::pow(x, y); }), --sp; break;
    }
  }
  std::copy(stack.data(), stack.data() + n, dst);
}

}  // namespace

template <class T>
std::vector<T> make_input(const Problem& problem, std::uint64_t seed) {
  std::vector<T> out(static_cast<std::size_t>(problem.total_cells()));
  for (std::size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<T>(double(splitmix64(seed + i) >> 11) * 0x1p-53);
  return out;
}

template <class T>
void reference_run(const Problem& problem, std::vector<T>& grid, long steps) {
  const long nx = problem.domain[0], ny = problem.domain[1];
  const long nz = problem.dims() == 3 ? problem.domain[2] : 1;
  if (static_cast<long>(grid.size()) != nx * ny * nz)
    throw Error("reference_run: the grid has " + std::to_string(grid.size()) +
                " cells, the problem " + std::to_string(nx * ny * nz));
  const long r = problem.stencil.radius;
  const long rz = problem.dims() == 3 ? r : 0;
  if (steps <= 0 || nx <= 2 * r || ny <= 2 * r || nz <= 2 * rz) return;  // nothing to update

  Program prog;
  int sp = 0;
  compile(problem.stencil.expr, nx, nx * ny, prog, sp);
  const auto n = static_cast<std::size_t>(nx - 2 * r);
  std::vector<T> stack(static_cast<std::size_t>(std::max(prog.depth, 1)) * n);

  // Both buffers start equal, so the Dirichlet ring, never written, stays the initial value.
  std::vector<T> next = grid;
  for (long s = 0; s < steps; ++s) {
    for (long z = rz; z < nz - rz; ++z)
      for (long y = r; y < ny - r; ++y) {
        const long base = r + nx * (y + ny * z);
        run_row(prog, grid.data() + base, next.data() + base, n, stack);
      }
    std::swap(grid, next);
  }
}

template std::vector<float> make_input<float>(const Problem&, std::uint64_t);
template std::vector<double> make_input<double>(const Problem&, std::uint64_t);
template void reference_run<float>(const Problem&, std::vector<float>&, long);
template void reference_run<double>(const Problem&, std::vector<double>&, long);

}  // namespace tbtune
