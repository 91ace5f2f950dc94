// Readers never write: a lookup reads a cache in a folder it cannot write, as another user
// (nobody, when the test runs as root: root ignores file modes, so a chmod alone would prove
// nothing), both with no writer (the file is opened immutable) and while a writer holds it open
// with new rows in its WAL; and nothing appears in the folder. And a lookup never loads NVRTC.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <functional>

#include "db/cache.hpp"
#include "tbtune/tbtune.hpp"
#include "tests/test_util.hpp"
#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

/// Runs `body` in a child process, as `nobody` when this process is root; its exit status.
int run_as_reader(const std::function<int()>& body) {
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) ::_exit(90);
    int rc = 91;
    try {
      rc = body();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "reader: %s\n", e.what());
    }
    ::_exit(rc);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

class ReadOnly : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("tbtune_ro_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
    spec_path_ = test::source_dir() + "/configs/j2d5pt.yaml";
    const Spec spec = load_spec(spec_path_);
    Cache c(db_, Cache::Mode::ReadWrite);
    add_winner(c, make_stencil(spec), spec.text, 9);
  }
  void TearDown() override {
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }
  static void add_winner(Cache& c, const Stencil& s, const std::string& text, int steps_class) {
    DeviceRecord d;
    d.name = "Test GPU";
    d.cc_major = 9;
    d.sm_count = 1;
    c.put_device(d);
    c.put_stencil(s, text);
    Winner w;
    w.key = WinnerKey{s.hash, d.fingerprint(), DType::Double, {64, 64, 1}, steps_class};
    w.stencil_name = s.name;
    w.steps = 1L << steps_class;
    w.trial.strategy = "naive";
    w.trial.status = TrialStatus::Ok;
    w.trial.cubin = "not a cubin";
    c.put_winner(w);
  }
  /// Folder and file readable by everyone, writable by no one but root.
  void lock_down() {
    ::chmod(db_.c_str(), 0444);
    ::chmod(dir_.c_str(), 0555);
  }
  [[nodiscard]] std::size_t files() const {
    return std::size_t(std::distance(fs::directory_iterator(dir_), fs::directory_iterator()));
  }
  fs::path dir_;
  std::string db_, spec_path_;
};

TEST_F(ReadOnly, ALookupReadsACacheInAFolderItCannotWrite) {
  lock_down();
  const std::size_t before = files();
  const int rc = run_as_reader([&] {
    LookupOptions o;
    o.db = db_;
    o.policy = MissPolicy::Fail;
    const Lookup l = lookup(spec_path_, o);
    // The stencil was found: the reason is about the device (none here, or not "Test GPU").
    const bool read = l.reason != MissReason::NoCache && l.reason != MissReason::StencilUnknown;
    if (!read) std::fprintf(stderr, "reader: %s\n", l.message.c_str());
    return read ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
  EXPECT_EQ(files(), before) << "the reader created a file beside the cache";
}

TEST_F(ReadOnly, AReaderSeesWhatAWriterJustCommitted) {
  Cache writer(db_, Cache::Mode::ReadWrite);  // holds -wal and -shm open, as a running tune does
  const Spec spec = load_spec(spec_path_);
  add_winner(writer, make_stencil(spec), spec.text, 10);
  ::chmod(dir_.c_str(), 0755);  // nobody may not create files here
  const int rc = run_as_reader([&] {
    const Cache reader(db_, Cache::Mode::ReadOnly);
    return reader.winners().size() == 2 ? 0 : 1;
  });
  EXPECT_EQ(rc, 0);
}

TEST(Nvrtc, ALookupNeverLoadsItACompileDoes) {
  LookupOptions o;
  o.db = "/nonexistent/tbtune.db";
  o.policy = MissPolicy::Nearest;
  const Lookup l = lookup(test::source_dir() + "/configs/j2d5pt.yaml", o);
  EXPECT_FALSE(l.kernel.has_value());
  EXPECT_FALSE(nvrtc_loaded());

  // $TBTUNE_NVRTC names the library exactly: a wrong one fails the compile with a clear error...
  ::setenv("TBTUNE_NVRTC", "/nonexistent/libnvrtc.so", 1);
  try {
    (void)compile_cuda("extern \"C\" __global__ void k() {}", "sm_90");
    ADD_FAILURE() << "compiled without NVRTC";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("cannot load NVRTC"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(nvrtc_loaded());
  // ...and the next compile, with the library findable, loads it.
  ::unsetenv("TBTUNE_NVRTC");
  EXPECT_FALSE(compile_cuda("extern \"C\" __global__ void k() {}", "sm_90").cubin.empty());
  EXPECT_TRUE(nvrtc_loaded());
}

}  // namespace
}  // namespace tbtune
