#include "tuner/spec/expr.hpp"

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

/// A character as it may appear in a one-line message: printable ASCII as is, else \xNN.
std::string show_char(char c) {
  const auto u = static_cast<unsigned char>(c);
  if (u >= 0x20 && u < 0x7f) return std::string(1, c);
  static const char* hex = "0123456789abcdef";
  return std::string("\\x") + hex[u >> 4] + hex[u & 15];
}

class Parser {
 public:
  Parser(std::string_view text, const ParamMap& params, int dims, const SourceLoc& where)
      : text_(text), params_(params), dims_(dims), where_(where) {}

  Expr parse() {
    skip_space();
    if (at_end()) fail(0, "empty expression");
    Expr e = expr(0);
    skip_space();
    if (!at_end()) {
      if (peek() == ')') fail(pos_, "unbalanced parentheses: unexpected ')'");
      fail(pos_, "unexpected '" + show_char(peek()) + "' after the end of the expression");
    }
    if (!reads_u_) fail(0, "expression never reads u");
    return e;
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

  static Expr binary(Expr::Kind kind, Expr lhs, Expr rhs) {
    Expr e;
    e.kind = kind;
    e.args.push_back(std::move(lhs));
    e.args.push_back(std::move(rhs));
    return e;
  }

  Expr expr(int depth) {
    Expr lhs = term(depth);
    for (;;) {
      skip_space();
      if (peek() != '+' && peek() != '-') return lhs;
      const auto kind = peek() == '+' ? Expr::Kind::Add : Expr::Kind::Sub;
      ++pos_;
      lhs = binary(kind, std::move(lhs), term(depth));
    }
  }

  Expr term(int depth) {
    Expr lhs = unary(depth);
    for (;;) {
      skip_space();
      if (peek() != '*' && peek() != '/') return lhs;
      const auto kind = peek() == '*' ? Expr::Kind::Mul : Expr::Kind::Div;
      ++pos_;
      lhs = binary(kind, std::move(lhs), unary(depth));
    }
  }

  Expr unary(int depth) {
    if (depth > kMaxDepth) fail(pos_, "expression nested too deeply");
    skip_space();
    if (peek() == '+') {
      ++pos_;
      return unary(depth + 1);
    }
    if (peek() == '-') {
      ++pos_;
      Expr e;
      e.kind = Expr::Kind::Neg;
      e.args.push_back(unary(depth + 1));
      return e;
    }
    return primary(depth);
  }

  Expr primary(int depth) {
    skip_space();
    if (at_end()) fail(pos_, "unexpected end of expression");
    const char c = peek();
    if (is_digit(c) || (c == '.' && pos_ + 1 < text_.size() && is_digit(text_[pos_ + 1])))
      return number();
    if (c == '(') {
      const std::size_t open = pos_++;
      Expr e = expr(depth + 1);
      skip_space();
      if (peek() != ')') {
        if (at_end()) fail(open, "unbalanced parentheses: this '(' is never closed");
        fail(pos_, "unexpected '" + show_char(peek()) + "', expected ')'");
      }
      ++pos_;
      return e;
    }
    if (is_ident_start(c)) return identifier(depth);
    if (c == ')') fail(pos_, "unbalanced parentheses: unexpected ')'");
    fail(pos_, "unexpected '" + show_char(c) + "'");
  }

  Expr number() {
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
    return e;
  }

  Expr identifier(int depth) {
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
    return e;
  }

  Expr call(const std::string& name, std::size_t start, int depth) {
    const int arity = function_arity(name);
    if (arity < 0)
      fail(start, "unknown function '" + name + "' (allowed: " + allowed_functions() + ")");
    Expr e;
    e.kind = Expr::Kind::Call;
    e.name = name;
    ++pos_;  // '('
    skip_space();
    if (peek() != ')') {
      e.args.push_back(expr(depth + 1));
      for (skip_space(); peek() == ','; skip_space()) {
        ++pos_;
        e.args.push_back(expr(depth + 1));
      }
    }
    expect(')', "',' or ')' in the arguments of '" + name + "'");
    if (static_cast<int>(e.args.size()) != arity)
      fail(start, "function '" + name + "' takes " + std::to_string(arity) + " argument" +
                      (arity == 1 ? "" : "s") + ", got " + std::to_string(e.args.size()));
    return e;
  }

  Expr access(std::size_t start) {
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
    reads_u_ = true;
    return e;
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
  bool reads_u_ = false;
};

}  // namespace

int function_arity(std::string_view name) {
  for (const FunctionInfo& f : kFunctions)
    if (name == f.name) return f.arity;
  return -1;
}

Expr parse_expr(std::string_view text, const ParamMap& params, int dims, const SourceLoc& where) {
  return Parser(text, params, dims, where).parse();
}

}  // namespace tbtune
