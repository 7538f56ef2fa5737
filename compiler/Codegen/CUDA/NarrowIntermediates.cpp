//===- NarrowIntermediates.cpp - 16-bit buffers for 16-bit readers -*- C++ -*-===//
//
// The CUDA pipeline's 16-bit narrowing (see Passes.td), the step before
// linformer-cuda-tensor-core-contractions: an f32 buffer whose values are
// read only by readers that round them to bf16 / f16 as they load them
// (contractions the tensor-core pass maps; q, key and value of an attention
// core on tensor cores) gets a 16-bit twin. The op that writes those values
// stores them rounded into the twin, and the readers read the twin,
// extending it in their body as they extend a 16-bit weight: the same bits
// at the readers, half the bytes written and read.
//
// The writer is the contraction's epilogue (the elementwise op after it
// that the tensor-core pass runs on the accumulators as it stores them),
// whose output becomes the twin with a rounding at the end of its body; or,
// where the contraction has no epilogue, a new one, an elementwise rounding
// copy of C into the twin. Either is marked `linformer.narrowed`: its
// readers read the twin, so the tensor-core pass absorbs it even where C is
// a reused buffer with other users. The attention core writes its
// twin itself (its expansion rounds what it stores).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDANARROWINTERMEDIATESPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
namespace cuda = mlir::linformer::cuda;

namespace {

/// Whether `user` overwrites all of `t` without reading it (a fill, a
/// copy, an elementwise op writing every element, the attention core):
/// what `t` held before is dead after it.
bool overwrites(Operation *user, Value t) {
  if (auto core = dyn_cast<mlir::linformer::AttentionCoreOp>(user))
    // Every (b, h, row, column) of its output, once.
    return core.getInit() == t &&
           !llvm::is_contained(core.getDpsInputs(), t);
  auto l = dyn_cast<linalg::LinalgOp>(user);
  if (!l || !l.hasPureBufferSemantics() || l.getNumDpsInits() != 1 ||
      l.getDpsInitOperand(0)->get() != t ||
      llvm::is_contained(l.getDpsInputs(), t))
    return false;
  OpOperand *init = l.getDpsInitOperand(0);
  return l.getNumParallelLoops() == l.getNumLoops() &&
         l.getMatchingIndexingMap(init).isIdentity() &&
         !l.payloadUsesValueFromOperand(init);
}

/// Points `op`'s operand `use` at the 16-bit `buffer`: its block argument
/// takes the 16-bit type and is extended to f32 where the body uses it.
void retypeOperand(IRRewriter &rewriter, linalg::GenericOp op, OpOperand *use,
                   Value buffer) {
  BlockArgument arg = op.getMatchingBlockArgument(use);
  rewriter.modifyOpInPlace(op, [&] {
    use->set(buffer);
    arg.setType(cast<MemRefType>(buffer.getType()).getElementType());
  });
  rewriter.setInsertionPointToStart(arg.getOwner());
  auto ext = arith::ExtFOp::create(rewriter, op.getLoc(),
                                   rewriter.getF32Type(), arg);
  rewriter.replaceAllUsesExcept(arg, ext, ext);
}

/// Rounds what `op`'s body yields to the element type of its output.
void roundYield(IRRewriter &rewriter, linalg::GenericOp op) {
  auto yield = cast<linalg::YieldOp>(op.getBody()->getTerminator());
  Type type = cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
                  .getElementType();
  rewriter.setInsertionPoint(yield);
  Value rounded = arith::TruncFOp::create(rewriter, op.getLoc(), type,
                                          yield.getOperand(0));
  rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, rounded); });
}

