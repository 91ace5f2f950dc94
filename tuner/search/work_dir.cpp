#include "tuner/search/work_dir.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace fs = std::filesystem;

namespace {

constexpr const char* kPrefix = "tbtune-";
constexpr std::size_t kNameLength = 13;  // "tbtune-" and mkdtemp's six characters

fs::path temp_parent() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp && *tmp ? fs::path(tmp) : fs::path("/tmp");
}

}  // namespace

int WorkDir::remove_stale(const fs::path& parent) {
  std::error_code ec;
  std::vector<std::pair<fs::path, int>> stale;  // with the lock taken, until removed
  for (fs::directory_iterator it(parent, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.size() != kNameLength || name.rfind(kPrefix, 0) != 0) continue;
    const int fd = ::open((it->path() / kLockName).c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW);
    if (fd < 0) continue;
    if (::flock(fd, LOCK_EX | LOCK_NB) == 0)  // nobody holds it: its run is gone
      stale.emplace_back(it->path(), fd);
    else
      ::close(fd);
  }
  for (const auto& [path, fd] : stale) {
    fs::remove_all(path, ec);
    ::close(fd);
  }
  return int(stale.size());
}

WorkDir::WorkDir(const std::string& given) {
  if (!given.empty()) {
    path_ = given;
    fs::create_directories(path_);
    return;
  }
  const fs::path parent = temp_parent();
  (void)remove_stale(parent);
  std::string templ = (parent / (std::string(kPrefix) + "XXXXXX")).string();
  if (!::mkdtemp(templ.data()))
    throw Error(fmt::format("cannot create a temporary folder like '{}'", templ));
  path_ = templ;
  owned_ = true;
  // Locked under a name of its own, then renamed: a sweeper never finds the lock file unlocked.
  const fs::path taking = path_ / ".tbtune-lock-new";
  lock_fd_ = ::open(taking.c_str(), O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (lock_fd_ >= 0 && ::flock(lock_fd_, LOCK_EX) == 0) {
    std::error_code ec;
    fs::rename(taking, path_ / kLockName, ec);
  }
}

WorkDir::~WorkDir() {
  std::error_code ec;
  if (owned_) fs::remove_all(path_, ec);
  if (lock_fd_ >= 0) ::close(lock_fd_);
}

}  // namespace tbtune
