//===- Contractions.cpp - a contraction's warp, staging and mma plan -*- C++ -*-===//
//
// See Contractions.h; the passes that use it are described in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Codegen/CUDA/BodyCloning.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "mlir/AsmParser/AsmParser.h"

#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>

namespace mlir::linformer::cuda {

FailureOr<Plan> planFor(linalg::GenericOp op, int64_t tileK,
                        int64_t maxTilesM, int64_t maxTilesN,
                        int64_t splitWarps) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(cast<linalg::LinalgOp>(op.getOperation())))
    return failure();
  // f32 accumulation into C; the operands f32, or bf16 / f16 data the
  // body extends (a weight's extension fused into its reader): nothing
  // but extensions, one multiply and one add in the body.
  if (!cast<MemRefType>(op.getDpsInitOperand(0)->get().getType())
           .getElementType()
           .isF32())
    return failure();
  for (OpOperand *in : op.getDpsInputOperands())
    if (!isa<Float32Type, BFloat16Type, Float16Type>(
            cast<MemRefType>(in->get().getType()).getElementType()))
      return failure();
  for (Operation &bodyOp : op.getRegion().front())
    if (!isa<arith::ExtFOp, arith::MulFOp, arith::AddFOp, linalg::YieldOp>(
            bodyOp))
      return failure();
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(cast<linalg::LinalgOp>(op.getOperation()));
  if (failed(dims) || dims->m.empty() || dims->n.empty() || dims->k.empty())
    return failure();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  Plan p;
  p.mDim = dims->m.back();
  p.nDim = dims->n.back();
  p.kDim = dims->k.back();
  if (ShapedType::isDynamic(extents[p.mDim]) || extents[p.mDim] % kTileM ||
      ShapedType::isDynamic(extents[p.nDim]) || extents[p.nDim] % kTileN ||
      ShapedType::isDynamic(extents[p.kDim]) || extents[p.kDim] % tileK)
    return failure();
  p.rowDims.append(dims->batch.begin(), dims->batch.end());
  p.rowDims.append(dims->m.begin(), dims->m.end() - 1);
  p.colDims.append(dims->n.begin(), dims->n.end() - 1);
  p.outerK.append(dims->k.begin(), dims->k.end() - 1);
  for (unsigned d : p.rowDims)
    if (ShapedType::isDynamic(extents[d]))
      return failure();
  for (unsigned d : p.colDims)
    if (ShapedType::isDynamic(extents[d]))
      return failure();
  AffineMap a = op.getMatchingIndexingMap(op.getDpsInputOperand(0));
  bool firstHasM = a.getResultPosition(getAffineDimExpr(p.mDim, op.getContext()))
                       .has_value();
  p.aOperand = firstHasM ? 0 : 1;
  p.bOperand = firstHasM ? 1 : 0;
  // A warp's block of tiles: as many as allowed that divide the extents
  // (powers of two down to one tile).
  SmallVector<int64_t> optM, optN;
  for (int64_t v = maxTilesM; v >= 1; v /= 2)
    optM.push_back(v);
  for (int64_t v = maxTilesN; v >= 1; v /= 2)
    optN.push_back(v);
  p.tilesM = largestDividing(extents[p.mDim] / kTileM, optM);
  p.tilesN = largestDividing(extents[p.nDim] / kTileN, optN);
  // A grid dimension y or z holds at most 65535 blocks.
  p.rows = extents[p.mDim] / (kTileM * p.tilesM);
  p.cols = extents[p.nDim] / (kTileN * p.tilesN);
  for (unsigned d : p.rowDims)
    p.rows *= extents[d];
  for (unsigned d : p.colDims)
    p.cols *= extents[d];
  if (p.rows > 65535 || p.cols > 65535)
    return failure();
  // Split-K: a single long reduction over few warp blocks (E X: 256 x 512
  // outputs, n-long) leaves most of the GPU idle; its k loop is cut into
  // parts, each part's warps write partial sums, and a second loop adds
  // them to C in a fixed order (deterministic). Parts keep at least 16 k
  // steps, and the parts' warps stay within `splitWarps` (what fills the
  // GPU): a contraction that nearly fills it alone (the Q projection and
  // the FFN's second GEMM at n = 4096: 1024 warps for 1056) would gain
  // little parallelism and pay two f32 copies of C, written and read
  // back, and a kernel.
  if (splitWarps > 0 && p.outerK.empty())
    p.split = splitFor(p, extents[p.kDim] / tileK, p.rows, splitWarps);
  return p;
}

int64_t splitFor(const Plan &p, int64_t steps, int64_t rows,
                 int64_t splitWarps) {
  int64_t split = 1;
  while (rows * p.cols * split * 2 <= splitWarps && split < 64 &&
         steps % (split * 2) == 0 && steps / (split * 2) >= 16 &&
         p.rows * split * 2 <= 65535)
    split *= 2;
  return split;
}

bool rowsAreTokens(linalg::GenericOp op, const Plan &p) {
  auto loops =
      op->getAttrOfType<DenseI64ArrayAttr>(mlir::linformer::kTokenLoopsAttrName);
  return loops && loops.size() == 2 && p.rowDims.size() == 1 &&
         int64_t(p.rowDims[0]) == loops[0] && int64_t(p.mDim) == loops[1];
}

