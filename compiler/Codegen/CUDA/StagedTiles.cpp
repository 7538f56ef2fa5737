//===- StagedTiles.cpp - a tensor-core contraction's staged blocks -*- C++
//-*-===//
//
// The staged warp tiles (see WarpTiles.h): a block's warps share their
// operands through shared memory, copied a chunk at a time (through
// registers or with cp.async, prefetched ahead), and run each chunk's
// mma.sync or wgmma steps, or their emulation on the host.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/BodyCloning.h"
#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Codegen/CUDA/WarpTiles.h"
#include "compiler/Conversion/LinalgBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

using namespace mlir;
namespace cuda = mlir::linformer::cuda;
using cuda::clonableBody;
using cuda::cloneBody;
using cuda::copyWidth;
using cuda::delinearize;
using cuda::evenShare;
using cuda::initialAccs;
using cuda::innermost;
using cuda::kTileM;
using cuda::kTileN;
using cuda::kWarp;
using cuda::loadOperand;
using cuda::neighbour;
using cuda::operandIndices;
using cuda::Plan;
using cuda::StagedBuffer;
using cuda::Staging;
using cuda::storeAccs;
using cuda::TileElement;
using cuda::unrolledWords;
using cuda::updateElements;
using cuda::vectorCopy;
using cuda::WarpTileOptions;

namespace {

/// The code of one staged contraction (see emitStagedTiles), a method a
/// step:
/// the index arithmetic of a lane's fragments, the operands' copies into
/// the block's buffer, a chunk's products (mma.sync, wgmma or per lane),
/// and the k loop in its three forms (software-pipelined and plain, on
/// the GPU and on the host; phase by phase where the host cannot run the
/// GPU's code, see `replay`). block() emits one block's code, emit() the
/// loop over blocks.
struct StagedTiles {
  StagedTiles(const WarpTileOptions &o, IRRewriter &rewriter,
              linalg::GenericOp op, const Plan &p, Value partials,
              Value counters)
      : o(o), op(op), p(p), partials(partials), counters(counters),
        loc(op.getLoc()), ctx(op.getContext()),
        extents(op.getStaticLoopRanges()), s(p.staging), precision(o.precision),
        replay(cuda::hostReplays(o.emulate, o.exact)) {
    MT = p.tilesM, NT = p.tilesN, WN = s.warpsN;
    warps = s.warpsM * WN, threadCount = warps * kWarp;
    BM = s.warpsM * kTileM * MT, BN = WN * kTileN * NT;
    BK = s.chunk;
    blockRows = p.blockRows(), blockCols = p.blockCols();
    zero = c(rewriter, 0), one = c(rewriter, 1);
    f32 = rewriter.getF32Type();
    accType = VectorType::get({2, 2}, f32);
    word = cuda::stagedWordType(ctx, f32Words());
    aOp = op.getDpsInputOperand(p.aOperand);
    bOp = op.getDpsInputOperand(p.bOperand);
    rank = op.getNumLoops();
    // The length rule: where C's rows are one sequence's tokens (its
    // batch loop the only folded row dimension, its token loop the
    // innermost m), block x enumerates (sequence, tile of BM tokens,
    // part, block column), row-major: the blocks past a sequence's length
    // only compute its padding, and a prefix of block x holds the real
    // tokens. Otherwise parts go outermost.
    tokenRows = cuda::rowsAreTokens(op, p) &&
                blockRows == extents[p.rowDims[0]] * (extents[p.mDim] / BM);
    async = s.a.async || s.b.async;
    words = s.a.words + s.b.words;
  }

  const WarpTileOptions &o;
  linalg::GenericOp op;
  const Plan &p;
  Value partials;
  /// With split-K summed in the kernel (see sumParts): a counter a block
  /// tile, of the parts that have stored their sums.
  Value counters;
  Location loc;
  MLIRContext *ctx;
  SmallVector<int64_t> extents;
  const Staging &s;
  std::string precision;
  /// The host runs the k loop phase by phase, each phase its own loop over
  /// the threads (emulated()), instead of the GPU's code (hostReplays).
  bool replay;
  int64_t MT, NT, WN, warps, threadCount, BM, BN, BK, blockRows, blockCols;
  Value zero, one;
  Type f32, word;
  VectorType accType;
  OpOperand *aOp, *bOp;
  unsigned rank;
  bool tokenRows;
  /// Whether an operand is copied with cp.async.
  bool async;
  /// Words of the block's buffer (A's and B's chunk).
  int64_t words;
  /// The block's (set by block()): the loop indices of the element at
  /// hand, the block tile's first row and column, the split-K part (none
  /// without split-K), the tile's index among the block tiles (its
  /// counter's), the k loop's chunks and the last one's index.
  SmallVector<Value> iv;
  Value mBase, nBase, part, tile;
  int64_t kPart = 0, inner = 0, chunks = 0;
  Value last;
  /// E X (`linformer.token_bound`, the token loop k, the batch loop one of
  /// the block's folded dims): the chunks at or past the block's
  /// sequence length only add zeros (E' is zero there), so the block's
  /// part computes the chunks up to that length's (see chunkCount). The
  /// function's lengths argument and the batch loop where that holds;
  /// null otherwise (set by block()).
  BlockArgument boundLengths;
  unsigned boundBatch = 0;

  void findTokenBound() {
    auto bound = op->getAttrOfType<mlir::linformer::TokenBoundAttr>(
        mlir::linformer::kTokenBoundAttrName);
    if (!bound || bound.hasParts() || bound.getPerStep() != 1 ||
        bound.getToken() != int64_t(p.kDim) || !p.outerK.empty())
      return;
    unsigned batch = unsigned(bound.getBatch());
    if (!llvm::is_contained(p.rowDims, batch) &&
        !llvm::is_contained(p.colDims, batch))
      return;
    boundBatch = batch;
    boundLengths = mlir::linformer::markedLengthsArgument(
        op->getParentOfType<func::FuncOp>());
  }

