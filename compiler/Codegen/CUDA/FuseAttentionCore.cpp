//===- FuseAttentionCore.cpp - the attention core as one kernel -*- C++ -*-===//
//
// The CUDA pipeline's attention core (see Passes.td), in two steps around
// bufferization:
//
// linformer-cuda-fuse-attention-core (tensors): `linformer.attention_core`
//   becomes a carrier `linalg.generic` over (b, h, n, c, j) that reads q,
//   key, value (and key_mask) and writes the [b, h, n, d] result, marked
//   `linformer.fused_core`: it gives bufferization the core's exact reads
//   and writes (its body, never run, only uses every input).
//
// linformer-cuda-expand-attention-core (memrefs): each carrier becomes one
//   `scf.parallel` over (b, h, n) whose body streams the k projected keys
//   and values with an online softmax (running max m, running sum l,
//   accumulator a, vectors of the head width held in registers):
//
//     s = q . key_j (masked slot: -inf);  m' = max(m, s)
//     alpha = exp((m - m') * scale);  p = exp((s - m') * scale)
//     l = l * alpha + p;  a = a * alpha + p * value_j;  m = m'
//     result = a / l
//
//   (alpha and p are 0 while m' is -inf: every slot so far masked.) The
//   [b, h, n, k] scores never exist in memory: one kernel instead of five.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"
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

#include <limits>

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAFUSEATTENTIONCOREPASS
#define GEN_PASS_DEF_LINFORMERCUDAEXPANDATTENTIONCOREPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

constexpr const char *kFusedCoreAttr = "linformer.fused_core";