SmallVector<int64_t> lengthSplits(linalg::GenericOp op, const Plan &p,
                                  int64_t tileK, int64_t splitWarps) {
  SmallVector<int64_t> out;
  const Staging &s = p.staging;
  // (Rows of pooled slots count tokens by the window: no variants.)
  if (!rowsAreTokens(op, p) || !s.warpsM || s.wgmma || splitWarps <= 0 ||
      !p.outerK.empty() || op->hasAttr(mlir::linformer::kCUDASlotRowsAttrName))
    return out;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  int64_t n = extents[p.mDim], blockRows = s.warpsM * kTileM * p.tilesM;
  int64_t steps = extents[p.kDim] / tileK, last = p.split;
  // Halving the longest length halves the warp rows that hold tokens
  // (rounded up to whole blocks): split as planFor would for those.
  for (int64_t t = n / 2; t >= blockRows && out.size() < 2 * 3; t /= 2) {
    int64_t blocks = (t + blockRows - 1) / blockRows;
    int64_t rows = extents[p.rowDims[0]] * blocks * s.warpsM;
    int64_t split = splitFor(p, steps, rows, splitWarps);
    // A staged part copies whole chunks of k.
    if (split == last || (extents[p.kDim] / split) % s.chunk)
      continue;
    out.append({t, split});
    last = split;
  }
  return out;
}

std::string checkLengthSplits(linalg::GenericOp op, const Plan &p,
                              ArrayRef<int64_t> splits, int64_t tileK) {
  const Staging &s = p.staging;
  if (!rowsAreTokens(op, p) || !s.warpsM || s.wgmma || !p.outerK.empty())
    return "length_splits are for staged contractions whose rows are "
           "tokens (not wgmma), and this one is not";
  if (splits.size() % 2)
    return "length_splits must be [T, S] pairs";
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  int64_t n = extents[p.mDim], steps = extents[p.kDim] / tileK;
  int64_t last = n;
  for (size_t i = 0; i < splits.size(); i += 2) {
    int64_t t = splits[i], split = splits[i + 1];
    std::string pair = "[" + std::to_string(t) + ", " +
                       std::to_string(split) + "]";
    if (t < 1 || t >= last)
      return "length_splits " + pair + ": T must be in [1, " +
             std::to_string(last) + ") (below n = " + std::to_string(n) +
             " and the T before it)";
    if (split < 1 || split > 64 || !llvm::isPowerOf2_64(split) ||
        steps % split || (extents[p.kDim] / split) % s.chunk ||
        p.rows * split > 65535)
      return "length_splits " + pair + ": split " + std::to_string(split) +
             " must be a power of two up to 64 that cuts the " +
             std::to_string(extents[p.kDim]) + " k values into parts of "
             "whole " + std::to_string(s.chunk) + "-wide chunks";
    last = t;
  }
  return "";
}

bool mapsContraction(linalg::GenericOp op, int64_t tileK, int64_t maxTilesM,
                     int64_t maxTilesN) {
  return succeeded(planFor(op, tileK, maxTilesM, maxTilesN, /*splitWarps=*/0));
}

linalg::GenericOp clonableElementwise(Operation *op) {
  auto g = dyn_cast_or_null<linalg::GenericOp>(op);
  if (!g || !g.hasPureBufferSemantics() || g.getNumDpsInits() != 1 ||
      g.getNumParallelLoops() != g.getNumLoops() ||
      !g.getMatchingIndexingMap(g.getDpsInitOperand(0)).isIdentity() ||
      !g.getRegionOutputArgs()[0].use_empty() || !clonableBody(g))
    return {};
  for (OpOperand *in : g.getDpsInputOperands())
    if (!g.getMatchingIndexingMap(in).isProjectedPermutation(
            /*allowZeroInResults=*/false))
      return {};
  return g;
}

Operation *absorbableInit(linalg::GenericOp op) {
  Value c = op.getDpsInitOperand(0)->get();
  Operation *prev = neighbour(op, /*after=*/false);
  if (isa_and_nonnull<linalg::FillOp, linalg::CopyOp>(prev))
    return cuda::filledConstant(prev, c) ? prev : nullptr;
  linalg::GenericOp g = clonableElementwise(prev);
  if (!g || g.getDpsInitOperand(0)->get() != c ||
      llvm::is_contained(g.getDpsInputs(), c))
    return nullptr;
  return g;
}

Operation *outermostLengthGuard(Operation *op) {
  Operation *guard = nullptr;
  for (Operation *p = op->getParentOp(); p; p = p->getParentOp())
    if (isa<scf::IfOp>(p) && p->hasAttr(mlir::linformer::kLengthGuardAttrName))
      guard = p;
  return guard;
}

/// Whether `user` belongs to another variant of contraction `op` (both in
/// one nest of length guards, in different branches): the runs that take
/// `op`'s branch never run it.
static bool inOtherVariant(Operation *user, Operation *op) {
  Operation *guard = outermostLengthGuard(op);
  return guard && guard == outermostLengthGuard(user) &&
         !op->getBlock()->findAncestorOpInBlock(*user);
}

