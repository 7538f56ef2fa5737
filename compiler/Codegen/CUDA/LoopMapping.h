//===- LoopMapping.h - scf.parallel onto blocks and threads -----*- C++ -*-===//
//
// What the CUDA passes that map loops share: tile sizes that divide an
// extent exactly (no idle thread, constant bounds) and the mapping
// attributes convert-parallel-loops-to-gpu reads.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

#include "compiler/Schedule/Schedule.h"

#include <algorithm>

namespace mlir::linformer::cuda {

/// The largest divisor of `extent` that is at most `bound` (the schedule
/// library's, shared with the CPU tiling and the Halide generator).
using ::linformer::schedule::largestDivisorAtMost;

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

/// One loop over a block's `warps` x 32 threads, mapped to thread y
/// (the warp) and thread x (the lane), running `body(w, lane)`: the inner
/// loop of the nests that come out mapped already (the staged core and
/// GEMMs, the warp row sums).
inline void blockThreads(OpBuilder &b, Location loc, int64_t warps,
                         function_ref<void(OpBuilder &, Value, Value)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto inner = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero},
      ValueRange{arith::ConstantIndexOp::create(b, loc, warps),
                 arith::ConstantIndexOp::create(b, loc, 32)},
      ValueRange{one, one}, [&](OpBuilder &b, Location loc, ValueRange tv) {
        body(b, tv[0], tv[1]);
        scf::ReduceOp::create(b, loc);
      });
  mapLoop(inner, {gpu::Processor::ThreadY, gpu::Processor::ThreadX});
}

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H
