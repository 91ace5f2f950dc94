// Tests of the expression parser: the tree it builds and the errors (with positions) it throws.
#include "tuner/spec/expr.hpp"

#include <gtest/gtest.h>

#include <string>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

const SourceLoc kWhere{"spec.yaml", 3, 7};

Expr parse(const std::string& text, int dims = 2, const ParamMap& params = {}) {
  return parse_expr(text, params, dims, kWhere);
}

/// Parsing `text` fails with a message containing `msg` at `line`:`col` of spec.yaml.
void expect_error(const std::string& text, const std::string& msg, int line, int col,
                  int dims = 2, const ParamMap& params = {}) {
  SCOPED_TRACE("expression: " + text);
  try {
    (void)parse(text, dims, params);
    FAIL() << "no error";
  } catch (const SpecError& e) {
    EXPECT_NE(e.message().find(msg), std::string::npos) << e.what();
    EXPECT_EQ(e.file(), "spec.yaml");
    EXPECT_EQ(e.line(), line) << e.what();
    EXPECT_EQ(e.col(), col) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line only";
  }
}

TEST(Expr, PrecedenceAndAssociativity) {
  const Expr e = parse("1 - 2 * u[0,0] - 3");
  ASSERT_EQ(e.kind, Expr::Kind::Sub);          // (1 - 2*u) - 3
  EXPECT_EQ(e.args[1].value, 3);
  const Expr& left = e.args[0];
  ASSERT_EQ(left.kind, Expr::Kind::Sub);
  EXPECT_EQ(left.args[0].value, 1);
  ASSERT_EQ(left.args[1].kind, Expr::Kind::Mul);
  EXPECT_EQ(left.args[1].args[1].kind, Expr::Kind::Access);
}

TEST(Expr, ParenthesesAndUnary) {
  const Expr e = parse("-(u[1,0] + +u[-1,0]) / 2");
  ASSERT_EQ(e.kind, Expr::Kind::Div);
  ASSERT_EQ(e.args[0].kind, Expr::Kind::Neg);
  EXPECT_EQ(e.args[0].args[0].kind, Expr::Kind::Add);
}

TEST(Expr, NumbersAndOffsets) {
  const Expr e = parse("1.5e-3 * u[ -2 , +3 ] + .25 * u[0,0]");
  EXPECT_DOUBLE_EQ(e.args[0].args[0].value, 1.5e-3);
  EXPECT_EQ(e.args[0].args[1].offset, (Offset{-2, 3, 0}));
  EXPECT_DOUBLE_EQ(e.args[1].args[0].value, 0.25);
  const Expr e3 = parse("u[1,-2,8]", 3);
  EXPECT_EQ(e3.offset, (Offset{1, -2, 8}));
}

TEST(Expr, ParamsKeepNameAndValue) {
  const Expr e = parse("alpha * u[0,0]", 2, {{"alpha", 0.25}});
  ASSERT_EQ(e.args[0].kind, Expr::Kind::Param);
  EXPECT_EQ(e.args[0].name, "alpha");
  EXPECT_EQ(e.args[0].value, 0.25);
}

TEST(Expr, Functions) {
  const Expr e = parse("max(sqrt(abs(u[0,0])), pow(u[1,0], 2))");
  ASSERT_EQ(e.kind, Expr::Kind::Call);
  EXPECT_EQ(e.name, "max");
  ASSERT_EQ(e.args.size(), 2u);
  EXPECT_EQ(e.args[0].name, "sqrt");
  EXPECT_EQ(e.args[1].name, "pow");
  EXPECT_EQ(function_arity("tanh"), 1);
  EXPECT_EQ(function_arity("min"), 2);
  EXPECT_EQ(function_arity("printf"), -1);
}

TEST(Expr, ForEachAccessVisitsInTreeOrder) {
  std::vector<Offset> seen;
  for_each_access(parse("u[1,0] * (u[0,1] + u[1,0])"), [&](const Offset& o) { seen.push_back(o); });
  ASSERT_EQ(seen.size(), 3u);
  EXPECT_EQ(seen[0], (Offset{1, 0, 0}));
  EXPECT_EQ(seen[1], (Offset{0, 1, 0}));
}

TEST(ExprErrors, Offsets) {
  expect_error("u[0.5,0]", "offset must be an integer", 3, 9);
  expect_error("u[a,0]", "offset must be an integer", 3, 9);
  expect_error("u[0, 9]", "offset 9 exceeds the maximum radius 8", 3, 12);
  expect_error("u[-12,0]", "offset -12 exceeds the maximum radius 8", 3, 9);
  expect_error("2*u[0,0,0]", "u[] takes 2 offsets in a 2D stencil, got 3", 3, 9);
  expect_error("u[0,0]", "u[] takes 3 offsets in a 3D stencil, got 2", 3, 7, 3);
  expect_error("u[0 0]", "expected ',' or ']'", 3, 11);
  expect_error("u + 1", "'u' must be indexed", 3, 9);
}

TEST(ExprErrors, Identifiers) {
  expect_error("u[0,0] + foo", "unknown identifier 'foo'", 3, 16);
  expect_error("foo(u[0,0])",
               "unknown function 'foo' (allowed: abs, cos, exp, log, max, min, pow, sin, sqrt, tanh)",
               3, 7);
  expect_error("__syncthreads()", "unknown function '__syncthreads'", 3, 7);
  expect_error("min(u[0,0])", "function 'min' takes 2 arguments, got 1", 3, 7);
  expect_error("sqrt(u[0,0], 1)", "function 'sqrt' takes 1 argument, got 2", 3, 7);
  expect_error("sqrt()", "function 'sqrt' takes 1 argument, got 0", 3, 7);
}

TEST(ExprErrors, Structure) {
  expect_error("", "empty expression", 3, 7);
  expect_error("   ", "empty expression", 3, 7);
  expect_error("(u[0,0] + 1", "unbalanced parentheses: this '(' is never closed", 3, 7);
  expect_error("u[0,0] + 1)", "unbalanced parentheses: unexpected ')'", 3, 17);
  expect_error("u[0,0] 2", "after the end of the expression", 3, 14);
  expect_error("u[0,0] +", "unexpected end of expression", 3, 15);
  expect_error("1 + 2", "expression never reads u", 3, 7);
  expect_error("1e999 * u[0,0]", "number out of range", 3, 7);
  expect_error("1e+ * u[0,0]", "malformed number exponent", 3, 8);
  expect_error(std::string(300, '(') + "u[0,0]" + std::string(300, ')'), "nested too deeply", 3,
               208);
}

TEST(ExprErrors, InjectionAttempts) {
  expect_error("u[0,0]; asm(\"trap;\")", "unexpected ';'", 3, 13);
  expect_error("u[0,0] /* */", "unexpected '*'", 3, 15);
  expect_error("u[0,0] // x", "unexpected '/'", 3, 15);
  expect_error("u[0,0] + \"x\"", "unexpected '\"'", 3, 16);
  expect_error("u[0,0] \x01", "unexpected '\\x01'", 3, 14);
}

TEST(ExprErrors, MultiLineTextCountsNewlines) {
  // Block scalars keep newlines; every line shares the first line's indentation (col 7).
  expect_error("u[0,0] +\n#include <x>", "unexpected '#'", 4, 7);
  expect_error("u[0,0]\n  + u[1,0]\n  + bar", "unknown identifier 'bar'", 5, 11);
}

}  // namespace
}  // namespace tbtune
