//===- TileForVectors.cpp - register-level tiling --------------*- C++ -*-===//
//
// Decomposes aggregate ops (softmax) once they are tiled, and tiles every
// linalg op down to what one vector operation handles, so that the
// vectorizer sees small static shapes.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/Dialect/Tensor/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/Transforms/Transforms.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

#include <functional>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUTILEFORVECTORSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

SmallVector<int64_t> mlir::linformer::vectorTileSizes(linalg::LinalgOp op,
                                                      int64_t vectorWidth,
                                                      int64_t unroll,
                                                      bool exact,
                                                      int64_t transposeBlock) {
  // Exact sizes leave a partial last tile that the pass peels; otherwise
  // sizes are rounded down to divisors.
  // A dynamic range (the partial panel of a packed operand whose columns
  // the register tile does not divide, until peeling makes it static) gets
  // the size asked for: the peeled copies then have full and partial tiles
  // of static size, not one column at a time.
  auto size = [&](int64_t range, int64_t want) {
    if (ShapedType::isDynamic(range))
      return std::max<int64_t>(1, want);
    return exact ? std::max<int64_t>(1, std::min(range, want))
                 : largestDivisorAtMost(range, want);
  };
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  unsigned numLoops = ranges.size();
  SmallVector<int64_t> tiles(numLoops, 1);
  if (numLoops == 0)
    return tiles;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  // A contraction: rows of its M loop, columns of its N loop, one step of
  // each reduction (an outer product), whatever the loop order.
  if (std::optional<RegisterTileDims> dims = registerTileDims(op)) {
    tiles[dims->columns] = size(ranges[dims->columns], vectorWidth);
    tiles[dims->rows] = size(ranges[dims->rows], unroll);
    return tiles;
  }
  unsigned inner = numLoops - 1;
  // The square block of a transpose: `transposeBlock` where both dims
  // divide by it, else 8 where they do, else none (0).
  auto squareBlock = [&](int64_t a, int64_t b) -> int64_t {
    for (int64_t block : {transposeBlock, int64_t(8)})
      if (a % block == 0 && b % block == 0)
        return block;
    return 0;
  };
  // A transpose of the two innermost dimensions of f32: 8 x 8 blocks, which
  // x86 transposes in registers (24 shuffles for 8 vectors of 8,
  // linformer-cpu-lower-vectors), or with 512-bit vectors 16 x 16 (upstream's
  // 64 shuffles for 16 vectors of 16: a third fewer a float, and half the
  // loads and stores), where a [unroll, vectorWidth] tile's generic shuffles
  // spill.
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op.getOperation());
      transpose && numLoops >= 2 &&
      swapsOnly(transpose.getPermutation(), inner - 1, inner) &&
      transpose.getInit().getType().getElementType().isF32()) {
    if (int64_t block = squareBlock(ranges[inner], ranges[inner - 1])) {
      tiles[inner] = tiles[inner - 1] = block;
      return tiles;
    }
  }
  // A copy of 16-bit elements that interleaves two rows into pairs (its
  // input swaps the last two loops, the innermost of 2: the attention
  // core's values and keys on AMX tiles) takes up to 64 columns of pairs,
  // one interleave per 16 (linformer-cpu-lower-vectors'
  // WriteInterleavedPairRows).
  if (numLoops >= 3 && ranges[inner] == 2 && op.getNumDpsInputs() == 1 &&
      op.getNumDpsInits() == 1 &&
      getElementTypeOrSelf(op.getDpsInits()[0].getType())
              .getIntOrFloatBitWidth() == 16 &&
      llvm::all_of(iters, [](utils::IteratorType t) {
        return t == utils::IteratorType::parallel;
      }) &&
      op.getIndexingMapsArray()[1].isIdentity()) {
    AffineMap in = op.getIndexingMapsArray()[0];
    SmallVector<int64_t> perm;
    if (in.isPermutation())
      for (unsigned i = 0; i < numLoops; ++i)
        perm.push_back(in.getDimPosition(i));
    Block *body = op.getBlock();
    bool copy = isa<linalg::GenericOp>(op.getOperation()) &&
                body->getOperations().size() == 1 &&
                body->getTerminator()->getOperand(0) == body->getArgument(0);
    if ((copy || isa<linalg::TransposeOp>(op.getOperation())) &&
        !perm.empty() && swapsOnly(perm, inner - 1, inner) &&
        ranges[inner - 1] % 16 == 0) {
      tiles[inner] = 2;
      tiles[inner - 1] = largestDivisorAtMost(ranges[inner - 1], 64);
      return tiles;
    }
  }
  if (iters[inner] == utils::IteratorType::reduction) {
    // A row reduction: one vector reduction over the whole row.
    for (unsigned i = 0; i < numLoops; ++i)
      if (iters[i] == utils::IteratorType::reduction)
        tiles[i] = 0;
    return tiles;
  }
  tiles[inner] = size(ranges[inner], vectorWidth);
  // The output dimension just outside the innermost one gets `unroll` rows.
  if (op.getNumDpsInits() == 1) {
    AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
    SmallVector<unsigned> outDims;
    for (AffineExpr e : outMap.getResults())
      if (auto dim = dyn_cast<AffineDimExpr>(e))
        outDims.push_back(dim.getPosition());
    if (outDims.size() >= 2 && outDims.back() == inner) {
      unsigned row = outDims[outDims.size() - 2];
      tiles[row] = size(ranges[row], unroll);
    }
  }
  return tiles;
}


/// Peels every marked loop whose static trip range is not a multiple of its
/// step: the main loop keeps full register tiles, the last partial tile
/// becomes a separate copy of the body with its own static size (upstream
/// peeling rewrites the affine.min of the tile sizes into constants in both),
/// so that every tile stays vectorizable. Peeling a loop copies the loops
/// nested in it, which are then peeled in turn.
static void peelPartialTiles(RewriterBase &rewriter, Operation *scope) {
  while (true) {
    scf::ForOp candidate;
    scope->walk([&](scf::ForOp loop) {
      if (candidate || !loop->hasAttr(kRegisterLoopAttrName))
        return;
      std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
      std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
      std::optional<int64_t> step = getConstantIntValue(loop.getStep());
      if (!lb || !ub || !step || *step <= 0 || (*ub - *lb) % *step == 0 ||
          *ub - *lb < *step)
        return;
      candidate = loop;
    });
    if (!candidate)
      return;
    scf::ForOp partial;
    rewriter.setInsertionPoint(candidate);
    if (failed(scf::peelForLoopAndSimplifyBounds(rewriter, candidate,
                                                 partial))) {
      candidate->removeAttr(kRegisterLoopAttrName);
      continue;
    }
    // The partial iteration runs once; it is no candidate any more.
    if (partial)
      partial->removeAttr(kRegisterLoopAttrName);
  }
}

/// Whether tile sizes `tiles` (0 = whole) cover loops of `ranges` in one
/// tile: tiling would make no loop.
static bool isOneTile(ArrayRef<int64_t> tiles, ArrayRef<int64_t> ranges) {
  return llvm::all_of(llvm::zip(tiles, ranges), [](auto tr) {
    auto [t, r] = tr;
    return t == 0 || t == r;
  });
}

/// A weight's block read from panels of bf16 pairs (panelBlock): `block`
/// (the `[kc, nr]` operand, `collapse(transpose(pairs))`) is `pairs`, a
/// slice of the panels of the unpack's rank + 2 (`perm`'s dims, then `nr`,
/// then the pair), with the block's dim `pairDim` halved.
struct PairBlock {
  Value pairs;
  int64_t pairDim = -1;
  SmallVector<int64_t> perm;
};
using PairBlocks = llvm::DenseMap<Value, PairBlock>;

/// The block of `type` (`[kc, nr]`, unit dims besides) that `pairs` holds
/// (rank + 2 dims: `perm`'s dims, the columns' one of size 1, then `nr`
/// columns, then the pair, `pairDim` halved): `pairs` transposed into the
/// block's order and collapsed, recorded in `pairBlocks` for
/// readPairsInPlace.
static Value blockOfPairs(RewriterBase &rewriter, Location loc, Value pairs,
                          RankedTensorType type, int64_t pairDim,
                          ArrayRef<int64_t> perm, PairBlocks &pairBlocks) {
  int64_t rank = type.getRank();
  ArrayRef<int64_t> pairsShape =
      cast<RankedTensorType>(pairs.getType()).getShape();
  SmallVector<int64_t> position(rank);
  for (auto [i, d] : llvm::enumerate(perm))
    position[d] = int64_t(i);
  // Each of the block's dims with what its collapse takes: the columns'
  // dim (size 1) with the columns, the pair dim's halves with the pair.
  SmallVector<int64_t> order, transposedShape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    ReassociationIndices group{int64_t(order.size())};
    order.push_back(position[d]);
    if (d == rank - 1 || d == pairDim) {
      group.push_back(int64_t(order.size()));
      order.push_back(d == rank - 1 ? rank : rank + 1);
    }
    groups.push_back(group);
  }
  for (int64_t i : order)
    transposedShape.push_back(pairsShape[i]);
  Value init = tensor::EmptyOp::create(rewriter, loc, transposedShape,
                                       type.getElementType());
  Value transposed =
      linalg::TransposeOp::create(rewriter, loc, pairs, init, order)
          ->getResult(0);
  Value block =
      tensor::CollapseShapeOp::create(rewriter, loc, type, transposed, groups);
  pairBlocks[block] = PairBlock{pairs, pairDim, llvm::to_vector(perm)};
  return block;
}

