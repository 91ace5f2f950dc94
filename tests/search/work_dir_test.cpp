// Tests for tuner/search/work_dir: a temporary work folder is removed at the end and a given one
// kept; a folder left by a run that died (its lock held by no process) is removed by the next
// run's, while a live run's, another program's and one without a lock file are left alone.
#include "tuner/search/work_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>

#include <gtest/gtest.h>

namespace tbtune {
namespace {

namespace fs = std::filesystem;

class WorkDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tmp_ = fs::temp_directory_path() / ("tbtune_work_dir_test_" + std::to_string(getpid()));
    fs::remove_all(tmp_);
    fs::create_directories(tmp_);
    const char* old = std::getenv("TMPDIR");
    if (old) old_tmpdir_ = old;
    had_tmpdir_ = old != nullptr;
    setenv("TMPDIR", tmp_.c_str(), 1);
  }
  void TearDown() override {
    if (had_tmpdir_) setenv("TMPDIR", old_tmpdir_.c_str(), 1);
    else unsetenv("TMPDIR");
    fs::remove_all(tmp_);
  }

  // A temporary work folder made by a child process that then ends (as kill -9 would leave it)
  // or, with `live`, stays until the returned pid is killed.
  pid_t folder_of_child(bool live, fs::path& made) {
    int p[2];
    EXPECT_EQ(pipe(p), 0);
    const pid_t pid = fork();
    if (pid == 0) {
      close(p[0]);
      auto* w = new WorkDir("");  // never destroyed: the child leaves as a killed run would
      std::ofstream(w->file("reference.bin")) << "a large reference output";
      const std::string path = w->path().string();
      (void)!write(p[1], path.data(), path.size());
      close(p[1]);
      if (live) pause();
      _exit(0);
    }
    close(p[1]);
    char buf[4096];
    const ssize_t n = read(p[0], buf, sizeof buf);
    close(p[0]);
    made = std::string(buf, n > 0 ? std::size_t(n) : 0);
    if (!live) waitpid(pid, nullptr, 0);
    return pid;
  }

  fs::path tmp_;
  std::string old_tmpdir_;
  bool had_tmpdir_ = false;
};

TEST_F(WorkDirTest, ATemporaryFolderIsRemovedAtTheEndAGivenOneKept) {
  fs::path made;
  {
    WorkDir d("");
    made = d.path();
    EXPECT_EQ(made.parent_path(), tmp_);
    EXPECT_TRUE(fs::is_directory(made));
    EXPECT_TRUE(fs::exists(made / WorkDir::kLockName));
  }
  EXPECT_FALSE(fs::exists(made));
  const fs::path given = tmp_ / "given";
  { WorkDir d(given.string()); }
  EXPECT_TRUE(fs::is_directory(given));
}

TEST_F(WorkDirTest, TheNextRunRemovesTheFolderOfARunThatDied) {
  fs::path dead, live;
  const pid_t alive = folder_of_child(true, live);  // first: the dead one's run would sweep it
  (void)folder_of_child(false, dead);
  ASSERT_TRUE(fs::exists(dead / "reference.bin"));
  ASSERT_TRUE(fs::exists(live / "reference.bin"));
  // Neither another program's folder of the same form nor one whose lock file is not there yet.
  fs::create_directories(tmp_ / "tbtune-abcdef");
  fs::create_directories(tmp_ / "tbtune-other-name");
  std::ofstream(tmp_ / "tbtune-other-name" / WorkDir::kLockName) << "";
  {
    WorkDir next("");
    EXPECT_FALSE(fs::exists(dead)) << "the dead run's folder was kept";
    EXPECT_TRUE(fs::exists(live / "reference.bin")) << "a live run's folder was removed";
    EXPECT_TRUE(fs::exists(tmp_ / "tbtune-abcdef"));
    EXPECT_TRUE(fs::exists(tmp_ / "tbtune-other-name"));
  }
  kill(alive, SIGKILL);
  waitpid(alive, nullptr, 0);
  EXPECT_EQ(WorkDir::remove_stale(tmp_), 1);  // now the killed one's
  EXPECT_FALSE(fs::exists(live));
}

}  // namespace
}  // namespace tbtune
