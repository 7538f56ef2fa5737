//===- PrepackWeights.cpp - weights packed once, by a kernel of their own -===//
//
// A contraction whose schedule packs its streamed operand (`pack`) and whose
// streamed operand is a weight (an argument of the model's function) reads
// it from panels made by a kernel of its own, once per session (an
// initializer), instead of every workgroup copying its panels again in every
// run; see LinformerCPUPrepackWeightsPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

#include <map>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUPREPACKWEIGHTSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;
namespace sched = ::linformer::schedule;

namespace {

/// The operand of `op` that streams a matrix argument of its function
/// (streamedMatrixArgument), when the schedule `s` packs it into panels of
/// `s.columns` columns that tile it exactly (and every workgroup's columns
/// start at a panel), more than one; else null. A weight read split per
/// head (`[K, H, C]`) is tiled when the panels tile C.
OpOperand *prepackable(linalg::LinalgOp op, const sched::CPUKernelSchedule &s) {
  if (!s.pack || s.columns <= 0)
    return {};
  OpOperand *streamed = streamedMatrixArgument(op);
  std::optional<RegisterTileDims> dims = registerTileDims(op);
  if (!streamed || !dims)
    return {};
  int64_t columns =
      cast<RankedTensorType>(streamed->get().getType()).getShape().back();
  int64_t weightColumns =
      cast<RankedTensorType>(matrixArgumentOf(streamed->get())->arg.getType())
          .getDimSize(1);
  if (weightColumns <= s.columns || columns % s.columns != 0)
    return {};
  if (dims->columns >= s.workgroup.size())
    return {};
  int64_t wg = s.workgroup[dims->columns];
  if (wg != 0 && wg % s.columns != 0)
    return {};
  // A loop the weight shares with the other operand (the heads, where the
  // other operand is per head too) must be one a workgroup: register
  // tiling steps the columns' loops one at a time, not such a batch loop,
  // and a block over several of them is not a run of whole panels, which
  // it reads in place (a random schedule with all 3 heads in a workgroup
  // left the weight's unpack in the kernel, which cannot be bufferized).
  AffineMap map = op.getMatchingIndexingMap(streamed);
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  for (unsigned d = 0; d < ranges.size(); ++d) {
    if (!map.isFunctionOfDim(d) || d == dims->columns ||
        llvm::is_contained(dims->columnSide, d) ||
        iterators[d] == utils::IteratorType::reduction || ranges[d] == 1)
      continue;
    if (d >= s.workgroup.size() || s.workgroup[d] != 1)
      return {};
  }
  return streamed;
}

/// Whether `op`'s panels of `streamed` (prepackable) hold bf16 pairs:
/// when its register tiles multiply bf16 pairs with dot products or AMX
/// tiles (`engine`), stepping the reduction loop that indexes the weight's
/// innermost row dim (`rowDims - 1` of the read: K, or R of `[H, R, N]`)
/// two at a time, over an even range, in reduction blocks of an even number
/// of steps (the schedule's, and the blocks register tiling cuts from it,
/// reductionBlocks: a schedule's
/// even `reduction` of 4 over 18 steps is blocks of 3, whose pairs would
/// straddle two blocks; such panels were read through their unpack, which
/// bufferization cannot take: random-model soak --seed 20261265 case 241,
/// a random schedule). Each panel row then holds rows 2i and 2i + 1 of its `nr`
/// columns interleaved, `P[j, i, c, t] = W[2 i + t, j nr + c]`, the pairs
/// `vdpbf16ps` reads, so the register tile loads them as they are instead
/// of interleaving two rows with shuffles at every step.
bool pairedPanels(linalg::LinalgOp op, OpOperand *streamed,
                  const sched::CPUKernelSchedule &s, BF16EngineChoice engine,
                  unsigned rowDims, bool f16) {
  if (engine.engine == BF16Engine::FMA || !allBF16(op, f16))
    return false;
  std::optional<unsigned> pair = pairedReductionDim(op);
  AffineMap map = op.getMatchingIndexingMap(streamed);
  auto type = cast<RankedTensorType>(streamed->get().getType());
  if (!pair || rowDims == 0 || map.getNumResults() <= rowDims - 1 ||
      map.getResult(rowDims - 1) != getAffineDimExpr(*pair, op.getContext()))
    return false;
  int64_t block = reductionBlocks(op, s.reduction)[*pair];
  return type.getDimSize(rowDims - 1) % 2 == 0 && s.reduction % 2 == 0 &&
         block % 2 == 0;
}

struct PrepackWeightsPass
    : mlir::linformer::impl::LinformerCPUPrepackWeightsPassBase<
          PrepackWeightsPass> {
  using Base::Base;

  void runOnOperation() override {
    func::FuncOp func = getOperation();
    auto module = func->getParentOfType<ModuleOp>();
    auto targetAttr =
        module ? module->getAttrOfType<CPUTargetAttr>(kTargetAttrName)
               : CPUTargetAttr();
    SmallVector<linalg::LinalgOp> roots;
    func.walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kRootAttrName) && op->hasAttr(kScheduleAttrName))
        roots.push_back(op);
    });
    overrides.reset();
    FailureOr<BF16EngineChoice> engine =
        bf16EngineFor(func, "bf16-dot", bf16Dot, cpuTargetOf(func), f16);
    if (failed(engine))
      return signalPassFailure();
    IRRewriter rewriter(&getContext());
    // One panel layout per weight, panel width and pairing, whoever reads
    // it.
    std::map<std::tuple<unsigned, int64_t, bool>, Value> panels;
    // Packing kernels go first, in the order of their first readers.
    Operation *lastPack = nullptr;
    for (linalg::LinalgOp op : roots) {
      sched::CPUKernelSchedule s =
          fromAttr(op->getAttrOfType<CPUScheduleAttr>(kScheduleAttrName));
      OpOperand *streamed = prepackable(op, s);
      if (!streamed)
        continue;
      MatrixArgument matrix = *matrixArgumentOf(streamed->get());
      BlockArgument weight = matrix.arg;
      if (!targetAttr) {
        op->emitOpError("packs a weight, but the module has no CPU target "
                        "(run linformer-cpu-select-schedules first)");
        return signalPassFailure();
      }
      bool pairs =
          pairedPanels(op, streamed, s, *engine, matrix.rowDims, f16);
      Value &packed = panels[{weight.getArgNumber(), s.columns, pairs}];
      Location loc = weight.getLoc();
      auto type = cast<RankedTensorType>(weight.getType());
      int64_t k = type.getDimSize(0), n = type.getDimSize(1), nr = s.columns;
      // The panels hold what the contraction reads: a 16-bit weight's
      // values extended to f32, or an f32 weight's rounded to bf16 for bf16
      // products (matrix.converted), once, instead of in every run.
      auto readType = cast<RankedTensorType>(streamed->get().getType());
      Type element = readType.getElementType();
      if (!packed) {
        if (lastPack)
          rewriter.setInsertionPointAfter(lastPack);
        else
          rewriter.setInsertionPointToStart(&func.getBody().front());
        // P[j, k, c] = W[k, j nr + c]: panel j holds columns j nr .. j nr +
        // nr - 1 of every row, each row's nr elements contiguous. With
        // pairs, P[j, i, c, t] = W[2 i + t, j nr + c].
        SmallVector<int64_t> panelShape =
            pairs ? SmallVector<int64_t>{n / nr, k / 2, nr, 2}
                  : SmallVector<int64_t>{n / nr, k, nr};
        auto expanded =
            pairs ? tensor::ExpandShapeOp::create(
                        rewriter, loc,
                        RankedTensorType::get({k / 2, 2, n / nr, nr},
                                              type.getElementType()),
                        weight,
                        ArrayRef<ReassociationIndices>{{0, 1}, {2, 3}})
                  : tensor::ExpandShapeOp::create(
                        rewriter, loc,
                        RankedTensorType::get({k, n / nr, nr},
                                              type.getElementType()),
                        weight, ArrayRef<ReassociationIndices>{{0}, {1, 2}});
        // Panels made from a weight are a constant of the session: they
        // own their buffer. A tensor.empty would be merged by CSE with
        // every other of their type, and One-Shot Bufferize could then
        // write a value of a run into it (an FFN activation [b = 3, n,
        // ffn = 10] shared the panels [3, 30, 10] of a 30 x 30 weight).
        bool initializer = isWeightArgument(func, weight.getArgNumber());
        Value init =
            initializer
                ? bufferization::AllocTensorOp::create(
                      rewriter, loc,
                      RankedTensorType::get(panelShape, element), ValueRange{})
                      .getResult()
                : tensor::EmptyOp::create(rewriter, loc, panelShape, element)
                      .getResult();
        MLIRContext *ctx = &getContext();
        AffineExpr j, r, c, t;
        bindDims(ctx, j, r, c, t);
        unsigned loops = panelShape.size();
        auto pack = linalg::GenericOp::create(
            rewriter, loc, init.getType(), ValueRange{expanded},
            ValueRange{init},
            ArrayRef<AffineMap>{
                pairs ? AffineMap::get(4, 0, {r, t, j, c}, ctx)
                      : AffineMap::get(3, 0, {r, j, c}, ctx),
                AffineMap::getMultiDimIdentityMap(loops, ctx)},
            SmallVector<utils::IteratorType>(loops,
                                             utils::IteratorType::parallel),
            [&](OpBuilder &b, Location l, ValueRange args) {
              Value v = args[0];
              if (matrix.converted)
                v = castFloat(b, l, v, element);
              linalg::YieldOp::create(b, l, v);
            });
        pack->setAttr(kRootAttrName, rewriter.getUnitAttr());
        // Made from a weight, the panels are the same in every run: the
        // runtime makes them once per session.
        if (initializer)
          pack->setAttr(kInitializerAttrName, rewriter.getUnitAttr());
        FailureOr<sched::KernelShape> shape = analyzeRoot(pack);
        if (failed(shape))
          return signalPassFailure();
        // The cost model's schedule, or the schedule file's for its key
        // (records of such kernels say "..., panels").
        std::string key = shapeKey(pack, *shape);
        sched::CPUKernelSchedule model =
            sched::chooseSchedule(fromAttr(targetAttr), *shape);
        sched::CPUKernelSchedule chosen = model;
        std::string source = "cost-model";
        if (!overrides && failed(readOverrides(module)))
          return signalPassFailure();
        if (auto it = overrides->find(key); it != overrides->end()) {
          chosen = scheduleOfRecord(it->second, model);
          source = sourceOfRecord(it->second).str();
        }
        source += ", panels";
        if (failed(checkScheduleFits(pack, *shape, chosen, key, source)))
          return signalPassFailure();
        attachSchedule(pack, *shape, key, chosen, model, source);
        packed = pack.getResult(0);
        lastPack = pack;
      }
      // The contraction reads W through its panels: an unpack that tiling
      // fuses into each workgroup, and register tiling then reads the
      // panels it unpacks directly (TileForVectors). A split weight
      // (`[e0 .. e(a-1), ea .. e(r-1)]`: K into a dims, N into the rest)
      // reads the same panels split alike, `[ea .. e(r-2), e(r-1) / nr,
      // e0 .. e(a-1), nr]`, whose outer dims are the unpacked ones a .. r-1
      // then 0 .. a-1.
      rewriter.setInsertionPoint(op);
      ArrayRef<int64_t> read = readType.getShape();
      int64_t rank = readType.getRank(), a = matrix.rowDims;
      SmallVector<int64_t> shape(read.begin() + a, read.end());
      shape.back() /= nr;
      shape.append(read.begin(), read.begin() + a);
      shape.push_back(nr);
      // With pairs, the read's innermost row dim (a - 1) is halved and its
      // pairs are the innermost tile.
      if (pairs) {
        shape[rank - 1] /= 2;
        shape.push_back(2);
      }
      Value source = packed;
      if (ArrayRef<int64_t>(shape) !=
          cast<RankedTensorType>(packed.getType()).getShape()) {
        SmallVector<ReassociationIndices> groups(pairs ? 4 : 3);
        for (int64_t i = 0; i < int64_t(shape.size()); ++i)
          groups[i < rank - a ? 0 : i < rank ? 1 : i - rank + 2].push_back(i);
        source = tensor::ExpandShapeOp::create(
            rewriter, loc, RankedTensorType::get(shape, element), packed,
            groups);
      }
      SmallVector<int64_t> perm;
      for (int64_t i = 0; i < rank; ++i)
        perm.push_back((i + a) % rank);
      Value dest = tensor::EmptyOp::create(rewriter, loc, read, element);
      SmallVector<int64_t> innerDims{rank - 1};
      SmallVector<OpFoldResult> innerTiles{rewriter.getIndexAttr(nr)};
      if (pairs) {
        innerDims.push_back(a - 1);
        innerTiles.push_back(rewriter.getIndexAttr(2));
      }
      auto unpack = linalg::UnPackOp::create(rewriter, loc, source, dest,
                                             innerDims, innerTiles, perm);
      rewriter.modifyOpInPlace(op, [&] { streamed->set(unpack.getResult()); });
    }
  }

  /// The schedule file's records, by key (read when the first packing
  /// kernel needs them).
  std::optional<std::map<std::string, sched::ScheduleRecord>> overrides;
  LogicalResult readOverrides(ModuleOp module) {
    overrides.emplace();
    if (scheduleFile.empty())
      return success();
    return readScheduleFile(module, scheduleFile, *overrides);
  }
};
} // namespace
