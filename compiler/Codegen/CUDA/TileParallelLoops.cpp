//===- TileParallelLoops.cpp - scf.parallel into blocks of threads -*- C++ -*-===//
//
// The first CUDA path's schedule (see Passes.td): tile every outermost
// scf.parallel so that its two innermost dimensions become the x and y
// threads of a block, with tile sizes that divide the extents.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Utils/Utils.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDATILEPARALLELLOOPSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using mlir::linformer::cuda::largestDivisorAtMost;

namespace {

struct CUDATileParallelLoopsPass
    : mlir::linformer::impl::LinformerCUDATileParallelLoopsPassBase<
          CUDATileParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (threadsX < 1 || threadsY < 1 || threadsX * threadsY > 1024) {
      getOperation().emitError()
          << "threads-x " << int64_t(threadsX) << " x threads-y "
          << int64_t(threadsY)
          << " is not a CUDA block size (1 ..= 1024 threads)";
      return signalPassFailure();
    }
    SmallVector<scf::ParallelOp> outermost;
    // Loops that come mapped already (the staged attention core, whose
    // threads share a block's memory) keep their mapping.
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->getParentOfType<scf::ParallelOp>() &&
          !op->hasAttr(gpu::getMappingAttrName()))
        outermost.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (scf::ParallelOp op : outermost) {
      // A loop over tokens (a split-K contraction's sums): its (batch,
      // token) dimensions, for the length rule below.
      auto tokenDims =
          op->getAttrOfType<DenseI64ArrayAttr>(mlir::linformer::kTokenLoopsAttrName);
      auto slotRows = op->getAttrOfType<DenseI64ArrayAttr>(
          mlir::linformer::kCUDASlotRowsAttrName);
      // Lanes that shuffle (the f32 attention core's lanes of a query row,
      // thread x whole) need blocks of whole warps: a shuffle's partner
      // lanes must all exist. (Read before the loop is rebuilt below.)
      bool wholeWarps = op->hasAttr(mlir::linformer::kCUDAWholeWarpsAttrName);
      // A token iteration may be several tokens (the f32 core's rows a
      // thread): the rule's tile counts tokens.
      int64_t perIteration = 1;
      if (auto per = op->getAttrOfType<IntegerAttr>(
              mlir::linformer::kCUDATokensPerIterationAttrName))
        perIteration = per.getInt();
      bool tokenRule = tokenDims && tokenDims.size() == 2 &&
                       0 <= tokenDims[0] && tokenDims[0] < tokenDims[1] &&
                       tokenDims[1] < int64_t(op.getNumLoops());
      // The grid has three dimensions: leading dimensions beyond two are
      // folded into one (the blocks' z), so that none of them is left a
      // sequential loop inside the kernel, as long as the fold fits z. (A
      // loop over tokens goes along x alone, below.)
      if (!tokenRule)
        op = collapseLeading(rewriter, op);
      // A loop over tokens goes (sequence, token, the rest): its blocks
      // along x then hold one sequence's real tokens in a prefix.
      unsigned rank = op.getNumLoops();
      SmallVector<unsigned> order =
          llvm::to_vector(llvm::seq<unsigned>(0, rank));
      if (tokenRule) {
        order = {unsigned(tokenDims[0]), unsigned(tokenDims[1])};
        for (unsigned d = 0; d < rank; ++d)
          if (d != order[0] && d != order[1])
            order.push_back(d);
        op = permuteLoops(rewriter, op, order);
      }
      // The threads are the loop's own two innermost dimensions, wherever
      // the order put them: it orders the blocks, not the lanes. (The f32
      // attention core's (b, h, i) loop keeps its lanes on consecutive
      // query rows of one head, which read the same K and V element at
      // once; lanes across 8 heads read 8, and the core ran 2x slower.)
      unsigned threadX = llvm::find(order, rank - 1) - order.begin();
      unsigned threadY =
          rank > 1 ? llvm::find(order, rank - 2) - order.begin() : threadX;
      SmallVector<int64_t> extents;
      bool unitStepsFromZero = true;
      for (auto [lb, ub, step] : llvm::zip(
               op.getLowerBound(), op.getUpperBound(), op.getStep())) {
        std::optional<int64_t> l = getConstantIntValue(lb),
                               u = getConstantIntValue(ub),
                               s = getConstantIntValue(step);
        if (!l || !u || !s || *l != 0 || *s != 1) {
          unitStepsFromZero = false;
          break;
        }
        extents.push_back(*u);
      }
      if (!unitStepsFromZero || extents.empty())
        continue;
      SmallVector<int64_t> tiles(extents.size(), 1);
      // A tensor-core loop's innermost dimension is the 32 lanes of a
      // warp, which must stay one warp: thread x, whole.
      bool warpTiles =
          op->hasAttr(mlir::linformer::kTensorCoreAttrName);
      tiles[threadX] = warpTiles
                           ? extents[threadX]
                           : largestDivisorAtMost(extents[threadX], threadsX);
      if (threadY != threadX)
        tiles[threadY] = largestDivisorAtMost(extents[threadY], threadsY);
      // A loop over tokens keeps one sequence a block, as its length rule
      // says: where the sequences are the threads' y (a loop of nothing
      // but (sequence, token), the token loop too short to fill thread x),
      // a block takes one sequence's tokens alone. (Several sequences a
      // block made a rule of one sequence for all of them: the random-model
      // soak, --seed 20261257 cases 0 and 3, n = 2 and 1.)
      if (tokenRule)
        tiles[0] = 1;
      int64_t tileY = threadY == threadX ? 1 : tiles[threadY];
      if (wholeWarps && (tiles[threadX] != extents[threadX] ||
                         tiles[threadX] * tileY % 32 != 0)) {
        op.emitError() << "a loop whose lanes shuffle needs blocks of whole "
                          "warps, its lanes ("
                       << extents[threadX] << ") along thread x; threads-x "
                       << int64_t(threadsX) << " x threads-y "
                       << int64_t(threadsY) << " give " << tiles[threadX]
                       << " x " << tileY;
        return signalPassFailure();
      }
      auto [outer, inner] =
          scf::tileParallelLoop(op, tiles, /*noMinMaxBounds=*/true);
      // Steps and inner bounds come out as `1 * tile` products: make them
      // constants here (a canonicalizer would also collapse the nest that
      // the mapping needs).
      foldConstantSteps(outer);
      // A loop over tokens gets a length rule: its blocks, numbered
      // row-major along x alone (the rule's order), each hold one
      // sequence's tile of tokens.
      if (tokenRule) {
        SmallVector<int64_t> grid;
        int64_t blocks = 1;
        for (auto [e, t] : llvm::zip(extents, tiles)) {
          grid.push_back(e / t);
          blocks *= e / t;
        }
        auto rule = mlir::linformer::cuda::tokenRowsRule(
            &getContext(), grid, 0, 1, tiles[1], perIteration, slotRows);
        std::vector<unsigned> all;
        for (unsigned d = 0; d < outer.getNumLoops(); ++d)
          all.push_back(d);
        outer = collapse(rewriter, outer, {all}, {blocks});
        mlir::linformer::cuda::mapLoop(outer, {gpu::Processor::BlockX});
        if (rule)
          outer->setAttr(mlir::linformer::kCUDATokenRowsAttrName, rule);
      } else {
        mapInnermostFirst(outer, gpu::Processor::BlockX, 3);
      }
      SmallVector<gpu::Processor> threads(inner.getNumLoops(),
                                          gpu::Processor::Sequential);
      threads[threadX] = gpu::Processor::ThreadX;
      if (threadY != threadX)
        threads[threadY] = gpu::Processor::ThreadY;
      mlir::linformer::cuda::mapLoop(inner, threads);
    }
    // Parallel loops nested deeper (inside a reduction loop) run
    // sequentially in their thread.
    getOperation().walk([&](scf::ParallelOp op) {
      if (!op->hasAttr(gpu::getMappingAttrName()))
        mapInnermostFirst(op, gpu::Processor::Sequential, 0);
    });
    mlir::linformer::cuda::recordLaunchRows(getOperation());
  }

  /// `op` with dimensions 0 .. rank-3 folded into one when the rank is
  /// above 3, the bounds are static and the fold is at most 65535 (the
  /// grid's z limit); else `op`.
  static scf::ParallelOp collapseLeading(IRRewriter &rewriter,
                                         scf::ParallelOp op) {
    unsigned rank = op.getNumLoops();
    if (rank <= 3)
      return op;
    int64_t fold = 1;
    std::vector<unsigned> leading;
    for (unsigned d = 0; d + 2 < rank; ++d) {
      std::optional<int64_t> l = getConstantIntValue(op.getLowerBound()[d]),
                             u = getConstantIntValue(op.getUpperBound()[d]),
                             s = getConstantIntValue(op.getStep()[d]);
      if (!l || !u || !s || *l != 0 || *s != 1)
        return op;
      fold *= *u;
      leading.push_back(d);
    }
    if (fold > 65535)
      return op;
    std::optional<int64_t> ny = getConstantIntValue(op.getUpperBound()[rank - 2]),
                           nx = getConstantIntValue(op.getUpperBound()[rank - 1]);
    SmallVector<int64_t> extents;
    if (ny && nx)
      extents = {fold, *ny, *nx};
    return collapse(rewriter, op, {leading, {rank - 2}, {rank - 1}}, extents);
  }

  /// `op` with its dimensions collapsed into `groups` (each row-major),
  /// the collapsed loop standing where `op` stood. Its bounds come out as
  /// products of constants, which the tiling needs folded: with `extents`
  /// (one a group) they become the constants 0 .. extent in steps of 1.
  static scf::ParallelOp collapse(IRRewriter &rewriter, scf::ParallelOp op,
                                  ArrayRef<std::vector<unsigned>> groups,
                                  ArrayRef<int64_t> extents) {
    Block *parent = op->getBlock();
    Operation *next = op->getNextNode();
    mlir::collapseParallelLoops(rewriter, op, groups);
    auto collapsed =
        cast<scf::ParallelOp>(next ? next->getPrevNode() : &parent->back());
    if (extents.empty())
      return collapsed;
    OpBuilder b(collapsed);
    Location loc = collapsed.getLoc();
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    SmallVector<Value> lbs, ubs, steps;
    for (size_t i = 0; i < extents.size(); ++i)
      lbs.push_back(c(0));
    for (int64_t e : extents)
      ubs.push_back(c(e));
    for (size_t i = 0; i < extents.size(); ++i)
      steps.push_back(c(1));
    collapsed.getLowerBoundMutable().assign(lbs);
    collapsed.getUpperBoundMutable().assign(ubs);
    collapsed.getStepMutable().assign(steps);
    return collapsed;
  }

  /// `op` with its dimensions in `order` (new dimension i is old
  /// dimension order[i]), the body unchanged.
  static scf::ParallelOp permuteLoops(IRRewriter &rewriter, scf::ParallelOp op,
                                      ArrayRef<unsigned> order) {
    SmallVector<Value> lbs, ubs, steps;
    for (unsigned d : order) {
      lbs.push_back(op.getLowerBound()[d]);
      ubs.push_back(op.getUpperBound()[d]);
      steps.push_back(op.getStep()[d]);
    }
    rewriter.setInsertionPoint(op);
    auto permuted =
        scf::ParallelOp::create(rewriter, op.getLoc(), lbs, ubs, steps);
    rewriter.eraseOp(permuted.getBody()->getTerminator());
    SmallVector<Value> ivs(order.size());
    for (auto [i, d] : llvm::enumerate(order))
      ivs[d] = permuted.getInductionVars()[i];
    rewriter.mergeBlocks(op.getBody(), permuted.getBody(), ivs);
    rewriter.eraseOp(op);
    return permuted;
  }

  /// The last `ids` dimensions, innermost first, to `first` (block or
  /// thread x) and the ids after it (y, then z); the rest sequential. Thread
  /// loops use x and y only: their leading tiles are 1.
  static void mapInnermostFirst(scf::ParallelOp op, gpu::Processor first,
                                size_t ids) {
    size_t rank = op.getNumLoops();
    SmallVector<gpu::Processor> processors;
    for (size_t i = 0; i < rank; ++i) {
      size_t fromInnermost = rank - 1 - i;
      processors.push_back(
          fromInnermost < ids
              ? static_cast<gpu::Processor>(static_cast<uint64_t>(first) +
                                            fromInnermost)
              : gpu::Processor::Sequential);
    }
    mlir::linformer::cuda::mapLoop(op, processors);
  }

  static void foldConstantSteps(scf::ParallelOp outer) {
    for (Value step : outer.getStep()) {
      auto mul = step.getDefiningOp<arith::MulIOp>();
      if (!mul)
        continue;
      std::optional<int64_t> l = getConstantIntValue(mul.getLhs()),
                             r = getConstantIntValue(mul.getRhs());
      if (!l || !r)
        continue;
      OpBuilder b(mul);
      Value c = arith::ConstantIndexOp::create(b, mul.getLoc(), *l * *r);
      mul.getResult().replaceAllUsesWith(c);
      mul.erase();
    }
  }
};

} // namespace