OpOperand *absorbableEpilogue(linalg::GenericOp op, Operation *initFrom) {
  Value c = op.getDpsInitOperand(0)->get();
  linalg::GenericOp g = clonableElementwise(neighbour(op, /*after=*/true));
  if (!g || g.getNumLoops() != cast<MemRefType>(c.getType()).getRank())
    return nullptr;
  Value d = g.getDpsInitOperand(0)->get();
  // Absorbed, the epilogue writes D while the contraction still reads its
  // operands: D must not be one of them. (Bufferization may give the op
  // after a contraction the buffer of that contraction's input, whose
  // values die with it: an FFN whose hidden layer is as wide as the model
  // writes GELU where its LayerNorm input was. A lane storing its C
  // elements there would overwrite rows that other lanes and warps are
  // still reading.)
  MemrefValue written = memref::skipViewLikeOps(cast<MemrefValue>(d));
  if (d != c && llvm::any_of(op.getDpsInputs(), [&](Value in) {
        auto read = dyn_cast<MemrefValue>(in);
        return read && memref::skipViewLikeOps(read) == written;
      }))
    return nullptr;
  OpOperand *readOfC = nullptr;
  for (OpOperand *in : g.getDpsInputOperands()) {
    if (in->get() == d && d != c)
      return nullptr;
    if (in->get() != c)
      continue;
    if (readOfC || !g.getMatchingIndexingMap(in).isIdentity())
      return nullptr;
    readOfC = in;
  }
  if (!readOfC)
    return nullptr;
  // A narrowed op's readers read its output (linformer-cuda-narrow-
  // intermediates): the values left in C are its alone even when C is
  // reused.
  if (d != c && !g->hasAttr(mlir::linformer::kNarrowedAttrName))
    for (Operation *user : c.getUsers())
      if (user != op && user != g && user != initFrom &&
          !isa<memref::DeallocOp>(user) && !inOtherVariant(user, op))
        return nullptr;
  return readOfC;
}
FailureOr<Absorbed> absorbedBy(linalg::GenericOp op) {
  auto mark = op->getAttrOfType<CUDAAbsorptionAttr>(kCUDAAbsorbsAttrName);
  Absorbed a;
  if (!mark)
    return a;
  Operation *init = absorbableInit(op);
  if (mark.getInit()) {
    if (!init)
      return op.emitOpError()
             << "is marked to absorb its init (" << kCUDAAbsorbsAttrName
             << "), but the op before it does not write its output "
                "elementwise from other buffers (a bias broadcast, a fill)";
    a.init = init;
  }
  if (mark.getEpilogue()) {
    a.epilogueRead = absorbableEpilogue(op, init);
    if (!a.epilogueRead)
      return op.emitOpError()
             << "is marked to absorb its epilogue (" << kCUDAAbsorbsAttrName
             << "), but the op after it is not elementwise over its output "
                "reading it once at the element it writes, or the output's "
                "values have other readers";
  }
  return a;
}

/// Whether `v` is a function argument that nothing writes: every use,
/// through views, reads it.
static bool readOnlyArgument(Value v) {
  if (!isa<BlockArgument>(v))
    return false;
  SmallVector<Value> work{v};
  while (!work.empty()) {
    Value cur = work.pop_back_val();
    for (OpOperand &use : cur.getUses()) {
      Operation *user = use.getOwner();
      if (isa<ViewLikeOpInterface>(user)) {
        llvm::append_range(work, user->getResults());
        continue;
      }
      auto dps = dyn_cast<DestinationStyleOpInterface>(user);
      if (dps ? dps.isDpsInit(&use)
              : !isa<memref::LoadOp, memref::DeallocOp, vector::LoadOp>(user))
        return false;
    }
  }
  return true;
}

/// The guarded extension (BodyCloning.h) that wrote `operand` of a
/// contraction, when the loads can compute its values instead: it is the
/// buffer's only writer, nothing but contractions after it in its block
/// (and deallocations) reads the buffer, and its own inputs are function
/// arguments nothing writes (their values at the readers are those it
/// read). Null otherwise. (Layerwise sharing: every layer's E X reads the
/// one masked E; the op and its buffer go with the last of them, see
/// eraseAbsorbed.)
linalg::GenericOp absorbableOperand(OpOperand *operand) {
  Value src = operand->get();
  if (!src.getDefiningOp<memref::AllocOp>())
    return {};
  linalg::GenericOp writer;
  SmallVector<Operation *> readers;
  for (OpOperand &use : src.getUses()) {
    Operation *user = use.getOwner();
    if (isa<memref::DeallocOp>(user))
      continue;
    auto g = dyn_cast<linalg::GenericOp>(user);
    if (g && g.isDpsInput(&use) &&
        linalg::isaContractionOpInterface(
            cast<linalg::LinalgOp>(g.getOperation()))) {
      readers.push_back(g);
      continue;
    }
    if (writer || !g || !cuda::isGuardedExtension(g) ||
        g.getDpsInitOperand(0)->get() != src)
      return {};
    writer = g;
  }
  if (!writer || !writer.hasPureBufferSemantics() ||
      !llvm::all_of(writer.getDpsInputs(), readOnlyArgument) ||
      llvm::any_of(readers, [&](Operation *r) {
        // A reader in a length guard's branch counts where the guard is.
        Operation *at = writer->getBlock()->findAncestorOpInBlock(*r);
        return !at || !writer->isBeforeInBlock(at);
      }))
    return {};
  return writer;
}

