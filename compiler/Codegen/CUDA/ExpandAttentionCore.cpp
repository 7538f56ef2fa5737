//===- ExpandAttentionCore.cpp - the attention core, one kernel -*- C++ -*-===/
//
// The CUDA pipeline's attention core (see Passes.td). It stays one
// `linformer.attention_core` across bufferization (the op is
// destination-style and bufferizable); then
//
// linformer-cuda-expand-attention-core (memrefs): each core becomes one
//   `scf.parallel` over (b, h, n) (and the lanes of a row, each a slice
//   of the head width, see `scalar`) whose body streams the k projected
//   keys and values with an online softmax (running max m, running sum l,
//   accumulator a, vectors of the head width held in registers):
//
//     s = q . key_j (masked slot: -inf);  m' = max(m, s)
//     alpha = exp((m - m') * scale);  p = exp((s - m') * scale)
//     l = l * alpha + p;  a = a * alpha + p * value_j;  m = m'
//     result = a * (1 / l)
//
//   (alpha and p are 0 while m' is -inf: every slot so far masked; each
//   exp is exp2(x c - m' c), c = scale log2(e), see SoftmaxStep.) The
//   [b, h, n, k] scores never exist in memory: one kernel instead of five.
//   The slots go 16 at a time (or the largest of 8, 4, 2 dividing k; on
//   tensor cores `slots` at a time, 32 by default): the block's scores as
//   independent fma chains over the head width, m' the max over the
//   block, a and l rescaled once a block.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Codegen/CUDA/CoreSchedule.h"
#include "compiler/Codegen/CUDA/LoopMapping.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Codegen/CUDA/Passes.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"
#include "llvm/Support/MathExtras.h"

#include <deque>
#include <functional>
#include <limits>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAEXPANDATTENTIONCOREPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

/// One row's step of the online softmax, FlashAttention's way: exp((x -
/// max) * scale) as exp2(x * c - max * c), c = scale * log2(e), with
/// -max * c once a step: an fma and an ex2.approx.ftz instead of a sub, a
/// mul and libdevice's expf (ten more instructions); exp2 on the host
/// (linformer-cuda-emulate-instructions). The GPU's exp2 flushes a result
/// below 2^-126 to 0:
/// such a p adds nothing a sum of at least 1 (the max's p) keeps. With a
/// mask the new max may still be -inf (every slot so far masked), where
/// x * c - max * c is NaN: every exp is then 0. Without one the max is
/// finite from the first slot on, so nothing is selected (the first
/// step's alpha, of the initial -inf, is exp2(-inf) = 0).
struct SoftmaxStep {
  Value c, negMaxC, live, zero;
  SoftmaxStep(OpBuilder &b, Location loc, Value max, Value c, bool masked)
      : c(c) {
    Type t = max.getType();
    negMaxC = arith::NegFOp::create(b, loc,
                                    arith::MulFOp::create(b, loc, max, c));
    if (!masked)
      return;
    Value negInf = arith::ConstantOp::create(
        b, loc, b.getFloatAttr(t, -std::numeric_limits<double>::infinity()));
    live = arith::CmpFOp::create(b, loc, arith::CmpFPredicate::OGT, max,
                                 negInf);
    zero = arith::ConstantOp::create(b, loc, b.getFloatAttr(t, 0.0));
  }
  Value exp(OpBuilder &b, Location loc, Value x) const {
    Value y = math::FmaOp::create(b, loc, x, c, negMaxC);
    // libdevice's exp2f is ex2.approx without ftz: a denormal result costs
    // the SASS extra instructions around MUFU.EX2.
    Value e =
        LLVM::CallIntrinsicOp::create(
            b, loc, y.getType(),
            b.getStringAttr("llvm.nvvm.ex2.approx.ftz.f32"), ValueRange{y})
            .getResult(0);
    return live ? arith::SelectOp::create(b, loc, live, e, zero).getResult()
                : e;
  }
};

/// `buf` at `indices` as f32 (a 16-bit q, key or value extended: exact,
/// and rounding it back for a fragment is the identity).
static Value loadF32(OpBuilder &b, Location loc, Value buf,
                     ValueRange indices) {
  Value v = memref::LoadOp::create(b, loc, buf, indices);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return v;
}

/// An attention core's buffers (the mask may be null), sizes and scale, and the
/// two ways to expand it.
struct CoreOperands {
  Value q, key, value, mask, out;
  int64_t batch, heads, n, d, k;
  double scale;
  /// The tensor-core core's slots a step of its online softmax (its
  /// schedule's: they divide k).
  int64_t slots = 32;

  /// Pooled slots (the core's `linformer.token_bound`, per_step the
  /// window, with a key mask): the lengths buffer and the tokens a slot
  /// covers; null / 0 otherwise.
  Value lengths;
  int64_t perSlot = 0;

  /// Blocks of 16 slots a step.
  int64_t slotBlocks() const { return slots / 16; }