struct CUDAFuseAttentionCorePass
    : mlir::linformer::impl::LinformerCUDAFuseAttentionCorePassBase<
          CUDAFuseAttentionCorePass> {
  void runOnOperation() override {
    SmallVector<AttentionCoreOp> cores;
    getOperation().walk([&](AttentionCoreOp op) { cores.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (AttentionCoreOp op : cores) {
      auto qType = cast<RankedTensorType>(op.getQ().getType());
      auto vType = cast<RankedTensorType>(op.getValue().getType());
      auto resultType = cast<RankedTensorType>(op.getResult().getType());
      // The carrier indexes q, key, value and the result with one channel
      // loop: value width = head width (else the linalg lowering takes it).
      if (!qType.hasStaticShape() || !vType.hasStaticShape() ||
          qType.getDimSize(3) != vType.getDimSize(3))
        continue;
      Location loc = op.getLoc();
      rewriter.setInsertionPoint(op);
      // Loops (b, h, i, c, j); j (the projected slot) is the reduction.
      SmallVector<Value> inputs = {op.getQ(), op.getKey(), op.getValue()};
      SmallVector<DimList> dims = {DimList{0, 1, 2, 3}, DimList{0, 1, 4, 3},
                                   DimList{0, 1, 4, 3}};
      if (Value mask = op.getKeyMask()) {
        inputs.push_back(mask);
        dims.push_back(DimList{0, 4});
      }
      Value init = emptyTensor(rewriter, loc, resultType.getShape(),
                               resultType.getElementType());
      // The body is never run (expand replaces the carrier), but it uses
      // every input, so that no canonicalization drops one as dead.
      bool masked = static_cast<bool>(op.getKeyMask());
      Value carrier = buildGeneric(
          rewriter, loc, 5, inputs, dims, init, DimList{0, 1, 2, 3}, {4},
          [&](OpBuilder &b, Location l, ValueRange args) -> Value {
            Value t = arith::MulFOp::create(
                b, l, arith::MulFOp::create(b, l, args[0], args[1]), args[2]);
            if (masked)
              t = arith::SelectOp::create(
                  b, l, maskBit(b, l, args[3]), t,
                  arith::ConstantOp::create(b, l, b.getZeroAttr(t.getType())));
            return arith::AddFOp::create(b, l, args.back(), t);
          });
      carrier.getDefiningOp()->setAttr(kFusedCoreAttr, op.getScaleAttr());
      rewriter.replaceOp(op, carrier);
    }
  }
};

/// exp((x - max) * scale) of the online softmax, or 0 while `live` is false
/// (every slot so far masked: the running max is still -inf).
static Value scaledExpOrZero(OpBuilder &b, Location loc, Value x, Value max,
                             Value scale, Value live, Value zero) {
  Value diff = arith::SubFOp::create(b, loc, x, max);
  Value e =
      math::ExpOp::create(b, loc, arith::MulFOp::create(b, loc, diff, scale));
  return arith::SelectOp::create(b, loc, live, e, zero);
}

/// A carrier's buffers (the mask may be null), sizes and scale, and the
/// two ways to expand it.
struct CoreOperands {
  Value q, key, value, mask, out;
  int64_t batch, heads, n, d, k;
  double scale;

  static CoreOperands of(linalg::GenericOp op) {
    CoreOperands c;
    c.q = op.getDpsInputOperand(0)->get();
    c.key = op.getDpsInputOperand(1)->get();
    c.value = op.getDpsInputOperand(2)->get();
    c.mask = op.getNumDpsInputs() > 3 ? op.getDpsInputOperand(3)->get()
                                      : Value();
    c.out = op.getDpsInitOperand(0)->get();
    auto qType = cast<MemRefType>(c.q.getType());
    c.batch = qType.getDimSize(0);
    c.heads = qType.getDimSize(1);
    c.n = qType.getDimSize(2);
    c.d = qType.getDimSize(3);
    c.k = cast<MemRefType>(c.key.getType()).getDimSize(2);
    c.scale = cast<FloatAttr>(op->getAttr(kFusedCoreAttr)).getValueAsDouble();
    return c;
  }

  /// The core on tensor cores, one warp per 16 query rows (see Passes.td).
  /// Lane (g, t) = (lane / 4, lane % 4) holds rows g and g + 8 of its
  /// 16-row tile; of a 16-slot block, S columns 2t, 2t + 1 of each 8-slot
  /// half; of the output, columns 2t, 2t + 1 of each 8-column tile.
  void onTensorCores(IRRewriter &rewriter, linalg::GenericOp op,
                     StringRef precision, bool emulate, bool exact) const {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    int64_t dSteps = d / 16, dTiles = d / 8;
    Type f32 = rewriter.getF32Type();
    auto accType = VectorType::get({2, 2}, f32);
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = cIdx(rewriter, 0), one = cIdx(rewriter, 1);
    int64_t rows = batch * heads * (n / 16);
    auto par = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero, zero},
        ValueRange{cIdx(rewriter, rows), cIdx(rewriter, 32)},
        ValueRange{one, one},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          auto c = [&](int64_t v) { return cIdx(b, v); };
          auto addI = [&](Value x, int64_t v) -> Value {
            return arith::AddIOp::create(b, loc, x, c(v));
          };
          auto cF = [&](double v) -> Value {
            return arith::ConstantOp::create(b, loc, b.getF32FloatAttr(v));
          };
          // Row tiles: query tiles fastest, so the warps of a block share
          // their (b, h)'s keys and values through L1.
          Value tile = arith::RemUIOp::create(b, loc, ivs[0], c(n / 16));
          Value bh = arith::DivUIOp::create(b, loc, ivs[0], c(n / 16));
          Value hi = arith::RemUIOp::create(b, loc, bh, c(heads));
          Value bi = arith::DivUIOp::create(b, loc, bh, c(heads));
          Value lane = ivs[1];
          Value g = arith::DivUIOp::create(b, loc, lane, c(4));
          Value t = arith::RemUIOp::create(b, loc, lane, c(4));
          Value twoT = arith::MulIOp::create(b, loc, t, c(2));
          Value row[2];
          row[0] = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, tile, c(16)), g);
          row[1] = addI(row[0], 8);
          auto ld = [&](Value buf, Value r, Value col) -> Value {
            return memref::LoadOp::create(b, loc, buf,
                                          ValueRange{bi, hi, r, col});
          };
          auto rnd = [&](Value v) {
            return exact ? v
                         : cuda::roundToOperand(b, loc, v, precision, true);
          };
          auto pack = [&](Value lo, Value hiV) {
            return cuda::packOperandPair(b, loc, lo, hiV, precision);
          };
          Value fzero = cF(0.0), scaleV = cF(scale);
          Value negInf = cF(-std::numeric_limits<double>::infinity());
          Value zeros = arith::ConstantOp::create(
              b, loc, accType, DenseElementsAttr::get(accType, 0.0f));

          // A row's value over its four lanes (xor 1, 2 stay within the
          // quad); emulated lanes already hold whole rows.
          auto quad = [&](Value x, bool isMax) -> Value {
            if (emulate)
              return x;
            for (int32_t off : {1, 2}) {
              Value other = gpu::ShuffleOp::create(b, loc, x, off, 32,
                                                   gpu::ShuffleMode::XOR)
                                .getShuffleResult();
              x = isMax ? arith::MaximumFOp::create(b, loc, x, other)
                              .getResult()
                        : arith::AddFOp::create(b, loc, x, other).getResult();
            }
            return x;
          };

          // Q's A fragments, once: one per 16-wide step of the head.
          SmallVector<SmallVector<Value, 4>> qFrag;
          if (!emulate)
            for (int64_t s = 0; s < dSteps; ++s) {
              Value c0 = addI(twoT, 16 * s), c1 = addI(c0, 1),
                    c8 = addI(c0, 8), c9 = addI(c0, 9);
              qFrag.push_back({pack(ld(q, row[0], c0), ld(q, row[0], c1)),
                               pack(ld(q, row[1], c0), ld(q, row[1], c1)),
                               pack(ld(q, row[0], c8), ld(q, row[0], c9)),
                               pack(ld(q, row[1], c8), ld(q, row[1], c9))});
            }

          // Iter args: max and (partial) sum of each of the lane's two
          // rows, then the output tiles' accumulators.
          SmallVector<Value> init = {negInf, negInf, fzero, fzero};
          for (int64_t dt = 0; dt < dTiles; ++dt)
            init.push_back(zeros);
          auto loop = scf::ForOp::create(
              b, loc, c(0), c(k), c(16), init,
              [&](OpBuilder &b, Location loc, Value j0, ValueRange it) {
                Value m[2] = {it[0], it[1]}, l[2] = {it[2], it[3]};
                SmallVector<Value> acc(it.begin() + 4, it.end());
                auto masked = [&](Value s, Value slot) -> Value {
                  if (!mask)
                    return s;
                  Value flag =
                      memref::LoadOp::create(b, loc, mask, ValueRange{bi, slot});
                  return arith::SelectOp::create(b, loc, maskBit(b, loc, flag),
                                                 s, negInf);
                };
                // s[h][jj]: the scores this lane holds, row h, slot jj of
                // the block (GPU: jj in {8 nt + 2t + o}; emulated: all 16).
                SmallVector<SmallVector<Value>> s(2);
                SmallVector<Value> slots;
                if (emulate) {
                  for (int64_t jj = 0; jj < 16; ++jj)
                    slots.push_back(addI(j0, jj));
                  for (int h = 0; h < 2; ++h)
                    for (int64_t jj = 0; jj < 16; ++jj) {
                      Value sum = fzero;
                      for (int64_t e = 0; e < d; ++e) {
                        Value x = rnd(ld(q, row[h], c(e)));
                        Value y = rnd(ld(key, slots[jj], c(e)));
                        sum = arith::AddFOp::create(
                            b, loc, sum, arith::MulFOp::create(b, loc, x, y));
                      }
                      s[h].push_back(masked(sum, slots[jj]));
                    }
                } else {
                  Value j2t = arith::AddIOp::create(b, loc, j0, twoT);
                  for (int64_t nt = 0; nt < 2; ++nt)
                    for (int64_t o = 0; o < 2; ++o)
                      slots.push_back(addI(j2t, 8 * nt + o));
                  Value jg = arith::AddIOp::create(b, loc, j0, g);
                  Value sAcc[2];
                  for (int64_t nt = 0; nt < 2; ++nt) {
                    Value keyRow = addI(jg, 8 * nt);
                    Value a = zeros;
                    for (int64_t st = 0; st < dSteps; ++st) {
                      Value c0 = addI(twoT, 16 * st), c1 = addI(c0, 1),
                            c8 = addI(c0, 8), c9 = addI(c0, 9);
                      Value bFrag[2] = {
                          pack(ld(key, keyRow, c0), ld(key, keyRow, c1)),
                          pack(ld(key, keyRow, c8), ld(key, keyRow, c9))};
                      a = cuda::mmaM16N8K16(b, loc, qFrag[st], bFrag, a,
                                            precision);
                    }
                    sAcc[nt] = a;
                  }
                  for (int h = 0; h < 2; ++h)
                    for (int64_t nt = 0; nt < 2; ++nt)
                      for (int64_t o = 0; o < 2; ++o)
                        s[h].push_back(masked(
                            vector::ExtractOp::create(b, loc, sAcc[nt],
                                                      ArrayRef<int64_t>{h, o}),
                            slots[nt * 2 + o]));
                }
                // The rows' maxima over the block: across the four lanes
                // of a row on the GPU.
                Value mNew[2], alpha[2], live[2];
                SmallVector<SmallVector<Value>> p(2);
                for (int h = 0; h < 2; ++h) {
                  Value x = s[h][0];
                  for (size_t jj = 1; jj < s[h].size(); ++jj)
                    x = arith::MaximumFOp::create(b, loc, x, s[h][jj]);
                  mNew[h] = arith::MaximumFOp::create(b, loc, m[h],
                                                      quad(x, true));
                  // While every slot so far is masked, m' is -inf:
                  // nothing to rescale, nothing to add.
                  live[h] = arith::CmpFOp::create(
                      b, loc, arith::CmpFPredicate::OGT, mNew[h], negInf);
                  auto expScaled = [&](Value v) {
                    return scaledExpOrZero(b, loc, v, mNew[h], scaleV, live[h],
                                           fzero);
                  };
                  alpha[h] = expScaled(m[h]);
                  Value sum = fzero;
                  for (Value v : s[h]) {
                    p[h].push_back(expScaled(v));
                    sum = arith::AddFOp::create(b, loc, sum, p[h].back());
                  }
                  l[h] = arith::AddFOp::create(
                      b, loc, arith::MulFOp::create(b, loc, l[h], alpha[h]),
                      sum);
                }
                // O = O * alpha + P V.
                Value alphaV = vector::FromElementsOp::create(
                    b, loc, accType,
                    ValueRange{alpha[0], alpha[0], alpha[1], alpha[1]});
                SmallVector<Value> pFrag;
                if (!emulate)
                  pFrag = {pack(p[0][0], p[0][1]), pack(p[1][0], p[1][1]),
                           pack(p[0][2], p[0][3]), pack(p[1][2], p[1][3])};
                Value j2t = arith::AddIOp::create(b, loc, j0, twoT);
                for (int64_t dt = 0; dt < dTiles; ++dt) {
                  Value scaled = arith::MulFOp::create(b, loc, acc[dt], alphaV);
                  if (emulate) {
                    // Each of the lane's four output elements: its rows'
                    // full probabilities against the column of V.
                    Value r = scaled;
                    for (int h = 0; h < 2; ++h)
                      for (int64_t o = 0; o < 2; ++o) {
                        Value col = addI(twoT, 8 * dt + o);
                        Value sum = vector::ExtractOp::create(
                            b, loc, r, ArrayRef<int64_t>{h, o});
                        for (int64_t jj = 0; jj < 16; ++jj)
                          sum = arith::AddFOp::create(
                              b, loc, sum,
                              arith::MulFOp::create(
                                  b, loc, rnd(p[h][jj]),
                                  rnd(ld(value, slots[jj], col))));
                        r = vector::InsertOp::create(b, loc, sum, r,
                                                     ArrayRef<int64_t>{h, o});
                      }
                    acc[dt] = r;
                    continue;
                  }
                  Value col = arith::AddIOp::create(b, loc, g, c(8 * dt));
                  Value vFrag[2] = {
                      pack(ld(value, j2t, col), ld(value, addI(j2t, 1), col)),
                      pack(ld(value, addI(j2t, 8), col),
                           ld(value, addI(j2t, 9), col))};
                  acc[dt] = cuda::mmaM16N8K16(b, loc, pFrag, vFrag, scaled,
                                              precision);
                }
                SmallVector<Value> next = {mNew[0], mNew[1], l[0], l[1]};
                next.append(acc.begin(), acc.end());
                scf::YieldOp::create(b, loc, next);
              });
          // Each row's sum over its four lanes, then O / l.
          Value lTotal[2] = {quad(loop.getResult(2), false),
                             quad(loop.getResult(3), false)};
          for (int64_t dt = 0; dt < dTiles; ++dt)
            for (int h = 0; h < 2; ++h)
              for (int64_t o = 0; o < 2; ++o) {
                Value v = vector::ExtractOp::create(
                    b, loc, loop.getResult(4 + dt), ArrayRef<int64_t>{h, o});
                memref::StoreOp::create(
                    b, loc, arith::DivFOp::create(b, loc, v, lTotal[h]), out,
                    ValueRange{bi, hi, row[h], addI(twoT, 8 * dt + o)});
              }
          scf::ReduceOp::create(b, loc);
        });
    par->setAttr("linformer.tensor_core", rewriter.getUnitAttr());
    rewriter.eraseOp(op);
  }

  /// One thread a query row, f32, online softmax (see the file comment).
  void scalar(IRRewriter &rewriter, linalg::GenericOp op) const {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Type et = cast<MemRefType>(q.getType()).getElementType();
    auto vec = VectorType::get({d}, et);
    auto cIdx = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = cIdx(rewriter, 0), one = cIdx(rewriter, 1);
    scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero, zero, zero},
        ValueRange{cIdx(rewriter, batch), cIdx(rewriter, heads),
                   cIdx(rewriter, n)},
        ValueRange{one, one, one},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value bi = ivs[0], hi = ivs[1], i = ivs[2];
          auto cF = [&](double v) -> Value {
            return arith::ConstantOp::create(b, loc, b.getFloatAttr(et, v));
          };
          Value fzero = cF(0.0), scaleV = cF(scale);
          Value negInf = cF(-std::numeric_limits<double>::infinity());
          Value c0 = cIdx(b, 0);
          Value qRow =
              vector::LoadOp::create(b, loc, vec, q, ValueRange{bi, hi, i, c0});
          Value accInit = arith::ConstantOp::create(
              b, loc, vec, DenseElementsAttr::get(vec, b.getFloatAttr(et, 0.0)));
          auto loop = scf::ForOp::create(
              b, loc, c0, cIdx(b, k), cIdx(b, 1),
              ValueRange{negInf, fzero, accInit},
              [&](OpBuilder &b, Location loc, Value j, ValueRange it) {
                Value m = it[0], l = it[1], acc = it[2];
                Value kRow = vector::LoadOp::create(
                    b, loc, vec, key, ValueRange{bi, hi, j, c0});
                Value s = vector::ReductionOp::create(
                    b, loc, vector::CombiningKind::ADD,
                    arith::MulFOp::create(b, loc, qRow, kRow));
                if (mask) {
                  Value flag =
                      memref::LoadOp::create(b, loc, mask, ValueRange{bi, j});
                  s = arith::SelectOp::create(b, loc, maskBit(b, loc, flag), s,
                                              negInf);
                }
                Value mNew = arith::MaximumFOp::create(b, loc, m, s);
                // While every slot so far is masked, m' is -inf: nothing
                // to rescale, nothing to add.
                Value live = arith::CmpFOp::create(
                    b, loc, arith::CmpFPredicate::OGT, mNew, negInf);
                auto expScaled = [&](Value x) {
                  return scaledExpOrZero(b, loc, x, mNew, scaleV, live, fzero);
                };
                Value alpha = expScaled(m), p = expScaled(s);
                Value lNew = arith::AddFOp::create(
                    b, loc, arith::MulFOp::create(b, loc, l, alpha), p);
                Value vRow = vector::LoadOp::create(
                    b, loc, vec, value, ValueRange{bi, hi, j, c0});
                Value alphaV = vector::BroadcastOp::create(b, loc, vec, alpha);
                Value pV = vector::BroadcastOp::create(b, loc, vec, p);
                Value accNew = vector::FMAOp::create(
                    b, loc, pV, vRow,
                    arith::MulFOp::create(b, loc, acc, alphaV));
                scf::YieldOp::create(b, loc, ValueRange{mNew, lNew, accNew});
              });
          Value lV =
              vector::BroadcastOp::create(b, loc, vec, loop.getResult(1));
          Value row = arith::DivFOp::create(b, loc, loop.getResult(2), lV);
          vector::StoreOp::create(b, loc, row, out, ValueRange{bi, hi, i, c0});
          scf::ReduceOp::create(b, loc);
        });
    rewriter.eraseOp(op);
  }
};

