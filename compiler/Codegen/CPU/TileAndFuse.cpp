//===- TileAndFuse.cpp - workgroup tiling with producer fusion -*- C++ -*-===//
//
// Tiles each kernel root into scf.forall workgroups and fuses its non-root
// producers into the loop, with upstream TilingInterface machinery.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/TileUtils.h"
#include "compiler/Analysis/Contractions.h"
#include "compiler/Analysis/TokenAnalysis.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CPU/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Linalg/Utils/Utils.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/SCF/Transforms/TileUsingInterface.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/TilingInterface.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUTILEANDFUSEPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

SmallVector<int64_t>
mlir::linformer::defaultWorkgroupTileSizes(TilingInterface op,
                                           int64_t rowTile) {
  // The cost model's workgroup tiling with the fixed row tile and at least
  // 8 workgroups, inner tiles not below 16 elements.
  FailureOr<::linformer::schedule::KernelShape> shape =
      analyzeRoot(op.getOperation());
  if (failed(shape))
    return SmallVector<int64_t>(op.getLoopIteratorTypes().size(), 0);
  // The plain default splits every leading output loop (heads too); only
  // the cost model keeps column-side loops whole.
  shape->columnLoops.clear();
  std::vector<int64_t> tiles = ::linformer::schedule::workgroupTiles(
      *shape, rowTile, /*minWorkgroups=*/8, /*minInner=*/16);
  return SmallVector<int64_t>(tiles.begin(), tiles.end());
}

void mlir::linformer::moveDestinationsBefore(RewriterBase &rewriter,
                                                  Operation *consumer,
                                                  Operation *loop) {
  auto after = [&](Operation *op) {
    return op && op->getBlock() == loop->getBlock() &&
           loop->isBeforeInBlock(op);
  };
  for (Value operand : consumer->getOperands()) {
    Operation *def = operand.getDefiningOp();
    if (!after(def))
      continue;
    // An empty tensor, or a slice of values made before the loop (a
    // workgroup's slice of its shared destination, which the register
    // tiling's loops do not write).
    bool movable =
        (isa<tensor::EmptyOp>(def) && def->getNumOperands() == 0) ||
        (isa<tensor::ExtractSliceOp>(def) &&
         llvm::none_of(def->getOperands(), [&](Value v) {
           return after(v.getDefiningOp()) || v.getDefiningOp() == loop;
         }));
    if (movable)
      rewriter.moveOpBefore(def, loop);
  }
}

