//===- ExpandStridedCopies.cpp - copies the kernels do themselves ---------===//
//
// A memref.copy between buffers that are not one contiguous block (a
// workgroup's columns of a wider buffer) becomes a linalg.copy, which the
// pipeline lowers to loops: the LLVM lowering would call `memrefCopy`, a
// function of MLIR's runner library that the kernels do not link. See
// LinformerCPUExpandStridedCopiesPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUEXPANDSTRIDEDCOPIESPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

/// What the LLVM lowering copies with a memcpy intrinsic: an identity
/// layout, or a static shape that is one contiguous block.
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

struct ExpandStridedCopiesPass
    : mlir::linformer::impl::LinformerCPUExpandStridedCopiesPassBase<
          ExpandStridedCopiesPass> {
  void runOnOperation() override {
    SmallVector<memref::CopyOp> strided;
    getOperation().walk([&](memref::CopyOp op) {
      if (!isContiguous(op.getSource().getType()) ||
          !isContiguous(op.getTarget().getType()))
        strided.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (memref::CopyOp op : strided) {
      rewriter.setInsertionPoint(op);
      rewriter.replaceOpWithNewOp<linalg::CopyOp>(op, op.getSource(),
                                                  op.getTarget());
    }
  }
};

} // namespace
