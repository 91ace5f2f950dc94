// Tests for tuner/thread_pool and for compile_cuda's CUBIN folder under concurrent compiles.
#include "tuner/search/thread_pool.hpp"

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <stdexcept>

#include <gtest/gtest.h>

#include "tuner/gpu/nvrtc.hpp"
#include "tuner/spec/error.hpp"

namespace tbtune {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

TEST(ThreadPool, RunsTasksAndCarriesResultsAndExceptions) {
  ThreadPool pool(3);
  EXPECT_EQ(pool.size(), 3u);
  std::vector<std::future<int>> results;
  for (int i = 0; i < 20; ++i) results.push_back(pool.submit([i] { return i * i; }));
  auto failing = pool.submit([]() -> int { throw Error("planted"); });
  for (int i = 0; i < 20; ++i) EXPECT_EQ(results[std::size_t(i)].get(), i * i);
  EXPECT_THROW((void)failing.get(), Error);
  EXPECT_GE(ThreadPool(0).size(), 1u);
}

TEST(ThreadPool, DestructorDropsPendingTasksAndJoinsRunningOnes) {
  std::atomic<int> ran{0};
  std::future<void> pending;
  {
    ThreadPool pool(1);
    (void)pool.submit([&] {
      std::this_thread::sleep_for(100ms);
      ++ran;
    });
    pending = pool.submit([&] { ++ran; });
    std::this_thread::sleep_for(20ms);  // the first is running, the second queued
  }
  EXPECT_EQ(ran, 1);
  EXPECT_THROW(pending.get(), std::future_error);  // broken promise, not a hang
}

TEST(ThreadPool, IdleCountsThreadsNeitherRunningNorOwedATask) {
  ThreadPool pool(2);
  EXPECT_EQ(pool.idle(), 2u);
  std::promise<void> release;
  std::shared_future<void> go = release.get_future().share();
  std::atomic<int> started{0};
  auto first = pool.submit([&] {
    ++started;
    go.wait();
  });
  for (int i = 0; i < 500 && started == 0; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(pool.idle(), 1u);  // one running
  auto second = pool.submit([&] { go.wait(); });
  auto third = pool.submit([&] { go.wait(); });
  EXPECT_EQ(pool.idle(), 0u);  // one running, one running or queued, one queued
  release.set_value();
  first.get();
  second.get();
  third.get();
  for (int i = 0; i < 500 && pool.idle() < 2; ++i) std::this_thread::sleep_for(2ms);
  EXPECT_EQ(pool.idle(), 2u);
}

TEST(CompileCache, ConcurrentCompilesOfOneSourceLeaveOneWholeFile) {
  const fs::path dir = fs::temp_directory_path() / ("tbtune_pool_test_" + std::to_string(getpid()));
  fs::remove_all(dir);
  const std::string src = "extern \"C\" __global__ void k(float* p) { p[threadIdx.x] *= 2.0f; }\n";
  ThreadPool pool(4);
  std::vector<std::future<CompiledModule>> done;
  for (int i = 0; i < 4; ++i) done.push_back(pool.submit([&] { return compile_cuda(src, "sm_90", dir.string()); }));
  std::string cubin;
  for (auto& f : done) {
    const CompiledModule m = f.get();
    ASSERT_FALSE(m.cubin.empty());
    if (cubin.empty()) cubin = m.cubin;
    EXPECT_EQ(m.cubin, cubin);
    EXPECT_TRUE(m.kernels.count("k"));
  }
  int cubins = 0, temps = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    cubins += e.path().extension() == ".cubin";
    temps += e.path().string().find(".tmp") != std::string::npos;
  }
  EXPECT_EQ(cubins, 1);
  EXPECT_EQ(temps, 0);
  EXPECT_TRUE(compile_cuda(src, "sm_90", dir.string()).from_cache);
  fs::remove_all(dir);
}

}  // namespace
}  // namespace tbtune
