// Tests for tuner/gpu/compile_worker without a GPU: the real `tbtune compile-worker` gives what
// compile_cuda gives in this process (image, ptxas' figures, NVRTC's log on an error, the CUBIN
// folder), and, with planted children, compiles run in children of their own, at once, and
// stop() ends those running and refuses later ones; run by hand, the command is a usage error.
#include "tuner/gpu/compile_worker.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

const char* const kSource = R"(extern "C" __global__ void twice(float* a) { a[threadIdx.x] *= 2.0f; })";

Launcher real_launcher() { return exec_launcher({TBTUNE_CLI_PATH, "compile-worker"}); }

TEST(CompileProcesses, GiveWhatCompileCudaGives) {
  CompileProcesses processes(real_launcher());
  const CompiledModule here = compile_cuda(kSource, "sm_90");
  const CompiledModule there = processes.compile(kSource, "sm_90", "");
  EXPECT_FALSE(there.cubin.empty());
  EXPECT_EQ(there.cubin, here.cubin);
  EXPECT_NE(there.log.find("Used"), std::string::npos) << there.log;  // ptxas' report
  ASSERT_EQ(there.kernels.count("twice"), 1u);
  EXPECT_GT(there.kernels.at("twice").registers, 0);
  EXPECT_EQ(there.kernels.at("twice").registers, here.kernels.at("twice").registers);
  EXPECT_FALSE(there.from_cache);

  // The CUBIN folder: the child fills it, and the next compile finds it there.
  const fs::path dir = fs::temp_directory_path() / ("tbtune_compile_worker_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  EXPECT_FALSE(processes.compile(kSource, "sm_90", dir.string()).from_cache);
  const CompiledModule cached = processes.compile(kSource, "sm_90", dir.string());
  EXPECT_TRUE(cached.from_cache);
  EXPECT_EQ(cached.cubin, here.cubin);
  fs::remove_all(dir);
}

TEST(CompileProcesses, CompileErrorCarriesNvrtcsLog) {
  CompileProcesses processes(real_launcher());
  try {
    (void)processes.compile("this is not cuda", "sm_90", "");
    FAIL() << "no CompileError";
  } catch (const CompileError& e) {
    EXPECT_NE(std::string(e.what()).find("NVRTC failed to compile"), std::string::npos) << e.what();
    EXPECT_NE(e.log().find("error"), std::string::npos) << e.log();
  }
  EXPECT_FALSE(processes.compile(kSource, "sm_90", "").cubin.empty());  // the child lives on
}

// A planted child: answers "wait" after `wait_ms` (first creating the file its cache_dir names,
// if any, to say it has begun), anything else at once, naming its pid in the log.
std::atomic<int> wait_ms{0};
Launcher planted_launcher() {
  return fork_launcher([](int fd) {
    serve_jobs(fd, [](const std::string& request) -> JobResult {
      const nlohmann::json j = nlohmann::json::parse(request);
      if (j.at("source") == "wait") {
        if (const std::string begun = j.at("cache_dir"); !begun.empty()) std::ofstream{begun};
        std::this_thread::sleep_for(std::chrono::milliseconds(wait_ms.load()));
      }
      return {nlohmann::json{{"log", std::to_string(getpid())}, {"from_cache", false}}.dump() + "\nimage"};
    });
  });
}

// Each thread's compiles run in a child of its own, kept for its next compile; a thread that
// ended took its child with it, and a thread given its id later gets a fresh child.
TEST(CompileProcesses, EachThreadCompilesInAChildOfItsOwn) {
  wait_ms = 300;
  CompileProcesses processes(planted_launcher());
  std::string pid[2], again;
  std::thread a([&] {
    pid[0] = processes.compile("wait", "sm_90", "").log;
    again = processes.compile("now", "sm_90", "").log;
  });
  std::thread b([&] { pid[1] = processes.compile("wait", "sm_90", "").log; });
  a.join();
  b.join();
  EXPECT_NE(pid[0], pid[1]);
  EXPECT_EQ(again, pid[0]);
  for (int i = 0; i < 3; ++i) {  // new threads, some of which may reuse a or b's id
    std::string got;
    std::thread([&] { got = processes.compile("now", "sm_90", "").cubin; }).join();
    EXPECT_EQ(got, "image");
  }
}

TEST(CompileProcesses, StopEndsTheRunningCompilesAndRefusesLaterOnes) {
  wait_ms = 60000;  // a compile that would take a minute
  CompileProcesses processes(planted_launcher());
  const fs::path begun = fs::temp_directory_path() / ("tbtune_compile_begun_" + std::to_string(getpid()));
  fs::remove(begun);
  std::atomic<bool> threw{false};
  std::string message;
  std::thread t([&] {
    try {
      (void)processes.compile("wait", "sm_90", begun.string());
    } catch (const Error& e) {
      message = e.what();
      threw = true;
    }
  });
  for (int i = 0; i < 1000 && !fs::exists(begun); ++i) std::this_thread::sleep_for(10ms);
  ASSERT_TRUE(fs::exists(begun)) << "the planted compile did not begin";
  const auto t0 = std::chrono::steady_clock::now();
  processes.stop();
  t.join();
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 10s);
  EXPECT_TRUE(threw);
  EXPECT_NE(message.find("no longer needed"), std::string::npos) << message;
  EXPECT_THROW((void)processes.compile("now", "sm_90", ""), Error);
  fs::remove(begun);
}

