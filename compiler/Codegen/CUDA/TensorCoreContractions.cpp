//===- TensorCoreContractions.cpp - contractions on tensor cores -*- C++ -*-===//
//
// The CUDA pipeline's tensor-core path (see Passes.td): every f32
// contraction `linalg.generic` (C += A * B over projected permutations)
// whose innermost m, n and k dimensions divide into mma tiles becomes one
// `scf.parallel` over (warp-tile rows, warp-tile columns, 32 lanes) in which
// each warp computes an (16 x MT) x (8 x NT) block of C as MT x NT mma.sync
// tiles with f32 accumulators held in registers, stepping k by the
// instruction's depth. A and B fragments are loaded once per k step and
// reused across the warp's tiles (NT and MT times).
//
// Precisions:
//   tf32: `nvgpu.mma.sync` m16n8k4, f32 data, TF32 products (sm_80+);
//   bf16, f16: `nvvm.mma.sync` m16n8k16, each operand rounded to nearest
//     even to bf16 / f16 as its fragment is loaded (the rounding a bf16
//     model's stored activations get in a framework), products and sums
//     in f32 (sm_80+). nvgpu's conversion has no bf16 (MLIR 22: "failed to
//     deduce operand PTX types"), so the NVVM op is built directly.
//
// Fragment layouts (PTX ISA, "Matrix Fragments for mma.m16n8k*";
// g = lane / 4, t = lane % 4): m16n8k4 .tf32: A a0 = A[g][t],
// a1 = A[g + 8][t]; B b0 = B[t][g]; C as for m16n8k16, whose layouts
// MmaUtils.h gives.
// The lanes are the innermost parallel dimension (extent 32), which
// linformer-cuda-tile-parallel-loops maps to thread x: one warp per tile.
// Batch dimensions and the outer m dimensions are folded with the row tiles
// into one dimension (the grid has three), outer n dimensions likewise with
// the column tiles; outer k dimensions are sequential loops around the
// stepped innermost one.
//
// `emulate` builds the same loop nest with each lane computing its own C
// elements of every tile in f32 scalars over the same k steps, from the
// same rounded operands: everything but the warp-wide exchange of A/B
// fragments, which the CPU can run against the reference.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/MmaUtils.h"
#include "compiler/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
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

constexpr int64_t kTileM = 16, kTileN = 8, kWarp = 32;

/// What the rewrite needs of a contraction, or failure (left to the plain
/// path).
struct Plan {
  unsigned mDim, nDim, kDim; ///< innermost m, n, k loop dimensions
  SmallVector<unsigned> rowDims, colDims, outerK; ///< folded / looped
  unsigned aOperand, bOperand;                    ///< inputs holding m / n
  int64_t tilesM, tilesN; ///< mma tiles a warp computes along m and n
  int64_t rows, cols;     ///< warp tiles along rows and columns (folded)
  int64_t split = 1;      ///< parts of the k loop, each its own warps
};

/// The largest of `options` that divides `extent`.
int64_t largestDividing(int64_t extent, ArrayRef<int64_t> options) {
  for (int64_t o : options)
    if (o <= extent && extent % o == 0)
      return o;
  return 1;
}

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
  // steps.
  int64_t steps = extents[p.kDim] / tileK;
  if (splitWarps > 0 && p.outerK.empty())
    while (p.rows * p.cols * p.split < splitWarps && p.split < 64 &&
           steps % (p.split * 2) == 0 && steps / (p.split * 2) >= 16 &&
           p.rows * p.split * 2 <= 65535)
      p.split *= 2;
  return p;
}

