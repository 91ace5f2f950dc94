// CacheReader, the pooled read-only connections of lookups (issue 20): a later lookup reuses
// the connection only while that is as safe as opening anew. It sees what a writer commits
// meanwhile; a replaced file, a changed schema version, a fork and (for a cache opened immutable)
// any change to the file or to the reasons it was opened immutable make it open anew. A fork while
// another thread is inside the pool does not hang the child.
#include <signal.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include <fmt/format.h>

#include "db/cache.hpp"
#include "tests/test_util.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

constexpr uid_t kNobody = 65534;

class ReaderPool : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tbtune_reader_pool_test_" + std::to_string(::getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    db_ = (dir_ / "t.db").string();
    CacheReader::close_idle();
  }
  void TearDown() override {
    CacheReader::close_idle();
    fs::permissions(dir_, fs::perms::owner_all);
    fs::remove_all(dir_);
  }
  /// Stores a winner of j2d5pt with steps class `steps_class` (a key of its own).
  static void add_winner(const std::string& path, int steps_class) {
    const Spec spec = load_spec(test::source_dir() + "/configs/j2d5pt.yaml");
    const Stencil s = make_stencil(spec);
    Cache c(path, Cache::Mode::ReadWrite);
    DeviceRecord d;
    d.name = "Test GPU";
    c.put_device(d);
    c.put_stencil(s, spec.text);
    Winner w;
    w.key = WinnerKey{s.hash, d.fingerprint(), DType::Double, {64, 64, 1}, steps_class};
    w.stencil_name = s.name;
    w.trial.strategy = "naive";
    w.trial.status = TrialStatus::Ok;
    w.trial.cubin = fmt::format("image {}", steps_class);
    c.put_winner(w);
  }
  static std::string hash() {
    return make_stencil(load_spec(test::source_dir() + "/configs/j2d5pt.yaml")).hash;
  }
  /// How many winners a lease on the cache lists, and whether it reused a connection.
  std::pair<std::size_t, bool> look() const {
    auto r = CacheReader::acquire(db_);
    return {r->winners_of(hash()).size(), r->reused()};
  }
  fs::path dir_;
  std::string db_;
};

TEST_F(ReaderPool, ALaterLeaseReusesTheConnectionAndSeesNewCommits) {
  add_winner(db_, 9);
  EXPECT_EQ(look(), std::make_pair(std::size_t(1), false));
  EXPECT_EQ(look(), std::make_pair(std::size_t(1), true));
  {
    Cache writer(db_, Cache::Mode::ReadWrite);  // a tune, connected while the reader is pooled
    add_winner(db_, 10);
    EXPECT_EQ(look(), std::make_pair(std::size_t(2), true));
  }
  add_winner(db_, 11);
  EXPECT_EQ(look(), std::make_pair(std::size_t(3), true));
  // The CUBIN read through the pooled statement is the stored one.
  auto r = CacheReader::acquire(db_);
  const auto listed = r->winners_of(hash());
  ASSERT_EQ(listed.size(), 3u);
  const auto w = r->winner(listed.back().key);
  ASSERT_TRUE(w);
  EXPECT_EQ(w->trial.cubin, "image 9");
}

TEST_F(ReaderPool, TwoLeasesAtOnceHaveTwoConnections) {
  add_winner(db_, 9);
  (void)look();
  auto a = CacheReader::acquire(db_);
  auto b = CacheReader::acquire(db_);
  EXPECT_TRUE(a->reused());
  EXPECT_FALSE(b->reused());
  EXPECT_EQ(a->winners_of(hash()).size(), 1u);
  EXPECT_EQ(b->winners_of(hash()).size(), 1u);
}

TEST_F(ReaderPool, AReplacedFileIsOpenedAnew) {
  add_winner(db_, 9);
  (void)look();
  // Replaced by another cache with two winners, as a copy or a `mv` would.
  const std::string other = (dir_ / "other.db").string();
  add_winner(other, 9);
  add_winner(other, 10);
  fs::rename(other, db_);
  EXPECT_EQ(look(), std::make_pair(std::size_t(2), false));
  // Deleted and made again.
  fs::remove(db_);
  fs::remove(db_ + "-wal");
  fs::remove(db_ + "-shm");
  add_winner(db_, 12);
  EXPECT_EQ(look(), std::make_pair(std::size_t(1), false));
}

TEST_F(ReaderPool, TheSchemaVersionIsAskedOnEveryLease) {
  add_winner(db_, 9);
  (void)look();
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(db_.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = version + 1", nullptr, nullptr, nullptr),
            SQLITE_OK);
  try {
    (void)look();
    ADD_FAILURE() << "a newer cache was read";
  } catch (const CacheError& e) {
    EXPECT_NE(std::string(e.what()).find("newer than this tbtune"), std::string::npos) << e.what();
  }
  ASSERT_EQ(sqlite3_exec(db, "UPDATE schema_version SET version = version - 1", nullptr, nullptr, nullptr),
            SQLITE_OK);
  sqlite3_close(db);
  EXPECT_EQ(look(), std::make_pair(std::size_t(1), false));
}

