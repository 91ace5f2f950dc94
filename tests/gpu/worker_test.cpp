// Tests for the worker machinery without a GPU: the frame protocol, the supervisor with
// planted job handlers that crash (abort, SIGSEGV), hang, throw or exit, the measurer's mapping
// of each to a trial status, and the real `tbtune worker` started by exec.
#include <csignal>
#include <cstdlib>
#include <thread>

#include <sys/socket.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tuner/gpu/messages.hpp"
#include "tuner/gpu/protocol.hpp"
#include "tuner/gpu/supervisor.hpp"
#include "tuner/search/worker_measurer.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

using namespace std::chrono_literals;

struct Pair {
  Pair() { EXPECT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, fd), 0); }
  ~Pair() {
    if (fd[0] >= 0) close(fd[0]);
    if (fd[1] >= 0) close(fd[1]);
  }
  int fd[2] = {-1, -1};
};

TEST(Protocol, FramesRoundTripIncludingLargeAndEmptyPayloads) {
  Pair p;
  const std::string big(300000, 'x');  // larger than a socket buffer: needs a reader meanwhile
  std::thread writer([&] {
    EXPECT_TRUE(write_frame(p.fd[0], {FrameKind::Request, ""}));
    EXPECT_TRUE(write_frame(p.fd[0], {FrameKind::Reply, big}));
    EXPECT_TRUE(write_frame(p.fd[0], {FrameKind::Failure, "why"}));
  });
  Frame f;
  ASSERT_EQ(read_frame(p.fd[1], f), ReadStatus::Ok);
  EXPECT_EQ(f.kind, FrameKind::Request);
  EXPECT_TRUE(f.payload.empty());
  ASSERT_EQ(read_frame(p.fd[1], f), ReadStatus::Ok);
  EXPECT_EQ(f.payload, big);
  ASSERT_EQ(read_frame(p.fd[1], f), ReadStatus::Ok);
  EXPECT_EQ(f.kind, FrameKind::Failure);
  EXPECT_EQ(f.payload, "why");
  writer.join();
}

TEST(Protocol, TimeoutEofAndMalformedFrames) {
  Pair p;
  Frame f;
  EXPECT_EQ(read_frame(p.fd[1], f, std::chrono::steady_clock::now() + 50ms), ReadStatus::Timeout);
  const char junk[5] = {1, 0, 0, 0, 'Z'};
  ASSERT_EQ(write(p.fd[0], junk, 5), 5);
  EXPECT_THROW((void)read_frame(p.fd[1], f), Error);
  close(p.fd[0]);
  p.fd[0] = -1;
  EXPECT_EQ(read_frame(p.fd[1], f), ReadStatus::Eof);
  EXPECT_FALSE(write_frame(p.fd[1], {FrameKind::Reply, "to nobody"}));  // no SIGPIPE
}

// A planted worker: "echo:X" answers X, and the rest misbehave as named.
JobResult planted(const std::string& request) {
  if (request.rfind("echo:", 0) == 0) return {request.substr(5)};
  if (request == "abort") std::abort();
  if (request == "segv") std::raise(SIGSEGV);
  if (request == "hang") std::this_thread::sleep_for(60s);
  if (request == "throw") throw Error("planted exception");
  if (request == "exit-after") return {"bye", true};
  if (request == "exit") _exit(3);
  return {"unknown"};
}

Launcher planted_launcher() {
  return fork_launcher([](int fd) { serve_jobs(fd, planted); });
}

TEST(Supervisor, ReportsEachFailureAndRestartsForTheNextJob) {
  Supervisor s(planted_launcher());
  EXPECT_FALSE(s.running());
  auto r = s.call("echo:one", 10);
  EXPECT_EQ(r.kind, CallResult::Kind::Reply);
  EXPECT_EQ(r.text, "one");
  EXPECT_EQ(s.starts(), 1);

  r = s.call("abort", 10);
  EXPECT_EQ(r.kind, CallResult::Kind::Died);
  EXPECT_NE(r.text.find("signal 6"), std::string::npos) << r.text;
  EXPECT_FALSE(s.running());
  r = s.call("echo:two", 10);
  EXPECT_EQ(r.text, "two");
  EXPECT_EQ(s.starts(), 2);

  r = s.call("segv", 10);
  EXPECT_EQ(r.kind, CallResult::Kind::Died);
  EXPECT_NE(r.text.find("signal 11"), std::string::npos) << r.text;

  const auto t0 = std::chrono::steady_clock::now();
  r = s.call("hang", 0.3);
  EXPECT_EQ(r.kind, CallResult::Kind::TimedOut);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
  EXPECT_FALSE(s.running());

  r = s.call("throw", 10);  // the handler's exception is a reply; the worker lives on
  EXPECT_EQ(r.kind, CallResult::Kind::Failure);
  EXPECT_EQ(r.text, "planted exception");
  const int starts = s.starts();
  EXPECT_EQ(s.call("echo:three", 10).text, "three");
  EXPECT_EQ(s.starts(), starts);

  r = s.call("exit", 10);
  EXPECT_EQ(r.kind, CallResult::Kind::Died);
  EXPECT_NE(r.text.find("exited with code 3"), std::string::npos) << r.text;

  // Exit after replying: the answer counts, and the next job gets a fresh worker instead of
  // being blamed for the exit.
  r = s.call("exit-after", 10);
  EXPECT_EQ(r.kind, CallResult::Kind::Reply);
  EXPECT_EQ(r.text, "bye");
  EXPECT_FALSE(s.running());
  EXPECT_EQ(s.call("echo:four", 10).text, "four");
}

