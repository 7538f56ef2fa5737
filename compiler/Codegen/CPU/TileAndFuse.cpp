//===- TileAndFuse.cpp - workgroup tiling with producer fusion -*- C++ -*-===//
//
// Tiles each kernel root into scf.forall workgroups and fuses its non-root
// producers into the loop, with upstream TilingInterface machinery.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUTILEANDFUSEPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

SmallVector<int64_t>
mlir::linformer::defaultWorkgroupTileSizes(TilingInterface op,
                                           int64_t rowTile) {
  SmallVector<int64_t> ranges;
  SmallVector<unsigned> outDims;
  if (auto linalgOp = dyn_cast<linalg::LinalgOp>(op.getOperation())) {
    ranges = linalgOp.getStaticLoopRanges();
    AffineMap outMap =
        linalgOp.getIndexingMapMatchingResult(linalgOp->getResult(0));
    for (AffineExpr e : outMap.getResults())
      outDims.push_back(cast<AffineDimExpr>(e).getPosition());
  } else {
    // Ops whose iteration domain is their result (the attention core).
    auto type = cast<RankedTensorType>(op->getResult(0).getType());
    ranges.assign(type.getShape().begin(), type.getShape().end());
    for (unsigned i = 0; i < ranges.size(); ++i)
      outDims.push_back(i);
  }
  SmallVector<int64_t> tiles(ranges.size(), 0);
  // Leading output dimensions (batch, heads) one at a time; the second
  // innermost in row tiles; the innermost whole.
  for (unsigned i = 0; i + 2 < outDims.size(); ++i)
    tiles[outDims[i]] = 1;
  if (outDims.size() >= 2) {
    unsigned rowDim = outDims[outDims.size() - 2];
    tiles[rowDim] = largestDivisorAtMost(ranges[rowDim], rowTile);
  }
  // Too few workgroups leave threads idle (a [b, k, d] kernel with b = 1
  // would be one workgroup): split rows, then the innermost dimension (down
  // to one vector), until there are enough.
  auto count = [&] {
    int64_t n = 1;
    for (unsigned d : outDims)
      n *= tiles[d] == 0 ? 1 : ranges[d] / tiles[d];
    return n;
  };
  const int64_t kMinWorkgroups = 8, kMinInner = 16;
  while (count() < kMinWorkgroups) {
    bool changed = false;
    if (outDims.size() >= 2) {
      unsigned rowDim = outDims[outDims.size() - 2];
      int64_t t = tiles[rowDim] == 0 ? ranges[rowDim] : tiles[rowDim];
      int64_t smaller = largestDivisorAtMost(ranges[rowDim], t / 2);
      if (t > 1 && smaller < t) {
        tiles[rowDim] = smaller;
        changed = true;
      }
    }
    if (!changed && !outDims.empty()) {
      unsigned inner = outDims.back();
      int64_t t = tiles[inner] == 0 ? ranges[inner] : tiles[inner];
      int64_t smaller = largestDivisorAtMost(ranges[inner], t / 2);
      if (smaller >= kMinInner && smaller < t) {
        tiles[inner] = smaller;
        changed = true;
      }
    }
    if (!changed)
      break;
  }
  return tiles;
}

int64_t mlir::linformer::largestDivisorAtMost(int64_t size, int64_t bound) {
  if (size <= 0 || ShapedType::isDynamic(size))
    return 1;
  for (int64_t t = std::min(size, bound); t > 1; --t)
    if (size % t == 0)
      return t;
  return 1;
}

namespace {
struct TileAndFusePass
    : linformer::impl::LinformerCPUTileAndFusePassBase<TileAndFusePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<TilingInterface> roots;
    getOperation().walk([&](TilingInterface op) {
      if (op->hasAttr(kRootAttrName) || isa<AttentionCoreOp>(op))
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // Consumers first: a root's producers are then still whole when fused.
    for (TilingInterface root : llvm::reverse(roots)) {
      SmallVector<int64_t> tiles;
      if (auto attr = root->getAttrOfType<DenseI64ArrayAttr>(kTileSizesAttrName))
        tiles.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
      else
        tiles = defaultWorkgroupTileSizes(root, rowTile);
      size_t numLoops = root.getLoopIteratorTypes().size();
      if (tiles.size() != numLoops) {
        root->emitOpError() << "has " << tiles.size()
                            << " tile sizes for " << numLoops << " loops";
        return signalPassFailure();
      }
      scf::SCFTilingOptions tiling;
      tiling.setLoopType(scf::SCFTilingOptions::LoopType::ForallOp);
      tiling.setTileSizes(getAsIndexOpFoldResult(&getContext(), tiles));
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      // Fuse everything that is not itself the root of another kernel.
      options.setFusionControlFn(
          [](tensor::ExtractSliceOp, OpResult producer,
             bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            if (producer.getOwner()->hasAttr(kRootAttrName))
              return std::nullopt;
            return scf::SCFTileAndFuseOptions::ControlFnResult{};
          });
      rewriter.setInsertionPoint(root);
      FailureOr<scf::SCFTileAndFuseResult> result =
          scf::tileConsumerAndFuseProducersUsingSCF(
              rewriter, root, options);
      if (failed(result)) {
        root->emitOpError("could not be tiled into workgroups");
        return signalPassFailure();
      }
      for (OpResult res : root->getResults())
        rewriter.replaceAllUsesWith(res, result->replacements.lookup(res));
      rewriter.eraseOp(root);
      // The tiled root keeps the mark so that later stages find kernels.
      Operation *tiledRoot = result->tiledAndFusedOps.front();
      tiledRoot->removeAttr(kRootAttrName);
      tiledRoot->removeAttr(kTileSizesAttrName);
      result->loops.front()->setAttr(kRootAttrName, rewriter.getUnitAttr());
    }
  }
};
} // namespace
