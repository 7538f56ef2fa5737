//===- TileUtils.h - tile size helpers for CPU codegen ----------*- C++ -*-===//
//
// Default tile sizes for the two tiling levels (workgroups, registers);
// what a contraction's loops and operands are is compiler/Analysis.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CPU_TILEUTILS_H
#define LINFORMER_COMPILER_CODEGEN_CPU_TILEUTILS_H

#include "compiler/Analysis/Contractions.h"
#include "compiler/Schedule/Schedule.h"
#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::linformer {

/// The largest divisor of `size` that is at most `bound` (at least 1; 1 for
/// a dynamic size), so that tiles never have a partial, dynamically shaped
/// remainder.
using ::linformer::schedule::largestDivisorAtMost;

/// Whether permutation `perm` swaps dims `a` and `b` and keeps every other
/// in place (the pair copies' and transposes' of linformer-cpu-tile-for-
/// vectors and -lower-vectors).
inline bool swapsOnly(ArrayRef<int64_t> perm, int64_t a, int64_t b) {
  for (int64_t i = 0, e = perm.size(); i < e; ++i)
    if (perm[i] != (i == a ? b : i == b ? a : i))
      return false;
  return true;
}

/// The default workgroup tiling of a root (see LinformerCPUTileAndFusePass).
SmallVector<int64_t> defaultWorkgroupTileSizes(TilingInterface op,
                                               int64_t rowTile);

/// Register-level tile sizes (see LinformerCPUTileForVectorsPass): the
/// innermost loop `vectorWidth`, the output row `unroll`; `exact` keeps
/// them as asked (a partial last tile is peeled), else they are rounded
/// down to divisors. A transpose of 32-bit elements (or of pairs of 16-bit
/// ones, as words) takes square blocks of `transposeBlock` (8, or 16 where
/// the target's vectors are 512 bits) where its dims divide by it.
SmallVector<int64_t> vectorTileSizes(linalg::LinalgOp op, int64_t vectorWidth,
                                     int64_t unroll, bool exact = false,
                                     int64_t transposeBlock = 8);

/// The cache blocks of `op`'s reduction loops (0 = not cut) for a schedule's
/// `reduction` of `reductionTile` steps (0: none cut): at most that many steps of all of
/// them together (a reduction over heads x channels counts both), each the
/// largest divisor of its loop within what is left, filled from the
/// innermost reduction loop outwards. Register tiling cuts the reductions
/// so (LinformerCPUTileForVectorsPass); PrepackWeights pairs a weight's
/// panels only where the block along the pairs is even.
SmallVector<int64_t> reductionBlocks(linalg::LinalgOp op,
                                     int64_t reductionTile);

/// Moves the destinations of `consumer` made after `loop` (in its block)
/// before it, where they are operand-less `tensor.empty` ops or slices of
/// values made before the loop, so that the consumer can be fused
/// into the loop (upstream's scf::tileAndFuseConsumer needs every operand
/// but the fused one to dominate the loop).
void moveDestinationsBefore(RewriterBase &rewriter, Operation *consumer,
                                 Operation *loop);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_CODEGEN_CPU_TILEUTILS_H