/// The panels a weight's block `v` can be read from in place: when `v` (a
/// `[kc, nr]` block of a `[K, N]` operand) is unit-stride slices of a
/// `linalg.unpack` of panels of `nr` columns (`[N / nr, K, nr]`, as
/// linformer-cpu-prepack-weights makes them), the block of those panels it
/// is, `[kc, nr]` contiguous; else null. A split weight's block (`[kc, 1,
/// nr]` of a head's columns `[K, H, C]`, `[hc, rc, nr]` of its rows `[H, R,
/// N]`) is read from the panels split alike, its unit dims dropped and put
/// back. Panels of bf16 pairs (`[N / nr, K / 2, nr, 2]`, unpacked with
/// inner tiles `[nr, 2]`) give the block as their slice transposed and
/// collapsed, recorded in `pairBlocks`: register tiling then reads each
/// step's pairs from the slice (readPairsInPlace), which leaves the whole
/// block's transpose unread.
static Value panelBlock(RewriterBase &rewriter, Location loc, Value v,
                        PairBlocks &pairBlocks) {
  auto type = dyn_cast<RankedTensorType>(v.getType());
  if (!type || type.getRank() < 2 || !type.hasStaticShape())
    return {};
  int64_t rank = type.getRank();
  // The slices down to the unpack, before any IR is made for them.
  SmallVector<tensor::ExtractSliceOp> slices;
  Value source = v;
  while (auto slice = source.getDefiningOp<tensor::ExtractSliceOp>()) {
    if (slice.getSourceType().getRank() != rank || !slice.hasUnitStride())
      return {};
    slices.push_back(slice);
    source = slice.getSource();
  }
  auto unpack = source.getDefiningOp<linalg::UnPackOp>();
  int64_t nr = type.getShape().back();
  if (!unpack)
    return {};
  ArrayRef<int64_t> innerDims = unpack.getInnerDimsPos();
  ArrayRef<int64_t> innerTiles = unpack.getStaticInnerTiles();
  int64_t pairDim = -1;
  if (innerDims.size() == 2 && innerDims[0] == rank - 1 &&
      innerDims[1] < rank - 1 && innerTiles == ArrayRef<int64_t>{nr, 2} &&
      type.getDimSize(innerDims[1]) % 2 == 0)
    pairDim = innerDims[1];
  else if (innerDims != ArrayRef<int64_t>{rank - 1} ||
           innerTiles != ArrayRef<int64_t>{nr})
    return {};
  ArrayRef<int64_t> perm = unpack.getOuterDimsPerm();
  if (static_cast<int64_t>(perm.size()) != rank)
    return {};
  // The block's dims other than the panel's, in the panels' order: their
  // non-unit ones must come in the block's order, so that dropping the unit
  // ones (and the panel dim) from both leaves the same tensor.
  SmallVector<int64_t> kept;
  for (int64_t d : perm)
    if (d != rank - 1 && type.getDimSize(d) != 1)
      kept.push_back(d);
  if (!llvm::is_sorted(kept))
    return {};
  // Where `v` starts in the unpacked operand: the slices' offsets added.
  MLIRContext *ctx = rewriter.getContext();
  rewriter.setInsertionPointAfterValue(v);
  AffineExpr a, b;
  bindSymbols(ctx, a, b);
  SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
  for (tensor::ExtractSliceOp slice : slices)
    for (int64_t d = 0; d < rank; ++d)
      offsets[d] = affine::makeComposedFoldedAffineApply(
          rewriter, loc, a + b, {offsets[d], slice.getMixedOffsets()[d]});
  std::optional<int64_t> column = getConstantIntValue(offsets[rank - 1]);
  if (column && *column % nr != 0)
    return {};
  if (pairDim >= 0) {
    std::optional<int64_t> row = getConstantIntValue(offsets[pairDim]);
    if (row && *row % 2 != 0)
      return {};
  }
  SmallVector<OpFoldResult> panelOffsets, panelSizes;
  SmallVector<int64_t> blockShape;
  for (int64_t d : perm) {
    if (d == rank - 1) {
      panelOffsets.push_back(affine::makeComposedFoldedAffineApply(
          rewriter, loc, a.floorDiv(nr), {offsets[d]}));
      panelSizes.push_back(rewriter.getIndexAttr(1));
      continue;
    }
    if (d == pairDim) {
      // Reduction blocks and pair steps start at even rows.
      panelOffsets.push_back(affine::makeComposedFoldedAffineApply(
          rewriter, loc, a.floorDiv(2), {offsets[d]}));
      panelSizes.push_back(rewriter.getIndexAttr(type.getDimSize(d) / 2));
      continue;
    }
    panelOffsets.push_back(offsets[d]);
    panelSizes.push_back(rewriter.getIndexAttr(type.getDimSize(d)));
    if (type.getDimSize(d) != 1)
      blockShape.push_back(type.getDimSize(d));
  }
  panelOffsets.push_back(rewriter.getIndexAttr(0));
  panelSizes.push_back(rewriter.getIndexAttr(nr));
  blockShape.push_back(nr);
  if (pairDim >= 0) {
    // The slice whole (rank + 2 dims).
    panelOffsets.push_back(rewriter.getIndexAttr(0));
    panelSizes.push_back(rewriter.getIndexAttr(2));
    Value pairs = tensor::ExtractSliceOp::create(
        rewriter, loc, unpack.getSource(), panelOffsets, panelSizes,
        SmallVector<OpFoldResult>(rank + 2, rewriter.getIndexAttr(1)));
    return blockOfPairs(rewriter, loc, pairs, type, pairDim, perm,
                        pairBlocks);
  }
  auto blockType = RankedTensorType::get(blockShape, type.getElementType());
  Value block = tensor::ExtractSliceOp::create(
      rewriter, loc, blockType, unpack.getSource(), panelOffsets, panelSizes,
      SmallVector<OpFoldResult>(rank + 1, rewriter.getIndexAttr(1)));
  if (blockType == type)
    return block;
  std::optional<SmallVector<ReassociationIndices>> groups =
      getReassociationIndicesForReshape(blockType, type);
  if (!groups)
    return {};
  return tensor::ExpandShapeOp::create(rewriter, loc, type, block, *groups);
}

/// A register tile's step of a block of bf16 pairs (panelBlock,
/// pairedCopy): where `op` reads `[2, nr]` (one pair of rows, unit dims
/// besides) of a recorded block, it reads those pairs from the pairs
/// instead, `nr x 2` contiguous, transposed by a `linalg.generic` of the
/// tile's size that vectorization folds into the contraction's maps (a
/// `[n, 2]` operand read `(n, k)`, whose pairs linformer-cpu-lower-vectors
/// takes as they are). A read of one row (a token loop's odd last token,
/// stepped alone) takes its `nr` elements, two apart. Other reads keep the
/// block (an error: dropPairBlocks).
static void readPairsInPlace(RewriterBase &rewriter, Operation *op,
                             const PairBlocks &pairBlocks) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  if (!linalgOp)
    return;
  for (OpOperand *in : linalgOp.getDpsInputOperands()) {
    // The slice of a recorded block that `in` reads, through slices of
    // slices (the tiling's loops each take one), rank and strides kept; or
    // the block itself (an op that is one register tile).
    SmallVector<tensor::ExtractSliceOp> chain;
    PairBlocks::const_iterator it = pairBlocks.find(in->get());
    auto slice = in->get().getDefiningOp<tensor::ExtractSliceOp>();
    for (auto s = slice; s && it == pairBlocks.end();
         s = s.getSource().getDefiningOp<tensor::ExtractSliceOp>()) {
      if (!s.hasUnitStride() ||
          s.getSourceType().getRank() != s.getType().getRank())
        break;
      chain.push_back(s);
      it = pairBlocks.find(s.getSource());
    }
    if (it == pairBlocks.end())
      continue;
    const PairBlock &block = it->second;
    auto type = cast<RankedTensorType>(in->get().getType());
    int64_t rank = type.getRank();
    if (!type.hasStaticShape())
      continue;
    // A pair of rows, or one row (a token loop's odd last token).
    int64_t rows = type.getDimSize(block.pairDim);
    bool onePair = rows == 1 || rows == 2;
    for (int64_t d = 0; d < rank - 1; ++d)
      onePair &= d == block.pairDim || type.getDimSize(d) == 1;
    if (!onePair)
      continue;
    Location loc = op->getLoc();
    rewriter.setInsertionPoint(op);
    AffineExpr a, b;
    bindSymbols(rewriter.getContext(), a, b);
    SmallVector<OpFoldResult> offsets(rank, rewriter.getIndexAttr(0));
    for (tensor::ExtractSliceOp s : chain)
      for (int64_t d = 0; d < rank; ++d)
        offsets[d] = affine::makeComposedFoldedAffineApply(
            rewriter, loc, a + b, {offsets[d], s.getMixedOffsets()[d]});
    SmallVector<OpFoldResult> pairOffsets, pairSizes;
    for (int64_t d : block.perm) {
      if (d == rank - 1)
        pairOffsets.push_back(rewriter.getIndexAttr(0));
      else if (d == block.pairDim)
        pairOffsets.push_back(affine::makeComposedFoldedAffineApply(
            rewriter, loc, a.floorDiv(2), {offsets[d]}));
      else
        pairOffsets.push_back(offsets[d]);
      pairSizes.push_back(rewriter.getIndexAttr(1));
    }
    int64_t columns = type.getDimSize(rank - 1);
    MLIRContext *ctx = rewriter.getContext();
    // A pair: its nr x 2 elements, read (c, t). One row: its nr elements,
    // 2 apart, at the row's place in its pair.
    pairOffsets.push_back(offsets[rank - 1]);
    pairSizes.push_back(rewriter.getIndexAttr(columns));
    pairOffsets.push_back(
        rows == 2 ? OpFoldResult(rewriter.getIndexAttr(0))
                  : affine::makeComposedFoldedAffineApply(
                        rewriter, loc, a % 2, {offsets[block.pairDim]}));
    pairSizes.push_back(rewriter.getIndexAttr(rows));
    auto pairsType =
        rows == 2 ? RankedTensorType::get({columns, 2}, type.getElementType())
                  : RankedTensorType::get({columns}, type.getElementType());
    SmallVector<AffineExpr> readExprs{getAffineDimExpr(rank - 1, ctx)};
    if (rows == 2)
      readExprs.push_back(getAffineDimExpr(block.pairDim, ctx));
    Value pairs = tensor::ExtractSliceOp::create(
        rewriter, loc, pairsType, block.pairs, pairOffsets, pairSizes,
        SmallVector<OpFoldResult>(rank + 2, rewriter.getIndexAttr(1)));
    Value init = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                         type.getElementType());
    auto read = linalg::GenericOp::create(
        rewriter, loc, type, ValueRange{pairs}, ValueRange{init},
        ArrayRef<AffineMap>{AffineMap::get(rank, 0, readExprs, ctx),
                            AffineMap::getMultiDimIdentityMap(rank, ctx)},
        SmallVector<utils::IteratorType>(rank, utils::IteratorType::parallel),
        [](OpBuilder &b, Location l, ValueRange args) {
          linalg::YieldOp::create(b, l, args[0]);
        });
    rewriter.modifyOpInPlace(op, [&] { in->set(read.getResult(0)); });
  }
}

