//===- TileAndFuse.cpp - workgroup tiling with producer fusion -*- C++ -*-===//
//
// Tiles each kernel root into scf.forall workgroups and fuses its non-root
// producers into the loop, with upstream TilingInterface machinery.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"

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
mlir::linformer::defaultWorkgroupTileSizes(linalg::LinalgOp op,
                                           int64_t rowTile) {
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<int64_t> tiles(ranges.size(), 0);
  AffineMap outMap = op.getIndexingMapMatchingResult(op->getResult(0));
  SmallVector<unsigned> outDims;
  for (AffineExpr e : outMap.getResults())
    outDims.push_back(cast<AffineDimExpr>(e).getPosition());
  // Leading output dimensions (batch, heads) one at a time; the second
  // innermost in row tiles; the innermost whole.
  for (unsigned i = 0; i + 2 < outDims.size(); ++i)
    tiles[outDims[i]] = 1;
  if (outDims.size() >= 2) {
    unsigned rowDim = outDims[outDims.size() - 2];
    tiles[rowDim] = largestDivisorAtMost(ranges[rowDim], rowTile);
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
    SmallVector<linalg::LinalgOp> roots;
    getOperation().walk([&](linalg::LinalgOp op) {
      if (op->hasAttr(kRootAttrName))
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // Consumers first: a root's producers are then still whole when fused.
    for (linalg::LinalgOp root : llvm::reverse(roots)) {
      SmallVector<int64_t> tiles;
      if (auto attr = root->getAttrOfType<DenseI64ArrayAttr>(kTileSizesAttrName))
        tiles.assign(attr.asArrayRef().begin(), attr.asArrayRef().end());
      else
        tiles = defaultWorkgroupTileSizes(root, rowTile);
      if (tiles.size() != root.getNumLoops()) {
        root->emitOpError() << "has " << tiles.size()
                            << " tile sizes for " << root.getNumLoops()
                            << " loops";
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
              rewriter, cast<TilingInterface>(root.getOperation()), options);
      if (failed(result)) {
        root->emitOpError("could not be tiled into workgroups");
        return signalPassFailure();
      }
      for (OpResult res : root->getResults())
        rewriter.replaceAllUsesWith(res, result->replacements.lookup(res));
      // The tiled root keeps the mark so that later stages find kernels.
      Operation *tiledRoot = result->tiledAndFusedOps.front();
      tiledRoot->removeAttr(kRootAttrName);
      tiledRoot->removeAttr(kTileSizesAttrName);
      result->loops.front()->setAttr(kRootAttrName, rewriter.getUnitAttr());
    }
  }
};
} // namespace
