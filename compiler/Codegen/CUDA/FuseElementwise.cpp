//===- FuseElementwise.cpp - elementwise producers into consumers -*- C++ -*-===//
//
// The CUDA pipeline makes one kernel of every linalg op (see Passes.td), so
// each elementwise op that stays separate writes a whole tensor to device
// memory and the next kernel reads it back. This fuses elementwise
// producers into their consumers with upstream's elementwise fusion
// patterns. Into contractions only dtype extensions (a bf16 weight's
// extension to f32): the contraction stays a multiply-add of extended
// operands, which the tensor-core path (linformer-cuda-tensor-core-
// contractions) matches, and reads the 16-bit data itself instead of an f32
// copy a kernel of its own would write (an extension several ops read is
// cloned for each first). A guarded extension (the padding mask applied to
// E, BodyCloning.h) is cloned for each reader that is no contraction and
// fuses into those; the contractions share it, and linformer-cuda-tensor-
// core-contractions recomputes it as they load the operand, so its f32
// buffer goes. Nothing fuses into the attention core (not a linalg op: it
// reads its q, keys, values and mask as they are, ExpandAttentionCore.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/BodyCloning.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Rewrite/FrozenRewritePatternSet.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAFUSEELEMENTWISEPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
namespace cuda = mlir::linformer::cuda;

namespace {

/// An elementwise linalg.generic that only extends its one input's float
/// type (`linalg.yield (arith.extf %in)`).
bool isExtension(Operation *op) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || g.getNumDpsInputs() != 1 || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops())
    return false;
  Block &body = g.getRegion().front();
  if (body.getOperations().size() != 2)
    return false;
  auto ext = dyn_cast<arith::ExtFOp>(body.front());
  auto yield = cast<linalg::YieldOp>(body.getTerminator());
  return ext && ext.getIn() == body.getArgument(0) &&
         yield.getValues().size() == 1 && yield.getValues()[0] == ext;
}

/// Whether `op` can take elementwise producers: a linalg op (not the
/// attention core, which takes its q, keys, values and mask as they are).
bool takesElementwise(Operation *op) { return isa<linalg::LinalgOp>(op); }

