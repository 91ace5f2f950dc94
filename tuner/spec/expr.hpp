#pragma once
/// @file expr.hpp
/// The stencil expression language: its syntax tree and its recursive-descent parser.
///
/// Grammar (whitespace is free between tokens):
///   expr    := term (('+' | '-') term)*
///   term    := unary (('*' | '/') unary)*
///   unary   := '-' unary | '+' unary | primary
///   primary := NUMBER | IDENT | IDENT '(' expr (',' expr)* ')' | 'u' '[' INT (',' INT)* ']'
///            | '(' expr ')'
/// NUMBER is a decimal literal (digits, optional fraction, optional exponent). IDENT is a
/// parameter from the spec's `params:`; IDENT '(' is one of the whitelisted functions (see
/// `function_arity`). `u[...]` takes exactly `dims` signed integer offsets, x first.
#include <array>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace tbtune {

/// A cell offset (x, y, z); unused axes are 0.
using Offset = std::array<int, 3>;

/// Largest |offset| a spec may use on any axis.
inline constexpr int kMaxRadius = 8;

/// Most nodes (numbers, names, accesses, operators, calls) one expression may have. Far above
/// any real stencil (a full radius-8 3D box is 4913 points, about 20000 nodes as `c*u[..]+`).
inline constexpr int kMaxExprNodes = 24000;

/// Deepest expression tree accepted. Every later stage (hashing, code generation, the CPU
/// reference) walks the tree recursively, and a sum of n terms is n levels deep, so this bounds
/// their stack use. A `points:` list, at most 4913 distinct points, always fits.
inline constexpr int kMaxExprHeight = 5000;

/// One node of the expression tree. Values, not pointers: trees are small.
struct Expr {
  enum class Kind { Number, Param, Access, Neg, Add, Sub, Mul, Div, Call };
  Kind kind = Kind::Number;
  double value = 0;         ///< Number: the literal; Param: the parameter's value
  std::string name;         ///< Param: parameter name; Call: function name
  Offset offset{0, 0, 0};   ///< Access: the offset of u
  std::vector<Expr> args;   ///< operands (Neg 1, binary 2, Call its arguments)
};

/// Named constants from the spec's `params:`.
using ParamMap = std::map<std::string, double>;

/// Where the expression text starts in its file, so errors point into the YAML file.
struct SourceLoc {
  std::string file;
  int line = 1;  ///< 1-based line of the first character of the expression
  int col = 1;   ///< 1-based column of the first character of the expression
};

/// Parses `text` as a stencil expression for a `dims`-dimensional grid.
/// Throws SpecError with the file, line and column of the offending character.
[[nodiscard]] Expr parse_expr(std::string_view text, const ParamMap& params, int dims,
                              const SourceLoc& where);

/// Number of arguments of a whitelisted function, or -1 if `name` is not one.
[[nodiscard]] int function_arity(std::string_view name);

/// Value of the operator or call `e` applied to operand values `a` and `b` (Neg and one-argument
/// calls ignore `b`); for Number and Param nodes, their value. Access nodes give 0.
[[nodiscard]] double apply_node(const Expr& e, double a, double b);

/// Value of a tree that reads no u (numbers, parameters, operators, whitelisted calls).
[[nodiscard]] double eval_const(const Expr& e);

/// Calls `fn(offset)` for every `u[...]` access in the tree, in tree order.
template <class Fn>
void for_each_access(const Expr& e, Fn&& fn) {
  if (e.kind == Expr::Kind::Access) fn(e.offset);
  for (const Expr& a : e.args) for_each_access(a, fn);
}

}  // namespace tbtune
