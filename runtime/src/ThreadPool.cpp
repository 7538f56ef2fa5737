//===- ThreadPool.cpp - The runtime's persistent worker threads -----------===//
//
// A generation counter wakes the workers for each job; a busy count tells
// the caller when all of them are done. Chunks are claimed with fetch_add,
// so uneven workgroups balance themselves.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>

namespace linformer {
namespace runtime {

ThreadPool::ThreadPool(int numThreads) {
  for (int i = 1; i < numThreads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread &t : workers_)
    t.join();
}

void ThreadPool::work() {
  while (true) {
    int64_t begin = next_.fetch_add(chunk_, std::memory_order_relaxed);
    if (begin >= n_)
      return;
    (*fn_)(begin, std::min(n_, begin + chunk_));
  }
}

void ThreadPool::workerLoop() {
  uint64_t seen = 0;
  while (true) {
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
      if (stop_)
        return;
      seen = generation_;
    }
    work();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0)
        done_.notify_one();
    }
  }
}

void ThreadPool::parallelFor(int64_t n,
                             const std::function<void(int64_t, int64_t)> &fn) {
  if (n <= 0)
    return;
  // Few workgroups: waking the workers costs more than it saves.
  if (workers_.empty() || n == 1) {
    fn(0, n);
    return;
  }
  // About eight chunks per thread: small enough to balance workgroups of
  // uneven cost, large enough that the atomic counter is not contended.
  int64_t chunk = std::max<int64_t>(1, n / (int64_t(size()) * 8));
  {
    std::lock_guard<std::mutex> lock(mutex_);
    fn_ = &fn;
    n_ = n;
    chunk_ = chunk;
    next_.store(0, std::memory_order_relaxed);
    busy_ = int(workers_.size());
    ++generation_;
  }
  wake_.notify_all();
  work();
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return busy_ == 0; });
  fn_ = nullptr;
}

} // namespace runtime
} // namespace linformer
