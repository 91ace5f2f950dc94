#pragma once
/// @file work_dir.hpp
/// The engine's folder for CUBIN files and the reference output: a given one, or a fresh
/// temporary one removed at the end. A run killed outright (kill -9, a second Ctrl-C) cannot
/// remove its own, and the reference output in it is as large as the domain (a GB on
/// FastStencil's 2D domains), so a new temporary folder first removes the ones left so: each
/// holds a lock file that its run keeps locked (flock) while it lives, and a folder whose lock
/// nobody holds is stale. A lock, not a pid: the kernel drops it when its holder dies, whatever
/// pid namespace the holder ran in (containers on one node share /tmp).
#include <filesystem>
#include <string>

namespace tbtune {

class WorkDir {
 public:
  /// `given` (created if missing, kept afterwards), or when empty a new folder
  /// "tbtune-XXXXXX" under $TMPDIR (default /tmp), removed by the destructor. Throws Error when
  /// the temporary folder cannot be created.
  explicit WorkDir(const std::string& given);
  ~WorkDir();
  WorkDir(const WorkDir&) = delete;
  WorkDir& operator=(const WorkDir&) = delete;

  [[nodiscard]] std::string file(const std::string& name) const { return (path_ / name).string(); }
  [[nodiscard]] const std::filesystem::path& path() const { return path_; }

  /// Removes the temporary work folders under `parent` that no live run holds; returns how
  /// many. Folders without a lock file (another program's, or being created) are left alone.
  static int remove_stale(const std::filesystem::path& parent);

  /// The lock file's name inside a temporary work folder.
  static constexpr const char* kLockName = ".tbtune-lock";

 private:
  std::filesystem::path path_;
  bool owned_ = false;
  int lock_fd_ = -1;
};

}  // namespace tbtune
