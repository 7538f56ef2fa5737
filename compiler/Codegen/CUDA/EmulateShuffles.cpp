//===- EmulateShuffles.cpp - gpu.shuffle on the host -----------*- C++ -*-===//
//
// The host's lowering of the lanes' shuffles (see
// LinformerCUDAEmulateShufflesPass in Passes.td): the CPU runs a thread
// loop one thread to its end before the next, so a value another lane has
// not computed yet cannot be read. Each thread loop is split at its
// shuffles instead: the loop up to a shuffle stores the shuffled value (and
// whatever the rest needs that cannot be recomputed) into a buffer with
// one element a thread, and a second loop over the same threads, holding
// the rest, reads its partner's element there. The kernels' own code is
// what runs; nothing is replayed by hand.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAEMULATESHUFFLESPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

constexpr int64_t kWarp = 32;

/// The dimension of `loop` mapped to thread x (the lanes), if any.
std::optional<unsigned> laneDim(scf::ParallelOp loop) {
  auto mapping = loop->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  if (!mapping)
    return std::nullopt;
  for (auto [i, m] : llvm::enumerate(mapping))
    if (auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(m))
      if (dim.getProcessor() == gpu::Processor::ThreadX)
        return i;
  return std::nullopt;
}

bool holdsShuffle(Operation *op) {
  return op->walk([](gpu::ShuffleOp) { return WalkResult::interrupt(); })
      .wasInterrupted();
}

