//===- Scratch.cpp - the kernels' heap buffers, cached per thread ---------===//

#include "Scratch.h"

#include <dlfcn.h>

#include <cstdlib>
#include <vector>

namespace linformer {
namespace runtime {
namespace {

/// A block's size sits in a header before the pointer handed out (16 bytes,
/// which keeps malloc's 16-byte alignment).
constexpr size_t kHeader = 16;

struct Cache {
  std::vector<void *> blocks; // headers
  size_t bytes = 0;
  ~Cache() {
    for (void *b : blocks)
      std::free(b);
  }
};

Cache &cache() {
  thread_local Cache c;
  return c;
}

size_t &sizeOf(void *header) { return *static_cast<size_t *>(header); }

} // namespace

extern "C" void *lfScratchAlloc(int64_t size) {
  if (size < 0)
    return nullptr;
  size_t want = size_t(size);
  Cache &c = cache();
  for (size_t i = c.blocks.size(); i-- > 0;) {
    void *header = c.blocks[i];
    if (sizeOf(header) != want)
      continue;
    c.blocks[i] = c.blocks.back();
    c.blocks.pop_back();
    c.bytes -= want;
    return static_cast<char *>(header) + kHeader;
  }
  void *header = std::malloc(want + kHeader);
  if (!header)
    return nullptr;
  sizeOf(header) = want;
  return static_cast<char *>(header) + kHeader;
}

extern "C" void lfScratchFree(void *block) {
  if (!block)
    return;
  void *header = static_cast<char *>(block) - kHeader;
  size_t size = sizeOf(header);
  Cache &c = cache();
  if (c.bytes + size > kScratchCacheBytes) {
    std::free(header);
    return;
  }
  c.blocks.push_back(header);
  c.bytes += size;
}

size_t scratchCachedBlocks() { return cache().blocks.size(); }
size_t scratchCachedBytes() { return cache().bytes; }

void setScratchHooks(void *dlHandle) {
  if (auto *alloc = static_cast<void **>(
          ::dlsym(dlHandle, "linformer_scratch_alloc")))
    *alloc = reinterpret_cast<void *>(&lfScratchAlloc);
  if (auto *release = static_cast<void **>(
          ::dlsym(dlHandle, "linformer_scratch_free")))
    *release = reinterpret_cast<void *>(&lfScratchFree);
}

} // namespace runtime
} // namespace linformer