/// Tile-and-fuse control that fuses `init` (a contraction's fill or
/// broadcast of its accumulators) and no other producer; nothing when null.
static scf::SCFTileAndFuseOptions::ControlFnTy fuseOnly(Operation *init) {
  return [init](tensor::ExtractSliceOp, OpResult producer, bool)
             -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
    if (!init || producer.getOwner() != init)
      return std::nullopt;
    return scf::SCFTileAndFuseOptions::ControlFnResult{};
  };
}

/// The copy of a streamed operand block (packStreamedOperand) as bf16
/// pairs, when `op` steps its paired reduction two at a time with both
/// factors bf16 (allBF16) and the block (`[kc, nr]`, unit dims besides;
/// its columns last) has an even number of the paired dim's rows: a
/// `linalg.generic` writes `[1, kc / 2, nr, 2]` (rows 2i and 2i + 1 of each
/// column adjacent), tiled one pair of rows at a time, and the block read
/// through it (blockOfPairs). The interleaving shuffles are then made once
/// per block instead of once per register tile and step. Null when not;
/// failure when the generic could not be tiled.
static FailureOr<Value> pairedCopy(RewriterBase &rewriter, Location loc,
                                   linalg::LinalgOp op, OpOperand *streamed,
                                   const RegisterTileDims &dims,
                                   PairBlocks &pairBlocks) {
  auto type = cast<RankedTensorType>(streamed->get().getType());
  int64_t rank = type.getRank();
  std::optional<unsigned> pair = pairedReductionDim(op);
  AffineMap map = op.getMatchingIndexingMap(streamed);
  if (!pair || !(allBF16(op) || allBF16(op, /*f16=*/true)) || rank < 2 ||
      map.getResult(rank - 1) != getAffineDimExpr(dims.columns, op.getContext()))
    return Value();
  std::optional<unsigned> position =
      map.getResultPosition(getAffineDimExpr(*pair, op.getContext()));
  if (!position || type.getDimSize(*position) % 2 != 0)
    return Value();
  int64_t pairDim = *position;
  MLIRContext *ctx = rewriter.getContext();
  // The operand with its pair dim split, [.., kc / 2, 2, .., nr].
  SmallVector<int64_t> splitShape;
  SmallVector<ReassociationIndices> groups;
  for (int64_t d = 0; d < rank; ++d) {
    ReassociationIndices group{int64_t(splitShape.size())};
    if (d == pairDim) {
      splitShape.append({type.getDimSize(d) / 2, 2});
      group.push_back(group.front() + 1);
    } else {
      splitShape.push_back(type.getDimSize(d));
    }
    groups.push_back(group);
  }
  Value split = tensor::ExpandShapeOp::create(
      rewriter, loc,
      RankedTensorType::get(splitShape, type.getElementType()),
      streamed->get(), groups);
  // pairs[0, .., i, .., c, t] = split[.., i, t, .., c]: loops (0, the dims
  // but the columns, c, t).
  SmallVector<int64_t> pairsShape{1};
  SmallVector<AffineExpr> readExprs;
  for (int64_t d = 0; d < rank - 1; ++d) {
    pairsShape.push_back(splitShape[d + (d > pairDim ? 1 : 0)]);
    readExprs.push_back(getAffineDimExpr(d + 1, ctx));
    if (d == pairDim)
      readExprs.push_back(getAffineDimExpr(rank + 1, ctx));
  }
  pairsShape.append({type.getDimSize(rank - 1), 2});
  readExprs.push_back(getAffineDimExpr(rank, ctx));
  Value init = tensor::EmptyOp::create(rewriter, loc, pairsShape,
                                       type.getElementType());
  auto pack = linalg::GenericOp::create(
      rewriter, loc, init.getType(), ValueRange{split}, ValueRange{init},
      ArrayRef<AffineMap>{AffineMap::get(rank + 2, 0, readExprs, ctx),
                          AffineMap::getMultiDimIdentityMap(rank + 2, ctx)},
      SmallVector<utils::IteratorType>(rank + 2,
                                       utils::IteratorType::parallel),
      [](OpBuilder &b, Location l, ValueRange args) {
        linalg::YieldOp::create(b, l, args[0]);
      });
  // One pair of rows a step (a [2, nr] read written as [nr, 2]).
  SmallVector<int64_t> tiles(rank + 2, 1);
  tiles[rank] = type.getDimSize(rank - 1);
  tiles[rank + 1] = 2;
  Value pairs = pack.getResult(0);
  if (!isOneTile(tiles, pack.getStaticLoopRanges())) {
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(ctx, tiles));
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(pack.getOperation()), options);
    if (failed(tiled))
      return failure();
    rewriter.replaceOp(pack, tiled->replacements);
    pairs = tiled->replacements.front();
  }
  SmallVector<int64_t> perm{rank - 1};
  for (int64_t d = 0; d < rank - 1; ++d)
    perm.push_back(d);
  return blockOfPairs(rewriter, loc, pairs, type, pairDim, perm, pairBlocks);
}

/// The schedule's `pack`: a loop over the columns' register tiles outside
/// the rows' ones, and in it the streamed operand's block (reduction block x
/// one tile of columns) copied into a contiguous buffer, which every row
/// tile then reads from L1. Without it, rows outside columns, each row tile
/// sweeps the whole streamed block (reduction block x all columns: 1 MiB for
/// a 128-step block of a 2048-wide FFN weight, more than an L2), and the
/// block's rows, a row of the operand apart (8 KiB there), fall into the
/// same L1 sets. This is GotoBLAS's packed B panel at the register tile's
/// width. Returns the op inside the columns loop that reads the packed
/// block, with the loops it created marked for peeling; `op` itself when it
/// has no streamed operand of static shape.
static FailureOr<linalg::LinalgOp>
packStreamedOperand(RewriterBase &rewriter, linalg::LinalgOp op,
                    const RegisterTileDims &dims, int64_t vectorWidth,
                    int64_t unroll, StringRef loopAttr, Operation *init,
                    bool pairs, PairBlocks &pairBlocks) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> columnTiles(ranges.size(), 0);
  int64_t columns = std::max<int64_t>(1, std::min(ranges[dims.columns],
                                                  vectorWidth));
  bool tile = false;
  if (columns < ranges[dims.columns]) {
    columnTiles[dims.columns] = columns;
    tile = true;
  }
  // The columns' other loops (a head next to its channels) one at a time:
  // a panel is then one head's columns, contiguous.
  for (unsigned d : dims.columnSide) {
    if (d != dims.columns && ranges[d] > 1) {
      columnTiles[d] = 1;
      tile = true;
    }
  }
  if (tile) {
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), columnTiles));
    rewriter.setInsertionPoint(op);
    // The init of the accumulators (`init`, a fill or a broadcast) goes
    // into each panel's iteration with it, for the register tiles to take.
    scf::SCFTileAndFuseOptions fuseOptions;
    fuseOptions.setTilingOptions(options);
    fuseOptions.setFusionControlFn(fuseOnly(init));
    FailureOr<scf::SCFTileAndFuseResult> tiled =
        scf::tileConsumerAndFuseProducersUsingSCF(
            rewriter, cast<TilingInterface>(op.getOperation()), fuseOptions);
    if (failed(tiled))
      return failure();
    for (OpResult r : op->getResults())
      rewriter.replaceAllUsesWith(r, tiled->replacements.lookup(r));
    rewriter.eraseOp(op);
    if (init && init->use_empty())
      rewriter.eraseOp(init);
    for (LoopLikeOpInterface loop : tiled->loops)
      loop->setAttr(loopAttr, rewriter.getUnitAttr());
    op = cast<linalg::LinalgOp>(tiled->tiledAndFusedOps.front());
  }
  OpOperand *streamed = streamedOperand(op, dims);
  if (!streamed)
    return op;
  auto type = dyn_cast<RankedTensorType>(streamed->get().getType());
  if (!type || !type.hasStaticShape())
    return op;
  Location loc = op.getLoc();
  // A weight packed once (linformer-cpu-prepack-weights): its panels are
  // read where they are.
  if (Value block = panelBlock(rewriter, loc, streamed->get(), pairBlocks)) {
    rewriter.modifyOpInPlace(op, [&] { streamed->set(block); });
    return op;
  }
  rewriter.setInsertionPoint(op);
  // bf16 pairs: the copy writes them as the dot products read them.
  if (FailureOr<Value> block =
          pairs ? pairedCopy(rewriter, loc, op, streamed, dims, pairBlocks)
                : FailureOr<Value>(Value());
      failed(block)) {
    return failure();
  } else if (*block) {
    rewriter.modifyOpInPlace(op, [&] { streamed->set(*block); });
    return op;
  }
  Value empty = tensor::EmptyOp::create(rewriter, loc, type.getShape(),
                                        type.getElementType());
  auto copy = linalg::CopyOp::create(rewriter, loc, streamed->get(), empty);
  rewriter.modifyOpInPlace(op, [&] { streamed->set(copy.getResult(0)); });
  // The copy in register-sized pieces, like every other op here.
  auto copyOp = cast<linalg::LinalgOp>(copy.getOperation());
  SmallVector<int64_t> copyTiles =
      vectorTileSizes(copyOp, vectorWidth, unroll, /*exact=*/false);
  if (!isOneTile(copyTiles, copyOp.getStaticLoopRanges())) {
    scf::SCFTilingOptions options;
    options.setTileSizes(getAsIndexOpFoldResult(op.getContext(), copyTiles));
    FailureOr<scf::SCFTilingResult> tiled = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(copy.getOperation()), options);
    if (failed(tiled))
      return failure();
    rewriter.replaceOp(copy, tiled->replacements);
  }
  return op;
}

/// The steps of `perStep` tokens that hold one of `length` tokens:
/// ceil(length / perStep) (lengths are at least 1).
static Value stepsOfLength(RewriterBase &rewriter, Location loc, Value length,
                           int64_t perStep) {
  if (perStep == 1)
    return length;
  return arith::DivSIOp::create(
      rewriter, loc,
      arith::AddIOp::create(
          rewriter, loc, length,
          arith::ConstantIndexOp::create(rewriter, loc, perStep - 1)),
      arith::ConstantIndexOp::create(rewriter, loc, perStep));
}

