//===- PadRowStrides.cpp - rows off the L1 cache's critical stride --------===//
//
// An intermediate buffer whose rows span a multiple of 4 KiB is allocated
// with one cache line more a row and used through a view of its old shape,
// so that a kernel's block of rows spreads over the L1 cache's sets. See
// LinformerCPUPadRowStridesPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUPADROWSTRIDESPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

/// Whether every use of `v`, and of the subviews built on it, takes a
/// memref of any strided layout (its result types do not follow the
/// layout, subviews' aside).
bool takesAnyLayout(Value v) {
  for (OpOperand &use : v.getUses()) {
    Operation *user = use.getOwner();
    if (auto view = dyn_cast<memref::SubViewOp>(user)) {
      if (&use != &view.getSourceMutable() ||
          !takesAnyLayout(view.getResult()))
        return false;
      continue;
    }
    if (!isa<vector::TransferReadOp, vector::TransferWriteOp, vector::LoadOp,
             vector::StoreOp, vector::MaskedLoadOp, vector::MaskedStoreOp,
             memref::LoadOp, memref::StoreOp, memref::CopyOp,
             memref::DeallocOp, linalg::LinalgOp>(user))
      return false;
  }
  return true;
}

/// Gives the subviews built on `v` (whose type changed) their new types.
void retypeViews(Value v) {
  for (Operation *user : v.getUsers()) {
    auto view = dyn_cast<memref::SubViewOp>(user);
    if (!view)
      continue;
    MemRefType type = memref::SubViewOp::inferRankReducedResultType(
        view.getType().getShape(), view.getSourceType(),
        view.getMixedOffsets(), view.getMixedSizes(), view.getMixedStrides());
    view.getResult().setType(type);
    retypeViews(view.getResult());
  }
}

struct PadRowStridesPass
    : mlir::linformer::impl::LinformerCPUPadRowStridesPassBase<
          PadRowStridesPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    if (func.isExternal() || criticalStride <= 0 || padBytes <= 0)
      return;
    SmallVector<memref::AllocOp> allocs;
    for (auto alloc : func.getBody().front().getOps<memref::AllocOp>())
      if (shouldPad(alloc.getType()) && takesAnyLayout(alloc.getResult()))
        allocs.push_back(alloc);
    IRRewriter rewriter(&getContext());
    for (memref::AllocOp alloc : allocs)
      pad(rewriter, alloc);
  }

  /// Static and identity-laid-out, more than one row, the innermost
  /// dimension a multiple of criticalStride bytes and padBytes whole
  /// elements.
  bool shouldPad(MemRefType type) const {
    if (!type.hasStaticShape() || !type.getLayout().isIdentity() ||
        type.getRank() < 2 || type.getNumElements() == 0 ||
        !type.getElementType().isIntOrFloat())
      return false;
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    if (elementBytes == 0 || type.getElementTypeBitWidth() % 8 ||
        padBytes % elementBytes)
      return false;
    int64_t rowBytes = type.getShape().back() * elementBytes;
    return rowBytes % criticalStride == 0 &&
           type.getNumElements() / type.getShape().back() > 1;
  }

  void pad(IRRewriter &rewriter, memref::AllocOp alloc) const {
    MemRefType type = alloc.getType();
    int64_t rank = type.getRank();
    SmallVector<int64_t> shape(type.getShape());
    shape.back() += padBytes / (type.getElementTypeBitWidth() / 8);
    rewriter.setInsertionPoint(alloc);
    Location loc = alloc.getLoc();
    auto padded = memref::AllocOp::create(
        rewriter, loc, MemRefType::get(shape, type.getElementType()),
        ValueRange{}, alloc.getAlignmentAttr());
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0)),
        strides(rank, rewriter.getIndexAttr(1)), sizes;
    for (int64_t size : type.getShape())
      sizes.push_back(rewriter.getIndexAttr(size));
    auto view = memref::SubViewOp::create(rewriter, loc, padded, offsets,
                                          sizes, strides);
    // The buffer is freed whole.
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (auto dealloc = dyn_cast<memref::DeallocOp>(user))
        dealloc.getMemrefMutable().assign(padded);
    rewriter.replaceAllUsesWith(alloc.getResult(), view.getResult());
    rewriter.eraseOp(alloc);
    retypeViews(view.getResult());
  }
};

} // namespace
