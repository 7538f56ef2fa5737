//===- ThreadPool.cpp - The runtime's persistent worker threads -----------===//
//
// A generation counter announces each job; a busy count tells the caller
// when the workers are done. Both are atomics that the other side spins on
// for up to kSpin before sleeping on a condition variable; whoever changes
// one notifies only a side that went to sleep, and checks for it under the
// mutex that the sleeper registers under, so no wake-up is lost. Chunks are
// claimed with fetch_add, so uneven workgroups balance themselves.
//
//===----------------------------------------------------------------------===//

#include "ThreadPool.h"

#include <algorithm>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace linformer {
namespace runtime {

namespace {

void cpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

/// Spins until `ready()` or `spin` has passed; whether it became ready.
/// Every 64 pauses (about a microsecond) it yields: with more threads than
/// cores, the thread it waits for may need this one's core.
template <typename Ready>
bool spinUntil(std::chrono::microseconds spin, Ready ready) {
  if (spin.count() == 0)
    return ready();
  auto deadline = std::chrono::steady_clock::now() + spin;
  while (true) {
    for (int i = 0; i < 64; ++i) {
      if (ready())
        return true;
      cpuRelax();
    }
    if (std::chrono::steady_clock::now() >= deadline)
      return ready();
    std::this_thread::yield();
  }
}

} // namespace

ThreadPool::ThreadPool(int numThreads, std::chrono::microseconds spin)
    : spin_(spin) {
  for (int i = 1; i < numThreads; ++i)
    workers_.emplace_back([this] { workerLoop(); });
}

ThreadPool::~ThreadPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stop_.store(true, std::memory_order_release);
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
  auto ready = [&] {
    return stop_.load(std::memory_order_acquire) ||
           generation_.load(std::memory_order_acquire) != seen;
  };
  while (true) {
    if (!spinUntil(spin_, ready)) {
      std::unique_lock<std::mutex> lock(mutex_);
      ++sleeping_;
      wake_.wait(lock, ready);
      --sleeping_;
    }
    if (stop_.load(std::memory_order_acquire))
      return;
    seen = generation_.load(std::memory_order_acquire);
    work();
    if (busy_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (callerSleeping_)
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
  fn_ = &fn;
  n_ = n;
  chunk_ = chunk;
  next_.store(0, std::memory_order_relaxed);
  busy_.store(int(workers_.size()), std::memory_order_relaxed);
  generation_.fetch_add(1, std::memory_order_release);
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (sleeping_ > 0)
      wake_.notify_all();
  }
  work();
  auto finished = [&] { return busy_.load(std::memory_order_acquire) == 0; };
  if (!spinUntil(spin_, finished)) {
    std::unique_lock<std::mutex> lock(mutex_);
    callerSleeping_ = true;
    done_.wait(lock, finished);
    callerSleeping_ = false;
  }
  fn_ = nullptr;
}

} // namespace runtime
} // namespace linformer
