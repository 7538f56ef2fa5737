//===- WarpReductions.cpp - row sums one warp a row -------------*- C++ -*-===//
//
// The CUDA pipeline's row sums (see Passes.td): a linalg.generic that adds
// over one innermost reduction dimension into an output indexed by its
// parallel dimensions (a LayerNorm's mean and variance over d_model, E's
// row sums over n), reading every input that has that dimension along its
// contiguous one, becomes one scf.parallel over blocks of `warps` rows
// around one over the block's threads (warps x 32 lanes), mapped to block
// and thread ids. A warp takes a row: lane l adds the row's elements l,
// l + 32, ... in a register (the warp's loads are 32 consecutive
// addresses), the warp adds its 32 partial sums by `gpu.shuffle xor` 16,
// 8, 4, 2, 1, and lane 0 adds the total to the output's initial value (or
// to the constant a fill right before wrote, and the fill goes) and
// stores it.
//
// The plain path gives each row to one thread, which walks the row alone
// (a warp's loads 32 rows apart) and loads and stores the output at every
// step: 4096 rows are 128 warps for 132 SMs.
//
// Few long rows (E's 256 row sums over n = 65536) are split when
// `split-warps` is set: a warp a part of a row into rows x parts partial
// sums, then a warp a row adds its parts (Passes.td).
//
// A row sum over tokens that stops at the lengths (`linformer.token_bound`:
// E's row sums, which mask padded tokens) stops each lane's loop at its
// row's sequence length, so a short run reads about its length of E.
//
// A row sum that reads the one right before it at its row (a LayerNorm's
// variance reading its mean) runs in the same warps, the first total in
// registers: one kernel for both. An elementwise op right after them that
// reads the totals at its rows (the LayerNorm's normalization) runs there
// too, each lane computing and storing its steps of the row with both
// totals in registers: one kernel a LayerNorm.
//
// On the host, linformer-cuda-emulate-warps lowers the shuffles (each
// thread loop split at them); the loops built here are the same.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/BodyCloning.h"
#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"
#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAWARPREDUCTIONSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
namespace cuda = mlir::linformer::cuda;

namespace {

constexpr int64_t kWarp = 32;

/// The rows of loops of `extents` (all but the last, the reduction).
int64_t rowCount(ArrayRef<int64_t> extents) {
  int64_t rows = 1;
  for (int64_t e : extents.drop_back())
    rows *= e;
  return rows;
}

/// A row's loop indices (the parallel ones; the reduction's left unset)
/// from its linear index, over loops of `extents`.
SmallVector<Value> rowIndicesOf(OpBuilder &b, Location loc,
                                ArrayRef<int64_t> extents, Value linear) {
  SmallVector<Value> iv(extents.size());
  for (unsigned d = extents.size() - 1; d-- > 0;) {
    Value extent = arith::ConstantIndexOp::create(b, loc, extents[d]);
    iv[d] = arith::RemUIOp::create(b, loc, linear, extent);
    linear = arith::DivUIOp::create(b, loc, linear, extent);
  }
  return iv;
}

/// Whether `o` may stand between ops this pass joins into one kernel: an
/// allocation, or an op that touches no memory (constants, views).
bool inert(Operation *o) {
  return isa<memref::AllocOp>(o) ||
         (isMemoryEffectFree(o) && o->getNumRegions() == 0);
}

/// Whether `op` is a row sum this pass takes: buffers with identity
/// layouts, static sizes, loops (parallel..., reduction) with at least 32
/// reduction steps, the f32 output indexed by the parallel loops in order,
/// every input that has the reduction dimension having it last
/// (contiguous), and a clonable body that yields `out + t` with `out` used
/// nowhere else.
bool isRowSum(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInits() != 1 ||
      op.getNumReductionLoops() != 1 || op.getNumLoops() < 2 ||
      op.getIteratorTypesArray().back() != utils::IteratorType::reduction ||
      !cuda::clonableBody(op))
    return false;
  unsigned red = op.getNumLoops() - 1;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (llvm::any_of(extents, ShapedType::isDynamic) || extents[red] < kWarp)
    return false;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.getLayout().isIdentity())
      return false;
  }
  OpOperand *init = op.getDpsInitOperand(0);
  AffineMap outMap = op.getMatchingIndexingMap(init);
  if (!cast<MemRefType>(init->get().getType()).getElementType().isF32() ||
      !outMap.isProjectedPermutation() || outMap.getNumResults() != red)
    return false;
  for (unsigned i = 0; i < red; ++i)
    if (outMap.getDimPosition(i) != i)
      return false;
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap m = op.getMatchingIndexingMap(in);
    if (!m.isProjectedPermutation())
      return false;
    for (unsigned i = 0; i < m.getNumResults(); ++i)
      if (m.getDimPosition(i) == red && i + 1 != m.getNumResults())
        return false;
  }
  BlockArgument out = op.getRegionOutputArgs()[0];
  auto yield = cast<linalg::YieldOp>(op.getRegion().front().getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  return add && out.hasOneUse() &&
         (add.getLhs() == out || add.getRhs() == out);
}

