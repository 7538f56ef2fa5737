//===- Scratch.h - the kernels' heap buffers, cached per thread -*- C++ -*-===//
//
// A kernel's buffer too large for its stack is allocated and freed by every
// workgroup in every run, the same sizes each time. The compiler's
// linformer-cpu-scratch-hooks pass routes those allocations through two
// exported pointers of the kernel object; the runtime points them here: a
// freed block is kept by the thread that freed it (up to a cap) and handed
// back for the next request of the same size, so its pages stay mapped and
// faulted in instead of returning to the system when malloc trims.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_SRC_SCRATCH_H
#define LINFORMER_RUNTIME_SRC_SCRATCH_H

#include <cstddef>
#include <cstdint>

namespace linformer {
namespace runtime {

/// The bytes of freed blocks one thread keeps at most.
constexpr size_t kScratchCacheBytes = size_t(64) << 20;

/// A block of `size` bytes (16-byte aligned), from this thread's cache when
/// it holds one of that size, else from malloc; null when malloc fails.
extern "C" void *lfScratchAlloc(int64_t size);
/// Returns a block of lfScratchAlloc to this thread's cache (to free() when
/// the cache is full). Null is ignored.
extern "C" void lfScratchFree(void *block);

/// Blocks and bytes this thread's cache holds (tests).
size_t scratchCachedBlocks();
size_t scratchCachedBytes();

/// Points a loaded kernel object's hooks (`linformer_scratch_alloc`,
/// `linformer_scratch_free`, where it has them) at the functions above.
void setScratchHooks(void *dlHandle);

} // namespace runtime
} // namespace linformer

#endif // LINFORMER_RUNTIME_SRC_SCRATCH_H
