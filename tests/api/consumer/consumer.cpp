// The installed C++ API on a machine without a GPU: parsing and hashing a spec, a miss with its
// reason and no exception, and each kind of bad input as an ApiError with its code.
//   consumer SPEC MISSING_DB
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tbtune/tbtune.hpp"

namespace {

int failures = 0;

void expect(bool ok, const std::string& what) {
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    ++failures;
  }
}

/// Runs `call`; expects an ApiError with `code`.
template <class Call>
void expect_error(tbtune::ErrorCode code, Call&& call, const std::string& what) {
  try {
    call();
    expect(false, what + ": no error");
  } catch (const tbtune::ApiError& e) {
    expect(e.code() == code, what + ": code " + std::to_string(int(e.code())) + ", " + e.what());
    std::printf("%s -> %s\n", what.c_str(), e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return 2;
  const auto spec = tbtune::StencilSpec::from_file(argv[1]);
  expect(spec.hash().size() == 16, "a 16-digit hash");
  tbtune::LookupOptions o;
  o.db = argv[2];
  o.policy = tbtune::MissPolicy::Nearest;
  const tbtune::Lookup l = tbtune::lookup(spec, o);
  std::printf("%s: %s\n", spec.name().c_str(), l.message.c_str());
  expect(!l.kernel && l.reason == tbtune::MissReason::NoCache, "a missing cache is a miss, reason no_cache");

  expect_error(tbtune::ErrorCode::BadSpec, [] { (void)tbtune::StencilSpec::from_text("name: x\ndims: 5\n"); },
               "bad spec text");
  expect_error(tbtune::ErrorCode::BadSpec, [] { (void)tbtune::lookup(std::string("/no/such/spec.yaml")); },
               "missing spec file");
  expect_error(tbtune::ErrorCode::BadArgument, [&] {
    tbtune::LookupOptions small = o;
    small.domain = std::array<long, 3>{2, 2, 1};
    (void)tbtune::lookup(spec, small);
  }, "a domain too small for the stencil");
  expect_error(tbtune::ErrorCode::BadArgument, [&] {
    tbtune::LookupOptions deep = o;
    deep.domain = std::array<long, 3>{64, 64, 8};
    (void)tbtune::lookup(spec, deep);
  }, "a depth for a 2D stencil");
  expect_error(tbtune::ErrorCode::Cache, [&] {
    tbtune::LookupOptions corrupt = o;
    corrupt.db = argv[1];  // a YAML file is no SQLite cache
    (void)tbtune::lookup(spec, corrupt);
  }, "a corrupt cache");
  expect_error(tbtune::ErrorCode::BadArgument, [] { (void)tbtune::parse_policy("sometimes"); }, "bad policy");
  setenv("TBTUNE_MISS_POLICY", "sometimes", 1);
  expect_error(tbtune::ErrorCode::BadArgument, [&] {
    tbtune::LookupOptions from_env = o;
    from_env.policy.reset();
    (void)tbtune::lookup(spec, from_env);
  }, "bad TBTUNE_MISS_POLICY");
  if (failures == 0) std::printf("consumer: ok\n");
  return failures == 0 ? 0 : 1;
}