struct CUDAWarpReductionsPass
    : mlir::linformer::impl::LinformerCUDAWarpReductionsPassBase<
          CUDAWarpReductionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (warps < 1 || warps > 32) {
      getOperation().emitError()
          << "warps must be 1 to 32 (a block's rows), not " << int64_t(warps);
      return signalPassFailure();
    }
    if (unroll != 1 && unroll != 2 && unroll != 4 && unroll != 8) {
      getOperation().emitError()
          << "unroll must be 1, 2, 4 or 8 (steps of a row a lane takes an "
             "iteration), not "
          << int64_t(unroll);
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> sums;
    getOperation().walk([&](linalg::GenericOp op) {
      if (isRowSum(op))
        sums.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // A row sum that reads the one right before it at its own row (a
    // LayerNorm's variance reading its mean) joins its warps: one kernel,
    // the first total in the warp's registers, the row read again from
    // L1 / L2 instead of a second kernel's launch and pass. An elementwise
    // op right after them that reads their totals at its rows (the
    // LayerNorm's normalization) joins them too.
    for (size_t i = 0; i < sums.size(); ++i) {
      if (pairs && i + 1 < sums.size() && pairable(sums[i], sums[i + 1])) {
        rewritePair(rewriter, sums[i], sums[i + 1],
                    foldElementwise ? rowElementwise(sums[i], sums[i + 1])
                                    : linalg::GenericOp());
        ++i;
        continue;
      }
      rewrite(rewriter, sums[i]);
    }
  }

  /// The elementwise op right after pairable row sums `first` and `second`
  /// (nothing in between but allocations and ops that touch no memory)
  /// that their warps can run: over the same loops (all parallel) and
  /// token loops, not stopped at the lengths, reading either total only at
  /// its own row, its outputs whole buffers of its own written at each
  /// loop index (identity maps, not read by it or by the sums) and its
  /// body clonable, not reading them. Null if there is none.
  linalg::GenericOp rowElementwise(linalg::GenericOp first,
                                   linalg::GenericOp second) const {
    Operation *o = second->getNextNode();
    while (o && inert(o))
      o = o->getNextNode();
    auto g = dyn_cast_or_null<linalg::GenericOp>(o);
    if (!g || !g.hasPureBufferSemantics() ||
        g.getNumParallelLoops() != g.getNumLoops() ||
        g.getStaticLoopRanges() != first.getStaticLoopRanges() ||
        g->getAttr(mlir::linformer::kTokenLoopsAttrName) !=
            first->getAttr(mlir::linformer::kTokenLoopsAttrName) ||
        g->getAttr(mlir::linformer::kCUDASlotRowsAttrName) !=
            first->getAttr(mlir::linformer::kCUDASlotRowsAttrName) ||
        cuda::appliedTokenBound(g) || !cuda::clonableBody(g) ||
        llvm::any_of(g.getRegionOutputArgs(),
                     [](BlockArgument out) { return !out.use_empty(); }))
      return {};
    Value c1 = first.getDpsInitOperand(0)->get();
    Value c2 = second.getDpsInitOperand(0)->get();
    AffineMap rowMap = first.getMatchingIndexingMap(first.getDpsInitOperand(0));
    bool readsTotals = false;
    for (OpOperand *in : g.getDpsInputOperands()) {
      AffineMap m = g.getMatchingIndexingMap(in);
      if (in->get() == c1 || in->get() == c2) {
        if (m != rowMap)
          return {};
        readsTotals = true;
      } else if (!m.isProjectedPermutation()) {
        return {};
      }
    }
    if (!readsTotals)
      return {};
    for (OpOperand &out : g.getDpsInitsMutable()) {
      Value v = out.get();
      auto type = dyn_cast<MemRefType>(v.getType());
      if (!type || !type.getLayout().isIdentity() ||
          !(v.getDefiningOp<memref::AllocOp>() || isa<BlockArgument>(v)) ||
          !g.getMatchingIndexingMap(&out).isIdentity() ||
          llvm::is_contained(first->getOperands(), v) ||
          llvm::is_contained(second->getOperands(), v) ||
          llvm::is_contained(g.getDpsInputs(), v))
        return {};
    }
    return g;
  }

  /// Whether row sum `second` reads `first`'s output at its own rows only,
  /// over the same loops, with nothing in between but allocations, ops
  /// that touch no memory and `second`'s constant fill; neither split into
  /// parts nor stopped at the lengths.
  bool pairable(linalg::GenericOp first, linalg::GenericOp second) const {
    if (first->getBlock() != second->getBlock() ||
        first.getStaticLoopRanges() != second.getStaticLoopRanges() ||
        first->getAttr(mlir::linformer::kTokenLoopsAttrName) !=
            second->getAttr(mlir::linformer::kTokenLoopsAttrName) ||
        cuda::appliedTokenBound(first) || cuda::appliedTokenBound(second))
      return false;
    SmallVector<int64_t> extents = first.getStaticLoopRanges();
    unsigned red = extents.size() - 1;
    int64_t rows = rowCount(extents);
    if (partsFor(rows, extents[red]) != 1)
      return false;
    Value c1 = first.getDpsInitOperand(0)->get();
    OpOperand *read = nullptr;
    for (OpOperand *in : second.getDpsInputOperands())
      if (in->get() == c1) {
        if (read)
          return false;
        read = in;
      }
    if (!read || second.getMatchingIndexingMap(read) !=
                     first.getMatchingIndexingMap(first.getDpsInitOperand(0)))
      return false;
    Value c2 = second.getDpsInitOperand(0)->get();
    if (c2 == c1 || llvm::is_contained(first->getOperands(), c2))
      return false;
    for (Operation *o = first->getNextNode(); o && o != second.getOperation();
         o = o->getNextNode()) {
      if (inert(o))
        continue;
      if (o == cuda::neighbour(second, /*after=*/false) &&
          cuda::filledConstant(o, c2))
        continue;
      return false;
    }
    return true;
  }

  /// A lane's sum of a row's steps base + lane, base + lane + 32, ...
  /// below base + `count` (count >= 0; base the same for the whole warp),
  /// `step(r, acc)` adding step r's term to `acc`. With `unroll` U > 1, a
  /// loop over the whole rounds of 32 U steps takes U steps an iteration,
  /// each into a sum of its own (independent loads, in flight together);
  /// a loop of the steps left adds them to the first sum (none where a
  /// constant count leaves none); the sums are added pairwise. A constant
  /// count below a round of 32 U halves U until one fits (a LayerNorm's
  /// 64 steps: 2). With `run` (`vectors`, where `maxRun` > 1), the
  /// rounds' steps of a lane come in runs of R = min(U, maxRun) contiguous
  /// steps instead: lane l takes steps l R, ..., l R + R - 1 of each of a
  /// round's U / R parts of 32 R steps (a warp's loads of a part
  /// contiguous), `run(r, sums)` adding steps r, ..., r + R - 1 to R of
  /// the U sums (their inputs loaded as one vector each): at U = 8 on f32
  /// rows, two 16-byte vectors a round.
  Value laneSteps(
      OpBuilder &b, Location loc, Value base, Value lane, Value count,
      function_ref<Value(OpBuilder &, Value, Value)> step,
      function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)> run =
          nullptr,
      int64_t maxRun = 1) const {
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto addI = [&](Value x, Value y) -> Value {
      return arith::AddIOp::create(b, loc, x, y);
    };
    Value zero = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0.0));
    // Steps from, from + 32, ... < to into `acc`.
    auto stepLoop = [&](Value from, Value to, Value acc) -> Value {
      return scf::ForOp::create(
                 b, loc, from, to, cIdx(b, kWarp), ValueRange{acc},
                 [&](OpBuilder &b, Location loc, Value r, ValueRange acc) {
                   scf::YieldOp::create(b, loc, step(b, r, acc[0]));
                 })
          .getResult(0);
    };
    Value end = addI(base, count);
    // A constant count of fewer steps than a round takes fewer a round.
    std::optional<int64_t> steps = getConstantIntValue(count);
    int64_t unroll = this->unroll;
    while (unroll > 1 && steps && *steps < kWarp * unroll)
      unroll /= 2;
    if (unroll == 1)
      return stepLoop(addI(base, lane), end, zero);
    int64_t round = kWarp * unroll;
    Value roundsEnd = addI(
        base, arith::MulIOp::create(
                  b, loc, arith::DivUIOp::create(b, loc, count, cIdx(b, round)),
                  cIdx(b, round)));
    int64_t runSteps = std::min(unroll, maxRun);
    bool contiguous = vectors && run && runSteps > 1;
    Value first =
        contiguous
            ? addI(base, arith::MulIOp::create(b, loc, lane, cIdx(b, runSteps)))
            : addI(base, lane);
    auto rounds = scf::ForOp::create(
        b, loc, first, roundsEnd, cIdx(b, round),
        SmallVector<Value>(unroll, zero),
        [&](OpBuilder &b, Location loc, Value r, ValueRange acc) {
          if (contiguous) {
            SmallVector<Value> next;
            for (int64_t v = 0; v < unroll / runSteps; ++v)
              llvm::append_range(
                  next, run(b, v ? addI(r, cIdx(b, v * kWarp * runSteps)) : r,
                            acc.slice(v * runSteps, runSteps)));
            scf::YieldOp::create(b, loc, next);
            return;
          }
          SmallVector<Value> next;
          for (int64_t u = 0; u < unroll; ++u)
            next.push_back(
                step(b, arith::AddIOp::create(b, loc, r, cIdx(b, u * kWarp)),
                     acc[u]));
          scf::YieldOp::create(b, loc, next);
        });
    SmallVector<Value> sums(rounds.getResults());
    if (!steps || *steps % round)
      sums[0] = stepLoop(addI(roundsEnd, lane), end, sums[0]);
    while (sums.size() > 1) {
      SmallVector<Value> half;
      for (size_t i = 0; i < sums.size(); i += 2)
        half.push_back(arith::AddFOp::create(b, loc, sums[i], sums[i + 1]));
      sums = std::move(half);
    }
    return sums[0];
  }

  /// The most steps of a row cloneBodyRun may load as one aligned vector
  /// an input of `g` (1: none): a power of two of at most 16 bytes of each
  /// input along the reduction (each contiguous there: runClonable) that
  /// divides each such input's rows and `from` (where a warp's steps
  /// start: 0, or a multiple of a part's steps). With `outputs`, each
  /// output stored as one vector too.
  static int64_t maxRunOf(linalg::GenericOp g, int64_t from,
                          bool outputs = false) {
    if (!cuda::runClonable(g, outputs))
      return 1;
    int64_t run = 16 / cuda::runElementBytes(g, outputs);
    AffineExpr last = getAffineDimExpr(g.getNumLoops() - 1, g.getContext());
    for (OpOperand *in : cuda::runOperands(g, outputs)) {
      if (!llvm::is_contained(g.getMatchingIndexingMap(in).getResults(), last))
        continue;
      int64_t row = cast<MemRefType>(in->get().getType()).getShape().back();
      if (ShapedType::isDynamic(row))
        return 1;
      while (run > 1 && row % run)
        run /= 2;
    }
    while (run > 1 && from % run)
      run /= 2;
    return run;
  }

  /// Runs `then` on lane 0 of a warp.
  static void onLaneZero(OpBuilder &b, Location loc, Value lane,
                         function_ref<void(OpBuilder &)> then) {
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, lane,
                              arith::ConstantIndexOp::create(b, loc, 0));
    scf::IfOp::create(b, loc, first, [&](OpBuilder &b, Location loc) {
      then(b);
      scf::YieldOp::create(b, loc);
    });
  }

  /// One scf.parallel over blocks of `perBlock` warps, a warp for each of
  /// `count` rows (by linear index), each warp's lanes running
  /// `body(row, lane)`.
  void warpRows(OpBuilder &b, Location loc, int64_t count, int64_t perBlock,
                function_ref<void(OpBuilder &, Value, Value)> body,
                mlir::linformer::TokenRowsAttr rule = {}) const {
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto outer = scf::ParallelOp::create(
        b, loc, ValueRange{cIdx(b, 0)}, ValueRange{cIdx(b, count / perBlock)},
        ValueRange{cIdx(b, 1)},
        [&](OpBuilder &b, Location loc, ValueRange blockIvs) {
          Value base =
              arith::MulIOp::create(b, loc, blockIvs[0], cIdx(b, perBlock));
          // The block's threads, a warp a row.
          cuda::blockThreads(
              b, loc, perBlock, [&](OpBuilder &b, Value w, Value lane) {
                body(b, arith::AddIOp::create(b, loc, base, w), lane);
              });
          scf::ReduceOp::create(b, loc);
        });
    cuda::mapLoop(outer, {gpu::Processor::BlockX});
    if (rule)
      outer->setAttr(mlir::linformer::kCUDATokenRowsAttrName, rule);
  }

  /// warpRows where lane `lane`'s partial sum is `laneSum(row, lane)`, the
  /// warp adds its lanes' sums by the butterfly, and lane 0 runs
  /// `finish(row, total)`.
  void warpSums(OpBuilder &b, Location loc, int64_t count, int64_t perBlock,
                function_ref<Value(OpBuilder &, Value, Value)> laneSum,
                function_ref<void(OpBuilder &, Value, Value)> finish,
                mlir::linformer::TokenRowsAttr rule = {}) const {
    warpRows(
        b, loc, count, perBlock,
        [&](OpBuilder &b, Value row, Value lane) {
          Value x = cuda::butterflySum(b, loc, laneSum(b, row, lane), kWarp);
          onLaneZero(b, loc, lane, [&](OpBuilder &b) { finish(b, row, x); });
        },
        rule);
  }

  /// The length rule of a row sum over tokens (linformer.token_loops, the
  /// token loop the last parallel one, whole blocks of `perBlock` tokens):
  /// blocks enumerate (the leading dims, tiles of perBlock tokens), the
  /// rule's order. Null otherwise.
  mlir::linformer::TokenRowsAttr tokenRowsRule(linalg::GenericOp op,
                                               int64_t perBlock) const {
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    unsigned red = extents.size() - 1;
    auto loops = op->getAttrOfType<DenseI64ArrayAttr>(
        mlir::linformer::kTokenLoopsAttrName);
    if (!loops || loops.size() != 2 || loops[0] < 0 || loops[0] >= loops[1] ||
        loops[1] + 1 != int64_t(red) || extents[red - 1] % perBlock != 0)
      return {};
    SmallVector<int64_t> grid(extents.begin(), extents.begin() + red);
    grid.back() /= perBlock;
    return cuda::tokenRowsRule(op.getContext(), grid, loops[0], loops[1],
                               perBlock, 1,
                               op->getAttrOfType<DenseI64ArrayAttr>(
                                   mlir::linformer::kCUDASlotRowsAttrName));
  }

  /// `first` and `second` (pairable) in one kernel: a warp a row adds
  /// `first`'s terms, lane 0 stores its total, and every lane (the
  /// butterfly gave each the total) adds `second`'s terms with that value
  /// where `second` reads `first`'s output; lane 0 stores the second total.
  /// With `third` (rowElementwise), every lane then computes its elements
  /// of the row (the row's steps lane, lane + 32, ...) with the two totals
  /// where it reads them, and stores them.
  void rewritePair(IRRewriter &rewriter, linalg::GenericOp first,
                   linalg::GenericOp second, linalg::GenericOp third) const {
    Location loc = first.getLoc();
    rewriter.setInsertionPoint(third ? third : second);
    SmallVector<int64_t> extents = first.getStaticLoopRanges();
    unsigned red = extents.size() - 1;
    int64_t rows = rowCount(extents);
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value c1 = first.getDpsInitOperand(0)->get();
    Value c2 = second.getDpsInitOperand(0)->get();
    // The operands of `g` that read c1 (c2), as v1 (v2).
    auto totals = [&](linalg::GenericOp g, Value v1, Value v2) {
      SmallVector<std::pair<OpOperand *, Value>> given;
      for (OpOperand *in : g.getDpsInputOperands())
        if ((v1 && in->get() == c1) || (v2 && in->get() == c2))
          given.emplace_back(in, in->get() == c1 ? v1 : v2);
      return given;
    };
    // A lane's loop over the row's steps lane, lane + 32, ..., each
    // step's `body(step)` (values carried from `init`).
    auto laneLoop =
        [&](OpBuilder &b, SmallVector<Value> &iv, Value lane, ValueRange init,
            function_ref<SmallVector<Value>(OpBuilder &, ValueRange)> body) {
          return scf::ForOp::create(
              b, loc, lane, cIdx(b, extents[red]), cIdx(b, kWarp), init,
              [&](OpBuilder &b, Location loc, Value r, ValueRange acc) {
                iv[red] = r;
                scf::YieldOp::create(b, loc, body(b, acc));
              });
        };
    // A lane's terms of `g`, with v1 where it reads c1.
    auto laneSum = [&](OpBuilder &b, linalg::GenericOp g,
                       SmallVector<Value> &iv, Value lane, Value v1) {
      return laneSteps(
          b, loc, cIdx(b, 0), lane, cIdx(b, extents[red]),
          [&](OpBuilder &b, Value r, Value acc) {
            iv[red] = r;
            auto given = totals(g, v1, {});
            given.emplace_back(g.getDpsInitOperand(0), acc);
            return cuda::cloneBodyYields(b, loc, g, iv, given)[0];
          },
          [&](OpBuilder &b, Value r, ValueRange sums) {
            iv[red] = r;
            return cuda::cloneBodyRun(b, loc, g, iv, int64_t(sums.size()),
                                      totals(g, v1, {}), sums);
          },
          maxRunOf(g, 0));
    };
    // Each output's start: the constant its fill wrote (the fill goes),
    // else its value before.
    Operation *fill1 = cuda::neighbour(first, /*after=*/false);
    arith::ConstantOp start1 = cuda::filledConstant(fill1, c1);
    Operation *fill2 = cuda::neighbour(second, /*after=*/false);
    arith::ConstantOp start2 = cuda::filledConstant(fill2, c2);
    auto startOf = [&](OpBuilder &b, arith::ConstantOp start, Value c,
                       ValueRange at) -> Value {
      return start ? b.clone(*start)->getResult(0)
                   : memref::LoadOp::create(b, loc, c, at).getResult();
    };
    int64_t perBlock = cuda::largestDivisorAtMost(rows, warps);
    mlir::linformer::TokenRowsAttr rule = tokenRowsRule(first, perBlock);
    warpRows(
        rewriter, loc, rows, perBlock,
        [&](OpBuilder &b, Value row, Value lane) {
          SmallVector<Value> iv = rowIndicesOf(b, loc, extents, row);
          SmallVector<Value> at(iv.begin(), iv.begin() + red);
          Value v1 = arith::AddFOp::create(
              b, loc, startOf(b, start1, c1, at),
              cuda::butterflySum(b, loc, laneSum(b, first, iv, lane, {}),
                                 kWarp));
          // Every lane's start of the second total before its butterfly:
          // the host's emulation runs a warp's lanes one after another
          // between shuffles, and lane 0 stores c2 after the last one.
          Value start = startOf(b, start2, c2, at);
          Value v2 = arith::AddFOp::create(
              b, loc, start,
              cuda::butterflySum(b, loc, laneSum(b, second, iv, lane, v1),
                                 kWarp));
          onLaneZero(b, loc, lane, [&](OpBuilder &b) {
            memref::StoreOp::create(b, loc, v1, c1, at);
            memref::StoreOp::create(b, loc, v2, c2, at);
          });
          if (!third)
            return;
          // With vectors, a lane's `run` contiguous steps a round of 32
          // runs (rows of whole rounds), each input loaded and each
          // output stored as one vector.
          int64_t run =
              vectors ? std::min<int64_t>(unroll, maxRunOf(third, 0, true)) : 1;
          while (run > 1 && extents[red] % (kWarp * run))
            run /= 2;
          if (run > 1) {
            scf::ForOp::create(
                b, loc, arith::MulIOp::create(b, loc, lane, cIdx(b, run)),
                cIdx(b, extents[red]), cIdx(b, kWarp * run), ValueRange{},
                [&](OpBuilder &b, Location loc, Value r, ValueRange) {
                  iv[red] = r;
                  auto ys = cuda::cloneBodyRunYields(b, loc, third, iv, run,
                                                     totals(third, v1, v2));
                  for (auto [o, out] :
                       llvm::enumerate(third.getDpsInitsMutable())) {
                    SmallVector<Value> elems;
                    for (SmallVector<Value> &y : ys)
                      elems.push_back(y[o]);
                    Type elem = elems[0].getType();
                    Value v = vector::FromElementsOp::create(
                        b, loc, VectorType::get({run}, elem), elems);
                    vector::StoreOp::create(
                        b, loc, v, out.get(),
                        cuda::operandIndices(third, &out, iv),
                        /*nontemporal=*/false,
                        llvm::MaybeAlign(run * elem.getIntOrFloatBitWidth() /
                                         8));
                  }
                  scf::YieldOp::create(b, loc);
                });
            return;
          }
          laneLoop(b, iv, lane, {}, [&](OpBuilder &b, ValueRange) {
            SmallVector<Value> ys =
                cuda::cloneBodyYields(b, loc, third, iv, totals(third, v1, v2));
            for (auto [out, y] : llvm::zip(third.getDpsInitsMutable(), ys))
              memref::StoreOp::create(b, loc, y, out.get(),
                                      cuda::operandIndices(third, &out, iv));
            return SmallVector<Value>();
          });
        },
        rule);
    if (third)
      rewriter.eraseOp(third);
    rewriter.eraseOp(second);
    rewriter.eraseOp(first);
    if (start2)
      cuda::eraseInitWriter(rewriter, fill2);
    if (start1)
      cuda::eraseInitWriter(rewriter, fill1);
  }

  /// The parts a row's reduction of `steps` is cut into (1: not split):
  /// the largest power of two up to 64 that divides it into parts of at
  /// least 16 steps a lane and keeps rows x parts within `split-warps`.
  int64_t partsFor(int64_t rows, int64_t steps) const {
    int64_t parts = 1;
    while (splitWarps > 0 && parts < 64 && rows * parts * 2 <= splitWarps &&
           steps % (parts * 2) == 0 && steps / (parts * 2) >= 16 * kWarp)
      parts *= 2;
    return parts;
  }

  void rewrite(IRRewriter &rewriter, linalg::GenericOp op) const {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    unsigned red = extents.size() - 1;
    int64_t rows = rowCount(extents);
    int64_t parts = partsFor(rows, extents[red]);
    int64_t partSteps = extents[red] / parts;
    OpOperand *init = op.getDpsInitOperand(0);
    Value c = init->get();
    // The op right before, when it writes a constant into all of the
    // output (which the rows then overwrite element by element): the rows
    // start from that constant, and it goes.
    Operation *fill = cuda::neighbour(op, /*after=*/false);
    arith::ConstantOp startValue = cuda::filledConstant(fill, c);
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto cF = [&](OpBuilder &b, double v) -> Value {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    };
    auto rowIndices = [&](OpBuilder &b, Value linear) {
      return rowIndicesOf(b, loc, extents, linear);
    };
    mlir::linformer::TokenBoundAttr bound = cuda::appliedTokenBound(op);
    if (bound && bound.hasParts())
      bound = {};
    Value lengths = mlir::linformer::markedLengthsArgument(op);
    // The sum of `op`'s terms at reduction steps base + lane, + 32, ...
    // below base + steps, and below the row's sequence length where the op
    // stops there (a token bound without parts: E's row sums, whose body
    // masks padded tokens).
    auto termSum = [&](OpBuilder &b, SmallVector<Value> iv, Value base,
                       Value lane, int64_t steps) {
      Value count = cIdx(b, steps);
      if (bound) {
        Value left = arith::SubIOp::create(
            b, loc, cuda::sequenceLength(b, loc, lengths, iv[bound.getBatch()]),
            base);
        count = arith::MinSIOp::create(
            b, loc, count, arith::MaxSIOp::create(b, loc, left, cIdx(b, 0)));
      }
      return laneSteps(
          b, loc, base, lane, count,
          [&](OpBuilder &b, Value r, Value acc) {
            iv[red] = r;
            return cuda::cloneBody(b, loc, op, iv, init, acc);
          },
          [&](OpBuilder &b, Value r, ValueRange sums) {
            iv[red] = r;
            return cuda::cloneBodyRun(b, loc, op, iv, int64_t(sums.size()), {},
                                      sums);
          },
          maxRunOf(op, parts == 1 ? 0 : partSteps));
    };
    // Lane 0: the output's initial value plus the row's total.
    auto store = [&](OpBuilder &b, Value row, Value total) {
      SmallVector<Value> iv = rowIndices(b, row);
      iv.pop_back();
      Value start = startValue
                        ? b.clone(*startValue)->getResult(0)
                        : memref::LoadOp::create(b, loc, c, iv).getResult();
      memref::StoreOp::create(
          b, loc, arith::AddFOp::create(b, loc, start, total), c, iv);
    };
    if (parts == 1) {
      int64_t perBlock = cuda::largestDivisorAtMost(rows, warps);
      mlir::linformer::TokenRowsAttr rule = tokenRowsRule(op, perBlock);
      warpSums(
          rewriter, loc, rows, perBlock,
          [&](OpBuilder &b, Value row, Value lane) {
            return termSum(b, rowIndices(b, row), cIdx(b, 0), lane,
                           extents[red]);
          },
          store, rule);
    } else {
      // A warp a part (part q % parts of row q / parts), into rows x parts
      // partial sums; then a warp a row adds them, lane p taking part p.
      Value partials = memref::AllocOp::create(
          rewriter, loc, MemRefType::get({rows * parts}, rewriter.getF32Type()));
      warpSums(
          rewriter, loc, rows * parts,
          cuda::largestDivisorAtMost(rows * parts, warps),
          [&](OpBuilder &b, Value q, Value lane) {
            Value row = arith::DivUIOp::create(b, loc, q, cIdx(b, parts));
            Value part = arith::RemUIOp::create(b, loc, q, cIdx(b, parts));
            Value from =
                arith::MulIOp::create(b, loc, part, cIdx(b, partSteps));
            return termSum(b, rowIndices(b, row), from, lane, partSteps);
          },
          [&](OpBuilder &b, Value q, Value total) {
            memref::StoreOp::create(b, loc, total, partials, q);
          });
      warpSums(
          rewriter, loc, rows, cuda::largestDivisorAtMost(rows, warps),
          [&](OpBuilder &b, Value row, Value lane) {
            Value first = arith::MulIOp::create(b, loc, row, cIdx(b, parts));
            auto loop = scf::ForOp::create(
                b, loc, lane, cIdx(b, parts), cIdx(b, kWarp),
                ValueRange{cF(b, 0.0)},
                [&](OpBuilder &b, Location loc, Value p, ValueRange acc) {
                  Value x = memref::LoadOp::create(
                      b, loc, partials,
                      ValueRange{arith::AddIOp::create(b, loc, first, p)});
                  scf::YieldOp::create(
                      b, loc,
                      ValueRange{arith::AddFOp::create(b, loc, acc[0], x)});
                });
            return loop.getResult(0);
          },
          store);
      memref::DeallocOp::create(rewriter, loc, partials);
    }
    rewriter.eraseOp(op);
    if (startValue)
      cuda::eraseInitWriter(rewriter, fill);
  }
};

} // namespace
