#include "tuner/spec/expr.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <string>
#include <system_error>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

/// The function whitelist, sorted by name (it is also the "allowed:" list in messages).
struct FunctionInfo {
  const char* name;
  int arity;
};
constexpr FunctionInfo kFunctions[] = {{"abs", 1}, {"cos", 1},  {"exp", 1}, {"log", 1},
                                       {"max", 2}, {"min", 2},  {"pow", 2}, {"sin", 1},
                                       {"sqrt", 1}, {"tanh", 1}};

// Deep nesting would only ever come from a hostile file; refuse it before the stack does.
constexpr int kMaxDepth = 200;

bool is_ident_start(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
bool is_ident_char(char c) { return is_ident_start(c) || (c >= '0' && c <= '9'); }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

std::string allowed_functions() {
  std::string out;
  for (const FunctionInfo& f : kFunctions) {
    if (!out.empty()) out += ", ";
    out += f.name;
  }
  return out;
}

/// A character as it may appear in a one-line message.
std::string show_char(char c) { return printable(std::string_view(&c, 1)); }

/// "inf", "-inf" or "nan", for messages about a constant that is not finite.
std::string non_finite_name(double v) {
  if (std::isnan(v)) return "nan";
  return v > 0 ? "inf" : "-inf";
}

/// A parsed subtree with what the parser needs to know about it without walking it again.
struct Node {
  Expr e;
  int height = 1;        ///< levels of the tree, a leaf being 1
  bool reads_u = false;  ///< whether any u[...] is below
  double value = 0;      ///< the subtree's value when it reads no u
};

class Parser {
 public:
  Parser(std::string_view text, const ParamMap& params, int dims, const SourceLoc& where)
      : text_(text), params_(params), dims_(dims), where_(where) {}

  Expr parse() {
    skip_space();
    if (at_end()) fail(0, "empty expression");
    Node n = expr(0);
    skip_space();
    if (!at_end()) {
      if (peek() == ')') fail(pos_, "unbalanced parentheses: unexpected ')'");
      fail(pos_, "unexpected '" + show_char(peek()) + "' after the end of the expression");
    }
    if (!n.reads_u) fail(0, "expression never reads u");
    return std::move(n.e);
  }

 private:
  [[noreturn]] void fail(std::size_t at, const std::string& message) const {
    // Line and column of text_[at] in the file. Only block scalars keep newlines in the text;
    // their lines share the first line's indentation, hence where_.col on every line.
    int line = where_.line;
    std::size_t line_start = 0;
    for (std::size_t i = 0; i < at && i < text_.size(); ++i)
      if (text_[i] == '\n') ++line, line_start = i + 1;
    const int col = where_.col + static_cast<int>(at - line_start);
    throw SpecError(where_.file, line, col, message);
  }

  bool at_end() const { return pos_ >= text_.size(); }
  char peek() const { return at_end() ? '\0' : text_[pos_]; }
  void skip_space() {
    while (!at_end() && (peek() == ' ' || peek() == '\t' || peek() == '\n' || peek() == '\r'))
      ++pos_;
  }
  void expect(char c, const std::string& what) {
    skip_space();
    if (at_end()) fail(pos_, "unexpected end of expression, expected " + what);
    if (peek() != c) fail(pos_, "unexpected '" + show_char(peek()) + "', expected " + what);
    ++pos_;
  }

  /// Counts one more node of the tree; the limit keeps memory and every later walk bounded.
  void count_node(std::size_t at) {
    if (++nodes_ > kMaxExprNodes)
      fail(at, "expression too large: more than " + std::to_string(kMaxExprNodes) +
                   " numbers, names, accesses and operators");
  }

  /// A node over `args` whose operator or name starts at `at`: its height, whether it reads u,
  /// and its value when it does not, which must be finite (u/0, sqrt(-1) and log(0) are errors
  /// here rather than "inf" in generated CUDA).
  Node combine(Expr e, std::vector<Node> args, std::size_t at) {
    count_node(at);
    Node n;
    double a = 0, b = 0;
    for (std::size_t i = 0; i < args.size(); ++i) {
      n.height = std::max(n.height, args[i].height + 1);
      n.reads_u = n.reads_u || args[i].reads_u;
      (i == 0 ? a : b) = args[i].value;
      e.args.push_back(std::move(args[i].e));
    }
    if (n.height > kMaxExprHeight)
      fail(at, "expression nested too deeply: more than " + std::to_string(kMaxExprHeight) +
                   " levels (a sum of that many terms; use fewer terms)");
    if (e.kind == Expr::Kind::Div && args.size() == 2 && !args[1].reads_u && b == 0)
      fail(at, "division by zero");
    if (!n.reads_u) {
      n.value = apply_node(e, a, b);
      if (!std::isfinite(n.value))
        fail(at, "this constant evaluates to " + non_finite_name(n.value) +
                     "; constants must be finite");
    }
    n.e = std::move(e);
    return n;
  }

  Node binary(Expr::Kind kind, Node lhs, Node rhs, std::size_t at) {
    Expr e;
    e.kind = kind;
    std::vector<Node> args;
    args.push_back(std::move(lhs));
    args.push_back(std::move(rhs));
    return combine(std::move(e), std::move(args), at);
  }

  Node expr(int depth) {
    Node lhs = term(depth);
    for (;;) {
      skip_space();
      if (peek() != '+' && peek() != '-') return lhs;
      const auto kind = peek() == '+' ? Expr::Kind::Add : Expr::Kind::Sub;
      const std::size_t at = pos_++;
      Node rhs = term(depth);
      lhs = binary(kind, std::move(lhs), std::move(rhs), at);
    }
  }

  Node term(int depth) {
    Node lhs = unary(depth);
    for (;;) {
      skip_space();
      if (peek() != '*' && peek() != '/') return lhs;
      const auto kind = peek() == '*' ? Expr::Kind::Mul : Expr::Kind::Div;
      const std::size_t at = pos_++;
      Node rhs = unary(depth);
      lhs = binary(kind, std::move(lhs), std::move(rhs), at);
    }
  }

  Node unary(int depth) {
    if (depth > kMaxDepth) fail(pos_, "expression nested too deeply");
    skip_space();
    if (peek() == '+') {
      ++pos_;
      return unary(depth + 1);
    }
    if (peek() == '-') {
      const std::size_t at = pos_++;
      Expr e;
      e.kind = Expr::Kind::Neg;
      std::vector<Node> args;
      args.push_back(unary(depth + 1));
      return combine(std::move(e), std::move(args), at);
    }
    return primary(depth);
  }

  Node primary(int depth) {
    skip_space();
    if (at_end()) fail(pos_, "unexpected end of expression");
    const char c = peek();
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])))
      return number();
    if (c == '(') {
      const std::size_t open = pos_++;
      Node n = expr(depth + 1);
      skip_space();
      if (peek() != ')') {
        if (at_end()) fail(open, "unbalanced parentheses: this '(' is never closed");
        fail(pos_, "unexpected '" + show_char(peek()) + "', expected ')'");
      }
      ++pos_;
      return n;
    }
    if (is_ident_start(c)) return identifier(depth);
    if (c == ')') fail(pos_, "unbalanced parentheses: unexpected ')'");
    fail(pos_, "unexpected '" + show_char(c) + "'");
  }

  Node leaf(Expr e, std::size_t at) {
    count_node(at);
    Node n;
    n.reads_u = e.kind == Expr::Kind::Access;
    n.value = n.reads_u ? 0 : e.value;
    n.e = std::move(e);
    return n;
  }

  Node number() {
    const std::size_t start = pos_;
    while (is_digit(peek())) ++pos_;
    if (peek() == '.') {
      ++pos_;
      while (is_digit(peek())) ++pos_;
    }
    if (peek() == 'e' || peek() == 'E') {
      std::size_t p = pos_ + 1;
      if (p < text_.size() && (text_[p] == '+' || text_[p] == '-')) ++p;
      if (p >= text_.size() || !is_digit(text_[p])) fail(pos_, "malformed number exponent");
      pos_ = p;
      while (is_digit(peek())) ++pos_;
    }
    if (is_ident_char(peek())) fail(pos_, "unexpected '" + show_char(peek()) + "' in a number");
    Expr e;
    const auto [ptr, ec] = std::from_chars(text_.data() + start, text_.data() + pos_, e.value);
    if (ec != std::errc() || !std::isfinite(e.value)) fail(start, "number out of range");
    (void)ptr;
    return leaf(std::move(e), start);
  }

  Node identifier(int depth) {
    const std::size_t start = pos_;
    while (is_ident_char(peek())) ++pos_;
    const std::string name(text_.substr(start, pos_ - start));
    skip_space();
    if (name == "u") return access(start);
    if (peek() == '(') return call(name, start, depth);
    const auto it = params_.find(name);
    if (it == params_.end()) fail(start, "unknown identifier '" + name + "'");
    Expr e;
    e.kind = Expr::Kind::Param;
    e.name = name;
    e.value = it->second;
    return leaf(std::move(e), start);
  }

  Node call(const std::string& name, std::size_t start, int depth) {
    const int arity = function_arity(name);
    if (arity < 0)
      fail(start, "unknown function '" + name + "' (allowed: " + allowed_functions() + ")");
    Expr e;
    e.kind = Expr::Kind::Call;
    e.name = name;
    std::vector<Node> args;
    ++pos_;  // '('
    skip_space();
    if (peek() != ')') {
      args.push_back(expr(depth + 1));
      for (skip_space(); peek() == ','; skip_space()) {
        ++pos_;
        args.push_back(expr(depth + 1));
      }
    }
    expect(')', "',' or ')' in the arguments of '" + name + "'");
    if (static_cast<int>(args.size()) != arity)
      fail(start, "function '" + name + "' takes " + std::to_string(arity) + " argument" +
                      (arity == 1 ? "" : "s") + ", got " + std::to_string(args.size()));
    return combine(std::move(e), std::move(args), start);
  }

  Node access(std::size_t start) {
    if (peek() != '[') fail(pos_, "'u' must be indexed with offsets, as in u[0,0]");
    ++pos_;
    Expr e;
    e.kind = Expr::Kind::Access;
    int count = 0;
    for (;;) {
      const int value = offset();
      if (count < 3) e.offset[static_cast<std::size_t>(count)] = value;
      ++count;
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() == ']') break;
      if (at_end()) fail(pos_, "unexpected end of expression, expected ',' or ']' in u[...]");
      fail(pos_, "unexpected '" + show_char(peek()) + "', expected ',' or ']' in u[...]");
    }
    ++pos_;
    if (count != dims_)
      fail(start, "u[] takes " + std::to_string(dims_) + " offsets in a " + std::to_string(dims_) +
                      "D stencil, got " + std::to_string(count));
    return leaf(std::move(e), start);
  }

  /// One signed integer offset of u[...].
  int offset() {
    skip_space();
    const std::size_t start = pos_;
    bool negative = false;
    if (peek() == '+' || peek() == '-') {
      negative = peek() == '-';
      ++pos_;
      skip_space();
    }
    if (!is_digit(peek())) fail(start, "offset must be an integer");
    long value = 0;
    while (is_digit(peek())) {
      if (value <= 1000000) value = value * 10 + (peek() - '0');
      ++pos_;
    }
    if (peek() == '.' || peek() == 'e' || peek() == 'E' || is_ident_char(peek()))
      fail(start, "offset must be an integer");
    if (value > kMaxRadius)
      fail(start, "offset " + std::string(negative ? "-" : "") +
                      (value > 1000000 ? std::string("too large") : std::to_string(value)) +
                      " exceeds the maximum radius " + std::to_string(kMaxRadius));
    return static_cast<int>(negative ? -value : value);
  }

  std::string_view text_;
  const ParamMap& params_;
  int dims_;
  const SourceLoc& where_;
  std::size_t pos_ = 0;
  int nodes_ = 0;
};

}  // namespace