struct CUDATensorCoreContractionsPass
    : mlir::linformer::impl::LinformerCUDATensorCoreContractionsPassBase<
          CUDATensorCoreContractionsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (precision != "tf32" && precision != "bf16" && precision != "f16") {
      getOperation().emitError()
          << "precision '" << precision
          << "' is not one this pass has (tf32: m16n8k4 on f32 data with "
             "TF32 products; bf16 or f16: m16n8k16 on operands rounded to "
             "that type; all accumulate in f32)";
      return signalPassFailure();
    }
    int64_t tilesM = warpTilesM, tilesN = warpTilesN;
    if (!llvm::is_contained({1, 2, 4, 8}, tilesM) ||
        !llvm::is_contained({1, 2, 4, 8}, tilesN)) {
      getOperation().emitError()
          << "warp-tiles-m and warp-tiles-n must be 1, 2, 4 or 8 (mma tiles "
             "a warp computes along m and n), not "
          << tilesM << " and " << tilesN;
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> ops;
    getOperation().walk([&](linalg::GenericOp op) { ops.push_back(op); });
    IRRewriter rewriter(&getContext());
    int64_t tileK = precision == "tf32" ? 4 : 16;
    for (linalg::GenericOp op : ops)
      if (FailureOr<Plan> p =
              planFor(op, tileK, tilesM, tilesN, splitKWarps);
          succeeded(p))
        rewrite(rewriter, op, *p, tileK);
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

  /// `operand`'s indices at the loop indices `iv` (its indexing map).
  static SmallVector<Value> indicesOf(linalg::GenericOp op, OpOperand *operand,
                                      ArrayRef<Value> iv) {
    AffineMap map = op.getMatchingIndexingMap(operand);
    SmallVector<Value> indices;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      indices.push_back(iv[map.getDimPosition(i)]);
    return indices;
  }

  /// `operand` at `iv`, as f32 (a bf16 / f16 operand extended: exact, and
  /// rounding it back to its own type for a fragment is the identity).
  static Value load(OpBuilder &b, Location loc, linalg::GenericOp op,
                    OpOperand *operand, ArrayRef<Value> iv) {
    Value v = memref::LoadOp::create(b, loc, operand->get(),
                                     indicesOf(op, operand, iv));
    if (!v.getType().isF32())
      v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
    return v;
  }

  /// C at `iv`, or with split-K, part `part` of the partial sums.
  static void store(OpBuilder &b, Location loc, linalg::GenericOp op,
                    Value value, ArrayRef<Value> iv, Value partials = {},
                    Value part = {}) {
    OpOperand *init = op.getDpsInitOperand(0);
    SmallVector<Value> indices = indicesOf(op, init, iv);
    if (!partials) {
      memref::StoreOp::create(b, loc, value, init->get(), indices);
      return;
    }
    indices.insert(indices.begin(), part);
    memref::StoreOp::create(b, loc, value, partials, indices);
  }

  Value rounded(OpBuilder &b, Location loc, Value v, bool backToF32) const {
    if (emulate && exact)
      return v;
    return mlir::linformer::cuda::roundToOperand(b, loc, v, precision, backToF32);
  }
  Value packPair(OpBuilder &b, Location loc, Value lo, Value hi) const {
    return mlir::linformer::cuda::packOperandPair(b, loc, lo, hi, precision);
  }

  void rewrite(IRRewriter &rewriter, linalg::GenericOp op, const Plan &p,
               int64_t tileK) {
    bool tf32 = precision == "tf32";
    Location loc = op.getLoc();
    rewriter.setInsertionPoint(op);
    SmallVector<int64_t> extents = op.getStaticLoopRanges();
    const int64_t MT = p.tilesM, NT = p.tilesN;
    auto c = [&](OpBuilder &b, int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    Value zero = c(rewriter, 0), one = c(rewriter, 1);
    Type f32 = rewriter.getF32Type();
    auto accType = VectorType::get({2, 2}, f32);
    // Split-K: the parts' partial sums, [split] + C's shape.
    OpOperand *init = op.getDpsInitOperand(0);
    auto initType = cast<MemRefType>(init->get().getType());
    Value partials;
    if (p.split > 1) {
      SmallVector<int64_t> shape{p.split};
      llvm::append_range(shape, initType.getShape());
      partials = memref::AllocOp::create(rewriter, loc,
                                         MemRefType::get(shape, f32));
    }
    int64_t kPart = extents[p.kDim] / p.split;
    SmallVector<Value> lbs, ubs, steps;
    if (p.split > 1) {
      lbs.push_back(zero);
      ubs.push_back(c(rewriter, p.split));
      steps.push_back(one);
    }
    lbs.append({zero, zero, zero});
    ubs.append({c(rewriter, p.rows), c(rewriter, p.cols), c(rewriter, kWarp)});
    steps.append({one, one, one});
    auto par = scf::ParallelOp::create(
        rewriter, loc, lbs, ubs, steps,
        [&](OpBuilder &b, Location loc, ValueRange allIvs) {
          Value part = p.split > 1 ? allIvs[0] : Value();
          ValueRange ivs = allIvs.take_back(3);
          Value rowTile = ivs[0], colTile = ivs[1], lane = ivs[2];
          unsigned rank = op.getNumLoops();
          SmallVector<Value> iv(rank);
          // Row tiles: the folded batch/outer-m dims, then the m block.
          Value mBlocks = c(b, extents[p.mDim] / (kTileM * MT));
          Value mBlock = arith::RemUIOp::create(b, loc, rowTile, mBlocks);
          delinearize(b, loc, arith::DivUIOp::create(b, loc, rowTile, mBlocks),
                      p.rowDims, extents, iv);
          Value nBlocks = c(b, extents[p.nDim] / (kTileN * NT));
          Value nBlock = arith::RemUIOp::create(b, loc, colTile, nBlocks);
          delinearize(b, loc, arith::DivUIOp::create(b, loc, colTile, nBlocks),
                      p.colDims, extents, iv);
          Value g = arith::DivUIOp::create(b, loc, lane, c(b, 4));
          Value t = arith::RemUIOp::create(b, loc, lane, c(b, 4));
          Value mBase = arith::MulIOp::create(b, loc, mBlock, c(b, kTileM * MT));
          Value nBase = arith::MulIOp::create(b, loc, nBlock, c(b, kTileN * NT));
          auto add = [&](Value x, int64_t v) -> Value {
            return arith::AddIOp::create(b, loc, x, c(b, v));
          };
          Value two_t = arith::MulIOp::create(b, loc, t, c(b, 2));
          Value mG = arith::AddIOp::create(b, loc, mBase, g);
          Value nT = arith::AddIOp::create(b, loc, nBase, two_t);
          Value nG = arith::AddIOp::create(b, loc, nBase, g);
          // The rows (2 per tile) and columns (2 per tile) of C this lane
          // holds, and the m / n index of its A / B fragment elements.
          auto rowOf = [&](int64_t i, int64_t half) {
            return add(mG, i * kTileM + half * 8);
          };
          auto colOf = [&](int64_t j, int64_t odd) {
            return add(nT, j * kTileN + odd);
          };
          auto at = [&](Value m, Value n) {
            iv[p.mDim] = m;
            iv[p.nDim] = n;
            return SmallVector<Value>(iv);
          };

          // The accumulators start as C's current values (the init), or
          // at zero for a part's partial sums.
          for (unsigned d : p.outerK)
            iv[d] = c(b, 0);
          iv[p.kDim] = c(b, 0);
          SmallVector<Value> accs;
          Value zeros = arith::ConstantOp::create(
              b, loc, accType, DenseElementsAttr::get(accType, 0.0f));
          for (int64_t i = 0; i < MT; ++i)
            for (int64_t j = 0; j < NT; ++j) {
              if (part) {
                accs.push_back(zeros);
                continue;
              }
              SmallVector<Value> elems;
              for (int64_t h = 0; h < 2; ++h)
                for (int64_t o = 0; o < 2; ++o)
                  elems.push_back(
                      load(b, loc, op, init, at(rowOf(i, h), colOf(j, o))));
              accs.push_back(
                  vector::FromElementsOp::create(b, loc, accType, elems));
            }

          OpOperand *aOp = op.getDpsInputOperand(p.aOperand);
          OpOperand *bOp = op.getDpsInputOperand(p.bOperand);
          // One k step: the warp's MT x NT tiles over k .. k + tileK.
          auto step = [&](OpBuilder &b, Value k,
                          ValueRange in) -> SmallVector<Value> {
            SmallVector<Value> out(in.begin(), in.end());
            auto loadA = [&](Value m, Value kk) {
              iv[p.mDim] = m;
              iv[p.kDim] = kk;
              return load(b, loc, op, aOp, iv);
            };
            auto loadB = [&](Value kk, Value n) {
              iv[p.nDim] = n;
              iv[p.kDim] = kk;
              return load(b, loc, op, bOp, iv);
            };
            if (emulate) {
              // Each lane: its four elements of every tile, from the
              // rounded operands, in f32.
              for (int64_t i = 0; i < MT; ++i)
                for (int64_t j = 0; j < NT; ++j) {
                  Value acc = out[i * NT + j];
                  for (int64_t h = 0; h < 2; ++h)
                    for (int64_t o = 0; o < 2; ++o) {
                      Value sum = vector::ExtractOp::create(
                          b, loc, acc, ArrayRef<int64_t>{h, o});
                      for (int64_t q = 0; q < tileK; ++q) {
                        Value kq = add(k, q);
                        Value x = rounded(b, loc, loadA(rowOf(i, h), kq), true);
                        Value y = rounded(b, loc, loadB(kq, colOf(j, o)), true);
                        sum = arith::AddFOp::create(
                            b, loc, sum, arith::MulFOp::create(b, loc, x, y));
                      }
                      acc = vector::InsertOp::create(b, loc, sum, acc,
                                                     ArrayRef<int64_t>{h, o});
                    }
                  out[i * NT + j] = acc;
                }
              return out;
            }
            if (tf32) {
              Value kt = arith::AddIOp::create(b, loc, k, t);
              SmallVector<Value> aFrag, bFrag;
              for (int64_t i = 0; i < MT; ++i) {
                auto aType = VectorType::get({2, 1}, f32);
                aFrag.push_back(vector::FromElementsOp::create(
                    b, loc, aType,
                    ValueRange{loadA(rowOf(i, 0), kt), loadA(rowOf(i, 1), kt)}));
              }
              for (int64_t j = 0; j < NT; ++j)
                bFrag.push_back(vector::FromElementsOp::create(
                    b, loc, VectorType::get({1, 1}, f32),
                    ValueRange{loadB(kt, add(nG, j * kTileN))}));
              for (int64_t i = 0; i < MT; ++i)
                for (int64_t j = 0; j < NT; ++j)
                  out[i * NT + j] = nvgpu::MmaSyncOp::create(
                      b, loc, aFrag[i], bFrag[j], out[i * NT + j],
                      ArrayRef<int64_t>{kTileM, kTileN, 4},
                      /*tf32Enabled=*/true);
              return out;
            }
            // m16n8k16 on bf16 / f16 pairs.
            Value k2t = arith::AddIOp::create(b, loc, k, two_t);
            Value k2t1 = add(k2t, 1), k2t8 = add(k2t, 8), k2t9 = add(k2t, 9);
            SmallVector<SmallVector<Value, 4>> aFrag(MT), bFrag(NT);
            for (int64_t i = 0; i < MT; ++i) {
              Value r0 = rowOf(i, 0), r8 = rowOf(i, 1);
              aFrag[i] = {packPair(b, loc, loadA(r0, k2t), loadA(r0, k2t1)),
                          packPair(b, loc, loadA(r8, k2t), loadA(r8, k2t1)),
                          packPair(b, loc, loadA(r0, k2t8), loadA(r0, k2t9)),
                          packPair(b, loc, loadA(r8, k2t8), loadA(r8, k2t9))};
            }
            for (int64_t j = 0; j < NT; ++j) {
              Value n = add(nG, j * kTileN);
              bFrag[j] = {packPair(b, loc, loadB(k2t, n), loadB(k2t1, n)),
                          packPair(b, loc, loadB(k2t8, n), loadB(k2t9, n))};
            }
            for (int64_t i = 0; i < MT; ++i)
              for (int64_t j = 0; j < NT; ++j)
                out[i * NT + j] = mlir::linformer::cuda::mmaM16N8K16(
                    b, loc, aFrag[i], bFrag[j], out[i * NT + j], precision);
            return out;
          };

          // The k loops: outer k dimensions one by one, the innermost in
          // steps of the mma depth.
          std::function<SmallVector<Value>(OpBuilder &, unsigned, ValueRange)>
              kLoop = [&](OpBuilder &b, unsigned level,
                          ValueRange in) -> SmallVector<Value> {
            bool inner = level == p.outerK.size();
            unsigned dim = inner ? p.kDim : p.outerK[level];
            Value lb = c(b, 0), ub = c(b, extents[dim]);
            if (inner && part) {
              lb = arith::MulIOp::create(b, loc, part, c(b, kPart));
              ub = arith::AddIOp::create(b, loc, lb, c(b, kPart));
            }
            auto loop = scf::ForOp::create(
                b, loc, lb, ub, c(b, inner ? tileK : 1), in,
                [&](OpBuilder &b, Location loc, Value k, ValueRange args) {
                  iv[dim] = k;
                  SmallVector<Value> next =
                      inner ? step(b, k, args) : kLoop(b, level + 1, args);
                  scf::YieldOp::create(b, loc, next);
                });
            return SmallVector<Value>(loop.getResults());
          };
          accs = kLoop(b, 0, accs);
          for (int64_t i = 0; i < MT; ++i)
            for (int64_t j = 0; j < NT; ++j)
              for (int64_t h = 0; h < 2; ++h)
                for (int64_t o = 0; o < 2; ++o)
                  store(b, loc, op,
                        vector::ExtractOp::create(b, loc, accs[i * NT + j],
                                                  ArrayRef<int64_t>{h, o}),
                        at(rowOf(i, h), colOf(j, o)), partials, part);
        });
    par->setAttr("linformer.tensor_core", rewriter.getUnitAttr());
    if (p.split > 1) {
      // C += the parts' sums, part 0 first: one loop over C's elements.
      SmallVector<Value> lo, hi, st;
      for (int64_t e : initType.getShape()) {
        lo.push_back(zero);
        hi.push_back(c(rewriter, e));
        st.push_back(one);
      }
      scf::ParallelOp::create(
          rewriter, loc, lo, hi, st,
          [&](OpBuilder &b, Location loc, ValueRange idx) {
            Value sum = memref::LoadOp::create(b, loc, init->get(), idx);
            auto loop = scf::ForOp::create(
                b, loc, zero, c(b, p.split), one, ValueRange{sum},
                [&](OpBuilder &b, Location loc, Value s, ValueRange args) {
                  SmallVector<Value> indices{s};
                  indices.append(idx.begin(), idx.end());
                  Value x = memref::LoadOp::create(b, loc, partials, indices);
                  scf::YieldOp::create(
                      b, loc,
                      ValueRange{arith::AddFOp::create(b, loc, args[0], x)});
                });
            memref::StoreOp::create(b, loc, loop.getResult(0), init->get(),
                                    idx);
          });
      memref::DeallocOp::create(rewriter, loc, partials);
    }
    rewriter.eraseOp(op);
  }
};

} // namespace