struct CUDAFuseElementwisePass
    : mlir::linformer::impl::LinformerCUDAFuseElementwisePassBase<
          CUDAFuseElementwisePass> {
  /// Clones each extension with several readers for each of them, and says
  /// whether there was one. Fusing a producer that has other readers into
  /// a contraction keeps the producer's value as a second result of the
  /// fused op (upstream's elementwise fusion), which is then no
  /// contraction: it missed the tensor-core path, took every elementwise
  /// producer after it (layer 4's Q projection recomputed 3 layers of
  /// LayerNorms) and wrote the f32 copy of the weight all the same. A
  /// guarded extension likewise for its readers that are no contraction,
  /// so that it fuses into them while contractions still read it.
  bool cloneSharedExtensions() {
    SmallVector<linalg::GenericOp> shared;
    getOperation().walk([&](linalg::GenericOp g) {
      if ((isExtension(g) || cuda::isGuardedExtension(g)) &&
          !g->getResult(0).hasOneUse() &&
          !g->getResult(0).use_empty())
        shared.push_back(g);
    });
    OpBuilder builder(&getContext());
    bool cloned = false;
    for (linalg::GenericOp g : shared) {
      SmallVector<OpOperand *> uses = llvm::map_to_vector(
          g->getResult(0).getUses(), [](OpOperand &u) { return &u; });
      // A guarded extension stays one op for all the contractions that
      // read it (each recomputes it as it loads it on the tensor-core
      // path; on the others they read the one copy): clones go to the
      // other readers only.
      // Otherwise (and when no contraction reads it) the first reader
      // keeps the op.
      if (cuda::isGuardedExtension(g))
        llvm::erase_if(uses, [](OpOperand *use) {
          auto reader = dyn_cast<linalg::LinalgOp>(use->getOwner());
          return reader && linalg::isaContractionOpInterface(reader);
        });
      if (uses.size() == g->getResult(0).getNumUses())
        uses.erase(uses.begin());
      builder.setInsertionPointAfter(g);
      for (OpOperand *use : uses)
        use->set(builder.clone(*g)->getResult(0));
      cloned |= !uses.empty();
    }
    return cloned;
  }

  /// Gives each linalg op that writes into a shared `linalg.fill` (its
  /// init) a fill of its own, of its own `tensor.empty`, right before it.
  /// The projected keys' and values' GEMMs shared one zero fill: the
  /// first, right after it, had it absorbed by its accumulators
  /// (linformer-cuda-tensor-core-contractions takes an init computed right
  /// before the GEMM), the other read a zero-filled buffer that a kernel
  /// of its own wrote.
  void cloneSharedFills() {
    SmallVector<linalg::FillOp> shared;
    getOperation().walk([&](linalg::FillOp fill) {
      if (!fill->getResult(0).hasOneUse() && !fill->getResult(0).use_empty())
        shared.push_back(fill);
    });
    OpBuilder builder(&getContext());
    for (linalg::FillOp fill : shared) {
      SmallVector<OpOperand *> inits;
      for (OpOperand &use : fill->getResult(0).getUses()) {
        auto writer = dyn_cast<DestinationStyleOpInterface>(use.getOwner());
        if (writer && writer.isDpsInit(&use))
          inits.push_back(&use);
      }
      for (OpOperand *use : inits) {
        builder.setInsertionPoint(use->getOwner());
        IRMapping map;
        if (auto empty =
                fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>())
          map.map(empty.getResult(), builder.clone(*empty)->getResult(0));
        use->set(builder.clone(*fill, map)->getResult(0));
      }
      if (!fill->use_empty())
        continue;
      Operation *empty = fill.getOutputs()[0].getDefiningOp<tensor::EmptyOp>();
      fill->erase();
      if (empty && empty->use_empty())
        empty->erase();
    }
  }

  void runOnOperation() override {
    cloneSharedFills();
    RewritePatternSet patterns(&getContext());
    linalg::populateElementwiseOpsFusionPatterns(
        patterns, [](OpOperand *fused) {
          if (!takesElementwise(fused->getOwner()))
            return false;
          // An extension (one reader, see cloneSharedExtensions) fuses
          // into anything.
          Operation *producer = fused->get().getDefiningOp();
          if (isExtension(producer))
            return fused->get().hasOneUse();
          // A guarded extension into anything but a contraction, which
          // recomputes it as it loads it (and stays a plain contraction).
          if (cuda::isGuardedExtension(producer))
            return fused->get().hasOneUse() &&
                   !linalg::isaContractionOpInterface(
                       cast<linalg::LinalgOp>(fused->getOwner()));
          // Anything else only when every reader (this consumer among
          // them) takes it: not when a reader needs it in memory anyway (a
          // contraction, a reshape, the result), where fusing makes the
          // other readers recompute it from its inputs while it is written
          // all the same.
          return llvm::all_of(fused->get().getUsers(), [](Operation *user) {
                   return takesElementwise(user) &&
                          !linalg::isaContractionOpInterface(
                              cast<linalg::LinalgOp>(user));
                 });
        });
    // A weight's extension often reaches its contraction through a
    // reshape (the head split of W: [d, d] -> [d, h, dh]): the extension
    // is expanded instead, so that it meets its reader.
    linalg::populateFoldReshapeOpsByExpansionPatterns(
        patterns, [](OpOperand *fused) {
          return isa<tensor::ExpandShapeOp>(fused->getOwner()) &&
                 isExtension(fused->get().getDefiningOp());
        });
    FrozenRewritePatternSet frozen(std::move(patterns));
    // A fused op iterates as its consumer did (upstream's fusion keeps the
    // consumer's loops and init), so the consumer's token bound (E X: its
    // token loop stops at the lengths, linformer-cuda-tensor-core-
    // contractions) holds for it too; the pattern makes a new op without
    // it. Found again by the init (each op has its own: cloneSharedFills).
    DenseMap<Value, std::pair<Attribute, unsigned>> bounds;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (Attribute bound = op->getAttr(mlir::linformer::kTokenBoundAttrName))
        if (op.getNumDpsInits() == 1)
          bounds[op.getDpsInitOperand(0)->get()] = {bound, op.getNumLoops()};
    });
    // Fusing an op into its readers hands the extensions it read to each
    // of them: clone and fuse again until no extension is shared (the
    // model input's extension, read by the residual add, which every
    // statistic of the LayerNorm after it takes in).
    cloneSharedExtensions();
    for (int round = 0; round < 8; ++round) {
      if (failed(applyPatternsGreedily(getOperation(), frozen)))
        return signalPassFailure();
      if (!cloneSharedExtensions())
        break;
    }
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(mlir::linformer::kTokenBoundAttrName))
        return;
      for (OpOperand &init : op.getDpsInitsMutable()) {
        auto it = bounds.find(init.get());
        if (it != bounds.end() && it->second.second == op.getNumLoops())
          op->setAttr(mlir::linformer::kTokenBoundAttrName, it->second.first);
      }
    });
  }
};

} // namespace