int function_arity(std::string_view name) {
  for (const FunctionInfo& f : kFunctions)
    if (name == f.name) return f.arity;
  return -1;
}

double apply_node(const Expr& e, double a, double b) {
  switch (e.kind) {
    case Expr::Kind::Number:
    case Expr::Kind::Param: return e.value;
    case Expr::Kind::Access: return 0;
    case Expr::Kind::Neg: return -a;
    case Expr::Kind::Add: return a + b;
    case Expr::Kind::Sub: return a - b;
    case Expr::Kind::Mul: return a * b;
    case Expr::Kind::Div: return a / b;
    case Expr::Kind::Call: break;
  }
  const std::string& f = e.name;
  if (f == "sqrt") return std::sqrt(a);
  if (f == "exp") return std::exp(a);
  if (f == "log") return std::log(a);
  if (f == "sin") return std::sin(a);
  if (f == "cos") return std::cos(a);
  if (f == "tanh") return std::tanh(a);
  if (f == "abs") return std::fabs(a);
  if (f == "min") return std::min(a, b);
  if (f == "max") return std::max(a, b);
  return std::pow(a, b);  // "pow", the last of the whitelist
}

double eval_const(const Expr& e) {
  const double a = e.args.size() > 0 ? eval_const(e.args[0]) : 0;
  const double b = e.args.size() > 1 ? eval_const(e.args[1]) : 0;
  return apply_node(e, a, b);
}

Expr parse_expr(std::string_view text, const ParamMap& params, int dims, const SourceLoc& where) {
  return Parser(text, params, dims, where).parse();
}

}  // namespace tbtune
