#include "tuner/gpu/supervisor.hpp"

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tuner/gpu/protocol.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

// Async-signal-safe set-up of a fresh child: signals and death of the parent.
void child_common(pid_t parent) {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigaction(SIGINT, &ignore, nullptr);
  sigaction(SIGTERM, &ignore, nullptr);
  struct sigaction dfl {};
  dfl.sa_handler = SIG_DFL;
  sigaction(SIGPIPE, &dfl, nullptr);
  prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (getppid() != parent) _exit(1);  // the parent died before prctl took effect
}

std::string describe(int status) {
  if (WIFSIGNALED(status)) {
    const int sig = WTERMSIG(status);
    const char* name = strsignal(sig);
    return fmt::format("killed by signal {} ({})", sig, name ? name : "unknown");
  }
  if (WIFEXITED(status)) return fmt::format("exited with code {}", WEXITSTATUS(status));
  return "ended";
}

}  // namespace

Launcher exec_launcher(std::vector<std::string> argv) {
  struct Prepared {
    std::vector<std::string> strings;
    std::vector<char*> pointers;
  };
  auto p = std::make_shared<Prepared>();
  p->strings = std::move(argv);
  for (std::string& s : p->strings) p->pointers.push_back(s.data());
  p->pointers.push_back(nullptr);
  return [p](int fd) {
    // The channel goes to fd 3, the one place the worker looks for it. dup2 onto itself would
    // leave close-on-exec set, so that case clears the flag instead.
    if (fd == 3) {
      fcntl(3, F_SETFD, 0);
    } else if (dup2(fd, 3) < 0) {
      _exit(126);
    }
    execv(p->pointers[0], p->pointers.data());
    _exit(127);
  };
}

Launcher fork_launcher(std::function<void(int fd)> serve) { return serve; }

Supervisor::Supervisor(Launcher launcher) : launcher_(std::move(launcher)) {}

Supervisor::~Supervisor() {
  if (pid_ <= 0) return;
  // A closed channel makes a worker's serve loop return; give it a moment to free the GPU.
  ::close(fd_);
  fd_ = -1;
  for (int i = 0; i < 50; ++i) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  (void)reap(true);
}

bool Supervisor::ensure_started() {
  if (pid_ > 0) {
    // A child that ended while idle (killed with the thread that started it, say: see
    // child_common) is reaped and replaced, so that the next job does not fail on it.
    siginfo_t info{};
    if (waitid(P_PID, id_t(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0) return false;
    (void)reap(false);
  }
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
    throw Error(fmt::format("cannot create the worker channel: {}", std::strerror(errno)));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    const int err = errno;
    ::close(fds[0]);
    ::close(fds[1]);
    throw Error(fmt::format("cannot start the worker process: {}", std::strerror(err)));
  }
  if (pid == 0) {
    ::close(fds[0]);
    child_common(parent);
    launcher_(fds[1]);
    _exit(0);  // never run the parent's atexit handlers or destructors in the child
  }
  ::close(fds[1]);
  {
    const std::lock_guard lock(pid_mutex_);
    pid_ = pid;
  }
  fd_ = fds[0];
  ++starts_;
  return true;
}

CallResult Supervisor::call(const std::string& request, double timeout_s) {
  (void)ensure_started();
  using clock = std::chrono::steady_clock;
  Deadline deadline;
  if (timeout_s > 0)
    deadline = clock::now() + std::chrono::duration_cast<clock::duration>(
                                  std::chrono::duration<double>(timeout_s));
  Frame reply;
  ReadStatus status = ReadStatus::Eof;
  if (write_frame(fd_, {FrameKind::Request, request})) status = read_frame(fd_, reply, deadline);
  switch (status) {
    case ReadStatus::Timeout:
      (void)reap(true);
      return {CallResult::Kind::TimedOut, fmt::format("no answer within {:g} s", timeout_s)};
    case ReadStatus::Eof:
      return {CallResult::Kind::Died, reap(false)};
    case ReadStatus::Ok:
      break;
  }
  if (reply.kind == FrameKind::ReplyThenExit) (void)reap(false);
  if (reply.kind == FrameKind::Failure) return {CallResult::Kind::Failure, reply.payload};
  return {CallResult::Kind::Reply, reply.payload};
}

void Supervisor::kill_child() {
  if (pid_ > 0) (void)reap(true);
}

void Supervisor::interrupt() {
  const std::lock_guard lock(pid_mutex_);
  if (pid_ > 0) ::kill(pid_, SIGKILL);
}

std::string Supervisor::reap(bool kill) {
  if (fd_ >= 0) ::close(fd_);
  fd_ = -1;
  if (pid_ <= 0) return "not running";
  // A child that closed the channel is normally on its way out (tearing down a CUDA context
  // takes a moment); one that lingers past the grace period is killed. The waits leave the
  // child unreaped (WNOWAIT), so that its pid stays its own until reaped under pid_mutex_.
  bool ended = false;
  for (int i = 0; !kill && i < 250 && !ended; ++i) {
    siginfo_t info{};
    ended = waitid(P_PID, id_t(pid_), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == pid_;
    if (!ended) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  const std::lock_guard lock(pid_mutex_);
  if (!ended) ::kill(pid_, SIGKILL);
  int status = 0;
  pid_t r = 0;
  do {
    r = waitpid(pid_, &status, 0);
  } while (r < 0 && errno == EINTR);
  pid_ = -1;
  return r < 0 ? "ended (not reaped)" : describe(status);
}

}  // namespace tbtune
