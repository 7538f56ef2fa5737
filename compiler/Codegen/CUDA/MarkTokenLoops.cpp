//===- MarkTokenLoops.cpp - which CUDA ops compute tokens -------*- C++ -*-===//
//
// See Passes.td: linformer-cuda-mark-token-loops marks each linalg op whose
// result holds tokens with its (batch, token) loops, for the length rules
// the block-mapping code generators record.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Common/TokenAnalysis.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAMARKTOKENLOOPSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

struct CUDAMarkTokenLoopsPass
    : mlir::linformer::impl::LinformerCUDAMarkTokenLoopsPassBase<
          CUDAMarkTokenLoopsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    bool lengths = false;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i)
      lengths |= bool(fn.getArgAttr(i, kLengthsArgAttrName));
    if (!lengths)
      return;
    TokenAnalysis tokens;
    // An attention core's rows are its queries': marked with q's (batch,
    // token) dimensions, which are its own loops.
    fn.walk([&](AttentionCoreOp core) {
      if (core.getNumResults() != 1)
        return;
      if (std::optional<TokenDims> dims = tokens.of(core.getResult()))
        core->setAttr(kTokenLoopsAttrName,
                      DenseI64ArrayAttr::get(&getContext(),
                                             {int64_t(dims->batch),
                                              int64_t(dims->token)}));
    });
    fn.walk([&](linalg::LinalgOp op) {
      if (op->getNumResults() != 1 || !op.hasPureTensorSemantics())
        return;
      std::optional<TokenDims> dims = tokens.of(op->getResult(0));
      if (!dims)
        return;
      // The result's (batch, token) dimensions as loops of the op.
      AffineMap out = op.getIndexingMapMatchingResult(op->getResult(0));
      auto b = dyn_cast<AffineDimExpr>(out.getResult(dims->batch));
      auto t = dyn_cast<AffineDimExpr>(out.getResult(dims->token));
      if (!b || !t)
        return;
      op->setAttr(kTokenLoopsAttrName,
                  DenseI64ArrayAttr::get(&getContext(),
                                         {int64_t(b.getPosition()),
                                          int64_t(t.getPosition())}));
    });
  }
};

} // namespace
