//===- TensorCoreContractions.cpp - contractions on tensor cores -*- C++ -*-===//
//
// The CUDA pipeline's tensor-core path (see Passes.td): every f32
// contraction `linalg.generic` (C += A * B over projected permutations)
// whose innermost m, n and k dimensions divide by 16, 8 and 4 becomes one
// `scf.parallel` over (row tiles, column tiles, 32 lanes) in which each warp
// computes a 16x8 tile of C with `nvgpu.mma.sync` m16n8k4 on TF32 inputs and
// f32 accumulation, stepping k by 4.
//
// Fragment layouts (PTX ISA, mma.m16n8k4 .tf32; the same as upstream's
// MmaSyncBuilder): g = lane / 4, t = lane % 4;
//   A (16x4, vector<2x1>):  a0 = A[g][t], a1 = A[g + 8][t]
//   B (4x8,  vector<1x1>):  b0 = B[t][g]
//   C (16x8, vector<2x2>):  c00 = C[g][2t], c01 = C[g][2t + 1],
//                           c10 = C[g + 8][2t], c11 = C[g + 8][2t + 1]
// The lanes are the innermost parallel dimension (extent 32), which
// linformer-cuda-tile-parallel-loops maps to thread x: one warp per tile.
// Batch dimensions and the outer m dimensions are folded with the row tiles
// into one dimension (the grid has three), outer n dimensions likewise with
// the column tiles; outer k dimensions are sequential loops around the
// stepped innermost one.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/PatternMatch.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDATENSORCORECONTRACTIONSPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

constexpr int64_t kTileM = 16, kTileN = 8, kTileK = 4, kWarp = 32;

/// What the rewrite needs of a contraction, or failure (left to the plain
/// path).
struct Plan {
  unsigned mDim, nDim, kDim; ///< innermost m, n, k loop dimensions
  SmallVector<unsigned> rowDims, colDims, outerK; ///< folded / looped
  unsigned aOperand, bOperand;                    ///< inputs holding m / n
};

FailureOr<Plan> planFor(linalg::GenericOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 ||
      !linalg::isaContractionOpInterface(cast<linalg::LinalgOp>(op.getOperation())))
    return failure();
  for (Value v : op->getOperands())
    if (!cast<MemRefType>(v.getType()).getElementType().isF32())
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
      ShapedType::isDynamic(extents[p.kDim]) || extents[p.kDim] % kTileK)
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
  // A grid dimension y or z holds at most 65535 blocks.
  int64_t rows = extents[p.mDim] / kTileM, cols = extents[p.nDim] / kTileN;
  for (unsigned d : p.rowDims)
    rows *= extents[d];
  for (unsigned d : p.colDims)
    cols *= extents[d];
  if (rows > 65535 || cols > 65535)
    return failure();
  return p;
}

