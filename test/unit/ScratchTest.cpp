//===- ScratchTest.cpp - the kernels' heap buffers, cached per thread -----===//
//
// A block freed by a thread comes back for that thread's next request of
// the same size (its pages stay faulted in); other sizes come from malloc;
// the cache stops at its cap; and a loaded kernel object's hooks point at
// the cache.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/Scratch.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cstdint>
#include <thread>

using namespace linformer::runtime;

TEST(ScratchTest, AFreedBlockComesBackForTheSameSize) {
  size_t before = scratchCachedBlocks();
  void *a = lfScratchAlloc(1 << 21);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 16, 0u);
  static_cast<char *>(a)[(1 << 21) - 1] = 1; // the whole block is usable
  lfScratchFree(a);
  EXPECT_EQ(scratchCachedBlocks(), before + 1);
  void *other = lfScratchAlloc(1 << 20);
  EXPECT_NE(other, a);
  void *again = lfScratchAlloc(1 << 21);
  EXPECT_EQ(again, a);
  EXPECT_EQ(scratchCachedBlocks(), before);
  lfScratchFree(other);
  lfScratchFree(again);
  lfScratchFree(nullptr);
  EXPECT_EQ(scratchCachedBlocks(), before + 2);
}

TEST(ScratchTest, EachThreadKeepsItsOwnBlocks) {
  void *a = lfScratchAlloc(4096);
  lfScratchFree(a);
  void *seen = nullptr;
  std::thread([&] {
    seen = lfScratchAlloc(4096);
    lfScratchFree(seen);
  }).join();
  EXPECT_NE(seen, a);
  EXPECT_EQ(lfScratchAlloc(4096), a);
  lfScratchFree(a);
}

TEST(ScratchTest, TheCacheStopsAtItsCap) {
  std::thread([] {
    size_t big = kScratchCacheBytes / 2 + 1;
    void *a = lfScratchAlloc(int64_t(big));
    void *b = lfScratchAlloc(int64_t(big));
    ASSERT_NE(a, nullptr);
    ASSERT_NE(b, nullptr);
    lfScratchFree(a);
    lfScratchFree(b); // over the cap: back to malloc
    EXPECT_EQ(scratchCachedBlocks(), 1u);
    EXPECT_EQ(scratchCachedBytes(), big);
    EXPECT_EQ(lfScratchAlloc(-1), nullptr);
  }).join();
}

TEST(ScratchTest, LoadedObjectsHooksPointAtTheCache) {
  void *h = ::dlopen(LINFORMER_FAKE_KERNELS_PATH, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(h, nullptr) << ::dlerror();
  auto *alloc = static_cast<void **>(::dlsym(h, "linformer_scratch_alloc"));
  auto *release = static_cast<void **>(::dlsym(h, "linformer_scratch_free"));
  ASSERT_NE(alloc, nullptr);
  ASSERT_NE(release, nullptr);
  EXPECT_EQ(*alloc, nullptr);
  setScratchHooks(h);
  EXPECT_EQ(*alloc, reinterpret_cast<void *>(&lfScratchAlloc));
  EXPECT_EQ(*release, reinterpret_cast<void *>(&lfScratchFree));
  ::dlclose(h);
}
