//===- MergeLaunches.cpp - small independent launches as one ----*- C++ -*-===//
//
// See Passes.td: linformer-cuda-merge-launches runs two block loops with the
// same thread loop, neither of which touches what the other writes, as one
// launch of both grids: the blocks before the first loop's count run its
// body, the rest the second's (the K and V projections of a shared E X,
// 16 blocks each on 132 SMs, become one launch of 32).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAMERGELAUNCHESPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

/// The buffers a host-level op (a block loop, an allocation, a
/// deallocation) reads, writes and frees: each access traced back through
/// views to a function argument or an allocation outside the op. Buffers
/// the op makes itself (shared memory, a thread's private array) are its
/// own. `unknown`: an op whose effects cannot be traced (then it conflicts
/// with everything).
struct Footprint {
  llvm::DenseSet<Value> reads, writes, frees;
  bool unknown = false;

  bool touches(Value root) const {
    return reads.contains(root) || writes.contains(root) ||
           frees.contains(root);
  }
};

Footprint footprintOf(Operation *top) {
  Footprint f;
  auto record = [&](Value v, MemoryEffects::Effect *effect) {
    Value root = mlir::linformer::cuda::viewedBuffer(v);
    if (top->isAncestor(root.getParentRegion()->getParentOp()))
      return;
    if (isa<MemoryEffects::Read>(effect))
      f.reads.insert(root);
    else if (isa<MemoryEffects::Write>(effect))
      f.writes.insert(root);
    else
      f.frees.insert(root);
  };
  top->walk([&](Operation *op) {
    // ldmatrix says it reads without saying what: its source.
    if (auto ldmatrix = dyn_cast<nvgpu::LdMatrixOp>(op)) {
      record(ldmatrix.getSrcMemref(), MemoryEffects::Read::get());
      return WalkResult::advance();
    }
    if (mlir::linformer::cuda::touchesNoBuffer(op))
      return WalkResult::advance();
    auto effects = dyn_cast<MemoryEffectOpInterface>(op);
    if (!effects) {
      if (!op->hasTrait<OpTrait::HasRecursiveMemoryEffects>() &&
          !isMemoryEffectFree(op)) {
        f.unknown = true;
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    }
    SmallVector<MemoryEffects::EffectInstance> list;
    effects.getEffects(list);
    for (const MemoryEffects::EffectInstance &e : list) {
      if (isa<MemoryEffects::Allocate>(e.getEffect()) ||
          isa<SideEffects::AutomaticAllocationScopeResource>(e.getResource()))
        continue;
      Value v = e.getValue();
      if (!v) {
        f.unknown = true;
        return WalkResult::interrupt();
      }
      record(v, e.getEffect());
    }
    return WalkResult::advance();
  });
  return f;
}

bool isFunctionArgument(Value v) {
  auto arg = dyn_cast<BlockArgument>(v);
  return arg && isa<FunctionOpInterface>(arg.getOwner()->getParentOp());
}

/// Whether `a` and `b` may not run in either order: one writes or frees a
/// buffer the other touches. Two function arguments may be one buffer (a
/// caller may bind one device buffer twice): a write of one conflicts with
/// any access to another.
bool conflict(const Footprint &a, const Footprint &b) {
  if (a.unknown || b.unknown)
    return true;
  auto oneWay = [](const Footprint &w, const Footprint &o) {
    for (const llvm::DenseSet<Value> *set : {&w.writes, &w.frees})
      for (Value root : *set) {
        if (o.touches(root))
          return true;
        if (!isFunctionArgument(root))
          continue;
        for (const llvm::DenseSet<Value> *other :
             {&o.reads, &o.writes, &o.frees})
          if (llvm::any_of(*other, isFunctionArgument))
            return true;
      }
    return false;
  };
  return oneWay(a, b) || oneWay(b, a);
}

/// A block loop that may be merged: every dimension on a block id (x, y
/// or z, identity maps) with constant bounds, no attribute but its
/// mapping (a length rule, for one, numbers its own grid), and a body of
/// side-effect-free ops (the block's coordinates) followed by one thread
/// loop with constant bounds that holds no further parallel loop.
struct Launch {
  scf::ParallelOp blocks, threads;
  /// Each block dimension's trip count, and which block id it is on.
  SmallVector<int64_t> trips;
  SmallVector<gpu::Processor> processors;
  int64_t count = 1;
  SmallVector<Operation *> prologue;
};

std::optional<Launch> asLaunch(scf::ParallelOp blocks) {
  auto mapping = blocks->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  if (!mapping || mapping.size() != blocks.getNumLoops() ||
      !blocks.getInitVals().empty() ||
      blocks->getDiscardableAttrDictionary().size() != 1)
    return std::nullopt;
  Launch l;
  l.blocks = blocks;
  for (auto [m, lb, ub, step] :
       llvm::zip(mapping, blocks.getLowerBound(), blocks.getUpperBound(),
                 blocks.getStep())) {
    auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(m);
    std::optional<int64_t> l0 = getConstantIntValue(lb),
                           u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!dim || !l0 || !u || !s || *s <= 0 || *u <= *l0 ||
        !dim.getMap().isIdentity() || !dim.getBound().isIdentity() ||
        !llvm::is_contained({gpu::Processor::BlockX, gpu::Processor::BlockY,
                             gpu::Processor::BlockZ},
                            dim.getProcessor()) ||
        llvm::is_contained(l.processors, dim.getProcessor()))
      return std::nullopt;
    l.trips.push_back((*u - *l0 + *s - 1) / *s);
    l.processors.push_back(dim.getProcessor());
    l.count *= l.trips.back();
  }
  Block *body = blocks.getBody();
  for (Operation &op : body->without_terminator()) {
    if (auto threads = dyn_cast<scf::ParallelOp>(op)) {
      if (l.threads || &op != body->getTerminator()->getPrevNode())
        return std::nullopt;
      l.threads = threads;
      continue;
    }
    if (op.getNumRegions() || !isMemoryEffectFree(&op))
      return std::nullopt;
    l.prologue.push_back(&op);
  }
  if (!l.threads || !l.threads.getInitVals().empty())
    return std::nullopt;
  auto threadMapping =
      l.threads->getAttrOfType<ArrayAttr>(gpu::getMappingAttrName());
  // Thread ids, and dimensions each thread runs in sequence (what a
  // block of threads does not cover).
  if (!threadMapping || llvm::any_of(threadMapping, [](Attribute m) {
        auto dim = dyn_cast<gpu::ParallelLoopDimMappingAttr>(m);
        return !dim ||
               !llvm::is_contained(
                   {gpu::Processor::ThreadX, gpu::Processor::ThreadY,
                    gpu::Processor::ThreadZ, gpu::Processor::Sequential},
                   dim.getProcessor());
      }))
    return std::nullopt;
  for (Value v : l.threads.getOperands())
    if (!getConstantIntValue(v))
      return std::nullopt;
  bool nested = false;
  l.threads.getBody()->walk([&](scf::ParallelOp) { nested = true; });
  if (nested)
    return std::nullopt;
  return l;
}