/// Whether loop dimension `dim` is `operand`'s innermost (contiguous) one.
bool innermost(linalg::GenericOp op, OpOperand *operand, unsigned dim) {
  AffineMap map = op.getMatchingIndexingMap(operand);
  return map.getNumResults() > 0 &&
         map.getResults().back() == getAffineDimExpr(dim, op.getContext());
}

/// Whether a staged copy of `src` (computed by the absorbed guarded
/// extension `from`, or null: loaded) reads runs of values as vectors: its
/// memref has an identity layout (or `from` clones along a run, see
/// runClonable), and its contiguous dimension is k (`kMajor`) or the
/// buffer's rows (loop dimension `rowDim`).
bool vectorCopy(linalg::GenericOp op, OpOperand *src, linalg::GenericOp from,
                bool kMajor, unsigned rowDim) {
  auto type = cast<MemRefType>(src->get().getType());
  return (from ? cuda::runClonable(from) : type.getLayout().isIdentity()) &&
         (kMajor || innermost(op, src, rowDim));
}

/// The staging of plan `p` in `sharedBytes` with blocks of at most
/// `blockWarps` warps: the most warps (at least 2) whose block tile divides
/// the innermost m and n extents, up to 4 along n (a 2 x 4 block of 64 x 32
/// warp blocks is 128 x 128 of C); then the longest chunk of k values, from
/// `maxChunk` down to 16, that divides a part's k range and fits, and with
/// `prefetch` keeps it (a deeper chunk whose copy a thread cannot hold in
/// registers would lose it), else the longest that fits. None if nothing
/// fits. With `prefetch`, the chunk is double-buffered when both
/// buffers fit and a thread's words are unrolled and at most
/// kMaxPrefetchWords. With `ldmatrix`, A's fragments are read with
/// ldmatrix when its buffer is k-major (16-byte aligned rows: strides and
/// offsets are multiples of 4 words). Words are `wordBytes` bytes (4: a
/// 16-bit pair; 8: an f32 pair). Operand i whose `copyable[i]` holds (it
/// is loaded as it is staged) is copied with cp.async when the chunk is
/// prefetched and its buffer's units are runs: it holds no registers and
/// needs no even share, so only the others count toward the prefetch's
/// limits. When both are, the block keeps `asyncStages` buffers if they
/// fit (else 2).
static Staging stagingFor(linalg::GenericOp op, const Plan &p, int64_t sharedBytes,
                   int64_t blockWarps, int64_t maxChunk, bool prefetch,
                   bool ldmatrix, bool naturalB, int64_t wordBytes,
                   std::array<bool, 2> copyable, int64_t asyncStages) {
  Staging s;
  if (sharedBytes <= 0 || blockWarps < 2)
    return s;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  int64_t mInner = extents[p.mDim] / (kTileM * p.tilesM);
  int64_t nInner = extents[p.nDim] / (kTileN * p.tilesN);
  int64_t best = 1, bestM = 1, bestN = 1;
  for (int64_t wn = std::min<int64_t>(4, blockWarps); wn >= 1; wn /= 2) {
    if (nInner % wn)
      continue;
    SmallVector<int64_t> optM;
    for (int64_t v = blockWarps / wn; v >= 1; v /= 2)
      optM.push_back(v);
    int64_t wm = largestDividing(mInner, optM);
    if (wm * wn > best) {
      best = wm * wn;
      bestM = wm;
      bestN = wn;
    }
  }
  if (best < 2)
    return s;
  int64_t bm = bestM * kTileM * p.tilesM, bn = bestN * kTileN * p.tilesN;
  int64_t kPart = extents[p.kDim] / p.split;
  bool aK = innermost(op, op.getDpsInputOperand(p.aOperand), p.kDim);
  bool bK = innermost(op, op.getDpsInputOperand(p.bOperand), p.kDim);
  // The longest chunk that fits and keeps the prefetch; failing that,
  // the longest that fits.
  std::optional<Staging> unprefetched;
  for (int64_t chunk = maxChunk; chunk >= 16; chunk /= 2) {
    if (kPart % chunk)
      continue;
    StagedBuffer a(aK, bm, chunk, 0);
    StagedBuffer b(bK, bn, chunk, a.words, !bK && naturalB);
    if ((a.words + b.words) * wordBytes > sharedBytes)
      continue;
    s = Staging();
    s.warpsM = bestM;
    s.warpsN = bestN;
    s.chunk = chunk;
    s.a = a;
    s.b = b;
    int64_t threads = bestM * bestN * kWarp;
    bool asyncA = copyable[p.aOperand] && a.runs(),
         asyncB = copyable[p.bOperand] && b.runs();
    int64_t wa = asyncA ? 0 : unrolledWords(a, chunk, threads),
            wb = asyncB ? 0 : unrolledWords(b, chunk, threads);
    s.prefetch = prefetch && (wa || asyncA) && (wb || asyncB) &&
                 wa + wb <= kMaxPrefetchWords &&
                 2 * (a.words + b.words) * wordBytes <= sharedBytes;
    s.a.async = s.prefetch && asyncA;
    s.b.async = s.prefetch && asyncB;
    if (s.a.async && s.b.async &&
        asyncStages * (a.words + b.words) * wordBytes <= sharedBytes)
      s.stages = asyncStages;
    s.ldmatrixA = ldmatrix && a.kMajor;
    if (prefetch && !s.prefetch) {
      if (!unprefetched)
        unprefetched = s;
      continue;
    }
    return s;
  }
  return unprefetched ? *unprefetched : Staging();
}

