//===- KernelObject.h - What a kernel object states about itself -*- C++
//-*-===//
//
// The CPU kernels of an artifact are an ELF shared object. Besides
// `void K_dispatch(void **buffers, int64_t begin, int64_t end)`, the compiler
// makes every kernel K export a constant record `K_abi` of little-endian
// 64-bit words that says what the compiled code assumes:
//
//   [0] kKernelAbiMagic       "LFKABI01" (kKernelAbiMagicPacked,
//                             "LFKABI02": the packed flags below follow)
//   [1] workgroups            the number of workgroups it was tiled into
//   [2] arity                 how many buffers K_dispatch reads from buffers[]
//   [3 .. 3+arity)            the bytes the code may touch in each buffer
//   [.. +arity)               "LFKABI02" only: 1 for each buffer the code
//                             indexes packed (each sequence's real rows end
//                             to end, found through the lengths), else 0
//
// and, for a kernel with a length rule (docs/Runtime.md), after those:
//
//   rank                      of the rule's grid
//   grid[rank]                workgroups per dimension, in the code's order
//   batch, row, tile          the sequence and token-tile dimensions, and
//                             the tokens per tile
//
// The runtime reads these records out of the object's bytes before it lets
// the dynamic loader map it, and refuses an artifact whose manifest says
// anything else (docs/Runtime.md, "Trust"). inspectKernelObject also refuses
// objects that would run code while being loaded or unloaded: initializers
// and finalizers, IFUNC resolvers, audit/filter libraries, dependencies
// other than the C and math libraries, and undefined symbols that no version
// of those libraries provides (a compiler runtime helper such as
// `__truncsfbf2` exists in one libgcc and not in another). The object is thus
// validated without executing any of it.
//
// Standard library only, no exceptions in the interface.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_LIB_MANIFEST_KERNELOBJECT_H
#define LINFORMER_LIB_MANIFEST_KERNELOBJECT_H

#include "lib/Manifest/Common.h"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace linformer {

/// "LFKABI01" read as a little-endian u64.
inline constexpr uint64_t kKernelAbiMagic = 0x31304942414b464cULL;
/// "LFKABI02": a record with a packed flag per buffer.
inline constexpr uint64_t kKernelAbiMagicPacked = 0x32304942414b464cULL;
/// magic, workgroups, arity.
inline constexpr uint64_t kKernelAbiHeaderWords = 3;
/// Bounds that keep a corrupt record from driving large allocations; far
/// above anything the compiler emits.
inline constexpr uint64_t kKernelAbiMaxArity = 4096;

/// Suffixes of the two symbols every kernel exports.
inline constexpr const char *kDispatchSuffix = "_dispatch";
inline constexpr const char *kAbiSuffix = "_abi";

/// One kernel's K_abi record.
struct KernelAbi {
  int64_t workgroups = 0;
  std::vector<uint64_t> bufferBytes;
  /// Per buffer: whether the code indexes it packed (all false for an
  /// "LFKABI01" record).
  std::vector<bool> packedBuffers;
  /// The length rule the code follows; empty grid: none.
  std::vector<int64_t> rowsGrid;
  int64_t rowsBatch = 0, rowsRow = 0, rowsTile = 0;
  /// The record's raw bytes, so that the loaded copy can be compared.
  std::string raw;
};

/// Validates the ELF shared object `image` (see the file comment) and reads
/// the K_abi record of every kernel symbol K in `kernels` (in that order into
/// `out`), checking that K_dispatch is a defined function. `what` names the
/// object in messages.
FileError inspectKernelObject(std::string_view image,
                              const std::vector<std::string> &kernels,
                              std::vector<KernelAbi> &out,
                              const std::string &what);

} // namespace linformer

#endif // LINFORMER_LIB_MANIFEST_KERNELOBJECT_H
