//===- LengthVariants.cpp - split-K variants for shorter runs --*- C++ -*-===//
//
// A staged token contraction's `linformer.cuda_length_splits` as nested
// scf.ifs on the run's longest length, one copy of the contraction (and of
// the init and epilogue ops the tensor-core rewrite absorbs into it) a
// split; see LinformerCUDALengthVariantsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDALENGTHVARIANTSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// The run's longest sequence (i32): the largest of `lengths`, computed at
/// the start of `fn`.
Value longestLength(RewriterBase &rewriter, func::FuncOp fn,
                    BlockArgument lengths) {
  OpBuilder::InsertionGuard g(rewriter);
  rewriter.setInsertionPointToStart(&fn.getBody().front());
  Location loc = fn.getLoc();
  auto type = cast<MemRefType>(lengths.getType());
  Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value count =
      arith::ConstantIndexOp::create(rewriter, loc, type.getDimSize(0));
  Value none = arith::ConstantIntOp::create(rewriter, loc, 0, 32);
  auto loop = scf::ForOp::create(
      rewriter, loc, zero, count, one, ValueRange{none},
      [&](OpBuilder &b, Location loc, Value i, ValueRange acc) {
        Value l = memref::LoadOp::create(b, loc, lengths, ValueRange{i});
        scf::YieldOp::create(
            b, loc, ValueRange{arith::MaxSIOp::create(b, loc, acc[0], l)});
      });
  return loop.getResult(0);
}

struct CUDALengthVariantsPass
    : mlir::linformer::impl::LinformerCUDALengthVariantsPassBase<
          CUDALengthVariantsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    SmallVector<linalg::GenericOp> ops;
    fn.walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kCUDALengthSplitsAttrName))
        ops.push_back(op);
    });
    if (ops.empty())
      return;
    BlockArgument lengths = markedLengthsArgument(fn);
    IRRewriter rewriter(&getContext());
    Value longest;
    for (linalg::GenericOp op : ops) {
      auto splits =
          op->getAttrOfType<DenseI64ArrayAttr>(kCUDALengthSplitsAttrName);
      auto schedule =
          op->getAttrOfType<CUDAScheduleAttr>(kCUDAScheduleAttrName);
      if (!schedule || !schedule.staged()) {
        op.emitOpError() << "has " << kCUDALengthSplitsAttrName
                         << " but no staged " << kCUDAScheduleAttrName
                         << ": split-K variants for shorter runs are for "
                            "contractions whose blocks share their operands";
        return signalPassFailure();
      }
      if (splits.empty() || splits.size() % 2) {
        op.emitOpError() << kCUDALengthSplitsAttrName
                         << " must be [T, S] pairs, got " << splits.size()
                         << " values";
        return signalPassFailure();
      }
      if (!lengths) {
        op.emitOpError() << "has " << kCUDALengthSplitsAttrName
                         << " but its function has no linformer.lengths "
                            "argument to take the longest length from";
        return signalPassFailure();
      }
      if (!longest)
        longest = longestLength(rewriter, fn, lengths);
      if (failed(split(rewriter, op, schedule, splits.asArrayRef(), longest)))
        return signalPassFailure();
    }
  }

  /// `op` as one copy a split in nested guards on `longest`: the copy with
  /// the schedule's own split in the outermost else, pair i's in the else
  /// of guard i + 1 (the innermost then for the last pair).
  LogicalResult split(IRRewriter &rewriter, linalg::GenericOp op,
                      CUDAScheduleAttr schedule, ArrayRef<int64_t> splits,
                      Value longest) {
    Location loc = op.getLoc();
    // What the rewrite absorbs goes into every branch with its copy.
    FailureOr<cuda::Absorbed> absorbed = cuda::absorbedBy(op);
    if (failed(absorbed))
      return failure();
    Operation *init = absorbed->init;
    OpOperand *read = absorbed->epilogueRead;
    Operation *epilogue = read ? read->getOwner() : nullptr;
    // Ops without memory effects between the contraction and its epilogue
    // (which the epilogue may use) go before the guards.
    if (epilogue)
      for (Operation *o = op->getNextNode(); o != epilogue;) {
        Operation *next = o->getNextNode();
        o->moveBefore(op);
        o = next;
      }
    auto copy = [&](int64_t variant, int64_t split) {
      if (init)
        rewriter.clone(*init);
      Operation *c = rewriter.clone(*op);
      c->removeAttr(kCUDALengthSplitsAttrName);
      c->setAttr(kCUDAScheduleAttrName, schedule.withSplit(split));
      c->setAttr(kLengthVariantAttrName, rewriter.getI64IntegerAttr(variant));
      if (epilogue)
        rewriter.clone(*epilogue);
    };
    rewriter.setInsertionPoint(op);
    int64_t pairs = int64_t(splits.size()) / 2;
    for (int64_t i = 0; i < pairs; ++i) {
      Value cond = arith::CmpIOp::create(
          rewriter, loc, arith::CmpIPredicate::sle, longest,
          arith::ConstantIntOp::create(rewriter, loc, splits[2 * i], 32));
      auto guard = scf::IfOp::create(rewriter, loc, cond,
                                     /*withElseRegion=*/true);
      guard->setAttr(kLengthGuardAttrName,
                     rewriter.getI64IntegerAttr(splits[2 * i]));
      rewriter.setInsertionPoint(guard.elseBlock()->getTerminator());
      copy(i, i == 0 ? schedule.getSplit() : splits[2 * i - 1]);
      rewriter.setInsertionPoint(guard.thenBlock()->getTerminator());
    }
    copy(pairs, splits[2 * pairs - 1]);
    if (epilogue)
      rewriter.eraseOp(epilogue);
    rewriter.eraseOp(op);
    if (init)
      rewriter.eraseOp(init);
    return success();
  }
};

} // namespace