struct CUDAEmulateShufflesPass
    : mlir::linformer::impl::LinformerCUDAEmulateShufflesPassBase<
          CUDAEmulateShufflesPass> {
  void runOnOperation() override {
    SmallVector<scf::ParallelOp> loops;
    WalkResult r = getOperation().walk([&](gpu::ShuffleOp shuffle) {
      auto loop = shuffle->getParentOfType<scf::ParallelOp>();
      while (loop && !laneDim(loop))
        loop = loop->getParentOfType<scf::ParallelOp>();
      if (!loop) {
        shuffle.emitOpError("is in no loop over threads (an scf.parallel "
                            "with a dimension mapped to thread x): the host "
                            "has no lanes to take its value from");
        return WalkResult::interrupt();
      }
      if (!llvm::is_contained(loops, loop))
        loops.push_back(loop);
      return WalkResult::advance();
    });
    if (r.wasInterrupted())
      return signalPassFailure();
    for (scf::ParallelOp loop : loops)
      if (failed(split(loop)))
        return signalPassFailure();
  }

  /// `loop` split at each of its shuffles, the first one first.
  LogicalResult split(scf::ParallelOp loop) {
    unsigned lane = *laneDim(loop);
    SmallVector<int64_t> extents;
    for (auto [lb, ub, step] : llvm::zip(
             loop.getLowerBound(), loop.getUpperBound(), loop.getStep())) {
      std::optional<int64_t> l = getConstantIntValue(lb),
                             u = getConstantIntValue(ub),
                             s = getConstantIntValue(step);
      if (!l || !u || !s || *l != 0 || *s != 1)
        return loop.emitOpError(
            "has a gpu.shuffle but not constant bounds from 0 in steps of "
            "1: the host's buffers of one element a thread need them");
      extents.push_back(*u);
    }
    if (!loop.getInitVals().empty())
      return loop.emitOpError(
          "has a gpu.shuffle and reductions: not lowered for the host");
    if (extents[lane] % kWarp)
      return loop.emitOpError()
             << "has a gpu.shuffle but " << extents[lane]
             << " threads along x, not whole warps of " << kWarp;
    while (true) {
      gpu::ShuffleOp first;
      for (Operation &op : loop.getBody()->without_terminator()) {
        if ((first = dyn_cast<gpu::ShuffleOp>(op)))
          break;
        if (op.getNumRegions() && holdsShuffle(&op))
          return op.emitOpError(
              "holds a gpu.shuffle in its regions: the host lowering splits "
              "thread loops only at shuffles in their own body");
      }
      if (!first)
        return success();
      if (failed(checkShuffle(first)))
        return failure();
      loop = splitAt(loop, first, lane, extents);
    }
  }

  /// A shuffle the split reads from a partner's element: xor across a
  /// whole warp (every partner is a thread of the loop).
  LogicalResult checkShuffle(gpu::ShuffleOp shuffle) {
    std::optional<int64_t> width = getConstantIntValue(shuffle.getWidth());
    if (shuffle.getMode() != gpu::ShuffleMode::XOR || width != kWarp)
      return shuffle.emitOpError()
             << "is lowered for the host only as an xor over all " << kWarp
             << " lanes of a warp";
    std::optional<int64_t> offset = getConstantIntValue(shuffle.getOffset());
    if (!offset || *offset < 0 || *offset >= kWarp)
      return shuffle.emitOpError()
             << "has an offset that is not a constant in [0, " << kWarp
             << "): its partner could be outside the warp";
    return success();
  }

  /// Whether `v`, used after the split, can be computed again in the second
  /// loop rather than kept: an index of the loop, a value from outside it,
  /// or a pure op of such values. `known` holds the answers so far (an
  /// operand shared by many ops is looked at once).
  static bool recomputable(Value v, scf::ParallelOp loop,
                           DenseMap<Value, bool> &known) {
    if (!loop->isAncestor(v.getParentRegion()->getParentOp()))
      return true;
    if (auto arg = dyn_cast<BlockArgument>(v))
      return arg.getOwner() == loop.getBody();
    auto it = known.find(v);
    if (it != known.end())
      return it->second;
    Operation *def = v.getDefiningOp();
    bool yes = def->getBlock() == loop.getBody() && isPure(def) &&
               def->getNumRegions() == 0 &&
               llvm::all_of(def->getOperands(), [&](Value o) {
                 return recomputable(o, loop, known);
               });
    return known[v] = yes;
  }

  /// The loop over the same threads after `loop`, holding what followed
  /// `shuffle`; returned.
  scf::ParallelOp splitAt(scf::ParallelOp loop, gpu::ShuffleOp shuffle,
                          unsigned lane, ArrayRef<int64_t> extents) {
    Location loc = shuffle.getLoc();
    Block *body = loop.getBody();
    SmallVector<Operation *> rest;
    for (Operation *op = shuffle->getNextNode(); op != body->getTerminator();
         op = op->getNextNode())
      rest.push_back(op);
    // The values of the first part the rest uses.
    SetVector<Value> crossing;
    for (Operation *op : rest)
      op->walk([&](Operation *inner) {
        for (Value v : inner->getOperands())
          if (v.getParentBlock() == body &&
              (!v.getDefiningOp() ||
               v.getDefiningOp()->isBeforeInBlock(shuffle)))
            crossing.insert(v);
      });
    OpBuilder b(loop);
    auto bufferOf = [&](Type t) {
      return memref::AllocOp::create(b, loc, MemRefType::get(extents, t))
          .getResult();
    };
    Value shuffled = bufferOf(shuffle.getValue().getType());
    SmallVector<std::pair<Value, Value>> kept; // value, its buffer
    SmallVector<Value> remade;
    DenseMap<Value, bool> known;
    for (Value v : crossing) {
      if (recomputable(v, loop, known))
        remade.push_back(v);
      else if (v == shuffle.getValue()) // its own element of `shuffled`
        kept.push_back({v, shuffled});
      else
        kept.push_back({v, bufferOf(v.getType())});
    }
    // The first part stores what the rest needs, where the shuffle was.
    b.setInsertionPoint(shuffle);
    ValueRange ivs = loop.getInductionVars();
    memref::StoreOp::create(b, loc, shuffle.getValue(), shuffled, ivs);
    for (auto [v, buffer] : kept)
      if (buffer != shuffled)
        memref::StoreOp::create(b, loc, v, buffer, ivs);
    // The rest in a loop of its own over the same threads.
    b.setInsertionPointAfter(loop);
    auto next = scf::ParallelOp::create(
        b, loc, loop.getLowerBound(), loop.getUpperBound(), loop.getStep(),
        [](OpBuilder &b, Location loc, ValueRange) {
          scf::ReduceOp::create(b, loc);
        });
    // The mapping and the loop's marks.
    for (NamedAttribute attr : loop->getDiscardableAttrs())
      next->setAttr(attr.getName(), attr.getValue());
    b.setInsertionPointToStart(next.getBody());
    IRMapping map;
    for (auto [from, to] :
         llvm::zip(loop.getInductionVars(), next.getInductionVars()))
      map.map(from, to);
    ValueRange nextIvs = next.getInductionVars();
    for (auto [v, buffer] : kept)
      map.map(v, memref::LoadOp::create(b, loc, buffer, nextIvs).getResult());
    // Recomputed values in their order in the first part.
    std::function<Value(Value)> remake = [&](Value v) -> Value {
      if (Value m = map.lookupOrNull(v))
        return m;
      Operation *def = v.getDefiningOp();
      if (!def || !loop->isAncestor(def))
        return v;
      for (Value o : def->getOperands())
        remake(o);
      Operation *copy = b.clone(*def, map);
      return copy->getResult(cast<OpResult>(v).getResultNumber());
    };
    for (Value v : remade)
      remake(v);
    // The partner's element: lane xor offset, the other indices the same.
    SmallVector<Value> partner(nextIvs.begin(), nextIvs.end());
    Value offset = arith::ConstantIndexOp::create(
        b, loc, *getConstantIntValue(shuffle.getOffset()));
    partner[lane] = arith::XOrIOp::create(b, loc, nextIvs[lane], offset);
    Value theirs = memref::LoadOp::create(b, loc, shuffled, partner);
    map.map(shuffle.getShuffleResult(), theirs);
    // Every partner is a lane of the warp.
    if (!shuffle.getValid().use_empty())
      map.map(shuffle.getValid(),
              arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
    for (Operation *op : rest) {
      op->moveBefore(next.getBody()->getTerminator());
      op->walk([&](Operation *inner) {
        for (OpOperand &use : inner->getOpOperands())
          if (Value m = map.lookupOrNull(use.get()))
            use.set(m);
      });
    }
    shuffle.erase();
    b.setInsertionPointAfter(next);
    memref::DeallocOp::create(b, loc, shuffled);
    for (auto [v, buffer] : kept)
      if (buffer != shuffled)
        memref::DeallocOp::create(b, loc, buffer);
    return next;
  }
};

} // namespace
