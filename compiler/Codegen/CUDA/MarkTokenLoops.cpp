//===- MarkTokenLoops.cpp - which CUDA ops compute tokens -------*- C++ -*-===//
//
// See Passes.td: linformer-cuda-mark-token-loops marks each linalg op whose
// result holds tokens with its (batch, token) loops, for the length rules
// the block-mapping code generators record; an op whose rows are pooled
// slots, with the slots' window and granule too.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Analysis/TokenAnalysis.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "llvm/ADT/DenseSet.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAMARKTOKENLOOPSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
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
    // queries'), each with its result's (batch, token) loops; readers
    // first, so that an op of pooled slots knows whether its readers take
    // a rule.
    SmallVector<Operation *> ops;
    fn.walk([&](Operation *op) {
      auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
      if (op->getNumResults() == 1 &&
          ((linalgOp && linalgOp.hasPureTensorSemantics()) ||
           isa<AttentionCoreOp>(op)))
        ops.push_back(op);
    });
    int64_t n = markedSequenceLength(fn);
    llvm::DenseSet<Operation *> slotOps;
    for (Operation *op : llvm::reverse(ops)) {
      std::optional<TokenDims> dims = tokens.of(op->getResult(0));
      if (!dims)
        continue;
      std::optional<TokenDims> loops = tokenLoopsOf(op, *dims);
      if (!loops)
        continue;
      DenseI64ArrayAttr slotRows;
      if (dims->perRow != 1) {
        auto type = cast<ShapedType>(op->getResult(0).getType());
        int64_t slots = type.getDimSize(dims->token);
        if (!slotsTakeRule(op, dims->perRow, slots, n, slotOps))
          continue;
        slotOps.insert(op);
        slotRows = DenseI64ArrayAttr::get(
            &getContext(), {dims->perRow, cuda::slotGranule(slots)});
      }
      op->setAttr(
          kTokenLoopsAttrName,
          DenseI64ArrayAttr::get(
              &getContext(), {int64_t(loops->batch), int64_t(loops->token)}));
      if (slotRows)
        op->setAttr(kCUDASlotRowsAttrName, slotRows);
    }
  }

  /// Whether `op`, whose `slots` rows are pooled slots of `window` tokens,
  /// may skip the blocks of slots past a sequence's length: the slots
  /// cover the n tokens exactly (the rule's tiles count tokens), and every
  /// reader is a fused attention core taking them as keys, values or key
  /// mask, which stops at the first step past the slots that can be valid
  /// (its token bound's window is theirs, and it masks the rest of that
  /// step), or another such op. (A core lowered to linalg ops, with
  /// --cuda-fuse-core=0, reads every slot: its producers run every block.)
  static bool slotsTakeRule(Operation *op, int64_t window, int64_t slots,
                            int64_t n,
                            const llvm::DenseSet<Operation *> &slotOps) {
    if (!n || ShapedType::isDynamic(slots) || slots * window != n)
      return false;
    Value result = op->getResult(0);
    return !result.use_empty() &&
           llvm::all_of(result.getUsers(), [&](Operation *user) {
             auto core = dyn_cast<AttentionCoreOp>(user);
             if (!core)
               return slotOps.contains(user);
             auto bound =
                 core->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
             return core.getQ() != result && core.getKeyMask() && bound &&
                    bound.getPerStep() == window;
           });
  }
};

} // namespace