/// Where dimension `dim` of `v`, an operand of an op in the workgroup loop
/// `workgroup` (or of an op outside any, then null), starts in the whole
/// tensor it is a tile of: a slice's offset (wherever the slice is); for
/// the result of a linalg op computed in the workgroup, the offset of the
/// operand that its loop of that dimension indexes the same way (traced
/// back through such ops); 0 for any other tensor made outside the
/// workgroup (a function argument: whole). None when it cannot be told.
static std::optional<OpFoldResult>
tileOffset(Value v, unsigned dim, scf::ForallOp workgroup, int depth = 0) {
  if (depth > 16)
    return std::nullopt;
  Operation *def = v.getDefiningOp();
  if (auto slice = dyn_cast_or_null<tensor::ExtractSliceOp>(def)) {
    if (slice.getSourceType().getRank() != slice.getResultType().getRank())
      return std::nullopt;
    return slice.getMixedOffsets()[dim];
  }
  bool inWorkgroup =
      workgroup &&
      (def ? workgroup->isAncestor(def)
           : workgroup->isAncestor(
                 cast<BlockArgument>(v).getOwner()->getParentOp()));
  if (!inWorkgroup)
    return OpFoldResult(Builder(v.getContext()).getIndexAttr(0));
  auto producer = dyn_cast_or_null<linalg::LinalgOp>(def);
  if (!producer || !producer.hasPureTensorSemantics())
    return std::nullopt;
  auto loop = dyn_cast<AffineDimExpr>(
      producer.getIndexingMapMatchingResult(cast<OpResult>(v)).getResult(dim));
  if (!loop)
    return std::nullopt;
  for (OpOperand &operand : producer->getOpOperands()) {
    if (!isa<RankedTensorType>(operand.get().getType()))
      continue;
    AffineMap map = producer.getMatchingIndexingMap(&operand);
    std::optional<unsigned> pos = map.getResultPosition(loop);
    if (!pos)
      continue;
    if (std::optional<OpFoldResult> offset =
            tileOffset(operand.get(), *pos, workgroup, depth + 1))
      return offset;
  }
  return std::nullopt;
}

/// The loops of a token bound: `token` and `batch`, the tokens split into
/// parts (`part`, `perPart`; part < 0: none), `perStep` tokens a step.
/// `written`: the token loop is a parallel one that writes the tokens
/// (an elementwise producer whose readers stop at the lengths).
/// `masked`: the op masks padded tokens itself (see realTokensOfTile).
struct BoundLoops {
  int64_t token = -1, batch = -1, part = -1, perPart = 0, perStep = 1;
  bool masked = false, written = false;
};

/// For a workgroup tile of a token reduction (`linformer.token_bound`):
/// how many of the tokens it covers are real, `lengths[b] - t0` with `b`
/// and `t0` the tile's batch and first token, as an index computed before
/// `op` (it may be <= 0 or past the tile). Null when the op has no bound or
/// its tile does not tell (a batch tile of several sequences, no lengths
/// argument): the loops then run over every token, which is also correct.
/// `masked` is set for a bound whose op masks padded tokens itself (a
/// window reduction): its tile may hold several parts (windows), all
/// stopped at its first one's real tokens, and the loops may run over
/// every token where no loop takes the bound. `fromFirst` is set when the
/// tile starts at its sequence's first token.
static Value realTokensOfTile(RewriterBase &rewriter, linalg::LinalgOp op,
                              const BoundLoops &loops, unsigned &tokenLoop,
                              bool &fromFirst) {
  int64_t numLoops = op.getNumLoops();
  int64_t token = loops.token, batch = loops.batch;
  // Split into parts: token = part * perPart + token within the part.
  int64_t part = loops.part;
  int64_t perPart = loops.perPart;
  bool masked = loops.masked;
  if (part >= numLoops)
    return {};
  // Steps of several tokens (an attention core's pooled slots) may be a
  // parallel loop: the rows of the scores.
  int64_t perStep = loops.perStep;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (token < 0 || batch < 0 || token >= numLoops || batch >= numLoops ||
      (iters[token] != utils::IteratorType::reduction && perStep == 1 &&
       !loops.written) ||
      iters[batch] != utils::IteratorType::parallel || ranges[batch] != 1)
    return {};
  Value lengths = markedLengthsArgument(op);
  auto lengthsType = lengths ? dyn_cast<RankedTensorType>(lengths.getType())
                             : RankedTensorType();
  if (!lengthsType || lengthsType.getRank() != 1 ||
      !lengthsType.getElementType().isInteger(32))
    return {};
  Location loc = op.getLoc();
  auto position = [&](AffineMap map, int64_t loop) {
    return map.getResultPosition(getAffineDimExpr(loop, op.getContext()));
  };
  // The real tokens (steps) from the tile's first one `t0` (null: 0) of
  // sequence `b`.
  auto realFrom = [&](Value b, Value t0) -> Value {
    Value len = tensor::ExtractOp::create(rewriter, loc, lengths, b);
    Value lenIndex =
        arith::IndexCastOp::create(rewriter, loc, rewriter.getIndexType(), len);
    lenIndex = stepsOfLength(rewriter, loc, lenIndex, perStep);
    tokenLoop = static_cast<unsigned>(token);
    return t0 ? arith::SubIOp::create(rewriter, loc, lenIndex, t0).getResult()
              : lenIndex;
  };
  // The tile's batch and first token: the offsets of an operand slice that
  // is indexed by both loops.
  for (OpOperand *in : op.getDpsInputOperands()) {
    auto slice = in->get().getDefiningOp<tensor::ExtractSliceOp>();
    if (!slice ||
        slice.getSourceType().getRank() != slice.getResultType().getRank())
      continue;
    AffineMap map = op.getMatchingIndexingMap(in);
    std::optional<unsigned> batchPos = position(map, batch);
    std::optional<unsigned> tokenPos = position(map, token);
    std::optional<unsigned> partPos;
    if (part >= 0) {
      partPos = position(map, part);
      if (!partPos || (ranges[part] != 1 && !masked))
        continue;
    }
    if (!batchPos || !tokenPos)
      continue;
    rewriter.setInsertionPoint(op);
    SmallVector<OpFoldResult> offsets = slice.getMixedOffsets();
    Value b = getValueOrCreateConstantIndexOp(rewriter, loc,
                                              offsets[*batchPos]);
    Value t0 = getValueOrCreateConstantIndexOp(rewriter, loc,
                                               offsets[*tokenPos]);
    fromFirst = isZeroInteger(offsets[*tokenPos]) &&
                (!partPos || isZeroInteger(offsets[*partPos]));
    if (partPos) {
      Value p = getValueOrCreateConstantIndexOp(rewriter, loc,
                                                offsets[*partPos]);
      Value scaled = arith::MulIOp::create(
          rewriter, loc, p,
          arith::ConstantIndexOp::create(rewriter, loc, perPart));
      t0 = arith::AddIOp::create(rewriter, loc, scaled, t0);
    }
    return realFrom(b, t0);
  }
  if (part >= 0 && perPart > 0)
    return {};
  // No slice of its own: an operand computed in the workgroup (a softmax
  // step of the attention core, reading the scores) or a whole one. Its
  // offsets are those of the slices it was computed from.
  auto workgroup = op->getParentOfType<scf::ForallOp>();
  for (OpOperand *in : op.getDpsInputOperands()) {
    AffineMap map = op.getMatchingIndexingMap(in);
    std::optional<unsigned> batchPos = position(map, batch);
    std::optional<unsigned> tokenPos = position(map, token);
    if (!batchPos || !tokenPos)
      continue;
    std::optional<OpFoldResult> b = tileOffset(in->get(), *batchPos, workgroup);
    std::optional<OpFoldResult> t0 =
        tileOffset(in->get(), *tokenPos, workgroup);
    if (!b || !t0)
      continue;
    rewriter.setInsertionPoint(op);
    fromFirst = isZeroInteger(*t0);
    return realFrom(getValueOrCreateConstantIndexOp(rewriter, loc, *b),
                    isZeroInteger(*t0)
                        ? Value()
                        : getValueOrCreateConstantIndexOp(rewriter, loc, *t0));
  }
  return {};
}

/// realTokensOfTile for `op`'s own bound (`linformer.token_bound`); sets
/// `masked` from it.
static Value realTokensOfTile(RewriterBase &rewriter, linalg::LinalgOp op,
                              unsigned &tokenLoop, bool &masked,
                              bool &fromFirst) {
  auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
  if (!bound)
    return {};
  masked = bound.getMasked();
  BoundLoops loops{bound.getToken(), bound.getBatch(), bound.getPart(),
                   bound.getPerPart(), bound.getPerStep(), masked,
                   /*written=*/false};
  return realTokensOfTile(rewriter, op, loops, tokenLoop, fromFirst);
}

/// Stops `loop` (over tokens, its induction variable an offset from the
/// first token `real` counts from) at the last real token:
/// `ub = min(ub, real)`. Returns the real tokens of one iteration's range,
/// `real - iv`, for the loops nested in it.
static Value boundTokenLoop(RewriterBase &rewriter, scf::ForOp loop,
                            Value real) {
  rewriter.setInsertionPoint(loop);
  Value ub = arith::MinSIOp::create(rewriter, loop.getLoc(),
                                    loop.getUpperBound(), real);
  rewriter.modifyOpInPlace(loop,
                           [&] { loop.getUpperBoundMutable().assign(ub); });
  rewriter.setInsertionPointToStart(loop.getBody());
  return arith::SubIOp::create(rewriter, loop.getLoc(), real,
                               loop.getInductionVar());
}

