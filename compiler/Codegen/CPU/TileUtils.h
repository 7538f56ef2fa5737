//===- TileUtils.h - tile size helpers for CPU codegen ----------*- C++ -*-===//
//
// Default tile sizes for the two tiling levels (workgroups, registers).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CPU_TILEUTILS_H
#define LINFORMER_COMPILER_CODEGEN_CPU_TILEUTILS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::linformer {

/// Per-root workgroup tile sizes chosen by the schedule (one per loop, 0 =
/// whole dimension).
constexpr llvm::StringLiteral kTileSizesAttrName = "linformer.tile_sizes";

/// The largest divisor of `size` that is at most `bound` (at least 1), so
/// that tiles never have a partial, dynamically shaped remainder.
int64_t largestDivisorAtMost(int64_t size, int64_t bound);

/// The default workgroup tiling of a root (see LinformerCPUTileAndFusePass).
SmallVector<int64_t> defaultWorkgroupTileSizes(TilingInterface op,
                                               int64_t rowTile);

/// Register-level tile sizes (see LinformerCPUTileForVectorsPass).
SmallVector<int64_t> vectorTileSizes(linalg::LinalgOp op, int64_t vectorWidth,
                                     int64_t unroll);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_CODEGEN_CPU_TILEUTILS_H