TEST(Supervisor, DestructorEndsAndReapsTheChild) {
  pid_t pid = 0;
  {
    Supervisor s(planted_launcher());
    ASSERT_TRUE(s.ensure_started());
    pid = s.pid();
  }
  EXPECT_NE(kill(pid, 0), 0);  // reaped: no such process
}

// A planted GPU worker speaking the real messages: hello, and measure jobs that misbehave by
// candidate index.
JobResult planted_gpu(const std::string& text) {
  const auto req = nlohmann::json::parse(text);
  if (req.at("op") == "hello") {
    DeviceInfo d;
    d.name = "Planted GPU";
    return {nlohmann::json{{"device", device_to_json(d)}}.dump()};
  }
  switch (req.at("index").get<int>()) {
    case 1: std::abort();
    case 2: std::raise(SIGSEGV); break;
    case 3: std::this_thread::sleep_for(60s); break;
    case 4: throw Error("planted exception");
    case 5: return {nlohmann::json{{"status", "launch_error"}, {"message", "illegal address"}}.dump(), true};
    case 6: return {nlohmann::json{{"error", "error"}, {"message", "cannot read the image"}}.dump()};
    default: break;
  }
  Measurement m;
  m.seconds_median = m.seconds_min = 0.5;
  m.repetitions = 3;
  return {nlohmann::json{{"status", "ok"}, {"measurement", measurement_to_json(m)}}.dump()};
}

TEST(WorkerMeasurer, EachFailureBecomesTheRightStatusAndLaterJobsSucceed) {
  WorkerMeasurer w(fork_launcher([](int fd) { serve_jobs(fd, planted_gpu); }), {0, 0.5, 10});
  EXPECT_EQ(w.device().name, "Planted GPU");
  RankedCandidate c;
  c.strategy = find_strategy("naive");
  auto job = [&](int index) { return w.measure({index, &c, "/nonexistent", "", false, ""}); };

  const TrialStatus expected[] = {TrialStatus::Ok,          TrialStatus::LaunchError,
                                  TrialStatus::LaunchError, TrialStatus::Timeout,
                                  TrialStatus::LaunchError, TrialStatus::LaunchError,
                                  TrialStatus::LaunchError, TrialStatus::Ok};
  for (int i = 0; i < 8; ++i) {
    const MeasureOutcome o = job(i);
    SCOPED_TRACE(i);
    EXPECT_EQ(o.status, expected[i]) << o.message;
    if (o.status == TrialStatus::Ok) EXPECT_EQ(o.measurement.seconds_median, 0.5);
    else EXPECT_FALSE(o.message.empty());
  }
  // Restarts after abort, SIGSEGV, the hang and the exit after index 5.
  EXPECT_EQ(w.starts(), 5);
  EXPECT_NE(job(1).message.find("signal 6"), std::string::npos);
}

TEST(Worker, RealWorkerAnswersOrSaysThereIsNoGpu) {
  WorkerMeasurer w(exec_launcher({TBTUNE_CLI_PATH, "worker"}), {0, 60, 60});
  try {
    const DeviceInfo d = w.device();
    EXPECT_FALSE(d.name.empty());
    EXPECT_GT(d.sm_count, 0);
  } catch (const NoGpuError& e) {
    EXPECT_NE(std::string(e.what()).find("GPU"), std::string::npos) << e.what();
  }
}

TEST(Worker, MissingExecutableIsADeadWorkerNotACrash) {
  WorkerMeasurer w(exec_launcher({"/nonexistent/tbtune", "worker"}), {0, 5, 5});
  EXPECT_THROW((void)w.device(), Error);
}

}  // namespace
}  // namespace tbtune
