// Opening something that is not a healthy cache (issue 22): a folder, a cache that lost its
// schema version row, arbitrary bytes. Each must fail with a CacheError that says what is wrong.
#include <sqlite3.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

#include "db/cache.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;

class CacheOpenTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = fs::temp_directory_path() /
           ("tbtune_cache_open_test_" + std::to_string(getpid()) + "_" + info->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }
  fs::path dir_;
};

/// The message of the CacheError that opening `path` in `mode` throws ("" if it opens).
std::string open_error(const std::string& path, Cache::Mode mode) {
  try {
    Cache c(path, mode);
  } catch (const CacheError& e) {
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    return e.what();
  }
  return "";
}

TEST_F(CacheOpenTest, FolderIsNamedAsOne) {
  // SQLite called it "disk I/O error".
  for (const auto mode : {Cache::Mode::ReadOnly, Cache::Mode::ReadWrite}) {
    const std::string msg = open_error(dir_.string(), mode);
    EXPECT_NE(msg.find("is a folder"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("I/O"), std::string::npos) << msg;
  }
}

TEST_F(CacheOpenTest, MissingVersionRowIsDamageNotEmptiness) {
  const std::string path = (dir_ / "t.db").string();
  { Cache c(path, Cache::Mode::ReadWrite); }
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
  ASSERT_EQ(sqlite3_exec(db, "DELETE FROM schema_version", nullptr, nullptr, nullptr), SQLITE_OK);
  sqlite3_close(db);
  // Read-only it was called "empty"; read-write it tried to create the tables again.
  for (const auto mode : {Cache::Mode::ReadOnly, Cache::Mode::ReadWrite}) {
    const std::string msg = open_error(path, mode);
    EXPECT_NE(msg.find("is damaged"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("empty"), std::string::npos) << msg;
  }
}

TEST_F(CacheOpenTest, VersionBelowOneIsDamage) {
  // A version of -4 indexed the migrations out of bounds (UBSan; the cache fuzz target).
  for (const char* bad : {"-4", "0", "'x'"}) {
    const std::string path = (dir_ / (std::string("v") + bad + ".db")).string();
    { Cache c(path, Cache::Mode::ReadWrite); }
    sqlite3* db = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &db), SQLITE_OK);
    const std::string sql = std::string("UPDATE schema_version SET version = ") + bad;
    ASSERT_EQ(sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(db);
    for (const auto mode : {Cache::Mode::ReadOnly, Cache::Mode::ReadWrite}) {
      const std::string msg = open_error(path, mode);
      EXPECT_NE(msg.find("is damaged: its schema version ("), std::string::npos) << bad << ": " << msg;
    }
  }
}

TEST_F(CacheOpenTest, ArbitraryBytesAreNotACache) {
  const std::string path = (dir_ / "junk.db").string();
  std::ofstream(path, std::ios::binary) << std::string(5000, '\x5a');
  for (const auto mode : {Cache::Mode::ReadOnly, Cache::Mode::ReadWrite})
    EXPECT_NE(open_error(path, mode), "");
}

}  // namespace
}  // namespace tbtune
