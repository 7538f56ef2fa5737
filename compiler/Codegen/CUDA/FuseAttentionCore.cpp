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

#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Passes.h"
#include "dialect/IR/LinformerOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
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

struct CUDAExpandAttentionCorePass
    : mlir::linformer::impl::LinformerCUDAExpandAttentionCorePassBase<
          CUDAExpandAttentionCorePass> {
  void runOnOperation() override {
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
      expand(rewriter, op);
    }
  }

  static void expand(IRRewriter &rewriter, linalg::GenericOp op) {
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    Value q = op.getDpsInputOperand(0)->get();
    Value key = op.getDpsInputOperand(1)->get();
    Value value = op.getDpsInputOperand(2)->get();
    Value mask = op.getNumDpsInputs() > 3 ? op.getDpsInputOperand(3)->get()
                                          : Value();
    Value out = op.getDpsInitOperand(0)->get();
    auto qType = cast<MemRefType>(q.getType());
    auto kType = cast<MemRefType>(key.getType());
    Type et = qType.getElementType();
    int64_t batch = qType.getDimSize(0), heads = qType.getDimSize(1);
    int64_t n = qType.getDimSize(2), d = qType.getDimSize(3);
    int64_t k = kType.getDimSize(2);
    double scale =
        cast<FloatAttr>(op->getAttr(kFusedCoreAttr)).getValueAsDouble();
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
                auto expScaled = [&](Value x) -> Value {
                  Value diff = arith::SubFOp::create(b, loc, x, mNew);
                  Value e = math::ExpOp::create(
                      b, loc, arith::MulFOp::create(b, loc, diff, scaleV));
                  return arith::SelectOp::create(b, loc, live, e, fzero);
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

} // namespace