// A child killed while it wrote into the CUBIN folder leaves no temporary there; another
// process's are left alone.
TEST(CompileProcesses, AKilledChildLeavesNoPartialFile) {
  const fs::path dir = fs::temp_directory_path() / ("tbtune_compile_partial_" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const fs::path others = dir / ("k.cubin.tmp" + std::to_string(getpid()) + ".0");
  std::ofstream{others} << "another process's";
  CompileProcesses processes(fork_launcher([](int fd) {
    serve_jobs(fd, [](const std::string& request) -> JobResult {
      const fs::path d = nlohmann::json::parse(request).at("cache_dir").get<std::string>();
      std::ofstream{d / ("k.cubin.tmp" + std::to_string(getpid()) + ".7")} << "half a CUBIN";
      std::this_thread::sleep_for(60s);
      return {"never"};
    });
  }));
  std::thread t([&] {
    try {
      (void)processes.compile("any", "sm_90", dir.string());
    } catch (const Error&) {
    }
  });
  const auto partial = [&] {
    int n = 0;
    for (const auto& e : fs::directory_iterator(dir)) n += e.path() != others;
    return n;
  };
  for (int i = 0; i < 1000 && partial() == 0; ++i) std::this_thread::sleep_for(10ms);
  ASSERT_EQ(partial(), 1) << "the planted child wrote nothing";
  processes.stop();
  t.join();
  EXPECT_EQ(partial(), 0);
  EXPECT_TRUE(fs::exists(others));
  fs::remove_all(dir);
}

// A child whose reply is not the protocol's: an Error the engine turns into a trial, not a raw
// JSON exception.
TEST(CompileProcesses, AMalformedReplyIsAnError) {
  CompileProcesses processes(fork_launcher([](int fd) {
    serve_jobs(fd, [](const std::string&) -> JobResult { return {"{not json\nimage"}; });
  }));
  try {
    (void)processes.compile("any", "sm_90", "");
    FAIL() << "no Error";
  } catch (const CompileError&) {
    FAIL() << "a malformed reply is no compile error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("malformed reply"), std::string::npos) << e.what();
  }
}

TEST(CompileWorker, RunByHandIsAUsageError) {
  const std::string command = std::string(TBTUNE_CLI_PATH) + " compile-worker 3>&- 2>/dev/null";
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

}  // namespace
}  // namespace tbtune