  /// The k loop's trip count: every chunk, or with a token bound
  /// ceil((L - start) / BK) clamped to [0, chunks], L the block's
  /// sequence length and `start` its part's first token. (On the GPU it
  /// is computed by each thread: the block loop's own body may hold no
  /// memory access.)
  Value chunkCount(OpBuilder &b) {
    if (!boundLengths)
      return c(b, chunks);
    Value length = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, boundLengths,
                               ValueRange{iv[boundBatch]}));
    if (part)
      length = arith::SubIOp::create(b, loc, length, mul(b, part, kPart));
    Value n = arith::CeilDivSIOp::create(b, loc, length, c(b, BK));
    n = arith::MaxSIOp::create(b, loc, n, zero);
    return arith::MinSIOp::create(b, loc, n, c(b, chunks));
  }

  /// The last chunk's index, of a loop of `count` chunks (unused when
  /// there are none).
  Value lastOf(OpBuilder &b, Value count) {
    if (!boundLengths)
      return last;
    return arith::SubIOp::create(b, loc, count, one);
  }

  bool simt() const { return o.simt(); }
  bool f32Words() const { return o.f32Words(); }

  Value c(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value add(OpBuilder &b, Value x, int64_t v) {
    return arith::AddIOp::create(b, loc, x, c(b, v));
  }
  Value addV(OpBuilder &b, Value x, Value y) {
    return arith::AddIOp::create(b, loc, x, y);
  }
  Value mul(OpBuilder &b, Value x, int64_t v) {
    return arith::MulIOp::create(b, loc, x, c(b, v));
  }
  Value div(OpBuilder &b, Value x, int64_t v) {
    return arith::DivUIOp::create(b, loc, x, c(b, v));
  }
  Value rem(OpBuilder &b, Value x, int64_t v) {
    return arith::RemUIOp::create(b, loc, x, c(b, v));
  }

  /// A thread's place: warp (wm, wn) of the block, lane (g, t).
  struct Lane {
    Value tid, wm, wn, lane, g, t;
  };
  auto laneOf(OpBuilder &b, Value w, Value lane) {
    return Lane{addV(b, mul(b, w, kWarp), lane),
                div(b, w, WN),
                rem(b, w, WN),
                lane,
                div(b, lane, 4),
                rem(b, lane, 4)};
  }
  /// Within the block tile: C's row of tile i, half h; C's column of
  /// tile j, element o; the column of B fragment j.
  auto rowIn(OpBuilder &b, const Lane &l, int64_t i, int64_t h) {
    return add(b, addV(b, mul(b, l.wm, kTileM * MT), l.g), i * kTileM + h * 8);
  }
  auto colIn(OpBuilder &b, const Lane &l, int64_t j, int64_t o) {
    return add(b, addV(b, mul(b, l.wn, kTileN * NT), mul(b, l.t, 2)),
               j * kTileN + o);
  }
  auto bColIn(OpBuilder &b, const Lane &l, int64_t j) {
    return add(b, addV(b, mul(b, l.wn, kTileN * NT), l.g), j * kTileN);
  }
  auto cAt(OpBuilder &b, const Lane &l, int64_t i, int64_t h, int64_t j,
           int64_t o) {
    iv[p.mDim] = addV(b, mBase, rowIn(b, l, i, h));
    iv[p.nDim] = addV(b, nBase, colIn(b, l, j, o));
    return SmallVector<Value>(iv);
  }
  /// The accumulators start as C (or zero for a part's sums) and end
  /// in C (or the part's sums).
  auto initAccs(OpBuilder &b, const Lane &l) {
    return initialAccs(
        b, loc, op, MT, NT, bool(part),
        [&](int64_t i, int64_t h, int64_t j, int64_t o) {
          return cAt(b, l, i, h, j, o);
        },
        p.initFrom);
  }
  auto finishAccs(OpBuilder &b, const Lane &l, ValueRange accs) {
    storeAccs(
        b, loc, op, p, accs, MT, NT,
        [&](int64_t i, int64_t h, int64_t j, int64_t o) {
          return cAt(b, l, i, h, j, o);
        },
        partials, part);
  }
  /// Split-K summed in the kernel: once every thread of the block has
  /// stored its part's sums (and no copy into `smem` is in flight), thread
  /// 0 counts the part in the tile's counter, an atomic add; the block
  /// that counts the last part adds the tile's parts to C in part order
  /// (the separate sums loop's order: the same values), through the
  /// epilogue, and sets the counter back to zero for the next launch
  /// (the CUDA runtime zeroes intermediates once, at session set-up; the
  /// host's emulation zeroes them before each launch). GPU-scope fences
  /// (membar.gl): each thread's after its stores, before the barrier that
  /// precedes thread 0's count (release: the barrier orders the block's
  /// stores before the atomic); thread 0's right after the count, before
  /// the barrier that hands its verdict to the block (acquire); and each
  /// thread's of the last block again before it reads the other parts'
  /// sums. CUTLASS's split-K semaphore and the CUDA samples' threadfence
  /// reduction are the same pattern. Thread 0's verdict reaches the block
  /// through word 0 of `smem`. A tile's parts are blocks of one launch, so the
  /// last one to count always comes (none waits for another).
  void sumParts(OpBuilder &b, const Lane &l, Value smem) {
    if (!counters)
      return;
    Type i32 = b.getI32Type();
    auto i32c = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i32, v);
    };
    if (async) {
      // Copies past the last chunk (the last again) may still be landing.
      waitCopies(b, commitCopies(b), 0);
    }
    NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
    gpu::BarrierOp::create(b, loc);
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, l.tid, zero);
    auto counting = scf::IfOp::create(b, loc, first, /*withElseRegion=*/false);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(counting.thenYield());
      Value before =
          memref::AtomicRMWOp::create(b, loc, arith::AtomicRMWKind::addi,
                                      i32c(b, 1), counters, ValueRange{tile});
      // What the count saw: the parts before it, published.
      NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
      Value lastPart = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq,
                                             before, i32c(b, p.split - 1));
      auto reset = scf::IfOp::create(b, loc, lastPart, false);
      b.setInsertionPoint(reset.thenYield());
      memref::StoreOp::create(b, loc, i32c(b, 0), counters, ValueRange{tile});
      b.setInsertionPoint(counting.thenYield());
      memref::StoreOp::create(b, loc,
                              arith::ExtUIOp::create(b, loc, word, lastPart),
                              smem, ValueRange{zero});
    }
    gpu::BarrierOp::create(b, loc);
    Value verdict = memref::LoadOp::create(b, loc, smem, ValueRange{zero});
    Value isLast =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ne, verdict,
                              arith::ConstantIntOp::create(b, loc, word, 0));
    auto summing = scf::IfOp::create(b, loc, isLast, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPoint(summing.thenYield());
    NVVM::MembarOp::create(b, loc, NVVM::MemScopeKind::GPU);
    // The tile's elements, thread t taking t, t + threads, ...: a warp's
    // 32 consecutive columns of a row.
    scf::ForOp::create(
        b, loc, l.tid, c(b, BM * BN), c(b, threadCount), ValueRange{},
        [&](OpBuilder &b, Location loc, Value e, ValueRange) {
          SmallVector<Value> at(iv);
          at[p.kDim] = zero;
          at[p.mDim] = addV(b, mBase, div(b, e, BN));
          at[p.nDim] = addV(b, nBase, rem(b, e, BN));
          cuda::storeSumOfParts(
              b, loc, op, p, partials,
              cuda::operandIndices(op, op.getDpsInitOperand(0), at));
          scf::YieldOp::create(b, loc);
        });
  }
  /// Word `at` of line `l` of a staged operand, in the buffer at
  /// word `off` (none: the first).
  auto lineIndex(OpBuilder &b, const StagedBuffer &buf, Value l, Value at,
                 Value off) {
    Value w;
    if (buf.swizzle)
      w = cuda::swizzledCoreWord(b, loc, l, at, buf.lines, buf.swizzle);
    else if (buf.core)
      w = cuda::coreWord(b, loc, l, at, buf.line);
    else
      w = addV(b, mul(b, l, buf.stride), at);
    w = add(b, w, buf.base);
    return off ? addV(b, w, off) : w;
  }
  /// Word (r, pair) of a k-major or pair-major staged operand.
  auto wordIndex(OpBuilder &b, const StagedBuffer &buf, Value r, Value pair,
                 Value off) {
    return buf.kMajor ? lineIndex(b, buf, r, pair, off)
                      : lineIndex(b, buf, pair, r, off);
  }
  auto wordAt(OpBuilder &b, Value smem, const StagedBuffer &buf, Value r,
              Value pair, Value off) {
    return memref::LoadOp::create(b, loc, smem, wordIndex(b, buf, r, pair, off))
        .getResult();
  }
  /// ldmatrix.trans from B's natural buffer (see
  /// cuda::ldmatrixOperands) at the k step from k value `k0`, x4
  /// for column tiles j, j + 1 (registers b0, b1 of each) or x2 for
  /// tile j: the matrices are the tile's k rows 0-7 and 8-15 (8
  /// columns, 4 words each), then the next tile's: lane L points
  /// at k row k0 + L % 16 of tile j + L / 16 (an x2 ignores lanes
  /// 16-31).
  auto bMatrixRow(OpBuilder &b, const Lane &l, Value lane, int64_t j, Value k0,
                  Value off) {
    Value w = addV(b, mul(b, l.wn, kTileN * NT / 2),
                   mul(b, add(b, div(b, lane, 16), j), kTileN / 2));
    return lineIndex(b, s.b, addV(b, k0, rem(b, lane, 16)), w, off);
  }
  /// ldmatrix.x4 (see cuda::ldmatrixOperands): for A tile i at the
  /// k step from `pair0` the matrices are its rows 0-7 and 8-15 at
  /// pairs 0-3, then at pairs 4-7 (registers a0 .. a3): lane L
  /// points at row L % 16, pair L / 16 * 4.
  auto aMatrixRow(OpBuilder &b, const Lane &l, Value lane, int64_t i,
                  Value pair0, Value off) {
    Value row = addV(b, mul(b, l.wm, kTileM * MT), rem(b, lane, 16));
    Value pair = addV(b, pair0, mul(b, div(b, lane, 16), 4));
    return wordIndex(b, s.a, add(b, row, i * kTileM), pair, off);
  }
  /// The staged word lane l's C elements take from A tile i's row
  /// g + 8h at `pair`, as the mma gets it from the lane holding it:
  /// read with ldmatrix, word pair % 4 of the row that lane 8q + g
  /// pointed register q at (emulation checks those addresses).
  auto aWord(OpBuilder &b, const Lane &l, Value smem, int64_t i, int64_t h,
             Value pair, Value off) {
    if (!s.ldmatrixA)
      return wordAt(b, smem, s.a, rowIn(b, l, i, h), pair, off);
    Value q = add(b, mul(b, div(b, rem(b, pair, 8), 4), 2), h);
    Value row = aMatrixRow(b, l, addV(b, mul(b, q, 8), l.g), i,
                           mul(b, div(b, pair, 8), 8), off);
    return memref::LoadOp::create(b, loc, smem, addV(b, row, rem(b, pair, 4)))
        .getResult();
  }
  /// The copied operands: A's rows from mBase, B's columns from
  /// nBase, `units` units a chunk of `vw` words each: consecutive
  /// pairs of a row (k-major) or the same pair of consecutive rows.
  /// Thread tid takes every threadCount-th unit, A's then B's:
  /// consecutive threads read consecutive addresses along the
  /// operand's contiguous dim. An operand with an identity layout
  /// whose contiguous dim is k or the rows is loaded in vectors: a
  /// k-major unit as one of 2 vw values, any other as two of vw (the
  /// pair's two k rows), at most 16 bytes, aligned (the innermost
  /// extent is a multiple of the block tile and of the chunk;
  /// buffers are at least 16-byte aligned: the runtime checks the
  /// caller's device pointers). Its vw words are stored as one
  /// vector too (aligned: strides and offsets are multiples of 4
  /// words). An operand whose guarded extension the plan absorbed
  /// is computed the same way from that op's inputs, each loaded
  /// once a unit: one along the same contiguous dim as a vector
  /// (E, a mask; vw from the widest of them), any other as a scalar
  /// (the lengths).
  struct Copied {
    OpOperand *src;
    const StagedBuffer *buf;
    unsigned rowDim;
    Value base;
    int64_t vw, units;
    int64_t perThread; ///< units a thread; 0 unless unrolled
    bool vector;       ///< loaded in vectors
    /// Copied with cp.async (see StagedBuffer::async): not part of
    /// the register prefetch.
    bool async() const { return buf->async; }
    /// Units a thread carries in registers when prefetching.
    int64_t held() const { return async() ? 0 : perThread; }
    /// Loaded values a unit: one vector (a run), or two.
    size_t raws() const { return vector && buf->runs() ? 1 : 2; }
  };
  /// A's and B's (set by block()).
  SmallVector<Copied, 2> copies;
  auto copied(OpOperand *src, const StagedBuffer &buf, unsigned rowDim,
              Value base) {
    auto type = cast<MemRefType>(src->get().getType());
    linalg::GenericOp from = p.operandFrom[src->getOperandNumber()];
    bool vector = vectorCopy(op, src, from, buf.kMajor, rowDim);
    int64_t bytes = from ? cuda::runElementBytes(from)
                         : type.getElementType().getIntOrFloatBitWidth() / 8;
    int64_t vw = vector ? copyWidth(buf, BK, threadCount, bytes) : 1;
    assert((!buf.core || vw == 4) && "core layouts copy 16 bytes");
    int64_t units = buf.rows * (BK / 2) / vw;
    return Copied{src,
                  &buf,
                  rowDim,
                  base,
                  vw,
                  units,
                  evenShare(units, threadCount),
                  vector && (buf.runs() || vw > 1)};
  }
  /// Unit `u` of an operand's chunk: its line and (first) word. In
  /// an unswizzled core layout (16-byte units) the units go core
  /// matrix by core matrix: unit u is line u % 8 of its group of 8
  /// lines, at the line's unit (u / 8) % (line / 4), so it lands at
  /// words 4u .. 4u + 3 (8 threads' stores one contiguous 128 bytes,
  /// their loads 16 bytes of 8 lines). Otherwise along the lines: 8
  /// threads load 128 contiguous bytes and, swizzled, store them to 8
  /// distinct bank groups.
  auto place(OpBuilder &b, const Copied &cp, Value u)
      -> std::pair<Value, Value> {
    int64_t perLine = cp.buf->line / cp.vw;
    if (cp.buf->core && !cp.buf->swizzle)
      return {addV(b, rem(b, u, 8), mul(b, div(b, u, 8 * perLine), 8)),
              mul(b, rem(b, div(b, u, 8), perLine), 4)};
    return {div(b, u, perLine), mul(b, rem(b, u, perLine), cp.vw)};
  }
  /// Points iv at its first row and k value in the chunk at k0 (iv
  /// holds the outer k indices).
  auto aim(OpBuilder &b, const Copied &cp, Value u, Value k0) {
    const StagedBuffer &buf = *cp.buf;
    auto [l, at] = place(b, cp, u);
    Value r = buf.kMajor ? l : buf.natural ? mul(b, at, 2) : at;
    Value k = buf.kMajor ? mul(b, at, 2) : buf.natural ? l : mul(b, l, 2);
    iv[cp.rowDim] = addV(b, cp.base, r);
    iv[p.kDim] = addV(b, k0, k);
  }
  /// Its values in the chunk at k0 as loaded, of the operand's type
  /// (see Copied::raws).
  auto fetch(OpBuilder &b, const Copied &cp, Value u, Value k0) {
    aim(b, cp, u, k0);
    Value src = cp.src->get();
    Type elem = cast<MemRefType>(src.getType()).getElementType();
    int64_t bytes = elem.getIntOrFloatBitWidth() / 8;
    SmallVector<Value, 2> raw;
    auto vectorLoad = [&](int64_t n) {
      if (linalg::GenericOp from = p.operandFrom[cp.src->getOperandNumber()]) {
        SmallVector<Value> values =
            cuda::cloneBodyRun(b, loc, from, operandIndices(op, cp.src, iv), n);
        raw.push_back(vector::FromElementsOp::create(
            b, loc, VectorType::get({n}, values[0].getType()), values));
        return;
      }
      raw.push_back(vector::LoadOp::create(b, loc, VectorType::get({n}, elem),
                                           src, operandIndices(op, cp.src, iv),
                                           /*nontemporal=*/false,
                                           llvm::MaybeAlign(n * bytes)));
    };
    auto scalar = [&]() {
      raw.push_back(loadOperand(b, loc, p, op, cp.src, iv));
    };
    if (cp.vector && cp.buf->runs()) {
      vectorLoad(2 * cp.vw);
      return raw;
    }
    cp.vector ? vectorLoad(cp.vw) : scalar();
    iv[p.kDim] = add(b, iv[p.kDim], 1);
    cp.vector ? vectorLoad(cp.vw) : scalar();
    return raw;
  }
  /// Loaded values as the unit's staged words (rounded and packed).
  auto pack(OpBuilder &b, const Copied &cp, ValueRange raw) {
    auto element = [&](Value v, int64_t at) -> Value {
      if (!cp.vector)
        return v;
      return vector::ExtractOp::create(b, loc, v, ArrayRef<int64_t>{at});
    };
    SmallVector<Value> words;
    for (int64_t w = 0; w < cp.vw; ++w) {
      Value lo = raw.size() == 1 ? element(raw[0], 2 * w) : element(raw[0], w);
      Value hi =
          raw.size() == 1 ? element(raw[0], 2 * w + 1) : element(raw[1], w);
      if (!lo.getType().isF32()) {
        lo = arith::ExtFOp::create(b, loc, b.getF32Type(), lo);
        hi = arith::ExtFOp::create(b, loc, b.getF32Type(), hi);
      }
      words.push_back(cuda::packWord(b, loc, lo, hi, precision, f32Words()));
    }
    return words;
  }
  auto put(OpBuilder &b, const Copied &cp, Value u, ValueRange words,
           Value smem, Value off) {
    auto [l, w] = place(b, cp, u);
    Value at = lineIndex(b, *cp.buf, l, w, off);
    if (cp.vw == 1) {
      memref::StoreOp::create(b, loc, words[0], smem, ValueRange{at});
      return;
    }
    Value v = vector::FromElementsOp::create(
        b, loc, VectorType::get({cp.vw}, word), words);
    // (16 bytes at most: exact emulation's i64 words in a host
    // allocation.)
    vector::StoreOp::create(b, loc, v, smem, ValueRange{at},
                            /*nontemporal=*/false,
                            llvm::MaybeAlign(std::min<int64_t>(
                                16, cp.vw * word.getIntOrFloatBitWidth() / 8)));
  }
  /// Unit u of an async operand's chunk at k0 copied into the buffer
  /// at `off`, its 2 vw values as they are: on the GPU one cp.async
  /// into `dst`, the buffer's view in the operand's element type
  /// (16 bytes bypass L1: .cg; 4 or 8: .ca), emulated the same bytes
  /// as words into `dst`, the words.
  auto issue(OpBuilder &b, const Copied &cp, Value u, Value k0, Value dst,
             Value off) {
    aim(b, cp, u, k0);
    Value src = cp.src->get();
    SmallVector<Value> from = operandIndices(op, cp.src, iv);
    auto [l, w] = place(b, cp, u);
    Value at = lineIndex(b, *cp.buf, l, w, off);
    int64_t n = 2 * cp.vw;
    if (!replay) {
      bool cg = n * 2 == 16;
      nvgpu::DeviceAsyncCopyOp::create(
          b, loc, dst, ValueRange{mul(b, at, 2)}, src, from, b.getIndexAttr(n),
          /*srcElements=*/Value(), cg ? b.getUnitAttr() : UnitAttr());
      return;
    }
    Type elem = cast<MemRefType>(src.getType()).getElementType();
    Value v =
        vector::LoadOp::create(b, loc, VectorType::get({n}, elem), src, from);
    Value words =
        vector::BitCastOp::create(b, loc, VectorType::get({cp.vw}, word), v);
    vector::StoreOp::create(b, loc, words, dst, ValueRange{at});
  }
  /// `body` on each of thread tid's units of cp's chunk: unrolled
  /// (perThread), one for each of the first threads when there are
  /// fewer units than threads (an async buffer, see copyWidth), else
  /// a loop.
  auto eachUnit(OpBuilder &b, const Copied &cp, Value tid,
                function_ref<void(OpBuilder &, Value)> body) {
    for (int64_t it = 0; it < cp.perThread; ++it)
      body(b, add(b, tid, it * threadCount));
    if (cp.perThread)
      return;
    if (threadCount % cp.units == 0) {
      Value some = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, tid,
                                         c(b, cp.units));
      scf::IfOp::create(b, loc, some, [&](OpBuilder &b, Location loc) {
        body(b, tid);
        scf::YieldOp::create(b, loc);
      });
      return;
    }
    scf::ForOp::create(b, loc, tid, c(b, cp.units), c(b, threadCount),
                       ValueRange{},
                       [&](OpBuilder &b, Location loc, Value u, ValueRange) {
                         body(b, u);
                         scf::YieldOp::create(b, loc);
                       });
  }
  /// Each thread's units of the async operands' chunk at k0.
  auto issueAll(OpBuilder &b, Value tid, Value k0, Value dst, Value off) {
    for (const Copied &cp : copies)
      if (cp.async())
        eachUnit(b, cp, tid,
                 [&](OpBuilder &b, Value u) { issue(b, cp, u, k0, dst, off); });
  }
  /// The copy of chunk k0 .. k0 + BK into the first buffer. Up to 32
  /// units a thread: unrolled, in groups of 8 words whose loads are
  /// all issued before the group's first store, so their latencies
  /// overlap (8 words of f32 pairs are 16 registers in flight, next
  /// to the 64 accumulators: two blocks an SM still fit in 128
  /// registers).
  auto copy(OpBuilder &b, Value tid, Value smem, Value k0) {
    for (const Copied &cp : copies) {
      if (!cp.perThread) {
        eachUnit(b, cp, tid, [&](OpBuilder &b, Value u) {
          put(b, cp, u, pack(b, cp, fetch(b, cp, u, k0)), smem, Value());
        });
        continue;
      }
      int64_t group = std::max<int64_t>(1, 8 / cp.vw);
      for (int64_t g0 = 0; g0 < cp.perThread; g0 += group) {
        SmallVector<std::pair<Value, SmallVector<Value, 2>>> loaded;
        for (int64_t it = g0; it < std::min<int64_t>(cp.perThread, g0 + group);
             ++it) {
          Value u = add(b, tid, it * threadCount);
          loaded.push_back({u, fetch(b, cp, u, k0)});
        }
        for (auto &[u, raw] : loaded)
          put(b, cp, u, pack(b, cp, raw), smem, Value());
      }
    }
  }
  /// Prefetching: a thread's units of the chunk at k0 as loaded, in
  /// copy order (the registers carried across a chunk's mma; async
  /// operands have none) ...
  auto fetchAll(OpBuilder &b, Value tid, Value k0) {
    SmallVector<Value> raw;
    for (const Copied &cp : copies)
      for (int64_t it = 0; it < cp.held(); ++it)
        llvm::append_range(raw,
                           fetch(b, cp, add(b, tid, it * threadCount), k0));
    return raw;
  }
  /// ... as words ...
  auto packAll(OpBuilder &b, ValueRange raw) {
    SmallVector<Value> words;
    size_t at = 0;
    for (const Copied &cp : copies)
      for (int64_t it = 0; it < cp.held(); ++it) {
        llvm::append_range(words, pack(b, cp, raw.slice(at, cp.raws())));
        at += cp.raws();
      }
    return words;
  }
  /// ... and stored into the buffer at `off`.
  auto putAll(OpBuilder &b, Value tid, ValueRange words, Value smem,
              Value off) {
    size_t at = 0;
    for (const Copied &cp : copies)
      for (int64_t it = 0; it < cp.held(); ++it) {
        put(b, cp, add(b, tid, it * threadCount), words.slice(at, cp.vw), smem,
            off);
        at += cp.vw;
      }
  }
  auto chunkAt(OpBuilder &b, Value ci) {
    if (!p.outerK.empty())
      delinearize(b, loc, div(b, ci, inner), p.outerK, extents, iv);
    Value k0 = mul(b, rem(b, ci, inner), BK);
    return part ? addV(b, k0, mul(b, part, kPart)) : k0;
  }
  /// TF32 (and 3xTF32) from staged f32 pairs: per 8 k, one mma.sync
  /// m16n8k8 .tf32 a tile whose k = t and t + 4 are the pair at t (k
  /// 2t and 2t + 1 of the 8: the products sum over k in any order, so A
  /// and B only need the same assignment). A fragment i = the words of
  /// rows g and g + 8 at pair t: (lo, lo, hi, hi) of (row g, row g + 8);
  /// B fragment j = column g's word at pair t: (lo, hi). Each value
  /// rounded with cvt.rna (3xTF32: split into a head and a tail, three
  /// mma a tile, the small terms first), as it is taken from its word.
  auto computeTF32(OpBuilder &b, const Lane &l, Value smem, Value off,
                   ValueRange in) {
    SmallVector<Value> out(in.begin(), in.end());
    bool x3 = precision == "tf32x3";
    auto element = [&](Value w, int64_t half) {
      return cuda::wordElement(b, loc, w, half, precision, /*exact=*/true);
    };
    auto fragments = [&](ArrayRef<Value> values) {
      return cuda::tf32Fragments(b, loc, values, x3);
    };
    auto mma = [&](Value x, Value y, Value acc) -> Value {
      return nvgpu::MmaSyncOp::create(b, loc, x, y, acc,
                                      ArrayRef<int64_t>{kTileM, kTileN, 8},
                                      /*tf32Enabled=*/true);
    };
    for (int64_t st = 0; st < BK / 8; ++st) {
      Value pair = add(b, l.t, st * 4);
      SmallVector<std::pair<Value, Value>> bFrag;
      for (int64_t j = 0; j < NT; ++j) {
        Value w = wordAt(b, smem, s.b, bColIn(b, l, j), pair, off);
        bFrag.push_back(fragments({element(w, 0), element(w, 1)}));
      }
      for (int64_t i = 0; i < MT; ++i) {
        Value w0 = wordAt(b, smem, s.a, rowIn(b, l, i, 0), pair, off);
        Value w8 = wordAt(b, smem, s.a, rowIn(b, l, i, 1), pair, off);
        std::pair<Value, Value> aFrag = fragments(
            {element(w0, 0), element(w8, 0), element(w0, 1), element(w8, 1)});
        for (int64_t j = 0; j < NT; ++j) {
          Value &acc = out[i * NT + j];
          if (x3) {
            acc = mma(aFrag.first, bFrag[j].second, acc);
            acc = mma(aFrag.second, bFrag[j].first, acc);
          }
          acc = mma(aFrag.first, bFrag[j].first, acc);
        }
      }
    }
    return out;
  }
  /// The chunk's mma steps from shared memory: per 16 k, A fragment
  /// i = words (rows g, g + 8) x (pairs t, t + 4), B fragment j =
  /// column g's words at pairs t, t + 4.
  auto compute(OpBuilder &b, const Lane &l, Value smem, Value off,
               ValueRange in) {
    if (cuda::isTF32(precision))
      return computeTF32(b, l, smem, off, in);
    SmallVector<Value> out(in.begin(), in.end());
    // B's ldmatrix.trans addresses: one base (tile 0, k step 0) and
    // constant offsets, which ptxas folds into the instruction.
    Value halves, bBase;
    if (s.ldmatrixB()) {
      halves = cuda::sharedHalves(b, loc, smem);
      bBase = mul(b, bMatrixRow(b, l, l.lane, 0, zero, off), 2);
    }
    for (int64_t st = 0; st < BK / 16; ++st) {
      Value p0 = add(b, l.t, st * 8), p4 = add(b, l.t, st * 8 + 4);
      auto reg = [&](const StagedBuffer &buf, Value r, Value pair) {
        return wordAt(b, smem, buf, r, pair, off);
      };
      auto operands = [&](SmallVector<Value, 4> regs) {
        for (Value &r : regs)
          r = cuda::wordToOperand(b, loc, r, precision);
        return regs;
      };
      SmallVector<SmallVector<Value, 4>> bFrag(NT);
      for (int64_t j = 0; j < NT; ++j) {
        if (!s.ldmatrixB()) {
          Value col = bColIn(b, l, j);
          bFrag[j] = operands({reg(s.b, col, p0), reg(s.b, col, p4)});
          continue;
        }
        if (j % 2)
          continue;
        bool x4 = j + 1 < NT;
        SmallVector<Value, 4> regs = cuda::ldmatrixOperands(
            b, loc, halves,
            add(b, bBase, 2 * (st * 16 * s.b.stride + j * kTileN / 2)),
            x4 ? 4 : 2, word, precision, /*transpose=*/true);
        bFrag[j] = {regs[0], regs[1]};
        if (x4)
          bFrag[j + 1] = {regs[2], regs[3]};
      }
      for (int64_t i = 0; i < MT; ++i) {
        SmallVector<Value, 4> aFrag;
        if (s.ldmatrixA) {
          aFrag = cuda::ldmatrixOperands(
              b, loc, smem, aMatrixRow(b, l, l.lane, i, c(b, st * 8), off), 4,
              word, precision);
        } else {
          Value r0 = rowIn(b, l, i, 0), r8 = rowIn(b, l, i, 1);
          aFrag = operands({reg(s.a, r0, p0), reg(s.a, r8, p0),
                            reg(s.a, r0, p4), reg(s.a, r8, p4)});
        }
        for (int64_t j = 0; j < NT; ++j)
          out[i * NT + j] = cuda::mmaM16N8K16(b, loc, aFrag, bFrag[j],
                                              out[i * NT + j], precision);
      }
    }
    return out;
  }
  /// The k values 2 pair, 2 pair + 1 of column 2t + o of B tile j,
  /// as the mma gets them. From a natural buffer with
  /// ldmatrix.trans: lane (2t + o, pair % 4)'s register
  /// (pair % 8) / 4 (+ 2: the second tile of an x4), values (rows)
  /// 2 (pair % 4) + e of that matrix, which lane
  /// 16 (j % 2) + 2 (pair % 8) + e pointed at; column 2t + o of
  /// its 8 is half o of word t (emulation checks those addresses).
  auto bElements(OpBuilder &b, const Lane &l, Value smem, int64_t j, int64_t o,
                 Value pair, Value off) {
    auto element = [&](Value w, int64_t half) {
      return cuda::wordElement(b, loc, w, half, precision, f32Words());
    };
    if (!s.ldmatrixB()) {
      Value w = wordAt(b, smem, s.b, colIn(b, l, j, o), pair, off);
      return std::array<Value, 2>{element(w, 0), element(w, 1)};
    }
    std::array<Value, 2> out;
    for (int64_t e = 0; e < 2; ++e) {
      Value lane = add(b, mul(b, rem(b, pair, 8), 2), 16 * (j % 2) + e);
      Value row =
          bMatrixRow(b, l, lane, j - j % 2, mul(b, div(b, pair, 8), 16), off);
      out[e] =
          element(memref::LoadOp::create(b, loc, smem, addV(b, row, l.t)), o);
    }
    return out;
  }
  /// Each lane's own elements of C (those its mma fragments hold:
  /// rows g and g + 8 of each row tile, columns 2t and 2t + 1 of
  /// each column tile) updated from the chunk's staged words, a loop
  /// over its pairs of k values: per pair, the lane's 2 MT A words
  /// and 2 NT B words are loaded once (a row's word is the same for
  /// the 4 lanes of a g, a column's for the 8 of a t: broadcasts),
  /// then each element takes both of the pair's products, with fma
  /// (SIMT: f32, no tensor cores, on the GPU too) or as the
  /// emulated mma adds them (each A word where ldmatrix delivers it
  /// when the GPU uses ldmatrix). Plain per-lane code: the host runs
  /// it as it is. (Unrolled over the pairs, LLVM hoisted later
  /// pairs' loads over earlier fma: 220 registers in the f32 bench
  /// layer's GEMMs, one block an SM; rolled, 127, two blocks.)
  auto perLane(OpBuilder &b, const Lane &l, Value smem, Value off,
               ValueRange in) {
    auto loop = scf::ForOp::create(
        b, loc, zero, c(b, BK / 2), one, in,
        [&](OpBuilder &b, Location loc, Value pair, ValueRange args) {
          SmallVector<Value> out(args.begin(), args.end());
          auto elements = [&](Value w) {
            return std::array<Value, 2>{
                cuda::wordElement(b, loc, w, 0, precision, f32Words()),
                cuda::wordElement(b, loc, w, 1, precision, f32Words())};
          };
          SmallVector<std::array<Value, 2>> as, bs;
          for (int64_t i = 0; i < MT; ++i)
            for (int64_t h = 0; h < 2; ++h)
              as.push_back(elements(aWord(b, l, smem, i, h, pair, off)));
          for (int64_t j = 0; j < NT; ++j)
            for (int64_t o = 0; o < 2; ++o)
              bs.push_back(bElements(b, l, smem, j, o, pair, off));
          updateElements(
              b, loc, out, MT, NT,
              [&](int64_t i, int64_t j, int64_t h, int64_t o, Value sum) {
                for (int64_t e = 0; e < 2; ++e) {
                  Value x = as[i * 2 + h][e], y = bs[j * 2 + o][e];
                  sum = simt()
                            ? LLVM::FMAOp::create(b, loc, x, y, sum).getResult()
                            : arith::AddFOp::create(
                                  b, loc, sum,
                                  arith::MulFOp::create(b, loc, x, y))
                                  .getResult();
                }
                return sum;
              });
          scf::YieldOp::create(b, loc, out);
        });
    return SmallVector<Value>(loop.getResults());
  }
  /// wgmma (see Staging::wgmma): per k step of the chunk, one
  /// wgmma.mma_async m64n(8 NT)k16 of the lane's warpgroup (warps
  /// 4q .. 4q + 3: the block's rows 64q .. 64q + 63, all its
  /// columns) from descriptors of the core-layout buffers at `off`.
  /// The accumulators are the warpgroup's D fragments: registers
  /// 4j .. 4j + 3 of a thread of warp w are rows 16 w + g, + 8 by
  /// columns 8j + 2t, + 1 (PTX ISA, "Register Fragments" of
  /// wgmma .m64nNk16), the m16n8 C layout of the warp's one row
  /// tile: accumulator j's (h, o) is register 4j + 2h + o.
  auto warpgroupMma(OpBuilder &b, const Lane &l, Value smem, Value off,
                    ValueRange in) {
    Value d = issueBatch(b, l, smem, off, packD(b, in));
    NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
    return unpackD(b, d);
  }
  /// The accumulators as the warpgroup's D registers (see warpgroupMma):
  /// accumulator j's (h, o) is register 4j + 2h + o.
  Value packD(OpBuilder &b, ValueRange in) {
    int64_t regs = 4 * NT;
    auto dType =
        LLVM::LLVMStructType::getLiteral(ctx, SmallVector<Type>(regs, f32));
    Value d = LLVM::PoisonOp::create(b, loc, dType);
    for (int64_t j = 0; j < NT; ++j)
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t o = 0; o < 2; ++o)
          d = LLVM::InsertValueOp::create(
              b, loc, d,
              vector::ExtractOp::create(b, loc, in[j], ArrayRef<int64_t>{h, o}),
              ArrayRef<int64_t>{4 * j + 2 * h + o});
    return d;
  }
  /// The accumulators from the D registers `d` (once no batch writes them).
  SmallVector<Value> unpackD(OpBuilder &b, Value d) {
    SmallVector<Value> out;
    for (int64_t j = 0; j < NT; ++j) {
      SmallVector<Value> e;
      for (int64_t r = 0; r < 4; ++r)
        e.push_back(LLVM::ExtractValueOp::create(b, loc, d, 4 * j + r));
      out.push_back(vector::FromElementsOp::create(b, loc, accType, e));
    }
    return out;
  }
  /// One chunk's batch of wgmma on D registers `d`, committed and not
  /// waited for: its D registers.
  Value issueBatch(OpBuilder &b, const Lane &l, Value smem, Value off,
                   Value d) {
    Type i64 = b.getI64Type();
    auto i64c = [&](int64_t v) -> Value {
      return arith::ConstantIntOp::create(b, loc, i64, v);
    };
    auto descriptor = [&](const StagedBuffer &buf, Value word) {
      return cuda::wgmmaDescriptor(b, loc, smem, word, buf.leadingBytes(),
                                   buf.strideBytes(), buf.swizzleMode());
    };
    // The first line of the warpgroup's rows (a multiple of 8, where
    // swizzling moves nothing) and B's.
    Value descA = descriptor(
        s.a, lineIndex(b, s.a, mul(b, div(b, l.wm, 4), 64), zero, off));
    Value descB = descriptor(s.b, lineIndex(b, s.b, zero, zero, off));
    Type dType = d.getType();
    NVVM::WGMMATypes type =
        precision == "bf16" ? NVVM::WGMMATypes::bf16 : NVVM::WGMMATypes::f16;
    NVVM::WgmmaFenceAlignedOp::create(b, loc);
    for (int64_t st = 0; st < BK / 16; ++st) {
      // k step st: two core matrices along k unswizzled; swizzled,
      // 32 bytes further along a k-major line (the next atom column
      // past its end) or 16 natural k rows.
      auto at = [&](Value desc, const StagedBuffer &buf) -> Value {
        return st ? arith::AddIOp::create(b, loc, desc,
                                          i64c(buf.kStepBytes(st) >> 4))
                        .getResult()
                  : desc;
      };
      d = NVVM::WgmmaMmaAsyncOp::create(
          b, loc, dType, d, at(descA, s.a), at(descB, s.b),
          NVVM::MMAShapeAttr::get(ctx, 64, kTileN * NT, 16), type, type,
          NVVM::WGMMATypes::f32, NVVM::WGMMAScaleOut::one,
          NVVM::WGMMAScaleIn::one, NVVM::WGMMAScaleIn::one,
          NVVM::MMALayout::row,
          s.b.kMajor ? NVVM::MMALayout::col : NVVM::MMALayout::row,
          /*satfinite=*/nullptr);
    }
    NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
    return d;
  }
  /// A chunk's products on the GPU.
  auto onGPU(OpBuilder &b, const Lane &l, Value smem, Value off,
             ValueRange in) {
    if (simt())
      return perLane(b, l, smem, off, in);
    return s.wgmma ? warpgroupMma(b, l, smem, off, in)
                   : compute(b, l, smem, off, in);
  }
  /// One loop over the block's threads running `body`.
  auto threads(OpBuilder &b,
               function_ref<void(OpBuilder &, const Lane &)> body) {
    cuda::blockThreads(b, loc, warps, [&](OpBuilder &b, Value w, Value lane) {
      body(b, laneOf(b, w, lane));
    });
  }

  /// The cp.async copies issued since the last group, as a group.
  Value commitCopies(OpBuilder &b) {
    return nvgpu::DeviceAsyncCreateGroupOp::create(
        b, loc, nvgpu::DeviceAsyncTokenType::get(b.getContext()),
        ValueRange{});
  }
  /// Waits until at most `pending` groups of copies (up to `group`) are in
  /// flight. wgmma reads the buffers through the async proxy: each
  /// thread's landed copies are fenced before the barrier.
  void waitCopies(OpBuilder &b, Value group, int64_t pending) {
    nvgpu::DeviceAsyncWaitOp::create(b, loc, group,
                                     b.getI32IntegerAttr(pending));
    if (s.wgmma)
      cuda::fenceSharedForAsyncProxy(b, loc);
  }
  /// Before a pipelined k loop: chunks 0 .. n - 1 issued into their
  /// buffers (at `dst`), a group each, and waited for until at most
  /// `pending` groups are in flight (chunk 0 landed).
  void issueFirstChunks(OpBuilder &b, const Lane &l, Value dst, int64_t n,
                        int64_t pending) {
    Value group;
    for (int64_t st = 0; st < n; ++st) {
      if (st < chunks)
        issueAll(b, l.tid, chunkAt(b, c(b, st)), dst,
                 st ? c(b, st * words) : Value());
      group = commitCopies(b);
    }
    waitCopies(b, group, pending);
  }

  /// The k loop software-pipelined on the GPU (see Staging::prefetch).
  void pipelined(OpBuilder &b) {
    // Software-pipelined: two buffers; chunk ci is stored (from
    // registers loaded during chunk ci - 1's mma) into buffer
    // ci % 2, the next chunk's loads are issued, and past the
    // barrier this chunk's mma run while they are in flight. One
    // barrier a chunk: buffer ci % 2 was last read by chunk
    // ci - 2's mma, which every thread finished before it reached
    // chunk ci - 1's barrier. The loads come before the barrier on
    // purpose: after it, only the mma would follow them in the
    // loop body, and LLVM's InstCombine would sink them into the
    // next iteration as loads of the phi's address (a load is sunk
    // only when nothing after it in its block writes memory), which
    // undoes the prefetch.
    //
    // Async operands (cp.async) are issued after the barrier, up to
    // S - 1 chunks ahead with S buffers (S = 2 when an operand is
    // prefetched in registers): chunk ci + S - 1 into buffer
    // (ci - 1) % S, last read by chunk ci - 1's mma, which every
    // thread finished before this barrier (past the end, the last
    // chunk again, into buffers no later chunk reads). Each
    // iteration commits one group and, after its mma, waits until
    // at most S - 2 are in flight: chunk ci + 1 has landed, and the
    // next iteration's barrier publishes it. Before the loop,
    // chunks 0 .. S - 2 are issued, a group each, and chunk 0
    // waited for.
    int64_t S = s.buffers();
    threads(b, [&](OpBuilder &b, const Lane &l) {
      Value smem = cuda::sharedWords(b, loc, S * words, word);
      Value dst = async
                      ? cuda::sharedHalves(b, loc, smem,
                                           cuda::mmaOperandType(ctx, precision))
                      : Value();
      SmallVector<Value> init = initAccs(b, l);
      size_t nAcc = init.size();
      llvm::append_range(init, fetchAll(b, l.tid, chunkAt(b, zero)));
      if (async)
        issueFirstChunks(b, l, dst, S - 1, S - 2);
      Value count = chunkCount(b), lastChunk = lastOf(b, count);
      auto loop = scf::ForOp::create(
          b, loc, zero, count, one, init,
          [&](OpBuilder &b, Location loc, Value ci, ValueRange args) {
            Value off = mul(b, rem(b, ci, S), words);
            putAll(b, l.tid, packAll(b, args.drop_front(nAcc)), smem, off);
            // The last chunk loads itself again: no branch.
            Value next =
                arith::MinUIOp::create(b, loc, add(b, ci, 1), lastChunk);
            SmallVector<Value> raw = fetchAll(b, l.tid, chunkAt(b, next));
            gpu::BarrierOp::create(b, loc);
            Value group;
            if (async) {
              // Past the last chunk, the last again: no branch.
              Value ahead = add(b, ci, S - 1);
              issueAll(
                  b, l.tid,
                  chunkAt(b, arith::MinUIOp::create(b, loc, ahead, lastChunk)),
                  dst, mul(b, rem(b, ahead, S), words));
              group = commitCopies(b);
            }
            SmallVector<Value> out =
                onGPU(b, l, smem, off, args.take_front(nAcc));
            if (async)
              waitCopies(b, group, S - 2);
            llvm::append_range(out, raw);
            scf::YieldOp::create(b, loc, out);
          });
      finishAccs(b, l, loop.getResults().take_front(nAcc));
      sumParts(b, l, smem);
    });
  }

  /// The k loop of wgmma with one batch left running (Staging::inFlight):
  /// both operands by cp.async into S >= 3 buffers. Chunk ci's batch is
  /// issued on the D registers the loop carries and not waited for:
  /// `wgmma.wait_group 1` after it waits for chunk ci - 1's, so that chunk
  /// ci's products run on while this iteration waits for chunk ci + 1's
  /// copies. A buffer is then free only once every warpgroup has waited
  /// for the batch that read it, at the next barrier: iteration ci issues
  /// chunk ci + S - 2 (past the end, the last again) into buffer
  /// (ci - 2) % S, which chunk ci - 2's batch read, waited for in
  /// iteration ci - 1 before this barrier; one chunk less ahead than
  /// pipelined()'s. Before the loop, chunks 0 .. S - 3 are issued, a
  /// group each, and chunk 0 waited for; each iteration commits one group
  /// and waits until at most S - 3 are in flight (chunk ci + 1 landed).
  /// After the loop, `wgmma.wait_group 0`: the last batch.
  void pipelinedInFlight(OpBuilder &b) {
    int64_t S = s.buffers();
    threads(b, [&](OpBuilder &b, const Lane &l) {
      Value smem = cuda::sharedWords(b, loc, S * words, word);
      Value dst = cuda::sharedHalves(b, loc, smem,
                                     cuda::mmaOperandType(ctx, precision));
      Value d = packD(b, initAccs(b, l));
      issueFirstChunks(b, l, dst, S - 2, S - 3);
      Value count = chunkCount(b), lastChunk = lastOf(b, count);
      auto loop = scf::ForOp::create(
          b, loc, zero, count, one, ValueRange{d},
          [&](OpBuilder &b, Location loc, Value ci, ValueRange args) {
            Value off = mul(b, rem(b, ci, S), words);
            gpu::BarrierOp::create(b, loc);
            Value ahead = add(b, ci, S - 2);
            issueAll(
                b, l.tid,
                chunkAt(b, arith::MinUIOp::create(b, loc, ahead, lastChunk)),
                dst, mul(b, rem(b, ahead, S), words));
            Value group = commitCopies(b);
            Value out = issueBatch(b, l, smem, off, args[0]);
            NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 1);
            waitCopies(b, group, S - 3);
            scf::YieldOp::create(b, loc, out);
          });
      NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      finishAccs(b, l, unpackD(b, loop.getResult(0)));
      sumParts(b, l, smem);
    });
  }

  /// The k loop on the GPU: copy, barrier, products, barrier.
  void plain(OpBuilder &b) {
    threads(b, [&](OpBuilder &b, const Lane &l) {
      Value smem = cuda::sharedWords(b, loc, words, word);
      auto loop = scf::ForOp::create(
          b, loc, zero, chunkCount(b), one, initAccs(b, l),
          [&](OpBuilder &b, Location loc, Value ci, ValueRange in) {
            copy(b, l.tid, smem, chunkAt(b, ci));
            gpu::BarrierOp::create(b, loc);
            SmallVector<Value> out = onGPU(b, l, smem, Value(), in);
            gpu::BarrierOp::create(b, loc);
            scf::YieldOp::create(b, loc, out);
          });
      finishAccs(b, l, loop.getResults());
      sumParts(b, l, smem);
    });
  }

  /// The k loop emulated: each phase its own loop over the threads.
  void emulated(OpBuilder &b) {
    Value smem = memref::AllocOp::create(
        b, loc, MemRefType::get({s.buffers() * words}, word));
    // Each thread's accumulators between the phases.
    Value saved = memref::AllocOp::create(
        b, loc, MemRefType::get({warps * kWarp, MT * NT}, accType));
    auto save = [&](OpBuilder &b, const Lane &l, ValueRange accs) {
      for (int64_t a = 0; a < MT * NT; ++a)
        memref::StoreOp::create(b, loc, accs[a], saved,
                                ValueRange{l.tid, c(b, a)});
    };
    auto restore = [&](OpBuilder &b, const Lane &l) {
      SmallVector<Value> accs;
      for (int64_t a = 0; a < MT * NT; ++a)
        accs.push_back(
            memref::LoadOp::create(b, loc, saved, ValueRange{l.tid, c(b, a)}));
      return accs;
    };
    threads(b,
            [&](OpBuilder &b, const Lane &l) { save(b, l, initAccs(b, l)); });
    if (s.prefetch) {
      // Each thread's prefetched words between the phases; per
      // chunk: store them into the chunk's buffer, fetch the next
      // chunk's, compute from the buffer.
      // Async operands are copied (their bytes) in the store phase,
      // into the chunk's own buffer.
      int64_t perThread = 0;
      for (const Copied &cp : copies)
        perThread += cp.held() * cp.vw;
      Value held =
          perThread
              ? memref::AllocOp::create(
                    b, loc, MemRefType::get({warps * kWarp, perThread}, word))
                    .getResult()
              : Value();
      auto hold = [&](OpBuilder &b, const Lane &l, Value ci) {
        if (!held)
          return;
        SmallVector<Value> w = packAll(b, fetchAll(b, l.tid, chunkAt(b, ci)));
        for (int64_t a = 0; a < perThread; ++a)
          memref::StoreOp::create(b, loc, w[a], held,
                                  ValueRange{l.tid, c(b, a)});
      };
      threads(b, [&](OpBuilder &b, const Lane &l) { hold(b, l, zero); });
      Value count = chunkCount(b), lastChunk = lastOf(b, count);
      scf::ForOp::create(
          b, loc, zero, count, one, ValueRange{},
          [&](OpBuilder &b, Location loc, Value ci, ValueRange) {
            Value off = mul(b, rem(b, ci, s.buffers()), words);
            threads(b, [&](OpBuilder &b, const Lane &l) {
              SmallVector<Value> w;
              for (int64_t a = 0; a < perThread; ++a)
                w.push_back(memref::LoadOp::create(b, loc, held,
                                                   ValueRange{l.tid, c(b, a)}));
              putAll(b, l.tid, w, smem, off);
              if (async)
                issueAll(b, l.tid, chunkAt(b, ci), smem, off);
            });
            Value next =
                arith::MinUIOp::create(b, loc, add(b, ci, 1), lastChunk);
            threads(b, [&](OpBuilder &b, const Lane &l) { hold(b, l, next); });
            threads(b, [&](OpBuilder &b, const Lane &l) {
              save(b, l, perLane(b, l, smem, off, restore(b, l)));
            });
            scf::YieldOp::create(b, loc);
          });
      if (held)
        memref::DeallocOp::create(b, loc, held);
    } else {
      scf::ForOp::create(b, loc, zero, chunkCount(b), one, ValueRange{},
                         [&](OpBuilder &b, Location loc, Value ci, ValueRange) {
                           threads(b, [&](OpBuilder &b, const Lane &l) {
                             copy(b, l.tid, smem, chunkAt(b, ci));
                           });
                           threads(b, [&](OpBuilder &b, const Lane &l) {
                             save(b, l,
                                  perLane(b, l, smem, Value(), restore(b, l)));
                           });
                           scf::YieldOp::create(b, loc);
                         });
    }
    threads(b, [&](OpBuilder &b, const Lane &l) {
      finishAccs(b, l, restore(b, l));
      sumParts(b, l, smem);
    });
    memref::DeallocOp::create(b, loc, saved);
    memref::DeallocOp::create(b, loc, smem);
  }

  /// One block's code, `ivs` its index in the loop over blocks.
  void block(OpBuilder &b, ValueRange ivs) {
    // Block columns fastest: neighbouring blocks share A's rows.
    Value blockCol = rem(b, ivs[0], blockCols);
    Value rest = div(b, ivs[0], blockCols);
    Value blockRow;
    if (p.split <= 1)
      blockRow = rem(b, rest, blockRows);
    else if (tokenRows) {
      part = rem(b, rest, p.split);
      blockRow = div(b, rest, p.split);
    } else {
      blockRow = rem(b, rest, blockRows);
      part = div(b, rest, blockRows);
    }
    tile = addV(b, mul(b, blockRow, blockCols), blockCol);
    iv.assign(rank, Value());
    // The block tile: folded outer dims, then the first row / column
    // of the innermost m / n dims.
    int64_t mBlocks = extents[p.mDim] / BM, nBlocks = extents[p.nDim] / BN;
    mBase = mul(b, rem(b, blockRow, mBlocks), BM);
    delinearize(b, loc, div(b, blockRow, mBlocks), p.rowDims, extents, iv);
    nBase = mul(b, rem(b, blockCol, nBlocks), BN);
    delinearize(b, loc, div(b, blockCol, nBlocks), p.colDims, extents, iv);
    copies = {copied(aOp, s.a, p.mDim, mBase), copied(bOp, s.b, p.nDim, nBase)};
    // The k loop walks a part's chunks by one index (outer k
    // dimensions included, so that a prefetch crosses them): chunk
    // `ci` sets iv's outer k indices and is at k0 of the innermost k.
    kPart = extents[p.kDim] / p.split;
    inner = kPart / BK;
    chunks = inner;
    for (unsigned d : p.outerK)
      chunks *= extents[d];
    findTokenBound();
    if (!boundLengths)
      last = c(b, chunks - 1);
    if (!replay && s.prefetch && s.inFlight)
      pipelinedInFlight(b);
    else if (!replay && s.prefetch)
      pipelined(b);
    else if (!replay)
      plain(b);
    else
      emulated(b);
    scf::ReduceOp::create(b, loc);
  }

  /// The loop over blocks (mapped to block x) and its length rule.
  void emit(IRRewriter &rewriter) {
    auto outer = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero},
        ValueRange{c(rewriter, p.split * blockRows * blockCols)},
        ValueRange{one},
        [&](OpBuilder &b, Location, ValueRange ivs) { block(b, ivs); });
    cuda::mapLoop(outer, {gpu::Processor::BlockX});
    if (tokenRows) {
      SmallVector<int64_t> grid{extents[p.rowDims[0]], extents[p.mDim] / BM};
      if (p.split > 1)
        grid.push_back(p.split);
      grid.push_back(blockCols);
      if (auto rule =
              cuda::tokenRowsRule(ctx, grid, 0, 1, BM, 1,
                                  op->getAttrOfType<DenseI64ArrayAttr>(
                                      mlir::linformer::kCUDASlotRowsAttrName)))
        outer->setAttr(mlir::linformer::kCUDATokenRowsAttrName, rule);
    }
  }
};

} // namespace

void mlir::linformer::cuda::emitStagedTiles(IRRewriter &rewriter,
                                            linalg::GenericOp op, const Plan &p,
                                            const WarpTileOptions &o,
                                            Value partials, Value counters) {
  StagedTiles(o, rewriter, op, p, partials, counters).emit(rewriter);
}