/// The staging of a wgmma plan `p` (one row tile a warp) whose operands
/// are both copyable (loaded as staged: the caller checks): the block's
/// warps all along m, 4 a warpgroup, both operands copied with cp.async
/// into core-layout buffers (A k-major, B k-major or natural), chunks of
/// 64, 32 or 16 k (the largest that divides and fits `asyncStages`
/// buffers, or two), each copy unit 16 bytes, the buffers swizzled up to
/// `swizzle` bytes (swizzleBuffers); `inFlight` batches left running past
/// a chunk where there are 3 buffers or more. None (warpsM 0) when the
/// contraction does not qualify.
static Staging wgmmaStagingFor(linalg::GenericOp op, const Plan &p,
                               int64_t sharedBytes, int64_t blockWarps,
                               bool naturalB, int64_t asyncStages,
                               int64_t inFlight, int64_t swizzle) {
  Staging s;
  if (sharedBytes <= 0 || p.tilesM != 1)
    return s;
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  int64_t mInner = extents[p.mDim] / kTileM;
  int64_t warps = blockWarps - blockWarps % 4;
  while (warps >= 4 && mInner % warps)
    warps -= 4;
  if (warps < 4)
    return s;
  bool bK = innermost(op, op.getDpsInputOperand(p.bOperand), p.kDim);
  if (!innermost(op, op.getDpsInputOperand(p.aOperand), p.kDim) ||
      (!bK && !naturalB))
    return s;
  int64_t bm = warps * kTileM, bn = kTileN * p.tilesN;
  int64_t kPart = extents[p.kDim] / p.split, threads = warps * kWarp;
  for (int64_t chunk = 64; chunk >= 16; chunk /= 2) {
    if (kPart % chunk)
      continue;
    Staging t;
    t.a = StagedBuffer(true, bm, chunk, 0, false, /*core=*/true);
    t.b = StagedBuffer(bK, bn, chunk, t.a.words, !bK, /*core=*/true);
    t.a.async = t.b.async = true;
    swizzleBuffers(t, swizzle);
    const StagedBuffer &a = t.a, &b = t.b;
    int64_t bytes = (a.words + b.words) * 4;
    int64_t stages = asyncStages * bytes <= sharedBytes ? asyncStages : 2;
    if (stages * bytes > sharedBytes || copyWidth(a, chunk, threads, 2) != 4 ||
        copyWidth(b, chunk, threads, 2) != 4)
      continue;
    s.warpsM = warps;
    s.warpsN = 1;
    s.chunk = chunk;
    s.a = a;
    s.b = b;
    s.swizzle = t.swizzle;
    s.prefetch = true;
    s.stages = stages;
    s.wgmma = true;
    s.inFlight = stages >= 3 ? inFlight : 0;
    return s;
  }
  return s;
}

/// Whether operand `i` of `op` is copied into a staged buffer as it is
/// loaded: a buffer of the operand type with an identity layout, not
/// computed by an absorbed extension (`from`).
static bool loadedAsStaged(linalg::GenericOp op, unsigned i,
                           linalg::GenericOp from, StringRef precision) {
  auto type = cast<MemRefType>(op.getDpsInputOperand(i)->get().getType());
  return !from && type.getLayout().isIdentity() &&
         type.getElementType() == mmaOperandType(op.getContext(), precision);
}

std::string contractionKey(linalg::GenericOp op) {
  std::string key = "contraction/";
  llvm::raw_string_ostream os(key);
  for (utils::IteratorType it : op.getIteratorTypesArray())
    os << (it == utils::IteratorType::reduction ? 'R' : 'p');
  os << '/';
  llvm::interleave(op.getStaticLoopRanges(), os, "x");
  os << '/';
  for (AffineMap map : op.getIndexingMapsArray()) {
    os << '(';
    llvm::interleave(map.getResults(), os, ",");
    os << ')';
  }
  os << '/';
  llvm::interleave(op.getDpsInputs(), os,
                   [&](Value v) {
                     os << cast<MemRefType>(v.getType()).getElementType();
                   },
                   ",");
  return key;
}