/// Whether `a` and `b` run on the same threads: the same thread loop
/// bounds and attributes.
bool sameThreads(Launch a, Launch b) {
  auto constants = [](scf::ParallelOp loop) {
    SmallVector<int64_t> out;
    for (Value v : loop.getOperands())
      out.push_back(*getConstantIntValue(v));
    return out;
  };
  return a.threads.getNumLoops() == b.threads.getNumLoops() &&
         constants(a.threads) == constants(b.threads) &&
         a.threads->getDiscardableAttrDictionary() ==
             b.threads->getDiscardableAttrDictionary();
}

struct CUDAMergeLaunchesPass
    : mlir::linformer::impl::LinformerCUDAMergeLaunchesPassBase<
          CUDAMergeLaunchesPass> {
  using Base::Base;

  /// How far back a loop looks for one to join, in launches (and length
  /// guards) it passes: the bias fills and projections of one E X's K and
  /// V are within three; a loop that could go further back (a later
  /// layer's fill, independent of the layer before it) stays with its
  /// neighbours.
  static constexpr size_t kMaxBetween = 4;

  void runOnOperation() override {
    if (maxBlocks <= 0)
      return;
    // Every block of host code that holds block loops: the function's
    // and those of its length guards.
    SmallVector<Block *> blocks;
    getOperation().walk([&](Block *block) {
      Operation *parent = block->getParentOp();
      if (!isa<scf::ParallelOp>(parent) &&
          !parent->getParentOfType<scf::ParallelOp>())
        blocks.push_back(block);
    });
    for (Block *block : blocks)
      mergeIn(*block);
    // The length rules, in the new launch order (the merged loops had
    // none, and neither has the merged one).
    if (getOperation()->hasAttr(mlir::linformer::kCUDALaunchRowsAttrName))
      mlir::linformer::cuda::recordLaunchRows(getOperation());
  }

  /// Merges, in program order, each block loop into the earliest one it
  /// can join: one it can be moved up to across every op between. (The
  /// earliest: of a K bias fill, the K projection, a V bias fill and the V
  /// projection, the fills then join each other and the projections too,
  /// where the nearest would pair the K projection with the V fill.)
  void mergeIn(Block &block) {
    for (Operation *op = &block.front(); op; op = op->getNextNode()) {
      auto loop = dyn_cast<scf::ParallelOp>(op);
      std::optional<Launch> second = loop ? asLaunch(loop) : std::nullopt;
      if (!second)
        continue;
      Footprint moved = footprintOf(loop);
      if (moved.unknown)
        continue;
      SmallVector<Operation *> between;
      std::optional<Launch> chosen;
      SmallVector<Operation *> hoisted;
      size_t passed = 0;
      for (Operation *prev = op->getPrevNode(); prev && passed < kMaxBetween;
           prev = prev->getPrevNode()) {
        auto earlier = dyn_cast<scf::ParallelOp>(prev);
        std::optional<Launch> first =
            earlier ? asLaunch(earlier) : std::nullopt;
        if (conflict(footprintOf(prev), moved))
          break;
        if (first && first->count + second->count <= maxBlocks &&
            sameThreads(*first, *second))
          if (std::optional<SmallVector<Operation *>> hoist =
                  operandsToHoist(loop, between)) {
            chosen = first;
            hoisted = std::move(*hoist);
          }
        between.push_back(prev);
        if (prev->getNumRegions())
          ++passed;
      }
      if (!chosen)
        continue;
      for (Operation *def : hoisted)
        def->moveBefore(chosen->blocks);
      op = merge(*chosen, *second);
    }
  }

  /// The ops among `between` (the ops from `loop` back to a loop it may
  /// join, latest first) that define values `loop` uses, and what they use
  /// in turn, in program order: what must move before the loop it joins.
  /// None if one of them cannot: only allocations and side-effect-free ops
  /// without regions move.
  static std::optional<SmallVector<Operation *>>
  operandsToHoist(scf::ParallelOp loop, ArrayRef<Operation *> between) {
    llvm::SetVector<Value> used;
    getUsedValuesDefinedAbove(loop.getRegion(), used);
    used.insert(loop.getOperands().begin(), loop.getOperands().end());
    llvm::SmallPtrSet<Operation *, 16> moves;
    SmallVector<Value> work(used.begin(), used.end());
    while (!work.empty()) {
      Operation *def = work.pop_back_val().getDefiningOp();
      if (!def || !llvm::is_contained(between, def) || moves.contains(def))
        continue;
      if (def->getNumRegions() ||
          !(isa<memref::AllocOp>(def) || isMemoryEffectFree(def)))
        return std::nullopt;
      moves.insert(def);
      work.append(def->operand_begin(), def->operand_end());
    }
    SmallVector<Operation *> ordered;
    for (Operation *op : llvm::reverse(between))
      if (moves.contains(op))
        ordered.push_back(op);
    return ordered;
  }

  /// The block coordinates of `l`'s loop from `index` (its blocks in
  /// launch order: x fastest, then y, then z), at `b`.
  static void mapCoordinates(OpBuilder &b, Location loc, Launch l, Value index,
                             IRMapping &map) {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    for (gpu::Processor p : {gpu::Processor::BlockX, gpu::Processor::BlockY,
                             gpu::Processor::BlockZ}) {
      auto *it = llvm::find(l.processors, p);
      if (it == l.processors.end())
        continue;
      unsigned d = it - l.processors.begin();
      Value coordinate = arith::RemUIOp::create(b, loc, index, c(l.trips[d]));
      index = arith::DivUIOp::create(b, loc, index, c(l.trips[d]));
      int64_t lb = *getConstantIntValue(l.blocks.getLowerBound()[d]);
      int64_t step = *getConstantIntValue(l.blocks.getStep()[d]);
      Value iv = coordinate;
      if (step != 1)
        iv = arith::MulIOp::create(b, loc, iv, c(step));
      if (lb != 0)
        iv = arith::AddIOp::create(b, loc, iv, c(lb));
      map.map(l.blocks.getInductionVars()[d], iv);
    }
  }

  /// The body of `l` for the block `index` of its loop, at `b`, on the
  /// thread ids `threadIds`.
  static void cloneBody(OpBuilder &b, Location loc, Launch l, Value index,
                        ValueRange threadIds) {
    IRMapping map;
    mapCoordinates(b, loc, l, index, map);
    for (Operation *op : l.prologue)
      b.clone(*op, map);
    map.map(l.threads.getInductionVars(), threadIds);
    for (Operation &op : l.threads.getBody()->without_terminator())
      b.clone(op, map);
  }

  /// One block loop over both grids in place of `first` (the other goes):
  /// a thread loop whose body runs `first`'s body in the blocks before its
  /// count and `second`'s in the rest.
  static Operation *merge(Launch first, Launch second) {
    OpBuilder b(first.blocks);
    Location loc =
        b.getFusedLoc({first.blocks.getLoc(), second.blocks.getLoc()});
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto blocks = scf::ParallelOp::create(
        b, loc, ValueRange{c(0)}, ValueRange{c(first.count + second.count)},
        ValueRange{c(1)});
    mlir::linformer::cuda::mapLoop(blocks, {gpu::Processor::BlockX});
    b.setInsertionPointToStart(blocks.getBody());
    Value block = blocks.getInductionVars()[0];
    Value inFirst = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          block, c(first.count));
    Value inSecond = arith::SubIOp::create(b, loc, block, c(first.count));
    auto threads = scf::ParallelOp::create(
        b, first.threads.getLoc(), first.threads.getLowerBound(),
        first.threads.getUpperBound(), first.threads.getStep());
    threads->setDiscardableAttrs(first.threads->getDiscardableAttrDictionary());
    b.setInsertionPointToStart(threads.getBody());
    auto branch = scf::IfOp::create(b, loc, inFirst, /*withElseRegion=*/true);
    b.setInsertionPoint(branch.thenYield());
    cloneBody(b, loc, first, block, threads.getInductionVars());
    b.setInsertionPoint(branch.elseYield());
    cloneBody(b, loc, second, inSecond, threads.getInductionVars());
    first.blocks.erase();
    second.blocks.erase();
    return blocks;
  }
};

} // namespace
