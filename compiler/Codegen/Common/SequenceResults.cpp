//===- SequenceResults.cpp - results that hold tokens own their buffer ----===//
//
// Marks each result of an entry that holds tokens ([b, n, ...], from the
// sequence input through the ops) `linformer.sequence`, and gives it a
// destination no other value shares, so that after bufferization the
// caller's buffer for it (an out-parameter, packed when the runtime binds
// packed or shorter tensors in place) holds that result's tokens and
// nothing else. See LinformerSequenceResultsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Analysis/TokenAnalysis.h"
#include "compiler/Passes.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERSEQUENCERESULTSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// The destination-passing chain that ends in `result` (each op writing in
/// place into its tied init) made its own: its `tensor.empty` becomes a
/// `bufferization.alloc_tensor` (which One-Shot Bufferize gives a buffer no
/// other value aliases, and CSE does not merge), used or not by another op
/// now: the passes after this one make tensor.empty ops of their own, and
/// CSE would merge one of the result's type with the chain's (a bf16
/// model's E X rounded to bf16 in its own kernel, [b, k, d], where k = n:
/// written into the caller's output buffer, which the runtime packs, found
/// by the random-model soak). The first init another op also uses, a
/// one-result destination-style producer (a zero fill), is replaced by a
/// copy of it, whose own init is then made the chain's the same way. Ends
/// at anything else (a function argument: bufferization copies there
/// where it must).
void ownDestination(RewriterBase &rewriter, Value result) {
  Value v = result;
  while (auto res = dyn_cast<OpResult>(v)) {
    auto dps = dyn_cast<DestinationStyleOpInterface>(res.getOwner());
    if (!dps || !dps.hasPureTensorSemantics())
      return;
    OpOperand *init = dps.getTiedOpOperand(res);
    Value dest = init->get();
    auto empty = dest.getDefiningOp<tensor::EmptyOp>();
    if (dest.hasOneUse() && !empty) {
      v = dest;
      continue;
    }
    rewriter.setInsertionPoint(dps);
    if (empty) {
      Value own = bufferization::AllocTensorOp::create(
          rewriter, empty.getLoc(), empty.getType(), empty.getDynamicSizes());
      rewriter.modifyOpInPlace(dps, [&] { init->set(own); });
      if (empty->use_empty())
        rewriter.eraseOp(empty);
      return;
    }
    auto producer = dest.getDefiningOp<DestinationStyleOpInterface>();
    if (!producer || producer->getNumResults() != 1 ||
        !producer.hasPureTensorSemantics())
      return;
    Value own = rewriter.clone(*producer)->getResult(0);
    rewriter.modifyOpInPlace(dps, [&] { init->set(own); });
    v = own;
  }
}

struct SequenceResultsPass
    : mlir::linformer::impl::LinformerSequenceResultsPassBase<
          SequenceResultsPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    auto ret = dyn_cast<func::ReturnOp>(fn.getBody().back().getTerminator());
    if (!ret)
      return;
    // Buffers of their own only where the runtime may bind packed or
    // shorter tensors in place: an entry with its sequences' lengths. And
    // in a sequence-parallel entry, whose collective steps sum or gather
    // intermediates the runtime names: bufferization could otherwise put
    // one in the output's buffer (E X [b, k, d] and the output [b, n, d]
    // have one type where k is a rank's n), which the runtime would not
    // sum (an output may be the caller's shorter tensor).
    bool hasLengths = llvm::any_of(fn.getArguments(), [&](BlockArgument a) {
      return fn.getArgAttr(a.getArgNumber(), kLengthsArgAttrName) != nullptr;
    });
    bool hasCollectives = hasCollectiveSteps(fn);
    TokenAnalysis tokens;
    IRRewriter rewriter(&getContext());
    for (OpOperand &operand : ret->getOpOperands()) {
      // Tokens along [b, n] one a row: what the runtime takes as a sequence
      // (and the packed layout stores).
      std::optional<TokenDims> dims = tokens.of(operand.get());
      if (!dims || dims->batch != 0 || dims->token != 1 || dims->perRow != 1)
        continue;
      fn.setResultAttr(operand.getOperandNumber(), kSequenceArgAttrName,
                       rewriter.getUnitAttr());
      if (hasLengths || hasCollectives)
        ownDestination(rewriter, operand.get());
    }
  }
};

} // namespace
