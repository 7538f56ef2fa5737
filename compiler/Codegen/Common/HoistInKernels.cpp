//===- HoistInKernels.cpp - LICM that stays inside kernels -----*- C++ -*-===//
//
// Upstream loop-invariant code motion and subset hoisting on scf.for loops
// only, never out of a workgroup loop (scf.forall); see
// LinformerHoistInKernelsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/LoopInvariantCodeMotionUtils.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERHOISTINKERNELSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {
/// Forwards to a transfer_read on a tensor the vector a transfer_write of
/// the same elements stored, past writes that provably store none of them:
/// `transfer_read(transfer_write(w, transfer_write(v, t)[a])[b], [a])` is
/// `v` when the boxes at a and b are disjoint. Upstream's read-after-write
/// folding does the same walk but only past writes of the read's own
/// vector type (`vector::isDisjointTransferIndices` compares only transfers
/// of one type). When a register tile splits a row into a full vector and
/// a remainder (20 = 16 + 4) and subset hoisting lifts the accumulators out
/// of a reduction loop, the hoisted read of the 16 lanes sits on the tensor
/// the 4-lane init write produced; upstream's write-after-write folding
/// then writes the final 4 lanes into the tensor *before* that init write
/// while the read still holds it, a read-after-write conflict one-shot
/// bufferization resolves with a stack copy of the output row (a memref.copy
/// of a kernel's output, which linformer-packed-sequences cannot index).
/// Forwarded, the read and the conflict are gone.
/// Only a forward rewrites: a read merely moved onto an older tensor would
/// make that conflict itself. Boxes are compared per tensor dimension from
/// constant indices; a dimension the vector does not cover has extent 1.
/// Masked or permuted transfers are left alone.
class ForwardPastDisjointWrites {
public:
  static bool forward(vector::TransferReadOp read, RewriterBase &rewriter) {
    if (!isa<RankedTensorType>(read.getShapedType()) || !plain(read))
      return false;
    auto write = read.getBase().getDefiningOp<vector::TransferWriteOp>();
    bool passedAnother = false;
    while (write && plain(write)) {
      if (vector::checkSameValueRAW(write, read)) {
        // Upstream's folding handles a same-type chain; only forward what
        // it cannot reach.
        if (!passedAnother)
          return false;
        rewriter.replaceOp(read, write.getVector());
        return true;
      }
      if (!disjoint(write, read))
        return false;
      passedAnother |= write.getVectorType() != read.getVectorType();
      write = write.getBase().getDefiningOp<vector::TransferWriteOp>();
    }
    return false;
  }

private:
  static bool plain(VectorTransferOpInterface op) {
    return !op.getMask() && op.getPermutationMap().isMinorIdentity();
  }

  static std::optional<std::pair<int64_t, int64_t>>
  interval(VectorTransferOpInterface op, unsigned dim) {
    std::optional<int64_t> start = getConstantIntValue(op.getIndices()[dim]);
    if (!start)
      return std::nullopt;
    int64_t first = op.getShapedType().getRank() - op.getVectorType().getRank();
    int64_t extent = static_cast<int64_t>(dim) < first
                         ? 1
                         : op.getVectorType().getDimSize(dim - first);
    return std::make_pair(*start, *start + extent);
  }

  static bool disjoint(VectorTransferOpInterface a,
                       VectorTransferOpInterface b) {
    if (a.getShapedType().getRank() != b.getShapedType().getRank())
      return false;
    for (unsigned d = 0, e = a.getShapedType().getRank(); d < e; ++d) {
      auto ia = interval(a, d);
      auto ib = interval(b, d);
      if (ia && ib && (ia->second <= ib->first || ib->second <= ia->first))
        return true;
    }
    return false;
  }
};

struct HoistInKernelsPass
    : mlir::linformer::impl::LinformerHoistInKernelsPassBase<
          HoistInKernelsPass> {
  void runOnOperation() override {
    // Innermost loops first (post-order), as upstream's passes do, so that
    // what leaves an inner loop can leave its parent too.
    getOperation()->walk([](scf::ForOp loop) { moveLoopInvariantCode(loop); });
    IRRewriter rewriter(&getContext());
    getOperation()->walk([&](scf::ForOp loop) {
      (void)hoistLoopInvariantSubsets(rewriter, loop);
    });
    SmallVector<vector::TransferReadOp> reads;
    getOperation()->walk(
        [&](vector::TransferReadOp read) { reads.push_back(read); });
    for (vector::TransferReadOp read : reads) {
      rewriter.setInsertionPoint(read);
      (void)ForwardPastDisjointWrites::forward(read, rewriter);
    }
  }
};
} // namespace