LogicalResult
readCUDAScheduleFile(Location loc, StringRef path,
                     std::map<std::string, ScheduleFileRecord> &out) {
  auto fail = [&](const Twine &what) {
    return emitError(loc) << path << ": " << what;
  };
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return fail("cannot be read: " + buffer.getError().message());
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return fail("not valid JSON: " + llvm::toString(json.takeError()));
  const llvm::json::Object *top = json->getAsObject();
  std::optional<StringRef> format =
      top ? top->getString("format") : std::nullopt;
  if (!format || *format != kCUDAScheduleFormat)
    return fail(Twine("not a CUDA schedule file ('format' must be \"") +
                kCUDAScheduleFormat +
                "\", as linformer-compile --target=cuda --print-schedule "
                "writes it)");
  const llvm::json::Array *kernels = top->getArray("kernels");
  if (!kernels)
    return fail("'kernels' must be an array");
  for (auto [i, k] : llvm::enumerate(*kernels)) {
    std::string where = "kernels[" + std::to_string(i) + "]";
    const llvm::json::Object *record = k.getAsObject();
    std::optional<StringRef> key =
        record ? record->getString("key") : std::nullopt;
    std::optional<StringRef> text =
        record ? record->getString("schedule") : std::nullopt;
    if (!key || !text)
      return fail(where + ": 'key' and 'schedule' (strings) are required");
    // Parsed (and verified) as the attribute it prints as; the dialect's
    // words say what is wrong with it.
    Attribute a = parseAttribute(*text, loc.getContext());
    bool core = key->starts_with("attention_core/");
    if (!(core ? isa_and_nonnull<CUDACoreScheduleAttr,
                                 CUDAF32CoreScheduleAttr>(a)
               : isa_and_nonnull<CUDAScheduleAttr>(a)))
      return fail(where + ": 'schedule' is not a " +
                  (core ? "#linformer.cuda_core_schedule or "
                          "#linformer.cuda_f32_core_schedule"
                        : "#linformer.cuda_schedule") +
                  ": " + *text);
    ScheduleFileRecord r{a, i, false, {}};
    // Optional: [[T, S], ...], a contraction's split-K for shorter runs.
    if (const llvm::json::Value *v = record->get("length_splits")) {
      const llvm::json::Array *pairs = v->getAsArray();
      if (!pairs || core)
        return fail(where + ": 'length_splits' must be an array of [T, S] "
                            "pairs, on a contraction");
      for (const llvm::json::Value &pv : *pairs) {
        const llvm::json::Array *pair = pv.getAsArray();
        std::optional<int64_t> t, s;
        if (pair && pair->size() == 2) {
          t = (*pair)[0].getAsInteger();
          s = (*pair)[1].getAsInteger();
        }
        if (!t || !s)
          return fail(where + ": 'length_splits' must be an array of "
                              "[T, S] pairs of integers");
        r.lengthSplits.append({*t, *s});
      }
    }
    out[key->str()] = std::move(r);
  }
  return success();
}

void warnUnusedRecords(
    Location loc, StringRef path, StringRef fn, StringRef prefix,
    const std::map<std::string, ScheduleFileRecord> &records) {
  for (auto &[key, r] : records)
    if (!r.used && StringRef(key).starts_with(prefix))
      emitWarning(loc) << path << ", kernels[" << r.index << "]: no "
                       << prefix.drop_back() << " of @" << fn
                       << " has the key '" << key << "'";
}

DictionaryAttr scheduleRecord(MLIRContext *ctx, StringRef key,
                              Attribute schedule, StringRef source,
                              ArrayRef<int64_t> lengthSplits) {
  Builder b(ctx);
  SmallVector<NamedAttribute> fields = {
      b.getNamedAttr("key", b.getStringAttr(key)),
      b.getNamedAttr("schedule", schedule),
      b.getNamedAttr("source", b.getStringAttr(source))};
  if (!lengthSplits.empty())
    fields.push_back(b.getNamedAttr("length_splits",
                                    b.getDenseI64ArrayAttr(lengthSplits)));
  return b.getDictionaryAttr(fields);
}

void appendScheduleRecords(Operation *fn, ArrayRef<Attribute> records) {
  if (records.empty())
    return;
  SmallVector<Attribute> all;
  if (auto old = fn->getAttrOfType<ArrayAttr>(kCUDASchedulesAttrName))
    llvm::append_range(all, old.getValue());
  llvm::append_range(all, records);
  fn->setAttr(kCUDASchedulesAttrName, ArrayAttr::get(fn->getContext(), all));
}

bool eraseIfUnused(RewriterBase &rewriter, Value buffer) {
  auto alloc = buffer.getDefiningOp<memref::AllocOp>();
  if (!alloc || !llvm::all_of(alloc->getUsers(), [](Operation *user) {
        return isa<memref::DeallocOp>(user);
      }))
    return false;
  for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
    rewriter.eraseOp(user);
  rewriter.eraseOp(alloc);
  return true;
}

