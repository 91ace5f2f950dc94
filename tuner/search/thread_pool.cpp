#include "tuner/search/thread_pool.hpp"

namespace tbtune {

ThreadPool::ThreadPool(unsigned threads) {
  if (threads == 0) threads = std::thread::hardware_concurrency();
  if (threads == 0) threads = 1;  // hardware_concurrency() may not know
  threads_.reserve(threads);
  for (unsigned i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

ThreadPool::~ThreadPool() {
  std::deque<std::function<void()>> dropped;
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
    dropped.swap(queue_);
  }
  ready_.notify_all();
  for (std::thread& t : threads_) t.join();
  // Destroying the dropped packaged_tasks (outside the lock) breaks their promises, so a
  // caller still holding a future gets an error instead of waiting forever.
}

void ThreadPool::push(std::function<void()> task) {
  {
    const std::lock_guard lock(mutex_);
    queue_.push_back(std::move(task));
  }
  ready_.notify_one();
}

unsigned ThreadPool::idle() {
  const std::lock_guard lock(mutex_);
  const std::size_t taken = running_ + queue_.size();
  return taken >= threads_.size() ? 0 : unsigned(threads_.size() - taken);
}

void ThreadPool::loop() {
  for (;;) {
    std::function<void()> task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (stopping_) return;
      task = std::move(queue_.front());
      queue_.pop_front();
      ++running_;
    }
    task();  // packaged_task stores any exception in its future
    const std::lock_guard lock(mutex_);
    --running_;
  }
}

}  // namespace tbtune
