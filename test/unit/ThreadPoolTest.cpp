//===- ThreadPoolTest.cpp - the runtime's worker threads ------------------===//
//
// The pool spins for a while between jobs and then sleeps: jobs back to
// back (taken while spinning) and jobs after a pause longer than the spin
// (taken after a wake-up) must each cover [0, n) exactly once and return
// only when every chunk has run. A lost wake-up hangs here (ctest's
// timeout), a missing barrier shows as a chunk counted after the return.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/ThreadPool.h"

#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

using linformer::runtime::ThreadPool;

namespace {

/// Runs one job of `n` indices and checks each ran once, before the return.
void runJob(ThreadPool &pool, int64_t n) {
  std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
  for (auto &h : hits)
    h.store(0);
  pool.parallelFor(n, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i)
      hits[size_t(i)].fetch_add(1);
  });
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(hits[size_t(i)].load(), 1) << "index " << i << " of " << n;
}

TEST(ThreadPoolTest, BackToBackJobsCoverEveryIndexOnce) {
  for (int threads : {1, 2, 3, 8}) {
    ThreadPool pool(threads);
    EXPECT_EQ(pool.size(), threads);
    for (int job = 0; job < 2000; ++job)
      runJob(pool, 1 + job % 97);
  }
}

TEST(ThreadPoolTest, JobsAfterTheWorkersSleptCoverEveryIndexOnce) {
  ThreadPool pool(3);
  for (int job = 0; job < 20; ++job) {
    // Longer than the spin: the workers are asleep when the job comes, and
    // every other job the caller sleeps too, waiting for a slow chunk.
    std::this_thread::sleep_for(2 * ThreadPool::kSpin);
    std::atomic<int64_t> sum{0};
    pool.parallelFor(64, [&](int64_t begin, int64_t end) {
      if (job % 2 && begin == 0)
        std::this_thread::sleep_for(2 * ThreadPool::kSpin);
      for (int64_t i = begin; i < end; ++i)
        sum.fetch_add(i);
    });
    ASSERT_EQ(sum.load(), 64 * 63 / 2) << "job " << job;
  }
}

TEST(ThreadPoolTest, WithoutSpinningEveryJobWakesTheWorkers) {
  ThreadPool pool(3, std::chrono::microseconds(0));
  for (int job = 0; job < 500; ++job)
    runJob(pool, 1 + job % 61);
}

TEST(ThreadPoolTest, DestroyedWhileSpinningOrAsleep) {
  for (int k = 0; k < 50; ++k) {
    ThreadPool pool(4);
    runJob(pool, 100);
    if (k % 2)
      std::this_thread::sleep_for(2 * ThreadPool::kSpin);
  }
}

} // namespace
