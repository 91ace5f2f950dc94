#pragma once
/// @file thread_pool.hpp
/// A fixed set of worker threads running submitted tasks in submission order. The engine runs
/// NVRTC compiles on it so that they overlap GPU timing.
#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <mutex>
#include <thread>
#include <vector>

namespace tbtune {

class ThreadPool {
 public:
  /// Starts `threads` workers (at least one); 0 means std::thread::hardware_concurrency().
  explicit ThreadPool(unsigned threads = 0);
  /// Drops tasks not yet started (their futures report std::future_error broken_promise) and
  /// waits for the running ones.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  /// Queues `fn`; the future holds its result or its exception.
  template <class Fn>
  [[nodiscard]] auto submit(Fn fn) -> std::future<decltype(fn())> {
    using R = decltype(fn());
    auto task = std::make_shared<std::packaged_task<R()>>(std::move(fn));
    std::future<R> result = task->get_future();
    push([task] { (*task)(); });
    return result;
  }

  [[nodiscard]] unsigned size() const { return unsigned(threads_.size()); }
  /// Threads that would start a task submitted now: neither running one nor owed to one queued.
  [[nodiscard]] unsigned idle();

 private:
  void push(std::function<void()> task);
  void loop();

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> queue_;
  unsigned running_ = 0;  // tasks being run
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace tbtune
