//===- LoopMapping.h - scf.parallel onto blocks and threads -----*- C++ -*-===//
//
// What the CUDA passes that map loops share: tile sizes that divide an
// extent exactly (no idle thread, constant bounds) and the mapping
// attributes convert-parallel-loops-to-gpu reads.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include <algorithm>

namespace mlir::linformer::cuda {

/// The largest divisor of `extent` that is at most `bound`.
inline int64_t largestDivisor(int64_t extent, int64_t bound) {
  for (int64_t t = std::min(extent, bound); t > 1; --t)
    if (extent % t == 0)
      return t;
  return 1;
}

/// Maps `op`'s dimensions, outermost first, to `processors` (identity
/// index and bound maps).
inline void mapLoop(scf::ParallelOp op, ArrayRef<gpu::Processor> processors) {
  MLIRContext *ctx = op.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (gpu::Processor p : processors)
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(ctx, p, id, id));
  (void)gpu::setMappingAttr(op, mapping);
}

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H