/// A token loop `loop` that steps bf16 pairs (two tokens of `tokenDim` a
/// step, its range even) and stops at the real tokens: after an odd
/// length its last pair would read the padded token (NaN, or whatever the
/// kernels before left there). The loop stops at the last complete pair
/// instead, and a copy after it steps from there to the length one token
/// at a time (it runs once or not at all), its op `tiled` cut to one
/// token. Fails when `tiled` is not directly in `loop`'s body.
static LogicalResult stepOddTokenAlone(RewriterBase &rewriter,
                                       scf::ForOp loop, Operation *tiled,
                                       unsigned tokenDim) {
  if (tiled->getParentOp() != loop.getOperation() ||
      !isa<TilingInterface, linalg::LinalgOp>(tiled))
    return failure();
  Location loc = loop.getLoc();
  rewriter.setInsertionPoint(loop);
  Value lb = loop.getLowerBound();
  // The loop's end (the length, or the range) no lower than its start, and
  // the end of its complete pairs.
  Value end = arith::MaxSIOp::create(rewriter, loc, loop.getUpperBound(), lb);
  Value two = arith::ConstantIndexOp::create(rewriter, loc, 2);
  Value one = arith::ConstantIndexOp::create(rewriter, loc, 1);
  Value odd = arith::RemUIOp::create(
      rewriter, loc, arith::SubIOp::create(rewriter, loc, end, lb), two);
  Value pairsEnd = arith::SubIOp::create(rewriter, loc, end, odd);
  rewriter.modifyOpInPlace(
      loop, [&] { loop.getUpperBoundMutable().assign(pairsEnd); });
  rewriter.setInsertionPointAfter(loop);
  IRMapping mapping;
  auto rest = cast<scf::ForOp>(rewriter.clone(*loop, mapping));
  rewriter.modifyOpInPlace(rest, [&] {
    rest.getLowerBoundMutable().assign(pairsEnd);
    rest.getUpperBoundMutable().assign(end);
    rest.getStepMutable().assign(one);
    rest.getInitArgsMutable().assign(loop.getResults());
  });
  for (auto [from, to] : llvm::zip(loop.getResults(), rest.getResults()))
    rewriter.replaceAllUsesExcept(from, to, rest);
  // The copy's op on its step's first token: every other loop whole.
  Operation *pair = mapping.lookup(tiled);
  rewriter.setInsertionPoint(pair);
  SmallVector<OpFoldResult> offsets, sizes;
  for (Range range : cast<linalg::LinalgOp>(pair).createLoopRanges(
           rewriter, pair->getLoc())) {
    offsets.push_back(rewriter.getIndexAttr(0));
    sizes.push_back(range.size);
  }
  sizes[tokenDim] = rewriter.getIndexAttr(1);
  FailureOr<TilingResult> single = cast<TilingInterface>(pair)
                                       .getTiledImplementation(rewriter,
                                                               offsets, sizes);
  if (failed(single) || single->tiledValues.size() != pair->getNumResults() ||
      TypeRange(ValueRange(single->tiledValues)) != pair->getResultTypes())
    return failure();
  rewriter.replaceOp(pair, single->tiledValues);
  return success();
}

/// The loop `tileUsingSCF` made for loop dimension `dim`, given the tile
/// sizes and the loop order it was called with (one loop per non-zero
/// size, in that order).
static scf::ForOp loopOfDim(ArrayRef<LoopLikeOpInterface> loops,
                            ArrayRef<int64_t> tiles,
                            ArrayRef<int64_t> order, unsigned dim) {
  unsigned index = 0;
  for (int64_t d : order) {
    if (tiles[d] == 0)
      continue;
    if (static_cast<unsigned>(d) == dim) {
      if (index >= loops.size())
        return {};
      LoopLikeOpInterface loop = loops[index];
      return dyn_cast<scf::ForOp>(loop.getOperation());
    }
    ++index;
  }
  return {};
}

/// The op that writes `op`'s accumulators before `op` alone reads them, a
/// fill or a broadcast (a bias), when `op` is a contraction that register
/// tiling will step one reduction step at a time and nothing else uses
/// it; null otherwise.
static Operation *initOfAccumulators(linalg::LinalgOp op) {
  if (!registerTileDims(op) || op.getNumDpsInits() != 1)
    return {};
  auto init = op.getDpsInitOperand(0)->get().getDefiningOp<linalg::LinalgOp>();
  if (!init || !init->hasOneUse() || !init.hasPureTensorSemantics())
    return {};
  if (isa<linalg::FillOp>(init))
    return init;
  auto generic = dyn_cast<linalg::GenericOp>(init.getOperation());
  return generic && linalg::isaBroadcastOpInterface(generic) ? generic
                                                             : nullptr;
}

/// Tiles contraction `op` as `options` say (parallel loops, then its
/// reduction loops innermost), with `init`, the fill or broadcast of its
/// accumulators, fused into each register tile ahead of the reduction
/// loops: a tile's accumulators start from the init's value instead of
/// reading back a whole initialized output (the attention core's 256 x 64
/// scores of a 64-row query tile: 64 KiB written and read again, in L2; an
/// FFN workgroup's 128 x 2048 bias rows, 1 MiB). Upstream's
/// tile-and-fuse fuses the fill at the parallel tiles, where it is
/// correct (the gemm + fill fusion of its tests); the reduction loops are
/// then tiled inside. The loops come back in `options`' interchange order.
static FailureOr<scf::SCFTilingResult>
tileWithFusedInit(RewriterBase &rewriter, linalg::LinalgOp op, Operation *init,
                  ArrayRef<int64_t> tiles, ArrayRef<int64_t> interchange) {
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> parallelTiles(tiles), reductionTiles(tiles.size(), 0);
  for (int64_t d : interchange) {
    if (iters[d] == utils::IteratorType::reduction) {
      reductionTiles[d] = tiles[d];
      parallelTiles[d] = 0;
    }
  }
  scf::SCFTilingOptions parallelOptions;
  parallelOptions.setTileSizes(
      getAsIndexOpFoldResult(op.getContext(), parallelTiles));
  parallelOptions.setInterchange(interchange);
  scf::SCFTileAndFuseOptions fuseOptions;
  fuseOptions.setTilingOptions(parallelOptions);
  fuseOptions.setFusionControlFn(fuseOnly(init));
  rewriter.setInsertionPoint(op);
  FailureOr<scf::SCFTileAndFuseResult> fused =
      scf::tileConsumerAndFuseProducersUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), fuseOptions);
  if (failed(fused))
    return failure();
  // The tiled consumer comes first, then what was fused: the init alone
  // (the control function allows nothing else).
  if (fused->tiledAndFusedOps.size() != 2)
    return failure();
  Operation *tiledOp = fused->tiledAndFusedOps.front();
  scf::SCFTilingResult result;
  result.loops = fused->loops;
  result.tiledOps = {tiledOp};
  if (llvm::any_of(reductionTiles, [](int64_t t) { return t != 0; })) {
    scf::SCFTilingOptions reductionOptions;
    reductionOptions.setTileSizes(
        getAsIndexOpFoldResult(op.getContext(), reductionTiles));
    rewriter.setInsertionPoint(tiledOp);
    FailureOr<scf::SCFTilingResult> inner = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(tiledOp), reductionOptions);
    if (failed(inner))
      return failure();
    rewriter.replaceOp(tiledOp, inner->replacements);
    llvm::append_range(result.loops, inner->loops);
    result.tiledOps = inner->tiledOps;
  }
  for (OpResult r : op->getResults())
    rewriter.replaceAllUsesWith(r, fused->replacements.lookup(r));
  rewriter.eraseOp(op);
  // Tiling an op of dynamic sizes (the partial panel of a packed streamed
  // operand whose columns the register tile does not divide) left shape
  // queries of the init's result for the loop bounds: the init's own
  // destination has the same shape. Erasing the init under them left
  // dangling operands ("operand does not dominate this use").
  auto dps = cast<DestinationStyleOpInterface>(init);
  for (OpResult r : init->getResults())
    for (OpOperand &use : llvm::make_early_inc_range(r.getUses()))
      if (isa<tensor::DimOp>(use.getOwner()))
        rewriter.modifyOpInPlace(use.getOwner(), [&] {
          use.set(dps.getDpsInitOperand(r.getResultNumber())->get());
        });
  if (init->use_empty())
    rewriter.eraseOp(init);
  return result;
}

/// The register tiling's parameters for `op`: its kernel's schedule (on its
/// workgroup loop), else the pass options.
struct TileParams {
  int64_t vectorWidth, unroll, reductionTile;
  bool pack = false;
  /// Transposes' square blocks (vectorTileSizes): the target's.
  int64_t transposeBlock = 8;
};
static TileParams tileParamsOf(linalg::LinalgOp op, TileParams options) {
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (auto s = p->getAttrOfType<CPUScheduleAttr>(kScheduleAttrName))
      return {s.getColumns(), s.getRows(), s.getReduction(), s.getPack(),
              options.transposeBlock};
  return options;
}

SmallVector<int64_t>
mlir::linformer::reductionBlocks(linalg::LinalgOp op, int64_t reductionTile) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  SmallVector<int64_t> blocks(ranges.size(), 0);
  if (reductionTile <= 0)
    return blocks;
  int64_t budget = reductionTile;
  for (int i = static_cast<int>(ranges.size()) - 1; i >= 0; --i) {
    if (iters[i] != utils::IteratorType::reduction)
      continue;
    int64_t block =
        largestDivisorAtMost(ranges[i], std::max<int64_t>(budget, 1));
    budget /= std::max<int64_t>(block, 1);
    if (block < ranges[i])
      blocks[i] = block;
  }
  return blocks;
}

/// Whether register tiling will give `op` a loop over `tokenLoop` that
/// cuts it (a cache block or a register tile smaller than the loop): where
/// not, a bound has no loop to stop.
static bool cutsTokenLoop(linalg::LinalgOp op, unsigned tokenLoop,
                          const TileParams &params) {
  if (params.reductionTile > 0 &&
      reductionBlocks(op, params.reductionTile)[tokenLoop] != 0)
    return true;
  SmallVector<int64_t> tiles =
      vectorTileSizes(op, params.vectorWidth, params.unroll, /*exact=*/true,
                      params.transposeBlock);
  int64_t range = op.getStaticLoopRanges()[tokenLoop];
  return tiles[tokenLoop] != 0 && tiles[tokenLoop] < range;
}

namespace {
/// For an elementwise op (parallel loops, one result) whose every reader
/// is a linalg op in `bounds` that stops exactly at the lengths (not
/// masked, one token a step, not split into parts), reading it directly:
/// the op's loops that write those readers' token and batch dimensions.
template <typename BoundMap>
static std::optional<BoundLoops> boundOfReaders(linalg::LinalgOp op,
                                                const BoundMap &bounds) {
  if (op.getNumReductionLoops() != 0 || op->getNumResults() != 1 ||
      op.getNumDpsInits() != 1 || op->getResult(0).use_empty())
    return std::nullopt;
  OpResult result = op->getResult(0);
  AffineMap written = op.getIndexingMapMatchingResult(result);
  if (!written.isProjectedPermutation())
    return std::nullopt;
  std::optional<std::pair<unsigned, unsigned>> dims; // token, batch
  for (OpOperand &use : result.getUses()) {
    auto reader = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!reader || !reader.isDpsInput(&use) ||
        !bounds.count(reader.getOperation()))
      return std::nullopt;
    auto attr = reader->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
    if (!attr || attr.getMasked() || attr.getPart() >= 0 ||
        attr.getPerStep() != 1)
      return std::nullopt;
    AffineMap map = reader.getMatchingIndexingMap(&use);
    auto position = [&](int64_t loop) {
      return map.getResultPosition(
          getAffineDimExpr(loop, reader.getContext()));
    };
    std::optional<unsigned> token = position(attr.getToken()),
                            batch = position(attr.getBatch());
    if (!token || !batch || (dims && *dims != std::make_pair(*token, *batch)))
      return std::nullopt;
    dims = std::make_pair(*token, *batch);
  }
  auto token = dyn_cast<AffineDimExpr>(written.getResult(dims->first));
  auto batch = dyn_cast<AffineDimExpr>(written.getResult(dims->second));
  if (!token || !batch)
    return std::nullopt;
  BoundLoops loops;
  loops.token = token.getPosition();
  loops.batch = batch.getPosition();
  loops.written = true;
  return loops;
}