struct CUDATensorCoreContractionsPass
    : mlir::linformer::impl::LinformerCUDATensorCoreContractionsPassBase<
          CUDATensorCoreContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision != "tf32" && precision != "emulate") {
      getOperation().emitError()
          << "precision '" << precision
          << "' is not one this pass has (tf32: f32 data, TF32 products, "
             "f32 accumulation; emulate: the same tiles in f32 scalars, "
             "for the CPU)";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    for (linalg::GenericOp op : ops)
      if (FailureOr<Plan> p = planFor(op); succeeded(p))
        rewrite(rewriter, op, *p);
  }

  /// Splits `linear` into the indices of `dims` (row-major) and records
  /// them in `iv`.
  static void delinearize(OpBuilder &b, Location loc, Value linear,
                          ArrayRef<unsigned> dims, ArrayRef<int64_t> extents,
                          SmallVectorImpl<Value> &iv) {
    for (unsigned d : llvm::reverse(dims)) {
      Value e = arith::ConstantIndexOp::create(b, loc, extents[d]);
      iv[d] = arith::RemUIOp::create(b, loc, linear, e);
      linear = arith::DivUIOp::create(b, loc, linear, e);
    }
  }

  static Value load(OpBuilder &b, Location loc, linalg::GenericOp op,
                    OpOperand *operand, ArrayRef<Value> iv) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> indices;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      indices.push_back(iv[map.getDimPosition(i)]);
    return memref::LoadOp::create(b, loc, operand->get(), indices);
  }

  static void store(OpBuilder &b, Location loc, linalg::GenericOp op,
                    Value value, ArrayRef<Value> iv) {
    OpOperand *init = op.getDpsInitOperand(0);
    AffineMap map = op.getMatchingIndexingMap(init);
    SmallVector<Value> indices;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      indices.push_back(iv[map.getDimPosition(i)]);
    memref::StoreOp::create(b, loc, value, init->get(), indices);
  }

  void rewrite(IRRewriter &rewriter, linalg::GenericOp op, const Plan &p) {
    bool emulate = precision == "emulate";
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    int64_t rows = extents[p.mDim] / kTileM, cols = extents[p.nDim] / kTileN;
    for (unsigned d : p.rowDims)
      rows *= extents[d];
    for (unsigned d : p.colDims)
      cols *= extents[d];
    auto c = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = c(rewriter, 0), one = c(rewriter, 1);
    Type f32 = rewriter.getF32Type();
    auto par = scf::ParallelOp::create(
        rewriter, loc, ValueRange{zero, zero, zero},
        ValueRange{c(rewriter, rows), c(rewriter, cols), c(rewriter, kWarp)},
        ValueRange{one, one, one},
        [&](OpBuilder &b, Location loc, ValueRange ivs) {
          Value rowTile = ivs[0], colTile = ivs[1], lane = ivs[2];
          unsigned rank = op.getNumLoops();
          SmallVector<Value> iv(rank);
          // Row tiles: the folded batch/outer-m dims, then the m tile.
          Value mTiles = c(b, extents[p.mDim] / kTileM);
          Value mTile = arith::RemUIOp::create(b, loc, rowTile, mTiles);
          delinearize(b, loc, arith::DivUIOp::create(b, loc, rowTile, mTiles),
                      p.rowDims, extents, iv);
          Value nTiles = c(b, extents[p.nDim] / kTileN);
          Value nTile = arith::RemUIOp::create(b, loc, colTile, nTiles);
          delinearize(b, loc, arith::DivUIOp::create(b, loc, colTile, nTiles),
                      p.colDims, extents, iv);
          Value g = arith::DivUIOp::create(b, loc, lane, c(b, 4));
          Value t = arith::RemUIOp::create(b, loc, lane, c(b, 4));
          Value m0 = arith::AddIOp::create(
              b, loc, arith::MulIOp::create(b, loc, mTile, c(b, kTileM)), g);
          Value m8 = arith::AddIOp::create(b, loc, m0, c(b, 8));
          Value nBase = arith::MulIOp::create(b, loc, nTile, c(b, kTileN));
          Value n2t = arith::AddIOp::create(
              b, loc, nBase, arith::MulIOp::create(b, loc, t, c(b, 2)));
          Value n2t1 = arith::AddIOp::create(b, loc, n2t, c(b, 1));
          Value nG = arith::AddIOp::create(b, loc, nBase, g);

          // The accumulator fragment: C's current values (the init).
          auto cAt = [&](Value m, Value n) {
            iv[p.mDim] = m;
            iv[p.nDim] = n;
            return SmallVector<Value>(iv);
          };
          auto accType = VectorType::get({2, 2}, f32);
          Value acc = arith::ConstantOp::create(
              b, loc, accType, DenseElementsAttr::get(accType, 0.0f));
          Value cInit[2][2] = {{}, {}};
          for (unsigned d : p.outerK)
            iv[d] = c(b, 0);
          iv[p.kDim] = c(b, 0);
          OpOperand *init = op.getDpsInitOperand(0);
          cInit[0][0] = load(b, loc, op, init, cAt(m0, n2t));
          cInit[0][1] = load(b, loc, op, init, cAt(m0, n2t1));
          cInit[1][0] = load(b, loc, op, init, cAt(m8, n2t));
          cInit[1][1] = load(b, loc, op, init, cAt(m8, n2t1));
          for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j)
              acc = vector::InsertOp::create(b, loc, cInit[i][j], acc,
                                             ArrayRef<int64_t>{i, j});

          // The k loops: outer k dimensions one by one, the innermost in
          // steps of 4 (one mma each).
          std::function<Value(OpBuilder &, unsigned, Value)> kLoop =
              [&](OpBuilder &b, unsigned level, Value acc) -> Value {
            bool inner = level == p.outerK.size();
            unsigned dim = inner ? p.kDim : p.outerK[level];
            auto loop = scf::ForOp::create(
                b, loc, c(b, 0), c(b, extents[dim]), c(b, inner ? kTileK : 1),
                ValueRange{acc},
                [&](OpBuilder &b, Location loc, Value k, ValueRange args) {
                  iv[dim] = k;
                  if (!inner) {
                    scf::YieldOp::create(b, loc,
                                         kLoop(b, level + 1, args[0]));
                    return;
                  }
                  OpOperand *aOp = op.getDpsInputOperand(p.aOperand);
                  OpOperand *bOp = op.getDpsInputOperand(p.bOperand);
                  if (emulate) {
                    // Each lane computes its own four C elements over the
                    // same k step in f32 scalars: everything but the
                    // A/B fragment exchange, which mma.sync does in
                    // hardware.
                    Value acc = args[0];
                    Value mAt[2] = {m0, m8}, nAt[2] = {n2t, n2t1};
                    for (int i = 0; i < 2; ++i)
                      for (int j = 0; j < 2; ++j) {
                        Value sum = vector::ExtractOp::create(
                            b, loc, acc, ArrayRef<int64_t>{i, j});
                        for (int64_t q = 0; q < kTileK; ++q) {
                          iv[p.kDim] = arith::AddIOp::create(b, loc, k,
                                                             c(b, q));
                          iv[p.mDim] = mAt[i];
                          iv[p.nDim] = nAt[j];
                          Value prod = arith::MulFOp::create(
                              b, loc, load(b, loc, op, aOp, iv),
                              load(b, loc, op, bOp, iv));
                          sum = arith::AddFOp::create(b, loc, sum, prod);
                        }
                        acc = vector::InsertOp::create(
                            b, loc, sum, acc, ArrayRef<int64_t>{i, j});
                      }
                    scf::YieldOp::create(b, loc, acc);
                    return;
                  }
                  Value kt = arith::AddIOp::create(b, loc, k, t);
                  iv[p.kDim] = kt;
                  iv[p.mDim] = m0;
                  Value a0 = load(b, loc, op, aOp, iv);
                  iv[p.mDim] = m8;
                  Value a1 = load(b, loc, op, aOp, iv);
                  iv[p.nDim] = nG;
                  Value b0 = load(b, loc, op, bOp, iv);
                  auto aType = VectorType::get({2, 1}, f32);
                  auto bType = VectorType::get({1, 1}, f32);
                  Value av = vector::BroadcastOp::create(b, loc, aType, a0);
                  av = vector::InsertOp::create(b, loc, a1, av,
                                                ArrayRef<int64_t>{1, 0});
                  Value bv = vector::BroadcastOp::create(b, loc, bType, b0);
                  Value d = nvgpu::MmaSyncOp::create(
                      b, loc, av, bv, args[0],
                      ArrayRef<int64_t>{kTileM, kTileN, kTileK},
                      /*tf32Enabled=*/true);
                  scf::YieldOp::create(b, loc, d);
                });
            return loop.getResult(0);
          };
          acc = kLoop(b, 0, acc);
          Value mAt[2] = {m0, m8}, nAt[2] = {n2t, n2t1};
          for (int i = 0; i < 2; ++i)
            for (int j = 0; j < 2; ++j)
              store(b, loc, op,
                    vector::ExtractOp::create(b, loc, acc,
                                              ArrayRef<int64_t>{i, j}),
                    cAt(mAt[i], nAt[j]));
        });
    par->setAttr("linformer.tensor_core", rewriter.getUnitAttr());
    rewriter.eraseOp(op);
  }
};

} // namespace
