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
    if (!markedLengthsArgument(fn))
      return;
    TokenAnalysis tokens;
    // Linalg ops on tensors and attention cores (whose rows are their
    // queries'), each with its result's (batch, token) loops.
    fn.walk([&](Operation *op) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (op->getNumResults() != 1 ||
          !((linalgOp && linalgOp.hasPureTensorSemantics()) ||
            isa<AttentionCoreOp>(op)))
        return;
      std::optional<TokenDims> dims = tokens.of(op->getResult(0));
      // Rows of pooled slots get no rule here: the fused core reads all of
      // them.
      if (!dims || dims->perRow != 1)
        return;
      if (std::optional<TokenDims> loops = tokenLoopsOf(op, *dims))
        op->setAttr(kTokenLoopsAttrName,
                    DenseI64ArrayAttr::get(&getContext(),
                                           {int64_t(loops->batch),
                                            int64_t(loops->token)}));
    });
  }
};

} // namespace