struct CUDAExpandAttentionCorePass
    : mlir::linformer::impl::LinformerCUDAExpandAttentionCorePassBase<
          CUDAExpandAttentionCorePass> {
  using Base::Base;

  void runOnOperation() override {
    if (mma != "none" && mma != "bf16" && mma != "f16") {
      getOperation().emitError()
          << "mma '" << mma
          << "' is not one this pass has (none, bf16 or f16)";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> carriers;
    getOperation().walk([&](linalg::GenericOp op) {
      if (op->hasAttr(kFusedCoreAttr))
        carriers.push_back(op);
    });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : carriers) {
      if (!op.hasPureBufferSemantics()) {
        op.emitError("the fused attention core expands on buffers: run "
                     "bufferization first");
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
      if (mma != "none" && fitsTensorCores(op)) {
        CoreOperands::of(op).onTensorCores(rewriter, op, mma, emulate, exact);
        continue;
      }
      CoreOperands::of(op).scalar(rewriter, op);
    }
  }

  /// Query rows, slots and head width in whole 16s, f32 buffers.
  static bool fitsTensorCores(linalg::GenericOp op) {
    auto qType = cast<MemRefType>(op.getDpsInputOperand(0)->get().getType());
    auto kType = cast<MemRefType>(op.getDpsInputOperand(1)->get().getType());
    return qType.hasStaticShape() && kType.hasStaticShape() &&
           qType.getElementType().isF32() &&
           kType.getElementType().isF32() && qType.getDimSize(2) % 16 == 0 &&
           qType.getDimSize(3) % 16 == 0 && kType.getDimSize(2) % 16 == 0;
  }

};

} // namespace