namespace {
/// For a (single-result) root whose result holds tokens: its (batch, token)
/// loops as
/// `array<i64: batch, row, tile>` over the dimensions of the workgroup
/// loop it gets with `tiles`, when each workgroup holds one sequence and a
/// tile of its tokens; else null.
DenseI64ArrayAttr tokenRows(TilingInterface root, ArrayRef<int64_t> tiles,
                            std::optional<TokenDims> dims) {
  if (!dims)
    return {};
  std::optional<TokenDims> loops = tokenLoopsOf(root.getOperation(), *dims);
  if (!loops)
    return {};
  unsigned batchLoop = loops->batch, tokenLoop = loops->token;
  // One sequence per workgroup and tiles of tokens.
  if (batchLoop >= tiles.size() || tokenLoop >= tiles.size() ||
      tiles[batchLoop] != 1 || tiles[tokenLoop] == 0)
    return {};
  // The workgroup loop has one dimension per tiled loop, in loop order.
  auto forallDim = [&](unsigned loop) {
    return static_cast<int64_t>(
        llvm::count_if(tiles.take_front(loop), [](int64_t t) { return t != 0; }));
  };
  int64_t b = forallDim(batchLoop), t = forallDim(tokenLoop);
  if (b >= t)
    return {};
  // A row of windows covers perRow tokens: the rule counts tokens.
  return DenseI64ArrayAttr::get(root->getContext(),
                                {b, t, tiles[tokenLoop] * dims->perRow});
}

/// Whether every reader of `v` (through slices) is a token reduction that
/// stops at the lengths: a linalg op marked `linformer.token_bound` whose
/// batch loop covers one sequence, as its bound needs (TileForVectors).
/// A `masked` one may read past them (whole steps, or every token where no
/// loop takes the bound), but its body selects what it reads there away.
/// An elementwise op in between counts as its readers.
bool readersStopAtLengths(Value v) {
  for (OpOperand &use : v.getUses()) {
    if (auto slice = dyn_cast<tensor::ExtractSliceOp>(use.getOwner())) {
      if (!readersStopAtLengths(slice.getResult()))
        return false;
      continue;
    }
    auto op = dyn_cast<linalg::LinalgOp>(use.getOwner());
    if (!op || !op.isDpsInput(&use))
      return false;
    auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
    // An elementwise op in between (a bf16 rounding before E X) reads
    // what its readers read; register tiling stops it at the lengths too.
    if (!bound && op.getNumReductionLoops() == 0 &&
        op->getNumResults() == 1 && op.getNumDpsInits() == 1 &&
        llvm::all_of(op.getIndexingMapsArray(),
                     [](AffineMap m) { return m.isIdentity(); })) {
      if (!readersStopAtLengths(op->getResult(0)))
        return false;
      continue;
    }
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (!bound || bound.getBatch() >= static_cast<int64_t>(ranges.size()) ||
        ranges[bound.getBatch()] != 1)
      return false;
  }
  return true;
}

/// The token dimensions of a root's result whose padding no one reads
/// (`linformer.unread_padding`), when its readers really stop at the
/// lengths.
std::optional<TokenDims> unreadPaddingDims(Operation *root) {
  auto unread = root->getAttrOfType<DenseI64ArrayAttr>(kUnreadPaddingAttrName);
  if (!unread || unread.size() != 2 || unread[0] < 0 || unread[1] < 0 ||
      root->getNumResults() != 1 ||
      !readersStopAtLengths(root->getResult(0)))
    return std::nullopt;
  return TokenDims{static_cast<unsigned>(unread[0]),
                   static_cast<unsigned>(unread[1])};
}

/// Whether `op` is an elementwise linalg op of one result whose maps are
/// all identities (the GELU after the FFN's first GEMM, a rounding).
bool isIdentityElementwise(Operation *op) {
  auto linalgOp = dyn_cast<linalg::GenericOp>(op);
  return linalgOp && linalgOp->getNumResults() == 1 &&
         !linalgOp->hasAttr(kRootAttrName) && linalg::isElementwise(linalgOp) &&
         llvm::all_of(linalgOp.getIndexingMapsArray(),
                      [](AffineMap m) { return m.isIdentity(); });
}

/// Whether `op` only rounds its one f32 input to bf16 (or f16: pairs of
/// f16 factors).
bool isRoundingToBF16(Operation *op) {
  auto generic = dyn_cast<linalg::GenericOp>(op);
  if (!generic || generic.getNumDpsInputs() != 1)
    return false;
  Type out = getElementTypeOrSelf(generic->getResult(0).getType());
  if (!out.isBF16() && !out.isF16())
    return false;
  Block &body = generic.getRegion().front();
  auto trunc = dyn_cast<arith::TruncFOp>(&body.front());
  return trunc && trunc->getNextNode() == body.getTerminator() &&
         trunc.getIn() == body.getArgument(0) &&
         body.getTerminator()->getOperand(0) == trunc.getResult();
}

/// Whether `reader` of a rounding to bf16 is another kernel: a root, or
/// the rounded values' extension to f32 read only by roots (a paired
/// attention core's factors, which its lowering reads as bf16).
static bool readsAsKernel(Operation *reader) {
  if (reader->hasAttr(kRootAttrName))
    return true;
  return reader->getNumResults() == 1 &&
         getElementTypeOrSelf(reader->getResult(0).getType()).isF32() &&
         convertedFrom(reader->getResult(0)) &&
         llvm::all_of(reader->getUsers(), [](Operation *user) {
           return user->hasAttr(kRootAttrName);
         });
}

/// A bf16 epilogue of `root`: the elementwise ops from its result to a
/// rounding to bf16 that only other kernels read (with bf16 products, the
/// FFN's first GEMM -> GELU -> bf16, read by the second GEMM), each the
/// only reader of the one before. Fused into the root's workgroups as
/// consumers, the kernel writes the bf16 values its reader multiplies (half
/// the bytes of the f32 result, rounded once) instead of the reader
/// computing the GELU and the rounding of its tile from f32 it reads back.
/// Empty where there is none.
SmallVector<Operation *> bf16Epilogue(TilingInterface root) {
  SmallVector<Operation *> chain;
  if (root->getNumResults() != 1 ||
      !isa<linalg::LinalgOp, AttentionCoreOp>(root.getOperation()))
    return {};
  Value v = root->getResult(0);
  // A root without bf16 products whose f32 result other kernels also read
  // rounded (a LayerNorm's output, which the next contractions multiply as
  // bf16 and the residual adds as f32): the rounding, as a second result
  // of the root's workgroups, rounded once where each reader rounded its
  // own rows (E X all 4096 tokens of its columns a workgroup: a third of
  // its time on the Xeon).
  if (!root->hasAttr(kBF16EngineAttrName)) {
    if (!isa<linalg::LinalgOp>(root.getOperation()))
      return {};
    for (Operation *user : v.getUsers())
      if (isRoundingToBF16(user) && isIdentityElementwise(user) &&
          user->getOperand(0) == v && !user->use_empty() &&
          llvm::all_of(user->getUsers(), readsAsKernel))
        return {user};
    return {};
  }
  while (v.hasOneUse()) {
    Operation *user = *v.getUsers().begin();
    if (!isIdentityElementwise(user) || user->getOperand(0) != v ||
        !llvm::is_contained(cast<linalg::GenericOp>(user).getDpsInputs(), v))
      return {};
    chain.push_back(user);
    if (isRoundingToBF16(user))
      return llvm::all_of(user->getUsers(), readsAsKernel) ? chain
                                                            : SmallVector<Operation *>{};
    v = user->getResult(0);
  }
  return {};
}

struct TileAndFusePass
    : mlir::linformer::impl::LinformerCPUTileAndFusePassBase<TileAndFusePass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<TilingInterface> roots;
    getOperation().walk([&](TilingInterface op) {
      if (op->hasAttr(kRootAttrName) || isa<AttentionCoreOp>(op))
        roots.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    // Which roots hold tokens, from the untiled function (tiling replaces
    // values, which the analysis caches).
    DenseMap<Operation *, std::optional<TokenDims>> rootTokens;
    {
      TokenAnalysis tokens;
      // Only where the runtime knows the lengths (an argument marked
      // linformer.lengths): elsewhere every workgroup runs.
      for (TilingInterface root : roots)
        if (root->getNumResults() == 1 && markedLengthsArgument(root))
          rootTokens[root] = tokens.of(root->getResult(0));
    }
    // bf16 epilogues (one op per root), fused into their root's
    // workgroups as consumers, not into their readers' as producers: their
    // mark (kBF16EpilogueAttrName) keeps them out of producer fusion.
    DenseMap<Operation *, Operation *> epilogues;
    if (!whole)
      for (TilingInterface root : roots) {
        SmallVector<Operation *> chain = bf16Epilogue(root);
        if (chain.empty())
          continue;
        // One elementwise op (upstream's elementwise fusion): the kernel
        // then keeps one f32 tile, not one per step of the chain.
        Operation *fused = chain.front();
        for (Operation *next : llvm::drop_begin(chain)) {
          rewriter.setInsertionPoint(next);
          FailureOr<linalg::ElementwiseOpFusionResult> f =
              linalg::fuseElementwiseOps(rewriter, &next->getOpOperand(0));
          if (failed(f)) {
            fused = nullptr;
            break;
          }
          for (auto [from, to] : f->replacements)
            rewriter.replaceAllUsesExcept(from, to, f->fusedOp);
          if (fused->use_empty())
            rewriter.eraseOp(fused);
          if (next->use_empty())
            rewriter.eraseOp(next);
          fused = f->fusedOp;
        }
        if (!fused)
          continue;
        fused->setAttr(kBF16EpilogueAttrName, rewriter.getUnitAttr());
        // Its erf (GELU's) feeds a rounding to bf16: an approximation
        // a hundredth of bf16's half ulp off serves (linformer-cpu-lower-
        // vectors' ErfRational with afn).
        fused->walk([](math::ErfOp erf) {
          erf.setFastmath(erf.getFastmath() | arith::FastMathFlags::afn);
        });
        epilogues[root] = fused;
      }
    // Consumers first: a root's producers are then still whole when fused.
    for (TilingInterface root : llvm::reverse(roots)) {
      // Workgroup counts and tile sizes are compile-time numbers: a dynamic
      // dimension is refused by name here rather than turning into
      // ShapedType::kDynamic arithmetic below.
      SmallVector<Type> types(root->getOperandTypes());
      llvm::append_range(types, root->getResultTypes());
      for (Type t : types)
        if (auto shaped = dyn_cast<ShapedType>(t);
            shaped && !shaped.hasStaticShape()) {
          root->emitOpError() << "needs static shapes to be tiled into "
                                 "workgroups, but has type "
                              << t;
          return signalPassFailure();
        }
      // The schedule's workgroup tile, else an explicit tile-size list, else
      // the default.
      SmallVector<int64_t> tiles;
      auto schedule = root->getAttrOfType<CPUScheduleAttr>(kScheduleAttrName);
      auto info = root->getAttrOfType<KernelShapeAttr>(kKernelInfoAttrName);
      bool initializer = root->hasAttr(kInitializerAttrName);
      if (schedule)
        tiles.assign(schedule.getWorkgroup().begin(),
                     schedule.getWorkgroup().end());
      else if (auto attr =
                   root->getAttrOfType<DenseI64ArrayAttr>(kTileSizesAttrName))
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
      // whole: the kernel is the same (root and fused producers) in one
      // workgroup; the Halide generator splits it itself.
      if (whole)
        tiles.assign(numLoops, 0);
      // A kernel with nothing to split still gets a loop (of one
      // workgroup), over its first parallel loop.
      if (llvm::all_of(tiles, [](int64_t t) { return t == 0; })) {
        SmallVector<utils::IteratorType> iters =
            root.getLoopIteratorTypes();
        SmallVector<Range> domain = root.getIterationDomain(rewriter);
        for (auto [i, it] : llvm::enumerate(iters))
          if (it == utils::IteratorType::parallel) {
            if (std::optional<int64_t> size =
                    getConstantIntValue(domain[i].size)) {
              tiles[i] = *size;
              break;
            }
          }
        tiling.setTileSizes(getAsIndexOpFoldResult(&getContext(), tiles));
      }
      // Every tiled dimension enumerates workgroups; the mapping also keeps
      // canonicalization from folding a single-workgroup loop away.
      SmallVector<Attribute> mapping;
      for (int64_t t : tiles)
        if (t != 0)
          mapping.push_back(WorkgroupMappingAttr::get(
              &getContext(), static_cast<int64_t>(mapping.size())));
      tiling.setMapping(mapping);
      // Which workgroups hold which tokens (before tiling, while the
      // producers are whole).
      // E' (its padding unread) holds no tokens to the analysis: its
      // columns are tokens all the same, once its readers are tiled.
      std::optional<TokenDims> dims = rootTokens.lookup(root);
      if (!dims && rootTokens.count(root) && unreadPadding)
        dims = unreadPaddingDims(root);
      // Rows of pooled slots past the real windows are left unwritten only
      // where every reader stops at them (the MLIR core, not a Halide one).
      if (dims && dims->perRow != 1 && !unreadPadding)
        dims = std::nullopt;
      DenseI64ArrayAttr rows = tokenRows(root, tiles, dims);
      scf::SCFTileAndFuseOptions options;
      options.setTilingOptions(tiling);
      // Fuse everything that is not itself the root of another kernel.
      options.setFusionControlFn(
          [&](tensor::ExtractSliceOp, OpResult producer,
              bool) -> std::optional<scf::SCFTileAndFuseOptions::ControlFnResult> {
            if (producer.getOwner()->hasAttr(kRootAttrName) ||
                producer.getOwner()->hasAttr(kBF16EpilogueAttrName))
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
      // Its bf16 epilogue, into the same workgroups.
      SmallVector<LoopLikeOpInterface> loops = result->loops;
      if (Operation *epilogue = epilogues.lookup(root)) {
        auto loop = epilogue->getOperand(0).getDefiningOp<scf::ForallOp>();
        if (loop) {
          loops.assign({cast<LoopLikeOpInterface>(loop.getOperation())});
          moveDestinationsBefore(rewriter, epilogue, loop);
        }
        // Upstream fuses a consumer that is the one reader of the loop's
        // result: the result's other readers (a LayerNorm's f32 output,
        // which the residual adds and whose rounding is the epilogue) read
        // a stand-in meanwhile, then the fused loop's first result.
        SmallVector<OpOperand *> others;
        Value standIn;
        if (loop) {
          // Right after the loop (its destination is made before it), so
          // that the fused loop, made in its place, precedes every reader.
          if (llvm::all_of(epilogue->getOperands(), [&](Value v) {
                Operation *def = v.getDefiningOp();
                return !def || def == loop.getOperation() ||
                       def->getBlock() != loop->getBlock() ||
                       def->isBeforeInBlock(loop);
              }))
            rewriter.moveOpAfter(epilogue, loop);
          for (OpOperand &use : loop->getResult(0).getUses())
            if (use.getOwner() != epilogue)
              others.push_back(&use);
          if (!others.empty()) {
            rewriter.setInsertionPointAfter(loop);
            standIn = tensor::EmptyOp::create(
                rewriter, loop.getLoc(),
                cast<RankedTensorType>(loop->getResult(0).getType())
                    .getShape(),
                getElementTypeOrSelf(loop->getResult(0).getType()));
            for (OpOperand *use : others)
              rewriter.modifyOpInPlace(use->getOwner(),
                                       [&] { use->set(standIn); });
          }
        }
        FailureOr<scf::SCFFuseConsumerOfSliceResult> fusedEpilogue =
            loop ? scf::tileAndFuseConsumer(rewriter, epilogue, loops)
                 : FailureOr<scf::SCFFuseConsumerOfSliceResult>(failure());
        if (failed(fusedEpilogue) || fusedEpilogue->tiledOps.empty()) {
          epilogue->emitOpError("could not be fused into its producer's "
                                "workgroups");
          return signalPassFailure();
        }
        if (standIn) {
          auto fusedLoop = fusedEpilogue->tiledOps.front()
                               ->getParentOfType<scf::ForallOp>();
          for (OpOperand *use : others)
            rewriter.modifyOpInPlace(use->getOwner(), [&] {
              use->set(fusedLoop->getResult(0));
            });
          rewriter.eraseOp(standIn.getDefiningOp());
        }
      }
      // The tiled root keeps the mark so that later stages find kernels.
      Operation *tiledRoot = result->tiledAndFusedOps.front();
      tiledRoot->removeAttr(kRootAttrName);
      tiledRoot->removeAttr(kTileSizesAttrName);
      tiledRoot->removeAttr(kScheduleAttrName);
      tiledRoot->removeAttr(kKernelInfoAttrName);
      // The workgroup loop is the kernel from now on: it carries the
      // schedule (read by the register tiling) and the kernel's facts
      // (copied into the dispatch plan when the loop is outlined).
      Operation *loop = loops.front();
      loop->setAttr(kRootAttrName, rewriter.getUnitAttr());
      if (schedule)
        loop->setAttr(kScheduleAttrName, schedule);
      if (info)
        loop->setAttr(kKernelInfoAttrName, info);
      if (rows)
        loop->setAttr(kTokenRowsAttrName, rows);
      if (initializer)
        loop->setAttr(kInitializerAttrName, rewriter.getUnitAttr());
    }
  }
};
} // namespace