/// Where an op's token loop stops (realTokensOfTile): the real tokens of
/// its tile, the loop over them, whether the op masks padded tokens itself
/// (then the bound is optional), and whether they count from the
/// sequence's first token.
struct Bound {
  Value real;
  unsigned tokenLoop = 0;
  bool masked = false;
  bool fromFirst = false;
};
using Bounds = DenseMap<Operation *, Bound>;

/// The attention core's softmax over pooled slots (bounds of several
/// tokens a step) on slots too few to cut: such an op runs over every
/// slot, and so must the ops in the workgroup whose slots it reads, up to
/// the masking select (which writes all of them). An op that reads slots
/// of another kernel (the scores, the weighted sum) cannot: its reads past
/// the lengths may be unwritten there; it keeps its bound (an error when
/// no loop takes it).
bool droppable(linalg::LinalgOp op, const Bound &bound) {
  auto attr = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
  if (!attr || attr.getPerStep() < 2)
    return false;
  if (bound.masked)
    return true;
  auto workgroup = op->getParentOfType<scf::ForallOp>();
  AffineExpr token = getAffineDimExpr(bound.tokenLoop, op.getContext());
  return llvm::all_of(op.getDpsInputOperands(), [&](OpOperand *in) {
    if (!op.getMatchingIndexingMap(in).getResultPosition(token))
      return true;
    Operation *def = in->get().getDefiningOp();
    return workgroup && isa_and_nonnull<linalg::LinalgOp>(def) &&
           workgroup->isAncestor(def);
  });
}


/// Reduction loops innermost: the register tile of accumulators then stays
/// the same across the reduction, and once the transfers of the
/// accumulators are hoisted out of that loop, it lives in registers.
SmallVector<int64_t> reductionsInnermost(linalg::LinalgOp op) {
  SmallVector<int64_t> interchange;
  SmallVector<utils::IteratorType> iters = op.getIteratorTypesArray();
  for (unsigned i = 0; i < iters.size(); ++i)
    if (iters[i] == utils::IteratorType::parallel)
      interchange.push_back(i);
  for (unsigned i = 0; i < iters.size(); ++i)
    if (iters[i] == utils::IteratorType::reduction)
      interchange.push_back(i);
  return interchange;
}