TEST_F(ReaderPool, AForkedChildOpensItsOwn) {
  add_winner(db_, 9);
  (void)look();
  const pid_t pid = ::fork();
  if (pid == 0) {
    const auto seen = look();
    ::_exit(seen == std::make_pair(std::size_t(1), false) ? 0 : 1);
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(look(), std::make_pair(std::size_t(1), true));  // the parent's is still good
}

/// fork() while another thread is inside the pool (holding its lock): the child's first lookup
/// must not wait for a lock that no thread of the child will ever release. Without the pool's
/// fork handlers the fork happens at once and the child hangs: the parent then kills it and the
/// test fails. With them, fork() waits until the holder lets go (here after 300 ms, or at once
/// once the parent is back from fork(), whichever comes first) and the child starts with an
/// empty pool.
TEST_F(ReaderPool, AForkWhileAnotherThreadHoldsThePoolDoesNotHangTheChild) {
  add_winner(db_, 9);
  (void)look();  // the parent has a pooled connection, which the child must not take
  std::mutex m;
  std::condition_variable cv;
  bool held = false, forked = false;
  std::thread holder([&] {
    auto lock = CacheReader::hold_pool();
    std::unique_lock<std::mutex> l(m);
    held = true;
    cv.notify_all();
    cv.wait_for(l, std::chrono::milliseconds(300), [&] { return forked; });
  });
  {
    std::unique_lock<std::mutex> l(m);
    cv.wait(l, [&] { return held; });
  }
  const pid_t pid = ::fork();
  if (pid == 0) {
    int rc = 3;
    try {
      rc = look() == std::make_pair(std::size_t(1), false) ? 0 : 1;
    } catch (const std::exception& e) {
      std::fprintf(stderr, "child: %s\n", e.what());
    }
    ::_exit(rc);
  }
  {
    const std::lock_guard<std::mutex> l(m);
    forked = true;
  }
  cv.notify_all();
  holder.join();
  ASSERT_GT(pid, 0);
  // Wait for the child at most 10 s (it needs milliseconds), then kill it: a regression fails
  // here rather than hanging the test suite.
  int status = 0;
  pid_t done = 0;
  for (int i = 0; i < 1000 && done == 0; ++i) {
    done = ::waitpid(pid, &status, WNOHANG);
    if (done == 0) ::usleep(10000);
  }
  if (done == 0) {
    ::kill(pid, SIGKILL);
    ::waitpid(pid, &status, 0);
    FAIL() << "the child's lookup hung (the pool's lock was copied locked)";
  }
  ASSERT_EQ(done, pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
  EXPECT_EQ(look(), std::make_pair(std::size_t(1), true));  // the parent's is still good
}

/// Runs `body` in a child as `nobody` (root may write anywhere), talking to the parent over
/// two pipes: the child writes a byte to ask the parent for `between`, then reads its answer.
int run_as_reader(const std::function<int(const std::function<void()>&)>& body,
                  const std::function<void()>& between) {
  int to_parent[2], to_child[2];
  if (::pipe(to_parent) != 0 || ::pipe(to_child) != 0) return 99;
  const pid_t pid = ::fork();
  if (pid == 0) {
    if (::geteuid() == 0 && (::setgid(kNobody) != 0 || ::setuid(kNobody) != 0)) ::_exit(90);
    const auto ask = [&] {
      char c = 1;
      if (::write(to_parent[1], &c, 1) != 1 || ::read(to_child[0], &c, 1) != 1) ::_exit(92);
    };
    int rc = 91;
    try {
      rc = body(ask);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "reader: %s\n", e.what());
    }
    ::_exit(rc);
  }
  ::close(to_parent[1]);  // so the read below ends when the child exits
  ::close(to_child[0]);
  char c = 0;
  while (::read(to_parent[0], &c, 1) == 1) {
    between();
    if (::write(to_child[1], &c, 1) != 1) break;
  }
  ::close(to_parent[0]);
  ::close(to_child[1]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

TEST_F(ReaderPool, AnImmutableReaderIsReusedOnlyWhileNothingChanged) {
  add_winner(db_, 9);
  ::chmod(db_.c_str(), 0444);
  ::chmod(dir_.c_str(), 0555);
  ::sleep(2);  // a pooled immutable reader needs a file last changed over a second ago
  int step = 0;
  std::unique_ptr<Cache> stays;
  const int rc = run_as_reader(
      [&](const std::function<void()>& ask) {
        if (look() != std::make_pair(std::size_t(1), false)) return 1;
        if (look() != std::make_pair(std::size_t(1), true)) return 2;
        ask();  // a writer (root) adds a winner and leaves; two seconds pass
        if (look() != std::make_pair(std::size_t(2), false)) return 3;
        if (look() != std::make_pair(std::size_t(2), true)) return 4;
        ask();  // a writer connects and stays: a -shm appears
        if (look() != std::make_pair(std::size_t(2), false)) return 5;
        return 0;
      },
      [&] {
        if (++step == 1) {
          add_winner(db_, 10);
          EXPECT_FALSE(fs::exists(db_ + "-shm"));
          ::sleep(2);
        } else {
          stays = std::make_unique<Cache>(db_, Cache::Mode::ReadWrite);
          EXPECT_TRUE(fs::exists(db_ + "-shm"));
        }
      });
  EXPECT_EQ(rc, 0);
}

}  // namespace
}  // namespace tbtune
