//===- ThreadPool.h - The runtime's persistent worker threads ---*- C++ -*-===//
//
// Generated CPU kernels never create threads: they expose workgroup ranges
// and the runtime runs them. A session owns one ThreadPool of num_threads - 1
// persistent workers; parallelFor hands out chunks of [0, n) through an
// atomic counter, the calling thread works too, and the call returns only
// when every chunk is done, which is the barrier between two kernels.
//
// A run dispatches its kernels back to back, so the workers and the caller
// first spin on the job counters for a while (kSpin) and only then sleep on
// a condition variable: a wake-up through the kernel costs tens of
// microseconds on a VM, per kernel, where the next job is usually a few
// microseconds away.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_SRC_THREADPOOL_H
#define LINFORMER_RUNTIME_SRC_THREADPOOL_H

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace linformer {
namespace runtime {

class ThreadPool {
public:
  /// `numThreads` counts the caller: numThreads - 1 workers are started.
  /// `spin`: how long a worker waits for the next job, and the caller for
  /// the workers to finish, spinning before it sleeps (0: at once).
  explicit ThreadPool(int numThreads, std::chrono::microseconds spin = kSpin);
  ~ThreadPool();
  ThreadPool(const ThreadPool &) = delete;
  ThreadPool &operator=(const ThreadPool &) = delete;

  int size() const { return int(workers_.size()) + 1; }

  /// Calls fn(begin, end) over disjoint chunks covering [0, n), on the
  /// workers and the caller, and returns when all have finished. One call
  /// at a time (the session serialises runs).
  void parallelFor(int64_t n, const std::function<void(int64_t, int64_t)> &fn);

  /// The default spin (lf_session_options::spin_us -1).
  static constexpr std::chrono::microseconds kSpin{200};

private:
  void workerLoop();
  void work();

  std::chrono::microseconds spin_;
  std::vector<std::thread> workers_;
  std::mutex mutex_;
  std::condition_variable wake_, done_;
  /// Moves (release) once a job's fields are written; workers acquire it.
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> stop_{false};
  /// Workers that have not finished the current job.
  std::atomic<int> busy_{0};
  // Who sleeps on wake_ / done_ (under mutex_): a notify only when needed.
  int sleeping_ = 0;
  bool callerSleeping_ = false;

  // The current job; written before generation_ moves.
  const std::function<void(int64_t, int64_t)> *fn_ = nullptr;
  int64_t n_ = 0, chunk_ = 1;
  std::atomic<int64_t> next_{0};
};

} // namespace runtime
} // namespace linformer

#endif // LINFORMER_RUNTIME_SRC_THREADPOOL_H