  /// Where the loop over slots in steps of `step` (dividing k) stops for
  /// sequence `bi`: k, or with pooled slots the first step past the
  /// ceil(length / perSlot) slots that can be valid (the key mask masks
  /// the rest of that step; the slots past it stay unread, as the CPU's
  /// core does). Uniform over a warp: its rows are of one sequence.
  Value slotEnd(OpBuilder &b, Location loc, Value bi, int64_t step) const {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    if (!lengths)
      return c(k);
    // The slots' producers launch whole granules of them (their length
    // rules, linformer-cuda-mark-token-loops): a step lies in one.
    assert(cuda::slotGranule(k) % step == 0 &&
           "a core step crosses a slot granule");
    Value len = arith::IndexCastOp::create(
        b, loc, b.getIndexType(),
        memref::LoadOp::create(b, loc, lengths, ValueRange{bi}));
    // ceil(ceil(len / perSlot) / step) * step = ceil(len / (perSlot step))
    // * step: whole steps.
    Value steps = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, len, c(perSlot * step - 1)),
        c(perSlot * step));
    return arith::MinUIOp::create(
        b, loc, arith::MulIOp::create(b, loc, steps, c(step)), c(k));
  }

  static CoreOperands of(AttentionCoreOp op) {
    CoreOperands c;
    c.q = op.getQ();
    c.key = op.getKey();
    c.value = op.getValue();
    c.mask = op.getKeyMask();
    c.out = op.getInit();
    auto qType = cast<MemRefType>(c.q.getType());
    c.batch = qType.getDimSize(0);
    c.heads = qType.getDimSize(1);
    c.n = qType.getDimSize(2);
    c.d = qType.getDimSize(3);
    c.k = cast<MemRefType>(c.key.getType()).getDimSize(2);
    c.scale = op.getScale().convertToDouble();
    auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
    Value lengths = markedLengthsArgument(op);
    auto lengthsType =
        lengths ? dyn_cast<MemRefType>(lengths.getType()) : MemRefType();
    if (bound && bound.getPerStep() >= 2 && bound.getToken() == 2 &&
        bound.getBatch() == 0 && !bound.hasParts() && c.mask && lengthsType &&
        lengthsType.getRank() == 1 && lengthsType.getDimSize(0) == c.batch &&
        lengthsType.getElementType().isInteger(32)) {
      c.lengths = lengths;
      c.perSlot = bound.getPerStep();
    }
    return c;
  }

  /// Where a warp reads the projected keys and values: operand pairs for
  /// the mma fragments (keyPair: K[slot][e0, e0 + 1]; valuePair:
  /// V[slot0, slot0 + 1][col]) and, for emulation, single operands as the
  /// tensor core would multiply them (slot j0 + jj).
  struct KVSource {
    std::function<Value(OpBuilder &, Value slot, Value e0)> keyPair;
    std::function<Value(OpBuilder &, Value slot0, Value col)> valuePair;
    std::function<Value(OpBuilder &, Value j0, int64_t jj, int64_t e)> keyAt;
    std::function<Value(OpBuilder &, Value j0, int64_t jj, Value col)>
        valueAt;
    /// With ldmatrix (staged): the B fragments of key tile nt (slots
    /// j0 + 8 nt ..) for head steps st and st + 1 (4 registers; 2 when
    /// `n` is 2: st alone), and of value tiles dt and dt + 1 (columns
    /// 8 dt ..; 2 registers: dt alone). Null: keyPair / valuePair.
    std::function<SmallVector<Value, 4>(OpBuilder &, Value j0, int64_t nt,
                                        int64_t st, int64_t n)>
        keyFrags;
    std::function<SmallVector<Value, 4>(OpBuilder &, Value j0, int64_t dt,
                                        int64_t n)>
        valueFrags;
    /// With wgmma (staged, core layout): the matrix descriptors of the
    /// keys from slot j0 at head step st (B of S = Q K^T) and of the
    /// values' transpose from slot j0 (B of O += P V), both k-major. Null:
    /// the fragments above.
    std::function<Value(OpBuilder &, Value j0, int64_t st)> keyDesc;
    std::function<Value(OpBuilder &, Value j0)> valueDesc;
  };

  /// The core on tensor cores, one warp per 16 query rows (see Passes.td),
  /// as `schedule` says: blocks of its `warps` query tiles, each block of
  /// one (b, h). Staged, the block's threads first copy the keys and
  /// values into shared memory (rounded and packed once), then every warp
  /// reads its fragments from there.
  void onTensorCores(IRRewriter &rewriter, AttentionCoreOp op,
                     StringRef precision, bool emulate, bool exact,
                     mlir::linformer::CUDACoreScheduleAttr schedule) {
    rewriter.setInsertionPoint(op);
    // The steps' slots (slotBlocks() reads them back: they divide k).
    slots = schedule.getSlots();
    bool replay = cuda::hostReplays(emulate, exact);
    // Unstaged, the same blocks (`warps` query tiles of one (b, h)), each
    // warp reading its fragments from global memory (through L1, which the
    // block's warps share): no copy, no barrier, one query group a block.
    inBlocks(rewriter, op, precision, replay, exact,
             cuda::StagedCoreLayout(d, k, schedule.getWgmma()),
             schedule.getWarps(), schedule.getTiles(),
             schedule.getStaged() ? schedule.getGroups() : 1,
             schedule.getLdmatrix(), /*shared=*/schedule.getStaged());
  }

  /// The staged core's reads of its block's shared words `smem`, as lane
  /// `lane`, and the KVSource that reads through them. The source's
  /// functions call back into this reader: it must outlive the warps built
  /// from them.
  struct StagedReader {
    Location loc;
    const cuda::StagedCoreLayout &layout;
    Value smem, lane;
    StringRef precision;
    bool exact;

    Value idx(OpBuilder &b, int64_t v) const {
      return arith::ConstantIndexOp::create(b, loc, v);
    }
    Value addI(OpBuilder &b, Value x, int64_t v) const {
      return arith::AddIOp::create(b, loc, x, idx(b, v));
    }
    Value mulI(OpBuilder &b, Value x, int64_t v) const {
      return arith::MulIOp::create(b, loc, x, idx(b, v));
    }
    Value half(OpBuilder &b, Value x) const {
      return arith::DivUIOp::create(b, loc, x, idx(b, 2)).getResult();
    }
    Value word(OpBuilder &b, Value at) const {
      return memref::LoadOp::create(b, loc, smem, ValueRange{at}).getResult();
    }
    Value kAt(OpBuilder &b, Value slot, Value pairIdx) const {
      return word(b, layout.kWord(b, loc, slot, pairIdx));
    }
    Value vAt(OpBuilder &b, Value col, Value pairIdx) const {
      return word(b, layout.vWord(b, loc, col, pairIdx));
    }

    /// ldmatrix (see cuda::ldmatrixOperands). Both buffers are k-major for
    /// their products (K: a slot's head-column pairs; V: a column's slot
    /// pairs), so their B fragments come as rows: key tile nt, head steps
    /// st and st + 1 = matrices (st, pairs 0-3), (st, 4-7), (st + 1, 0-3),
    /// (st + 1, 4-7), lane L pointing at slot j0 + 8 nt + L % 8, word
    /// 8 st + 4 (L / 8); value tiles dt and dt + 1 = (dt, slot pairs 0-3),
    /// (dt, 4-7), (dt + 1, 0-3), (dt + 1, 4-7), lane L pointing at column
    /// 8 (dt + L / 16) + L % 8, word j0 / 2 + 4 (L / 8 % 2). Lane l's row
    /// of key tile nt at head step st:
    Value kRow(OpBuilder &b, Value j0, Value l, int64_t nt, int64_t st) const {
      Value slot =
          arith::AddIOp::create(b, loc, addI(b, j0, 8 * nt),
                                arith::RemUIOp::create(b, loc, l, idx(b, 8)));
      Value q = arith::DivUIOp::create(b, loc, l, idx(b, 8));
      return arith::AddIOp::create(b, loc, mulI(b, slot, layout.kStride),
                                   addI(b, mulI(b, q, 4), 8 * st))
          .getResult();
    }
    /// Lane l's row for the value tiles from column `col0`.
    Value vRow(OpBuilder &b, Value j0, Value l, Value col0) const {
      Value col = arith::AddIOp::create(
          b, loc, mulI(b, arith::DivUIOp::create(b, loc, l, idx(b, 16)), 8),
          arith::RemUIOp::create(b, loc, l, idx(b, 8)));
      Value hiHalf = arith::RemUIOp::create(
          b, loc, arith::DivUIOp::create(b, loc, l, idx(b, 8)), idx(b, 2));
      return addI(b,
                  arith::AddIOp::create(
                      b, loc,
                      mulI(b, arith::AddIOp::create(b, loc, col, col0),
                           layout.vStride),
                      arith::AddIOp::create(b, loc, half(b, j0),
                                            mulI(b, hiHalf, 4))),
                  layout.vBase);
    }
    SmallVector<Value, 4> ldm(OpBuilder &b, Value at, int64_t n) const {
      return cuda::ldmatrixOperands(b, loc, smem, at, n,
                                    cuda::stagedWordType(b.getContext(), exact),
                                    precision);
    }

    /// The source: one shared word an operand pair, a wgmma descriptor
    /// (`wgmma`: core layout on the GPU) or ldmatrix rows (`ldmatrix`).
    KVSource source(bool wgmma, bool ldmatrix) const {
      KVSource kv;
      kv.keyPair = [this](OpBuilder &b, Value slot, Value e0) {
        return cuda::wordToOperand(b, loc, kAt(b, slot, half(b, e0)),
                                   precision);
      };
      kv.valuePair = [this](OpBuilder &b, Value slot0, Value col) {
        return cuda::wordToOperand(b, loc, vAt(b, col, half(b, slot0)),
                                   precision);
      };
      kv.keyAt = [this](OpBuilder &b, Value j0, int64_t jj, int64_t e) {
        return cuda::wordElement(b, loc,
                                 kAt(b, addI(b, j0, jj), idx(b, e / 2)), e % 2,
                                 precision, exact);
      };
      kv.valueAt = [this](OpBuilder &b, Value j0, int64_t jj, Value col) {
        // j0 is a multiple of 16: slot j0 + jj is word j0/2 + jj/2.
        return cuda::wordElement(
            b, loc, vAt(b, col, addI(b, half(b, j0), jj / 2)), jj % 2,
            precision, exact);
      };
      if (wgmma)
        addDescriptors(kv);
      else if (ldmatrix)
        addLdmatrix(kv);
      return kv;
    }

    /// wgmma: descriptors of the core-layout buffers. Along k (head
    /// columns of K, slots of V) core matrices are 128 bytes apart; along
    /// the lines (slots of K, columns of V) 8 lines of kStride or vStride
    /// words.
    void addDescriptors(KVSource &kv) const {
      kv.keyDesc = [this](OpBuilder &b, Value j0, int64_t st) {
        return cuda::wgmmaDescriptor(
            b, loc, smem, layout.kWord(b, loc, j0, idx(b, 8 * st)), 128,
            32 * layout.kStride);
      };
      kv.valueDesc = [this](OpBuilder &b, Value j0) {
        return cuda::wgmmaDescriptor(
            b, loc, smem, layout.vWord(b, loc, idx(b, 0), half(b, j0)), 128,
            32 * layout.vStride);
      };
    }

    /// ldmatrix fragments (kRow, vRow). Emulated, each operand is read
    /// where ldmatrix delivers it: word t of the row its holder (lane
    /// 8q + g) points at.
    void addLdmatrix(KVSource &kv) const {
      kv.keyFrags = [this](OpBuilder &b, Value j0, int64_t nt, int64_t st,
                           int64_t n) {
        return ldm(b, kRow(b, j0, lane, nt, st), n);
      };
      kv.valueFrags = [this](OpBuilder &b, Value j0, int64_t dt, int64_t n) {
        return ldm(b, vRow(b, j0, lane, idx(b, 8 * dt)), n);
      };
      kv.keyAt = [this](OpBuilder &b, Value j0, int64_t jj, int64_t e) {
        int64_t st = e / 16, q = (e % 16) / 8 + 2 * (st % 2);
        Value holder = idx(b, 8 * q + jj % 8);
        Value at =
            addI(b, kRow(b, j0, holder, jj / 8, st - st % 2), (e % 8) / 2);
        return cuda::wordElement(b, loc, word(b, at), e % 2, precision, exact);
      };
      kv.valueAt = [this](OpBuilder &b, Value j0, int64_t jj, Value col) {
        // The holder of column col: g = col % 8 of tile col / 8.
        Value tileOf = arith::DivUIOp::create(b, loc, col, idx(b, 8));
        Value q = arith::AddIOp::create(
            b, loc,
            mulI(b, arith::RemUIOp::create(b, loc, tileOf, idx(b, 2)), 2),
            idx(b, jj / 8));
        Value holder = arith::AddIOp::create(
            b, loc, mulI(b, q, 8),
            arith::RemUIOp::create(b, loc, col, idx(b, 8)));
        Value col0 = mulI(
            b,
            arith::SubIOp::create(
                b, loc, tileOf,
                arith::RemUIOp::create(b, loc, tileOf, idx(b, 2))),
            8);
        Value at = addI(b, vRow(b, j0, holder, col0), (jj % 8) / 2);
        return cuda::wordElement(b, loc, word(b, at), jj % 2, precision,
                                 exact);
      };
    }
  };

  /// The staged core's block `block`: its sequence, head and first query
  /// tile. Where the queries are one sequence's tokens and the runtime
  /// knows the lengths (`tokenMajor`), blocks go (sequence, query block,
  /// head), heads fastest, so that the blocks holding a sequence's first
  /// tokens come first and a length rule can launch a prefix; else
  /// (sequence, head, query block).
  struct BlockAt {
    Value bi, hi, tile0;
  };
  BlockAt blockAt(OpBuilder &b, Location loc, Value block, bool tokenMajor,
                  int64_t blocksPerHead, int64_t tilesPerBlock) const {
    auto c = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    BlockAt at;
    if (tokenMajor) {
      at.hi = arith::RemUIOp::create(b, loc, block, c(heads));
      Value bq = arith::DivUIOp::create(b, loc, block, c(heads));
      at.tile0 = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, bq, c(blocksPerHead)),
          c(tilesPerBlock));
      at.bi = arith::DivUIOp::create(b, loc, bq, c(blocksPerHead));
      return at;
    }
    Value bh = arith::DivUIOp::create(b, loc, block, c(blocksPerHead));
    at.tile0 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, block, c(blocksPerHead)),
        c(tilesPerBlock));
    at.hi = arith::RemUIOp::create(b, loc, bh, c(heads));
    at.bi = arith::DivUIOp::create(b, loc, bh, c(heads));
    return at;
  }

  /// Thread (w, lane) of a block of `warps` warps copies every (warps x
  /// 32)-th word of K, then of V, into `smem`: consecutive threads read
  /// consecutive pairs of K's head columns, and consecutive columns of two
  /// slots of V.
  void copyToShared(OpBuilder &b, Location loc,
                    const cuda::StagedCoreLayout &layout, const BlockAt &at,
                    Value w, Value lane, Value smem, int64_t warps,
                    StringRef precision, bool exact) const {
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto addI = [&](OpBuilder &b, Value x, int64_t v) -> Value {
      return arith::AddIOp::create(b, loc, x, cIdx(b, v));
    };
    auto mulI = [&](OpBuilder &b, Value x, int64_t v) -> Value {
      return arith::MulIOp::create(b, loc, x, cIdx(b, v));
    };
    Value tid = arith::AddIOp::create(b, loc, mulI(b, w, 32), lane);
    auto ld = [&](OpBuilder &b, Value buf, Value r, Value col) {
      return loadF32(b, loc, buf, ValueRange{at.bi, at.hi, r, col});
    };
    auto stride = [&](int64_t count, auto fn) {
      scf::ForOp::create(
          b, loc, tid, cIdx(b, count), cIdx(b, warps * 32), ValueRange{},
          [&](OpBuilder &b, Location loc, Value i, ValueRange) {
            fn(b, i);
            scf::YieldOp::create(b, loc);
          });
    };
    stride(k * (d / 2), [&](OpBuilder &b, Value i) {
      Value slot = arith::DivUIOp::create(b, loc, i, cIdx(b, d / 2));
      Value p = arith::RemUIOp::create(b, loc, i, cIdx(b, d / 2));
      Value e0 = mulI(b, p, 2);
      Value wd = cuda::packWord(b, loc, ld(b, key, slot, e0),
                                ld(b, key, slot, addI(b, e0, 1)), precision,
                                exact);
      memref::StoreOp::create(b, loc, wd, smem,
                              ValueRange{layout.kWord(b, loc, slot, p)});
    });
    stride((k / 2) * d, [&](OpBuilder &b, Value i) {
      Value col = arith::RemUIOp::create(b, loc, i, cIdx(b, d));
      Value sp = arith::DivUIOp::create(b, loc, i, cIdx(b, d));
      Value s0 = mulI(b, sp, 2);
      Value wd = cuda::packWord(b, loc, ld(b, value, s0, col),
                                ld(b, value, addI(b, s0, 1), col), precision,
                                exact);
      memref::StoreOp::create(b, loc, wd, smem,
                              ValueRange{layout.vWord(b, loc, col, sp)});
    });
  }

  /// The query tiles warp w takes at once from tile `first` on: first,
  /// first + warps, ... (`tiles` of them).
  static SmallVector<Value> warpTiles(OpBuilder &b, Location loc, Value first,
                                      int64_t warps, int64_t tiles) {
    SmallVector<Value> out = {first};
    for (int64_t t = 1; t < tiles; ++t)
      out.push_back(arith::AddIOp::create(
          b, loc, first, arith::ConstantIndexOp::create(b, loc, t * warps)));
    return out;
  }

  /// Warp w of a staged block computes its query tiles (tile0 + w and
  /// every `warps`-th after it, `tiles` at once, then the same in each of
  /// the block's `perBlock` groups of warps x tiles) from the keys and
  /// values in `smem`.
  void computeStaged(OpBuilder &b, Location loc,
                     const cuda::StagedCoreLayout &layout, const BlockAt &at,
                     Value w, Value lane, Value smem, int64_t warps,
                     int64_t tiles, int64_t perBlock, StringRef precision,
                     bool emulate, bool exact, bool ldmatrix) const {
    StagedReader reader{loc, layout, smem, lane, precision, exact};
    KVSource kv = reader.source(layout.core && !emulate, ldmatrix);
    Value first = arith::AddIOp::create(b, loc, at.tile0, w);
    if (perBlock == 1) {
      warp(b, loc, at.bi, at.hi, warpTiles(b, loc, first, warps, tiles), lane,
           kv, precision, emulate, exact);
      return;
    }
    scf::ForOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, 0),
        arith::ConstantIndexOp::create(b, loc, perBlock * warps * tiles),
        arith::ConstantIndexOp::create(b, loc, warps * tiles), ValueRange{},
        [&](OpBuilder &b, Location loc, Value r, ValueRange) {
          warp(b, loc, at.bi, at.hi,
               warpTiles(b, loc, arith::AddIOp::create(b, loc, first, r), warps,
                         tiles),
               lane, kv, precision, emulate, exact);
          scf::YieldOp::create(b, loc);
        });
  }

  /// Warp w of an unstaged block computes its query tiles (tile0 + w and
  /// every `warps`-th after it, `tiles` of them), reading the keys and
  /// values from global memory: operand pairs packed as loaded (16-bit),
  /// or (emulated, replayed) single operands as the tensor core multiplies
  /// them. TF32 reads them in WarpRows itself.
  void computeGlobal(OpBuilder &b, Location loc, const BlockAt &at, Value w,
                     Value lane, int64_t warps, int64_t tiles,
                     StringRef precision, bool emulate, bool exact) const {
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto ld = [&](OpBuilder &b, Value buf, Value r, Value col) {
      return loadF32(b, loc, buf, ValueRange{at.bi, at.hi, r, col});
    };
    auto addI = [&](OpBuilder &b, Value x, int64_t v) -> Value {
      return arith::AddIOp::create(b, loc, x, cIdx(b, v));
    };
    auto rnd = [&](OpBuilder &b, Value v) {
      return exact ? v : cuda::roundToOperand(b, loc, v, precision, true);
    };
    KVSource kv;
    kv.keyPair = [&](OpBuilder &b, Value slot, Value e0) {
      return cuda::packOperandPair(b, loc, ld(b, key, slot, e0),
                                   ld(b, key, slot, addI(b, e0, 1)),
                                   precision);
    };
    kv.valuePair = [&](OpBuilder &b, Value slot0, Value col) {
      return cuda::packOperandPair(b, loc, ld(b, value, slot0, col),
                                   ld(b, value, addI(b, slot0, 1), col),
                                   precision);
    };
    kv.keyAt = [&](OpBuilder &b, Value j0, int64_t jj, int64_t e) {
      return rnd(b, ld(b, key, addI(b, j0, jj), cIdx(b, e)));
    };
    kv.valueAt = [&](OpBuilder &b, Value j0, int64_t jj, Value col) {
      return rnd(b, ld(b, value, addI(b, j0, jj), col));
    };
    warp(b, loc, at.bi, at.hi,
         warpTiles(b, loc, arith::AddIOp::create(b, loc, at.tile0, w), warps,
                   tiles),
         lane, kv, precision, emulate, exact);
  }

  /// The core's blocks: an scf.parallel over blocks (one (b, h) and
  /// `perBlock` groups of `warps` x `tiles` consecutive query tiles each,
  /// a warp taking `tiles` of a group at once) around one
  /// over its threads (warps x 32 lanes), both already mapped to block and
  /// thread ids. `shared` (staged): on the GPU the threads copy the keys
  /// and values into dynamic shared memory, meet at a barrier and compute;
  /// emulated (a CPU runs a thread loop to its end before the next starts)
  /// the copy and the computation are two thread loops over one buffer of
  /// the block. Else each warp reads them from global memory.
  void inBlocks(IRRewriter &rewriter, AttentionCoreOp op, StringRef precision,
                bool emulate, bool exact, const cuda::StagedCoreLayout &layout,
                int64_t warps, int64_t tiles, int64_t perBlock, bool ldmatrix,
                bool shared) const {
    Location loc = op.getLoc();
    MLIRContext *ctx = rewriter.getContext();
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = cIdx(rewriter, 0), one = cIdx(rewriter, 1);
    int64_t groupsPerHead = n / 16 / (warps * tiles);
    // A block walks `perBlock` consecutive groups of `warps` x `tiles`
    // query tiles with one copy of K and V.
    int64_t blocksPerHead = groupsPerHead / perBlock;
    Type word = cuda::stagedWordType(ctx, exact);
    // Blocks token-major where linformer-cuda-mark-token-loops marked q's
    // batch and token dimensions (see blockAt).
    auto loops = op->getAttrOfType<DenseI64ArrayAttr>(kTokenLoopsAttrName);
    bool tokenMajor = loops && loops.asArrayRef() == ArrayRef<int64_t>{0, 2} &&
                      blocksPerHead * perBlock * warps * tiles * 16 == n;
    auto outer = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero},
        ValueRange{cIdx(rewriter, batch * heads * blocksPerHead)},
        ValueRange{one}, [&](OpBuilder &b, Location loc, ValueRange ivs) {
          BlockAt at = blockAt(b, loc, ivs[0], tokenMajor, blocksPerHead,
                               perBlock * warps * tiles);
          // One loop over the block's threads running `body(w, lane)`.
          auto threads = [&](OpBuilder &b,
                             function_ref<void(OpBuilder &, Value, Value)>
                                 body) {
            cuda::blockThreads(b, loc, warps, body);
          };
          auto copy = [&](OpBuilder &b, Value w, Value lane, Value smem) {
            copyToShared(b, loc, layout, at, w, lane, smem, warps, precision,
                         exact);
          };
          auto compute = [&](OpBuilder &b, Value w, Value lane, Value smem) {
            computeStaged(b, loc, layout, at, w, lane, smem, warps, tiles,
                          perBlock, precision, emulate, exact, ldmatrix);
          };
          if (!shared) {
            threads(b, [&](OpBuilder &b, Value w, Value lane) {
              computeGlobal(b, loc, at, w, lane, warps, tiles, precision,
                            emulate, exact);
            });
          } else if (emulate) {
            Value smem = memref::AllocOp::create(
                b, loc, MemRefType::get({layout.words}, word));
            threads(b, [&](OpBuilder &b, Value w, Value lane) {
              copy(b, w, lane, smem);
            });
            threads(b, [&](OpBuilder &b, Value w, Value lane) {
              compute(b, w, lane, smem);
            });
            memref::DeallocOp::create(b, loc, smem);
          } else {
            threads(b, [&](OpBuilder &b, Value w, Value lane) {
              Value smem = cuda::sharedWords(b, loc, layout.words, word);
              copy(b, w, lane, smem);
              // wgmma reads K and V through the async proxy (matrix
              // descriptors), the copy wrote them through the generic one
              // (st.shared): each thread fences its writes into the async
              // proxy before the barrier (PTX ISA, "Proxies"; the staged
              // contractions fence their cp.async copies the same way).
              if (layout.core)
                cuda::fenceSharedForAsyncProxy(b, loc);
              gpu::BarrierOp::create(b, loc);
              compute(b, w, lane, smem);
            });
          }
          scf::ReduceOp::create(b, loc);
        });
    cuda::mapLoop(outer, {gpu::Processor::BlockX});
    if (tokenMajor)
      outer->setAttr(
          kCUDATokenRowsAttrName,
          TokenRowsAttr::get(
              ctx, DenseI64ArrayAttr::get(ctx, {batch, blocksPerHead, heads}),
              /*batch=*/0, /*row=*/1, perBlock * warps * tiles * 16));
    rewriter.eraseOp(op);
  }

  /// One warp's 16 query rows `tile` of (bi, hi), as lane `lane`. Lane
  /// (g, t) = (lane / 4, lane % 4) holds rows g and g + 8 of the tile; of
  /// a 16-slot block, S columns 2t, 2t + 1 of each 8-slot half; of the
  /// output, columns 2t, 2t + 1 of each 8-column tile. The lane's values
  /// the steps of its slot loop share (see `warp`).
  struct WarpRows {
    const CoreOperands &core;
    Location loc;
    Value bi, hi;
    const KVSource &kv;
    StringRef precision;
    bool emulate, exact;
    /// TF32 (an f32 core on tensor cores): m16n8k8 steps of single f32
    /// operands instead of m16n8k16 ones of 16-bit pairs; `x3` (3xTF32):
    /// each operand a TF32 head and tail fragment, three mma a step.
    bool tf32, x3;
    int64_t dSteps, dTiles;
    /// The slots' blocks of 16 a step, and the scores a lane holds of one
    /// (GPU: 4; emulated: all 16).
    int64_t blocks, per;
    VectorType accType;
    Value g, twoT, row[2];
    Value fzero, scaleLog2, negInf, zeros;
    /// Q's A fragments, once: one per 16-wide step of the head (GPU; TF32:
    /// one vector<4x1xf32> per 8-wide step).
    SmallVector<SmallVector<Value, 4>> qFrag;

    WarpRows(const CoreOperands &core, OpBuilder &b, Location loc, Value bi,
             Value hi, Value tile, Value lane, const KVSource &kv,
             StringRef precision, bool emulate, bool exact)
        : core(core), loc(loc), bi(bi), hi(hi), kv(kv), precision(precision),
          emulate(emulate), exact(exact), tf32(cuda::isTF32(precision)),
          x3(precision == "tf32x3"), dSteps(core.d / (tf32 ? 8 : 16)),
          dTiles(core.d / 8), blocks(core.slotBlocks()), per(emulate ? 16 : 4),
          accType(VectorType::get({2, 2}, b.getF32Type())) {
      g = arith::DivUIOp::create(b, loc, lane, c(b, 4));
      Value t = arith::RemUIOp::create(b, loc, lane, c(b, 4));
      twoT = arith::MulIOp::create(b, loc, t, c(b, 2));
      row[0] = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, tile, c(b, 16)), g);
      row[1] = addI(b, row[0], 8);
      fzero = cF(b, 0.0);
      scaleLog2 = cF(b, core.scale * llvm::numbers::log2e);
      negInf = cF(b, -std::numeric_limits<double>::infinity());
      zeros = arith::ConstantOp::create(
          b, loc, accType, DenseElementsAttr::get(accType, 0.0f));
      if (emulate)
        return;
      if (tf32) {
        // m16n8k8 .tf32: a0 = A[g][k = t], a1 = A[g + 8][t], a2 = A[g][t +
        // 4], a3 = A[g + 8][t + 4]. Q K^T sums over the head columns in any
        // order: within each step of 8, A's (and B's) k = t and t + 4 are
        // columns 2t and 2t + 1, so K's two operands of a lane are adjacent
        // (one 8-byte load, see keyFrag).
        for (int64_t s = 0; s < dSteps; ++s) {
          Value c0 = addI(b, twoT, 8 * s), c1 = addI(b, c0, 1);
          auto [head, tail] = tf32Frags(
              b, {ld(b, core.q, row[0], c0), ld(b, core.q, row[1], c0),
                  ld(b, core.q, row[0], c1), ld(b, core.q, row[1], c1)});
          qFrag.push_back({head, tail});
        }
        return;
      }
      for (int64_t s = 0; s < dSteps; ++s) {
        Value c0 = addI(b, twoT, 16 * s), c1 = addI(b, c0, 1),
              c8 = addI(b, c0, 8), c9 = addI(b, c0, 9);
        qFrag.push_back({pack(b, ld(b, core.q, row[0], c0),
                              ld(b, core.q, row[0], c1)),
                         pack(b, ld(b, core.q, row[1], c0),
                              ld(b, core.q, row[1], c1)),
                         pack(b, ld(b, core.q, row[0], c8),
                              ld(b, core.q, row[0], c9)),
                         pack(b, ld(b, core.q, row[1], c8),
                              ld(b, core.q, row[1], c9))});
      }
    }

    Value c(OpBuilder &b, int64_t v) const {
      return arith::ConstantIndexOp::create(b, loc, v);
    }
    Value addI(OpBuilder &b, Value x, int64_t v) const {
      return arith::AddIOp::create(b, loc, x, c(b, v));
    }
    Value cF(OpBuilder &b, double v) const {
      return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
    }
    Value ld(OpBuilder &b, Value buf, Value r, Value col) const {
      return loadF32(b, loc, buf, ValueRange{bi, hi, r, col});
    }
    Value rnd(OpBuilder &b, Value v) const {
      return exact ? v : cuda::roundToOperand(b, loc, v, precision, true);
    }
    Value pack(OpBuilder &b, Value lo, Value hiV) const {
      return cuda::packOperandPair(b, loc, lo, hiV, precision);
    }
    /// The TF32 head (and with `x3` tail) fragments of `values`
    /// (cuda::tf32Fragments).
    std::pair<Value, Value> tf32Frags(OpBuilder &b,
                                      ArrayRef<Value> values) const {
      return cuda::tf32Fragments(b, loc, values, x3);
    }
    /// K's TF32 B fragment of slot `slot` at head step `st`: columns
    /// 8 st + 2t and + 1 (B's k = t and t + 4, as Q's fragments take them),
    /// one aligned 8-byte load (the head width is a multiple of 8).
    std::pair<Value, Value> keyFrag(OpBuilder &b, Value slot,
                                    int64_t st) const {
      Value pair = vector::LoadOp::create(
          b, loc, VectorType::get({2}, b.getF32Type()), core.key,
          ValueRange{bi, hi, slot, addI(b, twoT, 8 * st)},
          /*nontemporal=*/false, llvm::MaybeAlign(8));
      return tf32Frags(
          b, {vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{0}),
              vector::ExtractOp::create(b, loc, pair, ArrayRef<int64_t>{1})});
    }
    /// acc + A B with mma.sync m16n8k8 .tf32 (f32 accumulators), of head
    /// and (x3) tail fragments: with tails A_h B_t + A_t B_h + A_h B_h,
    /// the small terms first.
    Value mmaTF32(OpBuilder &b, std::pair<Value, Value> aFrag,
                  std::pair<Value, Value> bFrag, Value acc) const {
      auto mma = [&](Value x, Value y, Value c) -> Value {
        return nvgpu::MmaSyncOp::create(b, loc, x, y, c,
                                        ArrayRef<int64_t>{16, 8, 8},
                                        /*tf32Enabled=*/true);
      };
      if (x3) {
        acc = mma(aFrag.first, bFrag.second, acc);
        acc = mma(aFrag.second, bFrag.first, acc);
      }
      return mma(aFrag.first, bFrag.first, acc);
    }
    /// A row's value over its four lanes (xor 1, 2 stay within the quad);
    /// emulated lanes already hold whole rows.
    Value quad(OpBuilder &b, Value x, bool isMax) const {
      if (emulate)
        return x;
      return cuda::xorButterfly(
          b, loc, x, {1, 2},
          [&](OpBuilder &b, Location loc, Value lhs, Value rhs) {
            return isMax
                       ? arith::MaximumFOp::create(b, loc, lhs, rhs).getResult()
                       : arith::AddFOp::create(b, loc, lhs, rhs).getResult();
          });
    }

    /// The scores this lane holds of the step's blocks (block u at slot
    /// jb[u]): s[h][per * u + jj], row h, slot jj of block u (GPU: jj in
    /// {8 nt + 2t + o}; emulated: all 16), masked slots -inf.
    SmallVector<SmallVector<Value>> scores(OpBuilder &b, Value j0,
                                           ArrayRef<Value> jb) const {
      Type f32 = b.getF32Type();
      auto masked = [&](Value s, Value slot) -> Value {
        if (!core.mask)
          return s;
        Value flag =
            memref::LoadOp::create(b, loc, core.mask, ValueRange{bi, slot});
        return arith::SelectOp::create(b, loc, maskBit(b, loc, flag), s,
                                       negInf);
      };
      SmallVector<SmallVector<Value>> s(2);
      // wgmma: the warpgroup's scores of the whole step, one m64n(16
      // blocks)k16 a head step with Q's fragments as A; register
      // 4 nt + 2 h + o is row h, slot 8 nt + 2t + o of the step.
      SmallVector<Value> sRegs;
      if (!emulate && kv.keyDesc) {
        // The first head step overwrites (scale-d 0): no zeroing.
        sRegs.assign(8 * blocks, LLVM::PoisonOp::create(b, loc, f32));
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        for (int64_t st = 0; st < dSteps; ++st)
          sRegs = cuda::wgmmaRS(b, loc, sRegs, qFrag[st],
                                kv.keyDesc(b, j0, st), 16 * blocks, precision,
                                /*accumulate=*/st > 0);
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
      }
      for (int64_t u = 0; u < blocks; ++u) {
        if (!sRegs.empty()) {
          Value j2t = arith::AddIOp::create(b, loc, jb[u], twoT);
          for (int h = 0; h < 2; ++h)
            for (int64_t nt = 0; nt < 2; ++nt)
              for (int64_t o = 0; o < 2; ++o)
                s[h].push_back(masked(sRegs[4 * (2 * u + nt) + 2 * h + o],
                                      addI(b, j2t, 8 * nt + o)));
          continue;
        }
        if (emulate) {
          for (int h = 0; h < 2; ++h)
            for (int64_t jj = 0; jj < 16; ++jj) {
              Value sum = fzero;
              for (int64_t e = 0; e < core.d; ++e) {
                Value x = rnd(b, ld(b, core.q, row[h], c(b, e)));
                Value y = kv.keyAt(b, jb[u], jj, e);
                sum = arith::AddFOp::create(b, loc, sum,
                                            arith::MulFOp::create(b, loc, x, y));
              }
              s[h].push_back(masked(sum, addI(b, jb[u], jj)));
            }
          continue;
        }
        Value j2t = arith::AddIOp::create(b, loc, jb[u], twoT);
        Value jg = arith::AddIOp::create(b, loc, jb[u], g);
        Value sAcc[2];
        for (int64_t nt = 0; nt < 2 && tf32; ++nt) {
          // B = K^T of the step's 8 head columns: b0 = K[slot g][k = t],
          // b1 = K[slot g][t + 4], k as Q's fragments take it.
          Value keyRow = addI(b, jg, 8 * nt);
          Value a = zeros;
          for (int64_t st = 0; st < dSteps; ++st)
            a = mmaTF32(b, {qFrag[st][0], qFrag[st][1]}, keyFrag(b, keyRow, st),
                        a);
          sAcc[nt] = a;
        }
        for (int64_t nt = 0; nt < 2 && !tf32; ++nt) {
          Value keyRow = addI(b, jg, 8 * nt);
          Value a = zeros;
          SmallVector<Value, 4> regs;
          for (int64_t st = 0; st < dSteps; ++st) {
            SmallVector<Value, 2> bFrag;
            if (kv.keyFrags) {
              // Steps st and st + 1 in one ldmatrix (x2 for a last odd
              // one).
              if (st % 2 == 0)
                regs = kv.keyFrags(b, jb[u], nt, st, st + 1 < dSteps ? 4 : 2);
              bFrag = {regs[2 * (st % 2)], regs[2 * (st % 2) + 1]};
            } else {
              Value c0 = addI(b, twoT, 16 * st), c8 = addI(b, c0, 8);
              bFrag = {kv.keyPair(b, keyRow, c0), kv.keyPair(b, keyRow, c8)};
            }
            a = cuda::mmaM16N8K16(b, loc, qFrag[st], bFrag, a, precision);
          }
          sAcc[nt] = a;
        }
        for (int h = 0; h < 2; ++h)
          for (int64_t nt = 0; nt < 2; ++nt)
            for (int64_t o = 0; o < 2; ++o)
              s[h].push_back(
                  masked(vector::ExtractOp::create(b, loc, sAcc[nt],
                                                   ArrayRef<int64_t>{h, o}),
                         addI(b, j2t, 8 * nt + o)));
      }
      return s;
    }

    /// The online softmax's step over the scores `s`: each row's new max
    /// `mNew` (across the four lanes of a row on the GPU), the old
    /// accumulators' factor `alpha`, the probabilities `p`, and the
    /// running sums `l` updated.
    struct Softmax {
      Value mNew[2], alpha[2];
      SmallVector<SmallVector<Value>> p = SmallVector<SmallVector<Value>>(2);
    };
    Softmax softmax(OpBuilder &b, ArrayRef<SmallVector<Value>> s,
                    const Value (&m)[2], Value (&l)[2]) const {
      Softmax r;
      for (int h = 0; h < 2; ++h) {
        Value x = s[h][0];
        for (size_t jj = 1; jj < s[h].size(); ++jj)
          x = arith::MaximumFOp::create(b, loc, x, s[h][jj]);
        r.mNew[h] = arith::MaximumFOp::create(b, loc, m[h], quad(b, x, true));
        SoftmaxStep step(b, loc, r.mNew[h], scaleLog2, core.mask != nullptr);
        r.alpha[h] = step.exp(b, loc, m[h]);
        Value sum = fzero;
        for (Value v : s[h]) {
          r.p[h].push_back(step.exp(b, loc, v));
          sum = arith::AddFOp::create(b, loc, sum, r.p[h].back());
        }
        l[h] = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, l[h], r.alpha[h]), sum);
      }
      return r;
    }

    /// O = O * alpha + P V, block by block, on the output tiles'
    /// accumulators `acc`.
    void accumulate(OpBuilder &b, ArrayRef<Value> jb, const Softmax &sm,
                    SmallVectorImpl<Value> &acc) const {
      const auto &p = sm.p;
      Value alphaV = vector::FromElementsOp::create(
          b, loc, accType,
          ValueRange{sm.alpha[0], sm.alpha[0], sm.alpha[1], sm.alpha[1]});
      for (int64_t dt = 0; dt < dTiles; ++dt)
        acc[dt] = arith::MulFOp::create(b, loc, acc[dt], alphaV);
      // wgmma: the warpgroup's O (register 4 dt + 2 h + o: tile dt's
      // (h, o)) += P V, one m64n(d)k16 a block with P's fragments as A.
      auto pFragOf = [&](int64_t u) {
        auto pu = [&](int h, int64_t i) { return p[h][per * u + i]; };
        return SmallVector<Value>{
            pack(b, pu(0, 0), pu(0, 1)), pack(b, pu(1, 0), pu(1, 1)),
            pack(b, pu(0, 2), pu(0, 3)), pack(b, pu(1, 2), pu(1, 3))};
      };
      if (!emulate && kv.valueDesc) {
        SmallVector<Value> regs;
        for (int64_t dt = 0; dt < dTiles; ++dt)
          for (int h = 0; h < 2; ++h)
            for (int64_t o = 0; o < 2; ++o)
              regs.push_back(vector::ExtractOp::create(
                  b, loc, acc[dt], ArrayRef<int64_t>{h, o}));
        // Every block's A registers before the fence (ptxas otherwise
        // injects a warpgroup.arrive between the wgmmas).
        SmallVector<SmallVector<Value>> pf;
        for (int64_t u = 0; u < blocks; ++u)
          pf.push_back(pFragOf(u));
        NVVM::WgmmaFenceAlignedOp::create(b, loc);
        for (int64_t u = 0; u < blocks; ++u)
          regs = cuda::wgmmaRS(b, loc, regs, pf[u], kv.valueDesc(b, jb[u]),
                               core.d, precision);
        NVVM::WgmmaGroupSyncAlignedOp::create(b, loc);
        NVVM::WgmmaWaitGroupSyncOp::create(b, loc, 0);
        for (int64_t dt = 0; dt < dTiles; ++dt)
          acc[dt] = vector::FromElementsOp::create(
              b, loc, accType, ArrayRef<Value>(regs).slice(4 * dt, 4));
        return;
      }
      for (int64_t u = 0; u < blocks; ++u) {
        if (emulate) {
          // Each of the lane's four output elements: its rows' full
          // probabilities against the column of V.
          for (int64_t dt = 0; dt < dTiles; ++dt) {
            Value r = acc[dt];
            for (int h = 0; h < 2; ++h)
              for (int64_t o = 0; o < 2; ++o) {
                Value col = addI(b, twoT, 8 * dt + o);
                Value sum = vector::ExtractOp::create(b, loc, r,
                                                      ArrayRef<int64_t>{h, o});
                for (int64_t jj = 0; jj < 16; ++jj)
                  sum = arith::AddFOp::create(
                      b, loc, sum,
                      arith::MulFOp::create(b, loc, rnd(b, p[h][per * u + jj]),
                                            kv.valueAt(b, jb[u], jj, col)));
                r = vector::InsertOp::create(b, loc, sum, r,
                                             ArrayRef<int64_t>{h, o});
              }
            acc[dt] = r;
          }
          continue;
        }
        Value j2t = arith::AddIOp::create(b, loc, jb[u], twoT);
        if (tf32) {
          // m16n8k8 on each 8-slot half nt of the block, its slots in the
          // order the lane holds them: the lane's probabilities of slots
          // 2t and 2t + 1 (S's accumulator layout) are A's k = t and
          // t + 4, so B's rows t and t + 4 are V's slots 2t and 2t + 1.
          // The product sums over the same slots: no shuffle.
          for (int64_t nt = 0; nt < 2; ++nt) {
            auto pu = [&](int h, int64_t o) {
              return p[h][per * u + 2 * nt + o];
            };
            std::pair<Value, Value> pFrag =
                tf32Frags(b, {pu(0, 0), pu(1, 0), pu(0, 1), pu(1, 1)});
            Value s0 = addI(b, j2t, 8 * nt), s1 = addI(b, s0, 1);
            for (int64_t dt = 0; dt < dTiles; ++dt) {
              Value col = arith::AddIOp::create(b, loc, g, c(b, 8 * dt));
              acc[dt] = mmaTF32(b, pFrag,
                                tf32Frags(b, {ld(b, core.value, s0, col),
                                              ld(b, core.value, s1, col)}),
                                acc[dt]);
            }
          }
          continue;
        }
        SmallVector<Value> pFrag = pFragOf(u);
        SmallVector<Value, 4> vRegs;
        for (int64_t dt = 0; dt < dTiles; ++dt) {
          SmallVector<Value, 2> vFrag;
          if (kv.valueFrags) {
            // Tiles dt and dt + 1 in one ldmatrix (x2 for a last odd
            // one).
            if (dt % 2 == 0)
              vRegs = kv.valueFrags(b, jb[u], dt, dt + 1 < dTiles ? 4 : 2);
            vFrag = {vRegs[2 * (dt % 2)], vRegs[2 * (dt % 2) + 1]};
          } else {
            Value col = arith::AddIOp::create(b, loc, g, c(b, 8 * dt));
            vFrag = {kv.valuePair(b, j2t, col),
                     kv.valuePair(b, addI(b, j2t, 8), col)};
          }
          acc[dt] = cuda::mmaM16N8K16(b, loc, pFrag, vFrag, acc[dt], precision);
        }
      }
    }

    /// Each row's sum over its four lanes, then O / l as O times 1 / l
    /// (one division a row; rounded to nearest even into a 16-bit output),
    /// from the slot loop's `results` of this tile (maxes, sums, output
    /// tiles).
    void store(OpBuilder &b, ValueRange results) const {
      Value rcp[2];
      for (int h = 0; h < 2; ++h)
        rcp[h] = arith::DivFOp::create(b, loc, cF(b, 1.0),
                                       quad(b, results[2 + h], false));
      Type outType = cast<MemRefType>(core.out.getType()).getElementType();
      for (int64_t dt = 0; dt < dTiles; ++dt)
        for (int h = 0; h < 2; ++h)
          for (int64_t o = 0; o < 2; ++o) {
            Value v = vector::ExtractOp::create(b, loc, results[4 + dt],
                                                ArrayRef<int64_t>{h, o});
            Value r = arith::MulFOp::create(b, loc, v, rcp[h]);
            if (r.getType() != outType)
              r = arith::TruncFOp::create(b, loc, outType, r);
            memref::StoreOp::create(
                b, loc, r, core.out,
                ValueRange{bi, hi, row[h], addI(b, twoT, 8 * dt + o)});
          }
    }
  };

  /// One warp's 16 query rows of each of `tiles` of (bi, hi), as lane
  /// `lane` (see WarpRows): a loop over the slots, `blocks` blocks of 16 a
  /// step, whose iter args are, tile by tile, the max and (partial) sum of
  /// each of the lane's two rows, then the output tiles' accumulators. A
  /// step: every tile's scores of the blocks, then each tile's max and
  /// alpha a row and one rescale of its accumulators, then every tile's
  /// P V products. The tiles' scores read the same key fragments, their
  /// products the same value fragments, one after another (nothing
  /// written in between): the same loads, which CSE keeps once, so each
  /// fragment feeds the mma of every tile (FlashAttention-2 gives a warp
  /// 32 rows at head width 64 this way).
  void warp(OpBuilder &b, Location loc, Value bi, Value hi,
            ArrayRef<Value> tiles, Value lane, const KVSource &kv,
            StringRef precision, bool emulate, bool exact) const {
    std::deque<WarpRows> ws;
    for (Value tile : tiles)
      ws.emplace_back(*this, b, loc, bi, hi, tile, lane, kv, precision, emulate,
                      exact);
    const WarpRows &w = ws.front();
    int64_t blocks = w.blocks, per = 4 + w.dTiles;
    SmallVector<Value> init;
    for (size_t t = 0; t < ws.size(); ++t) {
      init.append({w.negInf, w.negInf, w.fzero, w.fzero});
      for (int64_t dt = 0; dt < w.dTiles; ++dt)
        init.push_back(w.zeros);
    }
    auto loop = scf::ForOp::create(
        b, loc, w.c(b, 0), slotEnd(b, loc, bi, 16 * blocks),
        w.c(b, 16 * blocks), init,
        [&](OpBuilder &b, Location loc, Value j0, ValueRange it) {
          // Block u starts at slot j0 + 16 u.
          SmallVector<Value> jb;
          for (int64_t u = 0; u < blocks; ++u)
            jb.push_back(u ? w.addI(b, j0, 16 * u) : j0);
          SmallVector<SmallVector<SmallVector<Value>>> s;
          for (const WarpRows &wt : ws)
            s.push_back(wt.scores(b, j0, jb));
          SmallVector<Value> next;
          SmallVector<WarpRows::Softmax> sm;
          SmallVector<SmallVector<Value>> acc;
          for (auto [t, wt] : llvm::enumerate(ws)) {
            ValueRange mine = it.slice(t * per, per);
            Value m[2] = {mine[0], mine[1]}, l[2] = {mine[2], mine[3]};
            sm.push_back(wt.softmax(b, s[t], m, l));
            next.append({sm.back().mNew[0], sm.back().mNew[1], l[0], l[1]});
            next.append(per - 4, Value());
            acc.emplace_back(mine.begin() + 4, mine.end());
          }
          for (auto [t, wt] : llvm::enumerate(ws)) {
            wt.accumulate(b, jb, sm[t], acc[t]);
            llvm::copy(acc[t], next.begin() + t * per + 4);
          }
          scf::YieldOp::create(b, loc, next);
        });
    for (auto [t, wt] : llvm::enumerate(ws))
      wt.store(b, loop.getResults().slice(t * per, per));
  }

  /// Query rows, f32, online softmax (see the file comment): one thread
  /// the whole head width, or `lanes` consecutive lanes of a warp a slice
  /// each (the loop (b, h, i, g), marked whole-warps), each slot's score
  /// the lanes' partial dot products added by a shuffle butterfly, which
  /// leaves every lane the same sum (on the host too:
  /// linformer-cuda-emulate-warps lowers the shuffles). With `rowsPer` > 1 a
  /// thread (lane) takes that many consecutive query rows, each K and V slice
  /// it loads used for all of them (the loop's token dimension then counts
  /// groups of rows: linformer.cuda_tokens_per_iteration). Lanes and rows
  /// as `schedule` says, which fits (CoreShape::fitsF32): lanes need whole
  /// slices, and whole warps of rows (n a multiple of 32 of the row groups
  /// keeps every block of row groups x lanes threads whole warps).
  void scalar(IRRewriter &rewriter, AttentionCoreOp op,
              CUDAF32CoreScheduleAttr schedule) const {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    int64_t lanes = schedule.getLanes(), rowsPer = schedule.getRows();
    int64_t w = d / lanes, R = rowsPer;
    Type et = cast<MemRefType>(q.getType()).getElementType();
    auto vec = VectorType::get({w}, et);
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = cIdx(rewriter, 0), one = cIdx(rewriter, 1);
    // Rows of q, key, value and out start 16-byte aligned when the head
    // width is a multiple of 4 (buffers are: the runtime allocates them or
    // checks the caller's), so each row (or slice of 4k) moves in 16-byte
    // vectors.
    llvm::MaybeAlign rowAlign(d % 4 == 0 && w % 4 == 0 ? 16 : 4);
    auto row = [&](OpBuilder &b, Value buf, ValueRange at) -> Value {
      return vector::LoadOp::create(b, loc, vec, buf, at,
                                    /*nontemporal=*/false, rowAlign);
    };
    SmallVector<Value> lbs{zero, zero, zero},
        ubs{cIdx(rewriter, batch), cIdx(rewriter, heads),
            cIdx(rewriter, n / R)};
    if (lanes > 1) {
      lbs.push_back(zero);
      ubs.push_back(cIdx(rewriter, lanes));
    }
    auto rows = scf::ParallelOp::create(
        rewriter, loc, lbs, ubs, SmallVector<Value>(lbs.size(), one),
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value bi = ivs[0], hi = ivs[1];
          // This thread's rows: i0 .. i0 + R - 1.
          SmallVector<Value> is;
          for (int64_t r = 0; r < R; ++r) {
            Value i = ivs[2];
            if (R > 1)
              i = arith::AddIOp::create(
                  b, loc, arith::MulIOp::create(b, loc, ivs[2], cIdx(b, R)),
                  cIdx(b, r));
            is.push_back(i);
          }
          // This lane's slice starts at column c0.
          Value c0 = lanes > 1
                         ? arith::MulIOp::create(b, loc, ivs[3], cIdx(b, w))
                               .getResult()
                         : cIdx(b, 0);
          auto cF = [&](double v) -> Value {
            return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
          };
          Value fzero = cF(0.0), scaleLog2 = cF(scale * llvm::numbers::log2e);
          Value negInf = cF(-std::numeric_limits<double>::infinity());
          // qs[r]: row r's slice of this lane, as scalars.
          SmallVector<SmallVector<Value>> qs(R);
          for (int64_t r = 0; r < R; ++r) {
            Value qRow = row(b, q, ValueRange{bi, hi, is[r], c0});
            for (int64_t c = 0; c < w; ++c)
              qs[r].push_back(vector::ExtractOp::create(b, loc, qRow,
                                                        ArrayRef<int64_t>{c}));
          }
          Value accInit = arith::ConstantOp::create(
              b, loc, vec, DenseElementsAttr::get(vec, b.getFloatAttr(et, 0.0)));
          // The slots `block` at a time: their scores (independent fma
          // chains over the slice), one max and one rescale of the
          // accumulator a block, then P V.
          int64_t block = 1;
          for (int64_t o : {16, 8, 4, 2})
            if (k % o == 0 && o * R <= 16) {
              block = o;
              break;
            }
          // A slot's score from this lane's partial sum: the lanes' sums
          // added by the butterfly.
          auto total = [&](OpBuilder &b, Value part) -> Value {
            return lanes == 1 ? part : cuda::butterflySum(b, loc, part, lanes);
          };
          // Carried: (m, l, acc) of each row.
          SmallVector<Value> init;
          for (int64_t r = 0; r < R; ++r)
            init.append({negInf, fzero, accInit});
          auto loop = scf::ForOp::create(
              b, loc, cIdx(b, 0), slotEnd(b, loc, bi, block), cIdx(b, block),
              init, [&](OpBuilder &b, Location loc, Value j0, ValueRange it) {
                SmallVector<Value> slots;
                SmallVector<SmallVector<Value>> scores(R);
                SmallVector<Value> mNew;
                for (int64_t r = 0; r < R; ++r)
                  mNew.push_back(it[3 * r]);
                for (int64_t jj = 0; jj < block; ++jj) {
                  Value j = jj ? arith::AddIOp::create(b, loc, j0, cIdx(b, jj))
                                     .getResult()
                               : j0;
                  slots.push_back(j);
                  Value kRow = row(b, key, ValueRange{bi, hi, j, c0});
                  Value flag;
                  for (int64_t r = 0; r < R; ++r) {
                    Value s = fzero;
                    for (int64_t c = 0; c < w; ++c)
                      s = LLVM::FMAOp::create(
                          b, loc, qs[r][c],
                          vector::ExtractOp::create(b, loc, kRow,
                                                    ArrayRef<int64_t>{c}),
                          s);
                    s = total(b, s);
                    if (mask) {
                      if (!flag)
                        flag = maskBit(b, loc,
                                       memref::LoadOp::create(
                                           b, loc, mask, ValueRange{bi, j}));
                      s = arith::SelectOp::create(b, loc, flag, s, negInf);
                    }
                    scores[r].push_back(s);
                    mNew[r] = arith::MaximumFOp::create(b, loc, mNew[r], s);
                  }
                }
                SmallVector<SoftmaxStep> steps;
                SmallVector<Value> lNew, accNew;
                for (int64_t r = 0; r < R; ++r) {
                  steps.emplace_back(b, loc, mNew[r], scaleLog2,
                                     mask != nullptr);
                  Value alpha = steps[r].exp(b, loc, it[3 * r]);
                  lNew.push_back(
                      arith::MulFOp::create(b, loc, it[3 * r + 1], alpha));
                  accNew.push_back(arith::MulFOp::create(
                      b, loc, it[3 * r + 2],
                      vector::BroadcastOp::create(b, loc, vec, alpha)));
                }
                for (int64_t jj = 0; jj < block; ++jj) {
                  SmallVector<Value> p;
                  for (int64_t r = 0; r < R; ++r) {
                    p.push_back(steps[r].exp(b, loc, scores[r][jj]));
                    lNew[r] = arith::AddFOp::create(b, loc, lNew[r], p[r]);
                  }
                  Value vRow = row(b, value, ValueRange{bi, hi, slots[jj], c0});
                  for (int64_t r = 0; r < R; ++r)
                    accNew[r] = vector::FMAOp::create(
                        b, loc, vector::BroadcastOp::create(b, loc, vec, p[r]),
                        vRow, accNew[r]);
                }
                SmallVector<Value> next;
                for (int64_t r = 0; r < R; ++r)
                  next.append({mNew[r], lNew[r], accNew[r]});
                scf::YieldOp::create(b, loc, next);
              });
          // One division a row: the accumulator times 1 / l.
          for (int64_t r = 0; r < R; ++r) {
            Value rcp = arith::DivFOp::create(b, loc, cF(1.0),
                                              loop.getResult(3 * r + 1));
            Value result = arith::MulFOp::create(
                b, loc, loop.getResult(3 * r + 2),
                vector::BroadcastOp::create(b, loc, vec, rcp));
            vector::StoreOp::create(b, loc, result, out,
                                    ValueRange{bi, hi, is[r], c0},
                                    /*nontemporal=*/false, rowAlign);
          }
          scf::ReduceOp::create(b, loc);
        });
    // The lanes of a row shuffle: their blocks must be whole warps.
    if (lanes > 1)
      rows->setAttr(kCUDAWholeWarpsAttrName, rewriter.getUnitAttr());
    // Where the query rows are one sequence's tokens (q's batch and token
    // dimensions marked, as for the staged core), the loop (b, h, i) says
    // so: linformer-cuda-tile-parallel-loops then numbers its blocks
    // (sequence, token tile, head) with a length rule, as for any loop
    // over tokens, its tiles counted in tokens (R an iteration).
    if (auto loops = op->getAttrOfType<DenseI64ArrayAttr>(kTokenLoopsAttrName);
        loops && loops.asArrayRef() == ArrayRef<int64_t>{0, 2}) {
      rows->setAttr(kTokenLoopsAttrName, loops);
      if (R > 1)
        rows->setAttr(kCUDATokensPerIterationAttrName,
                      rewriter.getI64IntegerAttr(R));
    }
    rewriter.eraseOp(op);
  }
};

