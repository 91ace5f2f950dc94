// Tests of the YAML spec reader: values, defaults, error positions, and the shipped configs.
#include "tuner/spec/spec.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "tests/test_util.hpp"
#include "tuner/spec/error.hpp"
#include "tuner/spec/stencil.hpp"

namespace tbtune {
namespace {

const std::string kHead = "name: t\ndims: 2\ndtype: double\n";
const std::string kTail = "domain: [16, 12]\nsteps: 7\n";

/// parse_spec(text) throws a SpecError whose what() starts "mem.yaml:line:col: " and contains msg.
void expect_error(const std::string& text, const std::string& msg, int line, int col) {
  SCOPED_TRACE(text);
  try {
    (void)parse_spec(text, "mem.yaml");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("mem.yaml:" + std::to_string(line) + ":" +
                                              std::to_string(col) + ": ", 0), 0u)
        << e.what();
    EXPECT_NE(e.message().find(msg), std::string::npos) << e.what();
  }
}

TEST(Spec, ReadsEveryField) {
  const std::string text = "name: j-2_d\ndims: 3\ndtype: float\nparams: {a: 0.5, b: -2}\n"
                           "expr: \"a*u[0,0,1] + b\"\ndomain: [10, 11, 12]\nsteps: 42\n"
                           "boundary: dirichlet\n";
  const Spec s = parse_spec(text, "mem.yaml");
  EXPECT_EQ(s.name, "j-2_d");
  EXPECT_EQ(s.dims, 3);
  EXPECT_EQ(s.dtype, DType::Float);
  EXPECT_EQ(s.params.at("a"), 0.5);
  EXPECT_EQ(s.params.at("b"), -2);
  EXPECT_EQ(s.expr.kind, Expr::Kind::Add);
  EXPECT_EQ(s.domain, (std::vector<long>{10, 11, 12}));
  EXPECT_EQ(s.steps, 42);
  EXPECT_EQ(s.boundary, "dirichlet");
  EXPECT_EQ(s.path, "mem.yaml");
  EXPECT_EQ(s.text, text);
}

TEST(Spec, BoundaryDefaultsToDirichlet) {
  EXPECT_EQ(parse_spec(kHead + "expr: u[0,0]\n" + kTail, "x").boundary, "dirichlet");
}

TEST(Spec, PointsBecomeASumOfProducts) {
  const Spec s = parse_spec(kHead + "points:\n  - {at: [1, 0], c: 0.5}\n  - {at: [0, -1], c: 2}\n" +
                                kTail, "x");
  ASSERT_EQ(s.expr.kind, Expr::Kind::Add);
  const Expr& second = s.expr.args[1];
  ASSERT_EQ(second.kind, Expr::Kind::Mul);
  EXPECT_EQ(second.args[0].value, 2);
  EXPECT_EQ(second.args[1].offset, (Offset{0, -1, 0}));
}

TEST(Spec, ExpressionErrorsPointIntoTheFile) {
  // Quoted: the column is past the quote; escapes and folded lines are followed.
  expect_error(kHead + "expr: \"u[0,0] + foo\"\n" + kTail, "unknown identifier 'foo'", 4, 17);
  expect_error(kHead + "expr: 'it''s + u[0,0]'\n" + kTail, "unknown identifier 'it'", 4, 8);
  expect_error(kHead + "expr: 'u[0,0]'' + u[0,0]'\n" + kTail, "unexpected '''", 4, 14);
  expect_error(kHead + "expr: \"\\tu[0,0] \\\"\"\n" + kTail, "unexpected '\"'", 4, 17);
  // Plain, folded over two lines.
  expect_error(kHead + "expr: u[0,0] +\n  bar\n" + kTail, "unknown identifier 'bar'", 5, 3);
  // Literal block: lines and columns inside the block.
  expect_error(kHead + "expr: |\n    u[0,0]\n    + u[9,0]\n" + kTail, "offset 9", 6, 9);
  // Folded block: not mapped exactly; still names the right line.
  expect_error(kHead + "expr: >\n  u[0,0] $\n" + kTail, "unexpected '$'", 4, 14);
}

TEST(Spec, KeyErrors) {
  expect_error(kHead + "expr: u[0,0]\n" + kTail + "boundry: dirichlet\n",
               "unknown key 'boundry' (expected one of: name, dims, dtype, expr, points, params, "
               "domain, steps, boundary); did you mean 'boundary'?",
               7, 1);
  expect_error(kHead + "expr: u[0,0]\n" + kTail + "zzz: 1\n", "unknown key 'zzz'", 7, 1);
  expect_error(kHead + "expr: u[0,0]\n" + kTail + "stepsxy: 1\n", "did you mean 'steps'?", 7, 1);
  expect_error(kHead + "expr: u[0,0]\n" + kTail + "name: again\n",
               "duplicate key 'name' (first at line 1)", 7, 1);
  expect_error(kHead + "expr: u[0,0]\n" + kTail + "[a]: 1\n", "keys must be plain names", 7, 1);
}

TEST(Spec, LongUnknownKeyHasNoSuggestion) {
  // Far longer than any known key: no suggestion, and no distance table of the key's length is
  // built per known key (under the sanitizers, that was a fifth of the spec fuzz target's time).
  const std::string key(1000, 's');  // yaml-cpp takes an implicit key of up to 1024
  try {
    (void)parse_spec(kHead + "expr: u[0,0]\n" + kTail + key + ": 1\n", "mem.yaml");
    FAIL() << "accepted";
  } catch (const SpecError& e) {
    EXPECT_EQ(e.message().find("unknown key 'sss"), 0u) << e.message().substr(0, 80);
    EXPECT_EQ(e.message().find("did you mean"), std::string::npos);
  }
}

TEST(Spec, ValueErrors) {
  expect_error(kHead + "expr: u[0,0]\ndomain: [16, 12]\nsteps: 1.5\n",
               "'steps' must be an integer >= 1, got '1.5'", 6, 8);
  expect_error(kHead + "expr: u[0,0]\ndomain: [16, 12]\nsteps: -3\n",
               "'steps' must be an integer >= 1, got '-3'", 6, 8);
  expect_error(kHead + "expr: u[0,0]\ndomain: [16, 12]\nsteps: [1]\n",
               "'steps' must be an integer >= 1, got a list", 6, 8);
  expect_error(kHead + "expr: u[0,0]\ndomain: 16\nsteps: 1\n",
               "'domain' must list 2 extents (nx, ny) for a 2D stencil, got '16'", 5, 9);
  expect_error(kHead + "expr: u[0,-3] + u[0,3]\ndomain: [16, 6]\nsteps: 1\n",
               "domain extent 6 is too small for radius 3", 5, 14);
  expect_error(kHead + "params: {u: 1}\nexpr: u[0,0]\n" + kTail, "parameter name 'u'", 4, 10);
  expect_error(kHead + "params: {a: .inf}\nexpr: a*u[0,0]\n" + kTail,
               "parameter 'a' must be a finite number", 4, 13);
  expect_error(kHead + "points: []\n" + kTail, "'points' must be a non-empty list", 4, 9);
  expect_error(kHead + "points: [{at: [0, 9], c: 1}]\n" + kTail,
               "offset 9 exceeds the maximum radius 8", 4, 19);
}

TEST(Spec, YamlErrorsBecomeSpecErrors) {
  expect_error("name: [t\n", "invalid YAML", 2, 1);
  expect_error("a: b: c\n", "invalid YAML", 1, 5);
  expect_error("", "file is empty", 1, 1);
  expect_error("# nothing\n\n", "file is empty", 1, 1);
  expect_error("42\n", "the top level must be a map", 1, 1);
}

TEST(Spec, UnreadableFileIsAPlainError) {
  try {
    (void)load_spec("/nonexistent/dir/x.yaml");
    FAIL() << "accepted";
  } catch (const SpecError&) {
    FAIL() << "an unreadable file has no line: expected a plain tbtune::Error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot read '/nonexistent/dir/x.yaml'"),
              std::string::npos);
  }
  EXPECT_THROW((void)load_spec(TBTUNE_TEST_DIR), Error);
}