LogicalResult checkPrecision(Operation *op, StringRef precision) {
  if (llvm::is_contained({"tf32", "tf32x3", "bf16", "f16", "f32"}, precision))
    return success();
  return op->emitError()
         << "precision '" << precision
         << "' is not one the warp tiles have (tf32: m16n8k4 on f32 data "
            "with TF32 products; tf32x3: the same on each operand's TF32 "
            "head and tail, three products a pair; bf16 or f16: m16n8k16 on "
            "operands rounded to that type; all accumulate in f32; f32: "
            "staged f32 pairs multiplied by each lane with fma, no tensor "
            "cores)";
}

FailureOr<Plan> selectPlan(linalg::GenericOp op, const SelectionOptions &o) {
  FailureOr<Plan> p =
      planFor(op, o.tileK(), o.warpTilesM, o.warpTilesN, o.splitKWarps);
  if (failed(p))
    return failure();
  for (unsigned i = 0; i < 2; ++i)
    p->operandFrom[i] = absorbableOperand(op.getDpsInputOperand(i));
  // B's buffer is natural (ldmatrix.trans) when its copy reads runs
  // along the rows (exact emulation: f32 pairs along the rows, read
  // where ldmatrix.trans would deliver them).
  bool naturalB = o.ldmatrixTrans && !o.simt() && !o.tf32() &&
                  vectorCopy(op, op.getDpsInputOperand(p->bOperand),
                             p->operandFrom[p->bOperand], false, p->nDim);
  // An operand is copied as it is loaded (cp.async) when its words
  // are two of its own values: a 16-bit buffer of the operand type,
  // read as it is (no absorbed extension) along a contiguous run.
  std::array<bool, 2> copyable = {false, false};
  for (unsigned i = 0; i < 2; ++i)
    copyable[i] = o.asyncCopy && !o.f32Words() && !o.tf32() &&
                  loadedAsStaged(op, i, p->operandFrom[i], o.precision);
  // wgmma: the contraction planned again as one row tile a warp by up
  // to wgmmaTileN / 8 column tiles (64 x 128 a warpgroup by default),
  // when both operands go by cp.async into core-layout buffers.
  if (o.wgmma && copyable[0] && copyable[1]) {
    FailureOr<Plan> w =
        planFor(op, o.tileK(), 1, o.wgmmaTileN / kTileN, o.splitKWarps);
    if (succeeded(w)) {
      w->operandFrom = p->operandFrom;
      OpOperand *bIn = op.getDpsInputOperand(w->bOperand);
      bool natural =
          vectorCopy(op, bIn, w->operandFrom[w->bOperand], false, w->nDim);
      w->staging =
          wgmmaStagingFor(op, *w, o.sharedBytes, o.blockWarps, natural,
                          o.asyncStages, o.wgmmaInFlight, o.wgmmaSwizzle);
      if (w->staging.wgmma)
        p = w;
    }
  }
  // Staged words hold two 16-bit operands, or two f32 ones (SIMT, TF32,
  // exact emulation; ldmatrix moves 16-bit ones only).
  if (!p->staging.wgmma)
    p->staging =
        stagingFor(op, *p, o.sharedBytes, o.blockWarps, o.chunkK, o.prefetch,
                   o.ldmatrix && !o.simt() && !o.tf32(), naturalB,
                   o.f32Words() ? 8 : 4, copyable, o.asyncStages);
  // SIMT has no unstaged warp tiles: the plain path keeps the rest.
  if (o.simt() && !p->staging.warpsM)
    return failure();
  // Set on the plan kept (the wgmma one replaces the first above).
  p->pairStores = o.pairStores;
  return p;
}

CUDAScheduleAttr scheduleOf(MLIRContext *ctx, const Plan &p) {
  const Staging &s = p.staging;
  return CUDAScheduleAttr::get(ctx, p.tilesM, p.tilesN, p.split, s.warpsM,
                               s.warpsN, s.chunk, s.buffers(), s.a.async,
                               s.b.async, s.b.natural, s.ldmatrixA, s.wgmma,
                               s.inFlight, s.swizzle, p.pairStores);
}