struct CUDAExpandAttentionCorePass
    : mlir::linformer::impl::LinformerCUDAExpandAttentionCorePassBase<
          CUDAExpandAttentionCorePass> {
  using Base::Base;

  void runOnOperation() override {
    if (mma != "none" && !cuda::isTF32(mma) && mma != "bf16" && mma != "f16") {
      getOperation().emitError()
          << "mma '" << mma
          << "' is not one this pass has (none, tf32, tf32x3, bf16 or f16)";
      return signalPassFailure();
    }
    if (lanes != 0 && lanes != 1 && lanes != 4 && lanes != 8 && lanes != 16) {
      getOperation().emitError()
          << "lanes " << int64_t(lanes)
          << " is not a count of lanes a query row the f32 core takes (0: "
             "chosen, 1, 4, 8 or 16)";
      return signalPassFailure();
    }
    if (rows != 1 && rows != 2 && rows != 4) {
      getOperation().emitError()
          << "rows " << int64_t(rows)
          << " is not a count of query rows a thread the f32 core takes (1, "
             "2 or 4)";
      return signalPassFailure();
    }
    SmallVector<AttentionCoreOp> cores;
    getOperation().walk([&](AttentionCoreOp op) { cores.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionCoreOp op : cores) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError("the fused attention core expands on buffers: run "
                     "bufferization first");
        return signalPassFailure();
      }
      // One channel loop indexes q, key, value and the output.
      if (!op.hasHeadWideValues()) {
        op.emitError("the fused attention core needs a value width equal "
                     "to the head width (")
            << cast<MemRefType>(op.getValue().getType()).getDimSize(3)
            << " against "
            << cast<MemRefType>(op.getQ().getType()).getDimSize(3)
            << "): lower such a core to linalg before bufferization";
        return signalPassFailure();
      }
      // Rows are read and written as vectors: the head dimension must be
      // contiguous.
      for (Value v : op->getOperands())
        if (!cast<MemRefType>(v.getType()).getLayout().isIdentity()) {
          op.emitError("the fused attention core needs row-major buffers, "
                       "not ")
              << v.getType();
          return signalPassFailure();
        }
      if (cuda::coreOnTensorCores(op, mma)) {
        auto schedule =
            op->getAttrOfType<CUDACoreScheduleAttr>(kCUDACoreScheduleAttrName);
        if (!schedule) {
          op.emitError("the attention core on tensor cores needs its "
                       "#linformer.cuda_core_schedule (as "
                       "linformer.cuda_core_schedule): run "
                       "linformer-cuda-select-schedules first");
          return signalPassFailure();
        }
        if (std::string why = cuda::CoreShape::of(op).fitsShape(schedule);
            !why.empty()) {
          op.emitOpError() << "cannot take its schedule " << schedule << ": "
                           << why;
          return signalPassFailure();
        }
        CoreOperands::of(op).onTensorCores(rewriter, op, mma, emulate, exact,
                                           schedule);
        continue;
      }
      // An f32 core on TF32 tensor cores: where its schedule (a file's,
      // through the selection) is a tensor-core one.
      if (auto schedule = op->getAttrOfType<CUDACoreScheduleAttr>(
              kCUDACoreScheduleAttrName)) {
        std::string why =
            !cuda::isTF32(mma)
                ? "an f32 core runs on tensor cores as TF32 only (mma=tf32 "
                  "or tf32x3), not with mma=" +
                      std::string(mma)
                : cuda::CoreShape::of(op).fitsTF32(schedule);
        if (!why.empty()) {
          op.emitOpError() << "cannot take its schedule " << schedule << ": "
                           << why;
          return signalPassFailure();
        }
        CoreOperands::of(op).onTensorCores(rewriter, op, mma, emulate, exact,
                                           schedule);
        continue;
      }
      // 16-bit buffers come from linformer-cuda-tensor-core-contractions,
      // for a core it saw run on tensor cores.
      for (Value v : cuda::coreData(op))
        if (!cast<MemRefType>(v.getType()).getElementType().isF32()) {
          op.emitError("the fused attention core on one thread a row takes "
                       "f32 q, key, value and output, not ")
              << v.getType()
              << " (16-bit ones need the tensor-core core: mma=bf16 or "
                 "f16, query rows, slots and head width in whole 16s)";
          return signalPassFailure();
        }
      // Its schedule (linformer-cuda-select-schedules'), or chosen from
      // this pass's options as the selection would.
      cuda::CoreShape shape = cuda::CoreShape::of(op);
      auto schedule = op->getAttrOfType<CUDAF32CoreScheduleAttr>(
          kCUDAF32CoreScheduleAttrName);
      if (!schedule) {
        cuda::CoreSelectionOptions o;
        o.lanes = lanes;
        o.rows = rows;
        o.minBlocks = minBlocks;
        schedule = shape.chooseF32(&getContext(), o);
      } else if (std::string why = shape.fitsF32(schedule); !why.empty()) {
        op.emitOpError() << "cannot take its schedule " << schedule << ": "
                         << why;
        return signalPassFailure();
      }
      CoreOperands::of(op).scalar(rewriter, op, schedule);
    }
  }
};

} // namespace
