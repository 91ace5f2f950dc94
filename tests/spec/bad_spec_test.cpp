// Runs the corpus tests/specs/bad/*.yaml: every file must be rejected with one line
// "file:line:col: message". Its first line is "# expect: <part of the message>", its second
// "# at: <line>:<col>", the position the error must point at.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "tuner/spec/error.hpp"
#include "tuner/spec/spec.hpp"

namespace tbtune {
namespace {

std::vector<std::string> corpus(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : std::filesystem::directory_iterator(std::string(TBTUNE_TEST_DIR) + dir))
    if (e.path().extension() == ".yaml") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

/// The text after `prefix` on line `n` (1-based) of `path`.
std::string header(const std::string& path, int n, const std::string& prefix) {
  std::ifstream in(path);
  std::string line;
  for (int i = 0; i < n; ++i) std::getline(in, line);
  EXPECT_EQ(line.rfind(prefix, 0), 0u) << path << " line " << n << " must start with " << prefix;
  return line.size() >= prefix.size() ? line.substr(prefix.size()) : "";
}

TEST(BadSpecs, CorpusIsLargeEnough) { EXPECT_GE(corpus("/specs/bad").size(), 20u); }

TEST(BadSpecs, EachIsRejectedAtTheRightPlace) {
  for (const std::string& path : corpus("/specs/bad")) {
    SCOPED_TRACE(path);
    const std::string expect = header(path, 1, "# expect: ");
    const std::string at = header(path, 2, "# at: ");
    try {
      (void)load_spec(path);
      ADD_FAILURE() << "accepted";
    } catch (const SpecError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.rfind(path + ":" + at + ": ", 0), 0u) << what;
      EXPECT_NE(e.message().find(expect), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << "must be one line: " << what;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "not a SpecError: " << e.what();
    }
  }
}

TEST(GoodSpecs, EachLoads) {
  const auto paths = corpus("/specs/good");
  EXPECT_GE(paths.size(), 3u);
  for (const std::string& path : paths) {
    SCOPED_TRACE(path);
    EXPECT_NO_THROW((void)load_spec(path));
  }
}

}  // namespace
}  // namespace tbtune