FailureOr<Plan> planOf(linalg::GenericOp op, CUDAScheduleAttr schedule,
                       StringRef precision, bool exact, std::string &why) {
  llvm::raw_string_ostream os(why);
  int64_t tileK = mmaDepth(precision);
  int64_t MT = schedule.getTilesM(), NT = schedule.getTilesN();
  FailureOr<Plan> p = planFor(op, tileK, MT, NT, /*splitWarps=*/0);
  if (failed(p)) {
    os << "it is not a contraction the warp tiles map (f32 C, innermost m, "
          "n and k extents in whole 16 x 8 x "
       << tileK << " tiles, the tiles within a grid dimension)";
    return failure();
  }
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  if (p->tilesM != MT || p->tilesN != NT) {
    os << "warp_tiles [" << MT << ", " << NT << "] do not divide its "
       << extents[p->mDim] / kTileM << " x " << extents[p->nDim] / kTileN
       << " mma tiles";
    return failure();
  }
  int64_t split = schedule.getSplit(),
          steps = extents[p->kDim] / tileK;
  if (split > 1 && (!p->outerK.empty() || steps % split ||
                    p->rows * split > 65535)) {
    os << "split " << split << " does not divide its " << steps
       << " k steps into parts of one reduction dimension within a grid "
          "dimension";
    return failure();
  }
  p->split = split;
  p->pairStores = schedule.getPairStores();
  for (unsigned i = 0; i < 2; ++i)
    p->operandFrom[i] = absorbableOperand(op.getDpsInputOperand(i));
  if (!schedule.staged())
    return p;
  Staging &s = p->staging;
  s.warpsM = schedule.getWarpsM();
  s.warpsN = schedule.getWarpsN();
  s.chunk = schedule.getChunk();
  s.wgmma = schedule.getWgmma();
  if (s.wgmma && (exact || precision == "f32")) {
    os << "wgmma multiplies 16-bit operands, and "
       << (exact ? "exact emulation stages f32 ones" : "f32 stages f32 ones")
       << " (a schedule with wgmma = true needs bf16 or f16, not exact)";
    return failure();
  }
  s.ldmatrixA = schedule.getLdmatrixA();
  if (isTF32(precision) && (s.wgmma || s.ldmatrixA || schedule.getNaturalB())) {
    os << "TF32 stages f32 pairs, which wgmma, ldmatrix_a and natural_b "
          "(ldmatrix.trans) do not read (a staged TF32 schedule has them "
          "false)";
    return failure();
  }
  s.inFlight = schedule.getInFlight();
  s.prefetch = schedule.getBuffers() >= 2;
  s.stages = s.prefetch ? schedule.getBuffers() : 2;
  int64_t bm = s.warpsM * kTileM * p->tilesM,
          bn = s.warpsN * kTileN * p->tilesN;
  int64_t kPart = extents[p->kDim] / split;
  if (extents[p->mDim] % bm || extents[p->nDim] % bn || kPart % s.chunk) {
    os << "its block tile " << bm << " x " << bn << " and chunk " << s.chunk
       << " do not divide its innermost m, n and k extents "
       << extents[p->mDim] << ", " << extents[p->nDim] << " and " << kPart;
    return failure();
  }
  bool aK = innermost(op, op.getDpsInputOperand(p->aOperand), p->kDim);
  bool bK = innermost(op, op.getDpsInputOperand(p->bOperand), p->kDim);
  bool natural = schedule.getNaturalB();
  if (natural == bK && (s.wgmma || natural)) {
    os << (natural ? "natural_b needs a B whose contiguous dimension is not k"
                   : "wgmma needs B k-major or natural");
    return failure();
  }
  if ((s.wgmma || s.ldmatrixA) && !aK) {
    os << "wgmma and ldmatrix_a need an A whose contiguous dimension is k";
    return failure();
  }
  s.a = StagedBuffer(aK, bm, s.chunk, 0, false, s.wgmma);
  s.b = StagedBuffer(bK, bn, s.chunk, s.a.words, natural, s.wgmma);
  swizzleBuffers(s, schedule.getSwizzle());
  if (s.swizzle != schedule.getSwizzle()) {
    os << "swizzle " << schedule.getSwizzle() << " fits neither operand's "
       << "lines (" << s.a.lineBytes() << " and " << s.b.lineBytes()
       << " bytes: a swizzle of 32 bytes or more must divide them)";
    return failure();
  }
  std::array<bool, 2> async = {schedule.getAsyncA(), schedule.getAsyncB()};
  for (unsigned i = 0; i < 2; ++i) {
    if (!async[i])
      continue;
    const StagedBuffer &buf = i == p->aOperand ? s.a : s.b;
    if (exact || precision == "f32" || isTF32(precision) || !buf.runs() ||
        !loadedAsStaged(op, i, p->operandFrom[i], precision)) {
      os << "operand " << i << " cannot be copied with cp.async (that takes "
         << "a 16-bit " << precision
         << " buffer with an identity layout, read as it is along a "
            "contiguous run)";
      return failure();
    }
  }
  s.a.async = async[p->aOperand];
  s.b.async = async[p->bOperand];
  // What the copies take: wgmma's core layouts 16-byte units; a
  // register prefetch unrolled words within its budget.
  int64_t threads = s.warpsM * s.warpsN * kWarp;
  if (s.wgmma && (copyWidth(s.a, s.chunk, threads, 2) != 4 ||
                  copyWidth(s.b, s.chunk, threads, 2) != 4)) {
    os << "wgmma's copies of a " << bm << " x " << bn << " block tile and "
       << "chunk " << s.chunk << " do not split into 16-byte units for "
       << threads << " threads";
    return failure();
  }
  if (s.prefetch && !s.wgmma) {
    int64_t words = 0;
    for (const StagedBuffer *buf : {&s.a, &s.b}) {
      if (buf->async)
        continue;
      int64_t w = unrolledWords(*buf, s.chunk, threads);
      if (!w) {
        os << "a prefetched chunk of " << s.chunk << " k values does not "
           << "split evenly over " << threads << " threads";
        return failure();
      }
      words += w;
    }
    if (words > kMaxPrefetchWords) {
      os << "a thread would prefetch " << words << " words a chunk (at most "
         << kMaxPrefetchWords << ")";
      return failure();
    }
  }
  return p;
}

} // namespace mlir::linformer::cuda
