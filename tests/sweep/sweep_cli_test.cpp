// `tbtune sweep` and `tbtune db merge` as a job script sees them: exit codes and one line on
// stderr for bad input, nothing half-written, and no exit 0 for a tune without a GPU.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/test_util.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

struct CliRun {
  int code = -1;
  std::string err;  ///< stderr
};

/// Runs the CLI with `args` (a shell-quoted string) and no GPU (CUDA_VISIBLE_DEVICES empty).
CliRun run(const std::string& args, const fs::path& dir) {
  const std::string err_file = (dir / "stderr.txt").string();
  const std::string cmd = "CUDA_VISIBLE_DEVICES= " + std::string(TBTUNE_CLI_PATH) + " " + args +
                          " >/dev/null 2>" + err_file;
  const int status = std::system(cmd.c_str());
  CliRun r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream f(err_file);
  r.err.assign(std::istreambuf_iterator<char>(f), {});
  return r;
}

class SweepCliTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tbtune-sweep-cli-" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    std::ofstream(dir_ / "sweep.yaml") << "specs: " << test::source_dir() << "/configs/j2d5pt.yaml\n"
                                       << "domains: [[256, 256]]\nsteps: 10\nprofile: h100\n";
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string p(const std::string& name) const { return (dir_ / name).string(); }
  fs::path dir_;
};

TEST_F(SweepCliTest, TuningWithoutAGpuExits4) {
  const CliRun r = run("sweep " + p("sweep.yaml") + " --shard 0/1 --db " + p("t-%a.db") + " -q", dir_);
  EXPECT_EQ(r.code, 4) << r.err;
  EXPECT_NE(r.err.find("timing needs a GPU"), std::string::npos) << r.err;
}

TEST_F(SweepCliTest, BadInputIsOneLineAndExit2) {
  std::ofstream(p("bad.yaml")) << "specs: [nothing.yaml]\n";
  CliRun r = run("sweep " + p("bad.yaml") + " --list", dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("bad.yaml:1:9: 'nothing.yaml' matches no file"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;

  r = run("sweep " + p("sweep.yaml") + " --shard 4/4 --db " + p("s.db"), dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("shard index 4 is out of range"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(p("s.db")));

  r = run("sweep " + p("sweep.yaml") + " --compile-only --profile v100", dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no such built-in profile"), std::string::npos) << r.err;
}

TEST_F(SweepCliTest, MergeRefusesBadCachesAndReportsMissingShards) {
  // A compile-only shard makes a real input (a few NVRTC compiles of the smallest search).
  std::ofstream(p("small.yaml")) << "specs: " << test::source_dir() << "/configs/j2d5pt.yaml\n"
                                 << "domains: [[256, 256]]\nsteps: 10\nprofile: h100\n"
                                 << "tune: {top: 1, within: 0, max_candidates: 1}\n";
  CliRun r = run("sweep " + p("small.yaml") + " --compile-only --shard 0/1 --db " + p("shard-%a.db") +
                  " --cubins " + p("cubins") + " --threads 2 -q", dir_);
  ASSERT_EQ(r.code, 0) << r.err;
  ASSERT_TRUE(fs::exists(p("shard-0.db")));

  std::ofstream(p("corrupt.db")) << "not a database at all";
  r = run("db merge " + p("out.db") + " " + p("shard-0.db") + " " + p("corrupt.db"), dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("is not an SQLite database"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(p("out.db")));
  r = run("db merge " + p("out.db") + " " + p("missing.db"), dir_);
  EXPECT_EQ(r.code, 2);
  EXPECT_NE(r.err.find("no cache at"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(p("out.db")));

  // Shard 1 of 2 never ran: listed, the rest merged, exit 3.
  r = run("db merge " + p("out.db") + " " + p("shard-%a.db") + " --expect 2", dir_);
  EXPECT_EQ(r.code, 3) << r.err;
  EXPECT_TRUE(fs::exists(p("out.db")));
}

}  // namespace
}  // namespace tbtune