/// What each shipped config must derive to.
struct Expected {
  int dims;
  int radius;
  std::size_t points;
  Shape shape;
};

TEST(Configs, EveryShippedConfigLoadsWithTheExpectedShape) {
  const std::map<std::string, Expected> expected = {
      {"j2d5pt", {2, 1, 5, Shape::Star}},     {"j2ds9pt", {2, 2, 9, Shape::Star}},
      {"j2d9pt", {2, 1, 9, Shape::Box}},      {"j2d25pt", {2, 2, 25, Shape::Box}},
      {"j2d49pt", {2, 3, 49, Shape::Box}},    {"j3d7pt", {3, 1, 7, Shape::Star}},
      {"j3d13pt", {3, 2, 13, Shape::Star}},   {"j3d17pt", {3, 1, 17, Shape::General}},
      {"j3d27pt", {3, 1, 27, Shape::Box}},    {"poisson", {3, 1, 19, Shape::General}},
  };
  const auto paths = test::config_paths();
  EXPECT_EQ(paths.size(), expected.size());
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    const Spec spec = load_spec(path);
    const Stencil s = make_stencil(spec);
    ASSERT_TRUE(expected.count(spec.name)) << "unexpected config " << spec.name;
    const Expected& e = expected.at(spec.name);
    EXPECT_EQ(std::filesystem::path(path).stem(), spec.name);
    EXPECT_EQ(s.dims, e.dims);
    EXPECT_EQ(s.radius, e.radius);
    EXPECT_EQ(s.points.size(), e.points);
    EXPECT_EQ(s.shape, e.shape) << shape_name(s.shape);
    EXPECT_EQ(spec.dtype, DType::Double);
    EXPECT_EQ(spec.steps, spec.dims == 2 ? 1000 : 100);
    if (spec.dims == 3) {
      EXPECT_EQ(spec.domain, (std::vector<long>{384, 352, 2560}));
    }
  }
}

TEST(Configs, DefaultDomains) {
  const std::map<std::string, long> side = {{"j2d5pt", 7656}, {"j2ds9pt", 7392}, {"j2d9pt", 8052},
                                            {"j2d25pt", 7920}, {"j2d49pt", 8250}};
  for (const auto& [name, n] : side) {
    const Spec spec = load_spec(test::source_dir() + "/configs/" + name + ".yaml");
    EXPECT_EQ(spec.domain, (std::vector<long>{n, n})) << name;
  }
}

}  // namespace
}  // namespace tbtune