struct TileForVectorsPass
    : mlir::linformer::impl::LinformerCPUTileForVectorsPassBase<TileForVectorsPass> {
  using Base::Base;

  void runOnOperation() override {
    IRRewriter rewriter(&getContext());
    FailureOr<BF16EngineChoice> chosen =
        bf16EngineFor(getOperation(), "bf16-dot", bf16Dot,
                      cpuTargetOf(getOperation()), f16);
    if (failed(chosen))
      return signalPassFailure();
    engine = *chosen;
    // 512-bit vectors transpose 16 x 16 blocks of 32-bit elements
    // (linformer-cpu-lower-vectors).
    options = TileParams{vectorWidth, unroll, reductionTile, false,
                         cpuTargetOf(getOperation()).vectorBits >= 512 ? 16
                                                                       : 8};
    // One pass instance runs on function after function: nothing of the
    // last one's ops may stay (an erased op's address can come back).
    late.clear();
    fused.clear();
    pairBlocks.clear();
    if (failed(decomposeAggregates(rewriter)))
      return signalPassFailure();
    SmallVector<linalg::LinalgOp> ops = opsInTilingOrder();
    // The token bounds first, while every op of a workgroup still reads
    // the slices and linalg results its tile offsets are traced through.
    Bounds bounds = tokenBounds(rewriter, ops);
    for (linalg::LinalgOp op : ops) {
      if (fused.contains(op.getOperation()))
        continue;
      Operation *epilogue = epilogueOf(op);
      if (failed(tileOp(rewriter, op, bounds.lookup(op.getOperation()))))
        return signalPassFailure();
      if (epilogue &&
          failed(fuseEpilogue(rewriter, epilogue, bounds.lookup(epilogue))))
        return signalPassFailure();
    }
    if (failed(dropPairBlocks(rewriter)))
      return signalPassFailure();
    peelPartialTiles(rewriter, getOperation());
    getOperation().walk(
        [](scf::ForOp loop) { loop->removeAttr(kRegisterLoopAttrName); });
  }

private:
  BF16EngineChoice engine;
  TileParams options;
  /// This function's fills, and the inits of accumulators that contractions
  /// take into their register tiles (tileWithFusedInit): tiled last, while
  /// whole.
  DenseSet<Operation *> late;
  /// Inits a contraction took along; not tiled on their own.
  DenseSet<Operation *> fused;
  /// Weights' blocks read from panels of bf16 pairs (panelBlock).
  PairBlocks pairBlocks;

  /// Every read of a block of bf16 pairs is a register tile's step
  /// (readPairsInPlace): the blocks lose their slices and transposes. A
  /// block some other read would take whole is an error (its transpose,
  /// vectorized whole, would make one vector of the block: a [512, 64]
  /// block took a compile 6 GB).
  LogicalResult dropPairBlocks(IRRewriter &rewriter) {
    std::function<void(Value)> eraseDeadSlices = [&](Value v) {
      for (Operation *user : llvm::make_early_inc_range(v.getUsers())) {
        auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
        if (!slice)
          continue;
        eraseDeadSlices(slice.getResult());
        if (slice->use_empty())
          rewriter.eraseOp(slice);
      }
    };
    for (auto &entry : pairBlocks) {
      Value block = entry.first;
      eraseDeadSlices(block);
      if (!block.use_empty())
        return (*block.getUsers().begin())
            ->emitOpError("reads a block of bf16 pairs other than one or "
                          "two rows at a time, which register tiling "
                          "cannot read in place");
      auto collapse = block.getDefiningOp<tensor::CollapseShapeOp>();
      Operation *transpose = collapse.getSrc().getDefiningOp();
      rewriter.eraseOp(collapse);
      rewriter.eraseOp(transpose);
    }
    pairBlocks.clear();
    return success();
  }

  /// The bf16 epilogue (linformer-cpu-tile-and-fuse's) that alone reads
  /// contraction `op`'s result, if any.
  static Operation *epilogueOf(linalg::LinalgOp op) {
    if (op->getNumResults() != 1 || !registerTileDims(op) ||
        !op->getResult(0).hasOneUse())
      return nullptr;
    Operation *user = *op->getResult(0).getUsers().begin();
    return user->hasAttr(kBF16EpilogueAttrName) &&
                   user->getOperand(0) == op->getResult(0)
               ? user
               : nullptr;
  }

  /// Whether `epilogue` can be fused into `loop`, the outermost loop of its
  /// contraction's register tiling: a loop over panels of the result (its
  /// slices move with the loop; a loop over reduction blocks carries
  /// partial sums), whole panels of static shapes (a partial last panel is
  /// peeled later, with dynamic sizes), and every other operand of the
  /// epilogue (its destination) made before the loop. Moves an empty
  /// destination made after the loop before it.
  static bool epilogueFusesInto(RewriterBase &rewriter, Operation *epilogue,
                                scf::ForOp loop) {
    unsigned resultIndex =
        cast<OpResult>(epilogue->getOperand(0)).getResultNumber();
    Value iv = loop.getInductionVar();
    bool panelLoop = llvm::any_of(
        loop.getRegionIterArgs()[resultIndex].getUsers(), [&](Operation *u) {
          auto slice = dyn_cast<tensor::ExtractSliceOp>(u);
          return slice && llvm::is_contained(slice.getOffsets(), iv);
        });
    if (!panelLoop)
      return false;
    std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (!lb || !ub || !step || *step <= 0 || (*ub - *lb) % *step != 0 ||
        !llvm::all_of(epilogue->getOperandTypes(), [](Type t) {
          auto shaped = dyn_cast<ShapedType>(t);
          return !shaped || shaped.hasStaticShape();
        }))
      return false;
    moveDestinationsBefore(rewriter, epilogue, loop);
    return llvm::all_of(
        llvm::drop_begin(epilogue->getOperands()), [&](Value operand) {
          Operation *def = operand.getDefiningOp();
          Region *region =
              def ? def->getParentRegion()
                  : cast<BlockArgument>(operand).getOwner()->getParent();
          return region->isAncestor(loop->getParentRegion()) &&
                 !(def && def->getBlock() == loop->getBlock() &&
                   !def->isBeforeInBlock(loop));
        });
  }

  /// `epilogue` computed in the outermost loop of its contraction's
  /// register tiling (its panels of columns), each panel's part as soon
  /// as the panel's accumulators are written, while they are in L1: not
  /// from the whole f32 result of the workgroup read back after it (an FFN
  /// workgroup's 128 x 2048 floats, 1 MiB, the size of L2). Upstream's
  /// consumer fusion; the fused part is then register-tiled as any
  /// elementwise op. Where it does not fuse, it is tiled on its own.
  LogicalResult fuseEpilogue(IRRewriter &rewriter, Operation *epilogue,
                             const Bound &bound) {
    auto loop = epilogue->getOperand(0).getDefiningOp<scf::ForOp>();
    if (!loop || !epilogueFusesInto(rewriter, epilogue, loop))
      return success();
    SmallVector<LoopLikeOpInterface> loops{loop};
    // Skipped by the walk from here on: fused, it is erased.
    fused.insert(epilogue);
    FailureOr<scf::SCFFuseConsumerOfSliceResult> result =
        scf::tileAndFuseConsumer(rewriter, epilogue, loops);
    if (failed(result) || result->tiledOps.size() != 1) {
      fused.erase(epilogue);
      return success();
    }
    Operation *tiled = result->tiledOps.front();
    // The loop's new result replaced the whole epilogue's.
    if (epilogue->use_empty())
      rewriter.eraseOp(epilogue);
    if (auto panels = tiled->getParentOfType<scf::ForOp>();
        panels && panels.getNumResults() >= 1 &&
        panels.getResult(0).use_empty() &&
        failed(givePanelsOwnBuffers(rewriter, panels)))
      return failure();
    return tileOp(rewriter, cast<linalg::LinalgOp>(tiled), bound);
  }

  /// The f32 result of the loop over `panels` that no one reads any more
  /// (its epilogue fused): each panel's accumulators go to a panel-sized
  /// buffer of their own, not to a slice of the workgroup's (whose rows,
  /// 8 KiB apart in an FFN's, fall in the same sets of L1), and the loop
  /// stops carrying it. Leaves the loop as it is where the carried tensor
  /// is read other than by one panel's slices, or starts from other than
  /// an empty tensor or an init still to be tiled.
  LogicalResult givePanelsOwnBuffers(IRRewriter &rewriter,
                                     scf::ForOp panels) {
    BlockArgument carried = panels.getRegionIterArgs()[0];
    // Every read of the carried tensor must be the same panel's slice (a
    // reduction block's accumulators, the next block's): they all become
    // one panel buffer.
    SmallVector<tensor::ExtractSliceOp> slices;
    bool onePanel = llvm::all_of(carried.getUsers(), [&](Operation *user) {
      if (isa<tensor::InsertSliceOp>(user))
        return true;
      auto slice = dyn_cast<tensor::ExtractSliceOp>(user);
      if (!slice || !slice.getType().hasStaticShape() ||
          (!slices.empty() &&
           !slices.front().isSameAs(slice, [](OpFoldResult a,
                                              OpFoldResult b) {
             return isEqualConstantIntOrValue(a, b);
           })))
        return false;
      slices.push_back(slice);
      return true;
    });
    // What the panel starts from: nothing (an empty tensor), or the panel's
    // part of the accumulators' init (a bias broadcast or a fill, not yet
    // tiled), computed in the loop instead of whole before it.
    Value init = panels.getInitArgs()[0];
    auto initOp = init.getDefiningOp<linalg::LinalgOp>();
    Value whole = init;
    while (auto slice = whole.getDefiningOp<tensor::ExtractSliceOp>())
      whole = slice.getSource();
    bool fromEmpty = whole.getDefiningOp<tensor::EmptyOp>() != nullptr;
    bool fromInit = initOp && init.hasOneUse() &&
                    late.contains(initOp.getOperation()) &&
                    !fused.contains(initOp.getOperation());
    if (!onePanel || slices.empty() || (!fromEmpty && !fromInit))
      return success();
    // The panel is made before the slice that comes first, the one that
    // dominates every other (not the first in use-list order: an init
    // tiled into the loop reads a slice before the contraction's slice,
    // and a panel made after it did not dominate that read). Slices in
    // sibling regions, where none comes first, keep the loop as it is.
    DominanceInfo dominance(panels);
    tensor::ExtractSliceOp first;
    for (tensor::ExtractSliceOp candidate : slices)
      if (llvm::all_of(slices, [&](tensor::ExtractSliceOp other) {
            return dominance.dominates(candidate.getOperation(),
                                       other.getOperation());
          })) {
        first = candidate;
        break;
      }
    if (!first)
      return success();
    rewriter.setInsertionPoint(first);
    Value panel;
    Operation *panelInit = nullptr;
    if (fromEmpty) {
      panel = tensor::EmptyOp::create(rewriter, first.getLoc(),
                                      first.getType().getShape(),
                                      first.getType().getElementType());
    } else {
      auto slice = tensor::ExtractSliceOp::create(
          rewriter, first.getLoc(), first.getType(), init,
          first.getMixedOffsets(), first.getMixedSizes(),
          first.getMixedStrides());
      FailureOr<TilingResult> tiledInit =
          tensor::replaceExtractSliceWithTiledProducer(rewriter, slice,
                                                       cast<OpResult>(init));
      if (failed(tiledInit) || tiledInit->tiledOps.size() != 1)
        return panels->emitOpError(
            "could not compute its contraction's init by panels");
      panel = tiledInit->tiledValues.front();
      panelInit = tiledInit->tiledOps.front();
      rewriter.eraseOp(slice);
    }
    for (tensor::ExtractSliceOp slice : slices)
      rewriter.replaceOp(slice, panel);
    auto yield = cast<scf::YieldOp>(panels.getBody()->getTerminator());
    rewriter.modifyOpInPlace(yield, [&] { yield->setOperand(0, carried); });
    if (!fromInit)
      return success();
    // The whole init is read by no one now: not tiled on its own.
    rewriter.setInsertionPoint(panels);
    Value empty = tensor::EmptyOp::create(
        rewriter, panels.getLoc(),
        cast<RankedTensorType>(init.getType()).getShape(),
        getElementTypeOrSelf(init.getType()));
    rewriter.modifyOpInPlace(
        panels, [&] { panels.getInitArgsMutable()[0].assign(empty); });
    fused.insert(initOp.getOperation());
    rewriter.eraseOp(initOp);
    return tileOp(rewriter, cast<linalg::LinalgOp>(panelInit), Bound{});
  }

  /// Aggregates (softmax) become plain linalg ops inside their tile.
  LogicalResult decomposeAggregates(IRRewriter &rewriter) {
    SmallVector<linalg::AggregatedOpInterface> aggregates;
    getOperation().walk(
        [&](linalg::AggregatedOpInterface op) { aggregates.push_back(op); });
    for (linalg::AggregatedOpInterface op : aggregates) {
      rewriter.setInsertionPoint(op);
      FailureOr<SmallVector<Value>> parts = op.decomposeOperation(rewriter);
      if (failed(parts))
        return op->emitOpError("could not be decomposed");
      rewriter.replaceOp(op, *parts);
    }
    return success();
  }

  /// The ops to tile, fills last and the broadcasts that contractions will
  /// take: a contraction takes the fill or broadcast of its accumulators
  /// into its register tiles while the init is whole. A contraction cut
  /// into reduction blocks first keeps its init apart.
  SmallVector<linalg::LinalgOp> opsInTilingOrder() {
    getOperation().walk([&](linalg::LinalgOp op) {
      if (isa<linalg::FillOp>(op))
        late.insert(op);
      Operation *init = initOfAccumulators(op);
      if (!init || !isa<linalg::GenericOp>(init))
        return;
      int64_t blockSteps = tileParamsOf(op, options).reductionTile;
      if (blockSteps <= 0 || llvm::all_of(reductionBlocks(op, blockSteps),
                                          [](int64_t b) { return b == 0; }))
        late.insert(init);
    });
    SmallVector<linalg::LinalgOp> ops, inits;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op.hasPureTensorSemantics() && op.getNumLoops() > 0)
        (late.contains(op) ? inits : ops).push_back(op);
    });
    ops.append(inits.begin(), inits.end());
    return ops;
  }

  /// Every op's token bound: those realTokensOfTile finds, less the ones
  /// over pooled slots too few to cut (droppable), plus the elementwise ops
  /// whose every reader stops at the lengths.
  Bounds tokenBounds(IRRewriter &rewriter, ArrayRef<linalg::LinalgOp> ops) {
    Bounds bounds;
    for (linalg::LinalgOp op : ops) {
      Bound bound;
      bound.real = realTokensOfTile(rewriter, op, bound.tokenLoop,
                                    bound.masked, bound.fromFirst);
      if (bound.real)
        bounds[op.getOperation()] = bound;
    }
    dropUncutSlotBounds(ops, bounds);
    boundRoundingsBeforeReaders(rewriter, ops, bounds);
    return bounds;
  }

  /// Drops the bounds that droppable() allows on ops whose token loop
  /// register tiling does not cut, and those of the producers in the
  /// workgroup whose bounded slots such an op then reads.
  void dropUncutSlotBounds(ArrayRef<linalg::LinalgOp> ops, Bounds &bounds) {
    SmallVector<linalg::LinalgOp> toDrop;
    for (linalg::LinalgOp op : ops) {
      auto it = bounds.find(op.getOperation());
      if (it != bounds.end() && droppable(op, it->second) &&
          !cutsTokenLoop(op, it->second.tokenLoop, tileParamsOf(op, options)))
        toDrop.push_back(op);
    }
    while (!toDrop.empty()) {
      linalg::LinalgOp op = toDrop.pop_back_val();
      auto it = bounds.find(op.getOperation());
      if (it == bounds.end())
        continue;
      Bound bound = it->second;
      if (!droppable(op, bound))
        continue; // keeps its bound: tiling names it when no loop takes it
      bounds.erase(it);
      if (bound.masked)
        continue;
      for (OpOperand *in : op.getDpsInputOperands()) {
        auto producer = in->get().getDefiningOp<linalg::LinalgOp>();
        auto pit =
            producer ? bounds.find(producer.getOperation()) : bounds.end();
        if (pit == bounds.end())
          continue;
        AffineMap map =
            producer.getIndexingMapMatchingResult(cast<OpResult>(in->get()));
        if (map.getResultPosition(
                getAffineDimExpr(pit->second.tokenLoop, op.getContext())))
          toDrop.push_back(producer);
      }
    }
  }

  /// An elementwise op in the workgroup whose every reader stops at the
  /// lengths (the bf16 rounding of E' or of X that linformer-bf16-products
  /// put before E X) stops there too: else it would convert every token of
  /// its tile whatever the lengths. Readers first (reverse order), so that
  /// a chain of them is bounded from its end. Its bound is optional (like a
  /// masked one): where no loop takes it, the op runs over every token,
  /// which its readers never read.
  void boundRoundingsBeforeReaders(IRRewriter &rewriter,
                                   ArrayRef<linalg::LinalgOp> ops,
                                   Bounds &bounds) {
    for (linalg::LinalgOp op : llvm::reverse(ops)) {
      if (bounds.count(op.getOperation()))
        continue;
      std::optional<BoundLoops> loops = boundOfReaders(op, bounds);
      if (!loops)
        continue;
      Bound bound;
      bound.real = realTokensOfTile(rewriter, op, *loops, bound.tokenLoop,
                                    bound.fromFirst);
      bound.masked = true;
      if (bound.real)
        bounds[op.getOperation()] = bound;
    }
  }

  /// `op` (tensors) inside `scf.if real > 0`, yielding its inits otherwise:
  /// a reduction over one token that may be padding leaves its
  /// accumulators as they start.
  LogicalResult runWhereReal(IRRewriter &rewriter, linalg::LinalgOp op,
                             Value real) {
    if (!op.hasPureTensorSemantics() || !real.getType().isIndex())
      return op->emitOpError("reduces over one token that may be padding "
                             "(a rank's empty share of a sequence), and "
                             "cannot be guarded by its length");
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value zero = arith::ConstantIndexOp::create(rewriter, loc, 0);
    Value any = arith::CmpIOp::create(rewriter, loc, arith::CmpIPredicate::sgt,
                                      real, zero);
    auto guard = scf::IfOp::create(rewriter, loc, op->getResultTypes(), any,
                                   /*withElseRegion=*/true);
    rewriter.replaceAllUsesWith(op->getResults(), guard.getResults());
    rewriter.setInsertionPointToEnd(guard.thenBlock());
    auto yield = scf::YieldOp::create(rewriter, loc, op->getResults());
    rewriter.moveOpBefore(op, yield);
    rewriter.setInsertionPointToEnd(guard.elseBlock());
    SmallVector<Value> inits;
    for (OpOperand &init : op.getDpsInitsMutable())
      inits.push_back(init.get());
    scf::YieldOp::create(rewriter, loc, inits);
    return success();
  }

  /// A bound that no loop takes would let the op read padded tokens, which
  /// the kernels before it may have left unwritten (unless the op masks
  /// them itself).
  LogicalResult unbounded(Operation *at) {
    return at->emitOpError("reduces over tokens up to each sequence's "
                           "length (linformer.token_bound), but register "
                           "tiling left no loop over its tokens to stop "
                           "there");
  }

  /// Cache level first: a long reduction (over n = 4096 tokens, say) is cut
  /// into blocks so that the operand block it streams stays in L2 while
  /// every register tile of the output sweeps it. Tokens cut into blocks:
  /// the blocks' loop stops at the block that holds the length (the
  /// register tiling's loop over the block's tokens stops exactly there),
  /// and `real` becomes the real tokens of the block; tokens not cut: `real`
  /// still counts from the tile's first token.
  LogicalResult cutReductionBlocks(IRRewriter &rewriter, linalg::LinalgOp &op,
                                   int64_t reductionTile, Value &real,
                                   const Bound &bound) {
    SmallVector<int64_t> blocks = reductionBlocks(op, reductionTile);
    if (llvm::all_of(blocks, [](int64_t b) { return b == 0; }))
      return success();
    scf::SCFTilingOptions blockOptions;
    blockOptions.setTileSizes(getAsIndexOpFoldResult(&getContext(), blocks));
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> blocked = scf::tileUsingSCF(
        rewriter, cast<TilingInterface>(op.getOperation()), blockOptions);
    if (failed(blocked))
      return op->emitOpError("could not be tiled into reduction blocks");
    rewriter.replaceOp(op, blocked->replacements);
    op = cast<linalg::LinalgOp>(blocked->tiledOps.front());
    if (!real || blocks[bound.tokenLoop] == 0)
      return success();
    SmallVector<int64_t> order =
        llvm::to_vector(llvm::seq<int64_t>(0, blocks.size()));
    scf::ForOp loop = loopOfDim(blocked->loops, blocks, order, bound.tokenLoop);
    if (!loop && !bound.masked)
      return unbounded(op);
    real = loop ? boundTokenLoop(rewriter, loop, real) : Value();
    // Blocks of one token (a prime n has no other divisor below the block
    // size): the loop stops at the length, so the one token of each block
    // it runs is real, and nothing inside has to stop.
    if (blocks[bound.tokenLoop] == 1)
      real = Value();
    return success();
  }

  /// Tiles `op` into register tiles: its reduction blocks, its packed
  /// panels, the tiles themselves, and the token loop stopped at `bound`.
  LogicalResult tileOp(IRRewriter &rewriter, linalg::LinalgOp op,
                       const Bound &bound) {
    // The kernel's schedule (on its workgroup loop), else the options.
    TileParams params = tileParamsOf(op, options);
    int64_t vectorWidth = params.vectorWidth, unroll = params.unroll;
    // A bf16 epilogue (the FFN's GELU: a rational erf, a division) in
    // tiles of at most 4 rows, as other elementwise kernels take: the
    // contraction's register rows (14 x 32 f32, 28 vectors on AVX-512)
    // left each vector's temporaries spilled. Xeon with AMX, the default
    // bf16 encoder's FFN up 6.0 -> 5.5 ms a layer (2 rows alike).
    if (op->hasAttr(kBF16EpilogueAttrName))
      unroll = std::min<int64_t>(unroll, 4);
    // A token reduction stops at the sequence's length: `real` counts the
    // real tokens from the start of `op`'s token range.
    Value real = bound.real;
    unsigned tokenLoop = bound.tokenLoop;
    // One step from the sequence's first token is real in every sequence
    // (a length is at least 1), so it has nothing to stop: a core over one
    // pooled slot of all n tokens (k = 1), which no loop walks. Except on a
    // rank of a sequence split over ranks, whose share of a sequence may be
    // empty (length 0): E X over a rank's one token, say. There the op
    // runs only where its token is real, and is its init elsewhere.
    if (real && bound.fromFirst && op.getStaticLoopRanges()[tokenLoop] == 1) {
      if (hasCollectiveSteps(getOperation()) &&
          failed(runWhereReal(rewriter, op, real)))
        return failure();
      real = Value();
    }
    if (params.reductionTile > 0 &&
        failed(cutReductionBlocks(rewriter, op, params.reductionTile, real,
                                  bound)))
      return failure();
    // Both factors bf16: with AMX a register tile is 32 rows (two AMX
    // tiles') where the schedule's columns are at most 32 (two tiles: four
    // accumulators, two tiles of A, one of B at a time), else 16 (one
    // tile's), stepped in pairs as the dot products' are;
    // linformer-cpu-lower-vectors turns its loop of pairs into AMX tiles,
    // 16 pairs a step. Of the ops stopped at the lengths, only one whose
    // pairs are its tokens (E X: the rows are its slots); not a core's
    // scores over pooled slots, whose rows (the slots, stopped at the
    // lengths) 16 rows could cover in one tile, leaving no loop to stop.
    if (std::optional<unsigned> pair = pairedReductionDim(op);
        engine.engine == BF16Engine::AMX && pair && allBF16(op, f16) &&
        (!real || *pair == tokenLoop))
      unroll = vectorWidth <= 32 ? 32 : 16;
    // Register tiles that step bf16 pairs (dot products, AMX tiles) read
    // their streamed operand as pairs made once per block (pairedCopy),
    // whether or not the schedule packs it (the attention core's keys and
    // values).
    bool pairSteps = engine.engine != BF16Engine::FMA && allBF16(op, f16) &&
                     pairedReductionDim(op).has_value();
    if (std::optional<RegisterTileDims> dims = registerTileDims(op);
        (params.pack || pairSteps) && dims) {
      // An init the register tiles will take goes along into the panels.
      Operation *init = initOfAccumulators(op);
      if (init && !late.contains(init))
        init = nullptr;
      if (init)
        fused.insert(init);
      FailureOr<linalg::LinalgOp> packed =
          packStreamedOperand(rewriter, op, *dims, vectorWidth, unroll,
                              kRegisterLoopAttrName, init, pairSteps,
                              pairBlocks);
      if (failed(packed))
        return op->emitOpError("could not pack its streamed operand");
      op = *packed;
    }
    SmallVector<int64_t> tiles = vectorTileSizes(
        op, vectorWidth, unroll, /*exact=*/true, params.transposeBlock);
    // Both factors bf16: two steps of the paired reduction at a time, each
    // row's pair one dot product (an odd range's last step is peeled). A
    // token loop stopped at the lengths steps its odd last token alone
    // (stepOddTokenAlone); one pair in all would leave it no loop.
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    bool pairedTokens = false;
    if (std::optional<unsigned> pair = pairedReductionDim(op);
        pair && allBF16(op, f16)) {
      pairedTokens = real && *pair == tokenLoop;
      if (!pairedTokens || ranges[*pair] > 2)
        tiles[*pair] = 2;
      else
        pairedTokens = false;
    }
    // One tile that must stop at the lengths (a core's scores over pooled
    // slots that one register tile covers, one query row a workgroup): its
    // tokens one at a time, so that a loop stops at the real ones.
    if (isOneTile(tiles, ranges) && real && !bound.masked &&
        ranges[tokenLoop] > 1 && !pairedTokens)
      tiles[tokenLoop] = 1;
    // Nothing to do when the op already is one tile (but read its pairs).
    if (!pairBlocks.empty())
      readPairsInPlace(rewriter, op, pairBlocks);
    if (isOneTile(tiles, ranges))
      return real && !bound.masked ? unbounded(op) : success();
    SmallVector<int64_t> interchange = reductionsInnermost(op);
    rewriter.setInsertionPoint(op);
    FailureOr<scf::SCFTilingResult> result;
    if (Operation *init = initOfAccumulators(op)) {
      fused.insert(init);
      result = tileWithFusedInit(rewriter, op, init, tiles, interchange);
    } else {
      scf::SCFTilingOptions tiling;
      tiling.setTileSizes(getAsIndexOpFoldResult(&getContext(), tiles));
      tiling.setInterchange(interchange);
      result = scf::tileUsingSCF(
          rewriter, cast<TilingInterface>(op.getOperation()), tiling);
      if (succeeded(result))
        rewriter.replaceOp(op, result->replacements);
    }
    if (failed(result))
      return op->emitOpError("could not be tiled to vector size");
    for (LoopLikeOpInterface loop : result->loops)
      loop->setAttr(kRegisterLoopAttrName, rewriter.getUnitAttr());
    if (!pairBlocks.empty() && !result->loops.empty()) {
      SmallVector<linalg::LinalgOp> inside;
      result->loops.front()->walk(
          [&](linalg::LinalgOp t) { inside.push_back(t); });
      for (linalg::LinalgOp t : inside)
        readPairsInPlace(rewriter, t, pairBlocks);
    }
    if (!real)
      return success();
    Operation *tiled = result->tiledOps.front();
    scf::ForOp loop = loopOfDim(result->loops, tiles, interchange, tokenLoop);
    if (!loop)
      return bound.masked ? success() : unbounded(tiled);
    boundTokenLoop(rewriter, loop, real);
    if (pairedTokens &&
        failed(stepOddTokenAlone(rewriter, loop, tiled, tokenLoop)))
      return tiled->emitOpError("could not step its odd last token alone");
    return success();
  }
};
} // namespace