struct CUDANarrowIntermediatesPass
    : mlir::linformer::impl::LinformerCUDANarrowIntermediatesPassBase<
          CUDANarrowIntermediatesPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision != "bf16" && precision != "f16") {
      getOperation().emitError()
          << "precision '" << precision
          << "' is not one this pass narrows to (bf16 or f16: the operand "
             "type of the tensor cores' m16n8k16)";
      return signalPassFailure();
    }
    if (!llvm::is_contained({1, 2, 4, 8}, int64_t(warpTilesM)) ||
        !llvm::is_contained({1, 2, 4, 8}, int64_t(warpTilesN))) {
      getOperation().emitError()
          << "warp-tiles-m and warp-tiles-n must be 1, 2, 4 or 8 (as "
             "linformer-cuda-tensor-core-contractions takes them), not "
          << int64_t(warpTilesM) << " and " << int64_t(warpTilesN);
      return signalPassFailure();
    }
    // The contractions and attention cores, in order.
    SmallVector<Operation *> ops;
    getOperation().walk([&](Operation *op) {
      if (isa<linalg::GenericOp, mlir::linformer::AttentionCoreOp>(op))
        ops.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    twinOf.clear();
    for (Operation *op : ops) {
      if (auto core = dyn_cast<mlir::linformer::AttentionCoreOp>(op)) {
        if (cuda::coreOnTensorCores(core, precision))
          narrowCoreOutput(rewriter, core);
        continue;
      }
      auto generic = cast<linalg::GenericOp>(op);
      if (maps(generic))
        narrow(rewriter, generic);
    }
    // Then elementwise kernels whose f32 output tensor-core readers round
    // (a LayerNorm's: the next projections, E X and the FFN multiply it).
    // Not a contraction's epilogue: the tensor-core pass runs those on its
    // accumulators (narrow() above, where every reader rounds).
    if (!elementwise)
      return;
    DenseSet<Operation *> epilogues;
    for (Operation *op : ops)
      if (auto generic = dyn_cast<linalg::GenericOp>(op);
          generic && maps(generic))
        if (OpOperand *read = cuda::absorbableEpilogue(
                generic, cuda::absorbableInit(generic)))
          epilogues.insert(read->getOwner());
    for (Operation *op : ops)
      if (auto generic = dyn_cast<linalg::GenericOp>(op);
          generic && !epilogues.contains(op))
        twinElementwise(rewriter, generic);
  }

  bool maps(linalg::GenericOp op) const {
    return cuda::mapsContraction(op, cuda::mmaDepth(precision), warpTilesM,
                                 warpTilesN);
  }

  /// Narrows the buffer contraction `op`'s results end in (C, or its
  /// epilogue's output) when every read of the values they leave there
  /// rounds them.
  void narrow(IRRewriter &rewriter, linalg::GenericOp op) {
    Operation *initFrom = cuda::absorbableInit(op);
    OpOperand *epilogueRead = cuda::absorbableEpilogue(op, initFrom);
    auto epilogue =
        epilogueRead ? cast<linalg::GenericOp>(epilogueRead->getOwner())
                     : linalg::GenericOp();
    Operation *last = epilogue ? epilogue.getOperation() : op.getOperation();
    Value c = op.getDpsInitOperand(0)->get();
    Value out = epilogue ? epilogue.getDpsInitOperand(0)->get() : c;
    std::optional<SmallVector<OpOperand *>> reads = roundedReads(out, last);
    if (!reads)
      return;
    Value twin = readTwin(rewriter, out, *reads);
    if (epilogue) {
      // Its output argument is unused (an absorbable epilogue's is).
      BlockArgument arg =
          epilogue.getMatchingBlockArgument(epilogue.getDpsInitOperand(0));
      rewriter.modifyOpInPlace(epilogue, [&] {
        epilogue.getDpsInitOperand(0)->set(twin);
        arg.setType(cast<MemRefType>(twin.getType()).getElementType());
      });
      roundYield(rewriter, epilogue);
    } else {
      // A rounding copy of C into the twin, as the epilogue.
      auto type = cast<MemRefType>(c.getType());
      MLIRContext *ctx = &getContext();
      AffineMap id = AffineMap::getMultiDimIdentityMap(type.getRank(), ctx);
      SmallVector<utils::IteratorType> iters(type.getRank(),
                                             utils::IteratorType::parallel);
      rewriter.setInsertionPointAfter(op);
      epilogue = linalg::GenericOp::create(
          rewriter, op.getLoc(), /*inputs=*/ValueRange{c},
          /*outputs=*/ValueRange{twin}, ArrayRef<AffineMap>{id, id}, iters,
          [&](OpBuilder &b, Location loc, ValueRange args) {
            Value r = arith::TruncFOp::create(
                b, loc, cast<MemRefType>(twin.getType()).getElementType(),
                args[0]);
            linalg::YieldOp::create(b, loc, r);
          });
    }
    epilogue->setAttr(mlir::linformer::kNarrowedAttrName,
                      rewriter.getUnitAttr());
  }

  /// An elementwise op writing all of an f32 buffer whose values some
  /// readers round (`roundedReads`' kind) and others read as f32: those
  /// read a 16-bit twin that the op writes as a second output, rounding
  /// what it yields (its kernel writes 2 bytes an element more, each
  /// rounding reader reads 2 less and copies them with cp.async: a post-
  /// norm LayerNorm's output, which the residual add and the next
  /// LayerNorm's statistics read as f32). Where every reader rounds, the
  /// op writes the twin alone (E under the padding mask, read only by E X).
  void twinElementwise(IRRewriter &rewriter, linalg::GenericOp op) {
    if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
        op.getNumParallelLoops() != op.getNumLoops() ||
        op->hasAttr(mlir::linformer::kNarrowedAttrName))
      return;
    OpOperand *init = op.getDpsInitOperand(0);
    if (!op.getMatchingIndexingMap(init).isIdentity() ||
        op.payloadUsesValueFromOperand(init))
      return;
    Value t = init->get();
    std::optional<std::pair<SmallVector<OpOperand *>, bool>> reads =
        splitReads(t, op);
    if (!reads || reads->first.empty())
      return;
    Value twin = readTwin(rewriter, t, reads->first);
    Type twinType = cast<MemRefType>(twin.getType()).getElementType();
    if (!reads->second) {
      BlockArgument arg = op.getMatchingBlockArgument(init);
      rewriter.modifyOpInPlace(op, [&] {
        init->set(twin);
        arg.setType(twinType);
      });
      roundYield(rewriter, op);
      // Nothing reads or writes the f32 buffer any more: it goes.
      if (cuda::eraseIfUnused(rewriter, t))
        twinOf.erase(t);
      return;
    }
    SmallVector<AffineMap> maps = op.getIndexingMapsArray();
    maps.push_back(op.getMatchingIndexingMap(init));
    rewriter.setInsertionPoint(op);
    auto both = linalg::GenericOp::create(
        rewriter, op.getLoc(), op.getDpsInputs(), ValueRange{t, twin}, maps,
        op.getIteratorTypesArray(), /*bodyBuild=*/nullptr);
    both->setDiscardableAttrs(op->getDiscardableAttrDictionary());
    rewriter.inlineRegionBefore(op.getRegion(), both.getRegion(),
                                both.getRegion().end());
    Block &body = both.getRegion().front();
    body.addArgument(twinType, op.getLoc());
    auto yield = cast<linalg::YieldOp>(body.getTerminator());
    rewriter.setInsertionPoint(yield);
    Value rounded = arith::TruncFOp::create(rewriter, op.getLoc(), twinType,
                                            yield.getOperand(0));
    rewriter.modifyOpInPlace(yield, [&] { yield->insertOperands(1, rounded); });
    rewriter.eraseOp(op);
  }

  /// The same for the attention `core`'s output (its expansion rounds
  /// what it stores into a 16-bit output): the output projection reads it.
  void narrowCoreOutput(IRRewriter &rewriter,
                        mlir::linformer::AttentionCoreOp core) {
    Value old = core.getInit();
    std::optional<SmallVector<OpOperand *>> reads = roundedReads(old, core);
    if (!reads)
      return;
    Value twin = readTwin(rewriter, old, *reads);
    rewriter.modifyOpInPlace(core, [&] { core.getInitMutable().set(twin); });
    // The old buffer's twin entry goes with it (a later allocation may
    // reuse its address).
    if (cuda::eraseIfUnused(rewriter, old))
      twinOf.erase(old);
  }

  /// The reads of the values `last` leaves in `t`: the uses of `t` after
  /// `last` in its block, up to its deallocation or the next op that
  /// overwrites it (buffers are reused: every layer's FFN writes its hidden
  /// layer into one buffer). `t` must be a plain f32 allocation, and each
  /// of those uses one input of a contraction the tensor-core pass maps or
  /// q, key or value of an attention core that runs on tensor cores:
  /// readers that round it to the operand type as they load it. Else none.
  std::optional<SmallVector<OpOperand *>> roundedReads(Value t,
                                                       Operation *last) {
    std::optional<std::pair<SmallVector<OpOperand *>, bool>> reads =
        splitReads(t, last);
    if (!reads || reads->second || reads->first.empty())
      return std::nullopt;
    return reads->first;
  }

  /// The reads of the values `last` leaves in `t` (the uses after `last`
  /// in its block, up to the buffer's deallocation or the next op that
  /// overwrites it): those that round them (`roundedReads`' kind), and
  /// whether others read them as f32. None where a use is not one input of
  /// an op of the block (a view, an op that also writes `t`), or `t` is
  /// not a plain f32 allocation.
  std::optional<std::pair<SmallVector<OpOperand *>, bool>>
  splitReads(Value t, Operation *last) {
    auto alloc = t.getDefiningOp<memref::AllocOp>();
    if (!alloc || !alloc.getType().getElementType().isF32() ||
        !alloc.getType().getLayout().isIdentity())
      return std::nullopt;
    Block *block = last->getBlock();
    SmallVector<std::pair<Operation *, OpOperand *>> after;
    for (OpOperand &use : t.getUses()) {
      Operation *owner = block->findAncestorOpInBlock(*use.getOwner());
      if (!owner)
        return std::nullopt;
      if (owner != last && last->isBeforeInBlock(owner))
        after.push_back({owner, &use});
    }
    llvm::sort(after, [](const auto &x, const auto &y) {
      return x.first != y.first && x.first->isBeforeInBlock(y.first);
    });
    std::pair<SmallVector<OpOperand *>, bool> reads{{}, false};
    for (auto [owner, use] : after) {
      if (isa<memref::DeallocOp>(owner) || overwrites(owner, t))
        break;
      auto r = dyn_cast<DestinationStyleOpInterface>(owner);
      if (!r || use->getOwner() != owner || !r.isDpsInput(use) ||
          llvm::any_of(r.getDpsInits(), [&](Value v) { return v == t; }))
        return std::nullopt;
      auto core = dyn_cast<mlir::linformer::AttentionCoreOp>(owner);
      auto generic = dyn_cast<linalg::GenericOp>(owner);
      bool rounds = llvm::count(owner->getOperands(), t) == 1 &&
                    (core ? use->getOperandNumber() < 3 &&
                                cuda::coreOnTensorCores(core, precision)
                          : generic && maps(generic));
      if (rounds)
        reads.first.push_back(use);
      else
        reads.second = true;
    }
    return reads;
  }

  /// Points `reads` of `t` at its 16-bit twin (one per buffer, made on
  /// first use: the values it holds live in turn, as they did in `t`),
  /// each reader extending it in its body. Returns the twin.
  Value readTwin(IRRewriter &rewriter, Value t, ArrayRef<OpOperand *> reads) {
    Value &twin = twinOf[t];
    if (!twin) {
      auto alloc = t.getDefiningOp<memref::AllocOp>();
      rewriter.setInsertionPoint(alloc);
      auto made = memref::AllocOp::create(
          rewriter, alloc.getLoc(),
          MemRefType::get(alloc.getType().getShape(),
                          cuda::mmaOperandType(&getContext(), precision)));
      made.setAlignmentAttr(alloc.getAlignmentAttr());
      for (Operation *user : llvm::make_early_inc_range(t.getUsers()))
        if (auto dealloc = dyn_cast<memref::DeallocOp>(user)) {
          rewriter.setInsertionPointAfter(dealloc);
          memref::DeallocOp::create(rewriter, dealloc.getLoc(), made);
        }
      twin = made;
    }
    for (OpOperand *use : reads) {
      if (auto generic = dyn_cast<linalg::GenericOp>(use->getOwner()))
        retypeOperand(rewriter, generic, use, twin);
      else // the attention core: its operands are buffers, nothing to retype
        rewriter.modifyOpInPlace(use->getOwner(), [&] { use->set(twin); });
    }
    return twin;
  }

  /// The 16-bit twin of each f32 buffer whose reads were narrowed.
  DenseMap<Value, Value> twinOf;
};

} // namespace
