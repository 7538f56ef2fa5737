//===- WarpTiles.cpp - the warp tiles of a tensor-core contraction -*- C++
//-*-===//
//
// The emitters' shared pieces (loads, k loops, accumulator fragments in and
// out) and the unstaged warp tiles (see WarpTiles.h) of linformer-cuda-
// tensor-core-contractions: an f32 contraction `linalg.generic` (C += A * B
// over projected permutations) and its Plan become one `scf.parallel` over
// (warp-tile rows, warp-tile columns, 32 lanes) in which each warp computes an
// (16 x MT) x (8 x NT) block of C as MT x NT mma.sync tiles with f32
// accumulators held in registers, stepping k by the instruction's depth. A and
// B fragments are loaded once per k step and reused across the warp's tiles (NT
// and MT times).
//
// Precisions:
//   tf32: `nvgpu.mma.sync` m16n8k4 on f32 data, each operand rounded to
//     TF32 with cvt.rna.tf32.f32 as its fragment is loaded (on the host
//     lowered to the same rounding in integer ops), products and sums in
//     f32 (sm_80+);
//   tf32x3 (3xTF32): the same mma on each operand's TF32 head and tail
//     (cvt.rna of the value, then of what the head leaves), three a tile
//     and step, tails first: a_h b_t + a_t b_h + a_h b_h, the operands to
//     about 21 bits, near f32's accuracy at three times TF32's mma count;
//   bf16, f16: `nvvm.mma.sync` m16n8k16, each operand rounded to nearest
//     even to bf16 / f16 as its fragment is loaded (the rounding a bf16
//     model's stored activations get in a framework), products and sums
//     in f32 (sm_80+). nvgpu's conversion has no bf16 (MLIR 22: "failed to
//     deduce operand PTX types"), so the NVVM op is built directly;
//   f32 (SIMT, no tensor cores): staged tiles only, each lane updating the
//     C elements its mma fragments would hold with fma from staged f32
//     pairs (the pipeline's choice for f32 models).
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
// The host runs these tiles as they are: linformer-cuda-emulate-warps
// lowers each mma.sync to the products of the lanes' fragments. With
// `emulate exact` (the host checking index arithmetic at f32 precision)
// TF32 operands are not rounded (the mma then multiplies whole f32
// values); a bf16 / f16 register cannot hold whole operands, so there each
// lane computes its own C elements of every tile in f32 scalars over the
// same k steps instead.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/WarpTiles.h"
#include "compiler/Codegen/CUDA/BodyCloning.h"
#include "compiler/Codegen/CUDA/MmaUtils.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"

namespace mlir::linformer::cuda {

/// A lane's elements of its MT x NT accumulator tiles (vector<2x2xf32>
/// each: [row half h][column o]), each replaced by `update(i, j, h, o,
/// element)` (the emulated and SIMT products: each lane its own).
void updateElements(OpBuilder &b, Location loc, MutableArrayRef<Value> accs,
                    int64_t MT, int64_t NT, ElementUpdate update) {
  for (int64_t i = 0; i < MT; ++i)
    for (int64_t j = 0; j < NT; ++j) {
      Value acc = accs[i * NT + j];
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t o = 0; o < 2; ++o) {
          Value e =
              vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{h, o});
          acc = vector::InsertOp::create(b, loc, update(i, j, h, o, e), acc,
                                         ArrayRef<int64_t>{h, o});
        }
      accs[i * NT + j] = acc;
    }
}

/// Splits `linear` into the indices of `dims` (row-major) and records
/// them in `iv`.
void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<int64_t> extents,
                 SmallVectorImpl<Value> &iv) {
  for (unsigned d : llvm::reverse(dims)) {
    Value e = arith::ConstantIndexOp::create(b, loc, extents[d]);
    iv[d] = arith::RemUIOp::create(b, loc, linear, e);
    linear = arith::DivUIOp::create(b, loc, linear, e);
  }
}

/// `operand` at `iv`, as f32 (a bf16 / f16 operand extended: exact, and
/// rounding it back to its own type for a fragment is the identity), or
/// computed as the guarded extension that plan `p` absorbed for it would
/// have stored it.
Value loadOperand(OpBuilder &b, Location loc, const Plan &p,
                  linalg::GenericOp op, OpOperand *operand,
                  ArrayRef<Value> iv) {
  SmallVector<Value> at = operandIndices(op, operand, iv);
  linalg::GenericOp from = p.operandFrom[operand->getOperandNumber()];
  Value v = from ? cloneBody(b, loc, from, at)
                 : memref::LoadOp::create(b, loc, operand->get(), at);
  if (!v.getType().isF32())
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  return v;
}

/// The k loops of plan `p`: its outer k dims one by one, then the
/// innermost in steps of `step` (over part `part`'s range with split-K),
/// each loop's index recorded in `iv`, carrying `in` through
/// `body(k, carried)` at every innermost step.
using KStep = function_ref<SmallVector<Value>(OpBuilder &, Value, ValueRange)>;
static SmallVector<Value> kLoops(OpBuilder &b, Location loc, const Plan &p,
                                 ArrayRef<int64_t> extents,
                                 SmallVectorImpl<Value> &iv, Value part,
                                 int64_t step, ValueRange in, KStep body,
                                 unsigned level = 0) {
  auto c = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  bool inner = level == p.outerK.size();
  unsigned dim = inner ? p.kDim : p.outerK[level];
  Value lb = c(b, 0), ub = c(b, extents[dim]);
  if (inner && part) {
    int64_t kPart = extents[p.kDim] / p.split;
    lb = arith::MulIOp::create(b, loc, part, c(b, kPart));
    ub = arith::AddIOp::create(b, loc, lb, c(b, kPart));
  }
  auto loop = scf::ForOp::create(
      b, loc, lb, ub, c(b, inner ? step : 1), in,
      [&](OpBuilder &b, Location loc, Value k, ValueRange args) {
        iv[dim] = k;
        SmallVector<Value> next = inner ? body(b, k, args)
                                        : kLoops(b, loc, p, extents, iv, part,
                                                 step, args, body, level + 1);
        scf::YieldOp::create(b, loc, next);
      });
  return SmallVector<Value>(loop.getResults());
}

/// C's initial value at `indices`: loaded, or computed as `from` (see
/// absorbableInit) would have stored it.
Value initialValue(OpBuilder &b, Location loc, Value c, Operation *from,
                   ArrayRef<Value> indices) {
  if (!from)
    return memref::LoadOp::create(b, loc, c, indices);
  if (arith::ConstantOp cst = cuda::filledConstant(from, c))
    return b.clone(*cst)->getResult(0);
  return cloneBody(b, loc, cast<linalg::GenericOp>(from), indices);
}

/// C's final value `acc` at `indices`: run through plan `p`'s epilogue,
/// rounded to its output's type.
static Value finalValue(OpBuilder &b, Location loc, const Plan &p, Value acc,
                        ArrayRef<Value> indices) {
  Value v = acc;
  if (linalg::GenericOp e = p.epilogue())
    v = cloneBody(b, loc, e, indices, p.epilogueRead, acc);
  Type type = cast<MemRefType>(p.out.getType()).getElementType();
  if (v.getType() != type)
    v = arith::TruncFOp::create(b, loc, type, v);
  return v;
}

/// Stores C's final value `acc` at `indices` where plan `p` puts it: run
/// through its epilogue, rounded to its output's type.
void storeResult(OpBuilder &b, Location loc, const Plan &p, Value acc,
                 ArrayRef<Value> indices) {
  memref::StoreOp::create(b, loc, finalValue(b, loc, p, acc, indices), p.out,
                          indices);
}

void storeSumOfParts(OpBuilder &b, Location loc, linalg::GenericOp op,
                     const Plan &p, Value partials, ArrayRef<Value> indices) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value sum =
      initialValue(b, loc, op.getDpsInitOperand(0)->get(), p.initFrom, indices);
  auto parts = scf::ForOp::create(
      b, loc, zero, arith::ConstantIndexOp::create(b, loc, p.split),
      arith::ConstantIndexOp::create(b, loc, 1), ValueRange{sum},
      [&](OpBuilder &b, Location loc, Value q, ValueRange args) {
        SmallVector<Value> at{q};
        at.append(indices.begin(), indices.end());
        Value x = memref::LoadOp::create(b, loc, partials, at);
        scf::YieldOp::create(
            b, loc, ValueRange{arith::AddFOp::create(b, loc, args[0], x)});
      });
  storeResult(b, loc, p, parts.getResult(0), indices);
}

/// A warp's MT x NT accumulator fragments as it starts: C's initial
/// values, or zero for a split-K part's partial sums.
SmallVector<Value> initialAccs(OpBuilder &b, Location loc, linalg::GenericOp op,
                               int64_t MT, int64_t NT, bool zero,
                               TileElement at, Operation *initFrom) {
  auto accType = VectorType::get({2, 2}, b.getF32Type());
  if (zero)
    return SmallVector<Value>(
        MT * NT, arith::ConstantOp::create(
                     b, loc, accType, DenseElementsAttr::get(accType, 0.0f)));
  SmallVector<Value> accs;
  for (int64_t i = 0; i < MT; ++i)
    for (int64_t j = 0; j < NT; ++j) {
      SmallVector<Value> elems;
      for (int64_t h = 0; h < 2; ++h)
        for (int64_t o = 0; o < 2; ++o) {
          OpOperand *c = op.getDpsInitOperand(0);
          elems.push_back(initialValue(b, loc, c->get(), initFrom,
                                       operandIndices(op, c, at(i, h, j, o))));
        }
      accs.push_back(vector::FromElementsOp::create(b, loc, accType, elems));
    }
  return accs;
}

llvm::MaybeAlign pairedColumns(linalg::GenericOp op, const Plan &p,
                               Value dest) {
  AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (map.getNumResults() == 0 ||
      map.getResults().back() != getAffineDimExpr(p.nDim, op.getContext()))
    return std::nullopt;
  for (AffineExpr e : map.getResults().drop_back())
    if (e.isFunctionOfDim(p.nDim))
      return std::nullopt;
  auto type = dyn_cast<MemRefType>(dest.getType());
  if (!type || !type.hasStaticShape() || type.getShape().back() % 2 != 0)
    return std::nullopt;
  SmallVector<int64_t> strides;
  int64_t offset;
  if (failed(type.getStridesAndOffset(strides, offset)) ||
      strides.back() != 1 || ShapedType::isDynamic(offset) || offset % 2 != 0)
    return std::nullopt;
  for (int64_t s : ArrayRef<int64_t>(strides).drop_back())
    if (ShapedType::isDynamic(s) || s % 2 != 0)
      return std::nullopt;
  unsigned bits = type.getElementTypeBitWidth();
  if (bits % 8 != 0)
    return std::nullopt;
  // An epilogue of transcendental math (GELU's erf) stays one store an
  // element: holding one value through the other's long body pushed an
  // f16 FFN kernel at sm_80's 128-register cap into spills (ptxas -v).
  if (linalg::GenericOp e = p.epilogue())
    if (llvm::any_of(e.getBody()->getOperations(), [](Operation &op) {
          return isa<math::MathDialect>(op.getDialect());
        }))
      return std::nullopt;
  return llvm::Align(2 * bits / 8);
}

/// The accumulator fragments into C, or with split-K into part `part` of
/// the partial sums.
void storeAccs(OpBuilder &b, Location loc, linalg::GenericOp op, const Plan &p,
               ValueRange accs, int64_t MT, int64_t NT, TileElement at,
               Value partials, Value part) {
  OpOperand *init = op.getDpsInitOperand(0);
  Value dest = partials ? partials : p.out;
  llvm::MaybeAlign pairAlign =
      p.pairStores ? pairedColumns(op, p, dest) : llvm::MaybeAlign();
  for (int64_t i = 0; i < MT; ++i)
    for (int64_t j = 0; j < NT; ++j)
      for (int64_t h = 0; h < 2; ++h) {
        SmallVector<Value, 2> values;
        SmallVector<Value> first;
        for (int64_t o = 0; o < 2; ++o) {
          Value v = vector::ExtractOp::create(b, loc, accs[i * NT + j],
                                              ArrayRef<int64_t>{h, o});
          SmallVector<Value> indices = operandIndices(op, init, at(i, h, j, o));
          if (!partials)
            v = finalValue(b, loc, p, v, indices);
          else
            indices.insert(indices.begin(), part);
          if (!pairAlign) {
            memref::StoreOp::create(b, loc, v, dest, indices);
            continue;
          }
          values.push_back(v);
          if (o == 0)
            first = indices;
        }
        if (!pairAlign)
          continue;
        // Columns 2t and 2t + 1: one vector at the even one.
        auto type = VectorType::get({2}, values[0].getType());
        Value pair = vector::FromElementsOp::create(b, loc, type, values);
        vector::StoreOp::create(b, loc, pair, dest, first,
                                /*nontemporal=*/false, pairAlign);
      }
}

/// An operand value rounded as the mma reads it (TF32 with cvt.rna, or to
/// bf16 / f16; nothing on the exact host), back in f32 when
/// `backToF32`.
static Value roundedOperand(OpBuilder &b, Location loc, Value v, bool backToF32,
                            const WarpTileOptions &o) {
  if (o.emulate && o.exact)
    return v;
  if (o.tf32())
    return roundToTF32(b, loc, v);
  return roundToOperand(b, loc, v, o.precision, backToF32);
}

/// The unstaged warp tiles: one scf.parallel over (part,) warp rows, warp
/// columns and lanes; every warp loads its fragments from `op`'s
/// operands.
void emitUnstagedTiles(IRRewriter &rewriter, linalg::GenericOp op,
                       const Plan &p, const WarpTileOptions &o,
                       Value partials) {
  bool tf32 = o.tf32();
  // The exact host's 16-bit tiles: a bf16 / f16 fragment register cannot
  // hold whole f32 operands, so each lane computes its own C elements in
  // f32 scalars over the same k steps instead of the mma.sync.
  bool scalar = hostReplays(o.emulate, o.exact) && !tf32;
  int64_t tileK = o.tileK();
  StringRef precision = o.precision;
  auto rounded = [&](OpBuilder &b, Location loc, Value v, bool backToF32) {
    return roundedOperand(b, loc, v, backToF32, o);
  };
  auto packPair = [&](OpBuilder &b, Location loc, Value lo, Value hi) {
    return packOperandPair(b, loc, lo, hi, o.precision);
  };
  Location loc = op.getLoc();
  SmallVector<int64_t> extents = op.getStaticLoopRanges();
  const int64_t MT = p.tilesM, NT = p.tilesN;
  auto c = [&](OpBuilder &b, int64_t v) -> Value {
    return arith::ConstantIndexOp::create(b, loc, v);
  };
  Value zero = c(rewriter, 0), one = c(rewriter, 1);
  Type f32 = rewriter.getF32Type();
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

        auto element = [&](int64_t i, int64_t h, int64_t j, int64_t o) {
          return at(rowOf(i, h), colOf(j, o));
        };
        for (unsigned d : p.outerK)
          iv[d] = c(b, 0);
        iv[p.kDim] = c(b, 0);
        SmallVector<Value> accs =
            initialAccs(b, loc, op, MT, NT, bool(part), element, p.initFrom);

        OpOperand *aOp = op.getDpsInputOperand(p.aOperand);
        OpOperand *bOp = op.getDpsInputOperand(p.bOperand);
        // One k step: the warp's MT x NT tiles over k .. k + tileK.
        auto step = [&](OpBuilder &b, Value k,
                        ValueRange in) -> SmallVector<Value> {
          SmallVector<Value> out(in.begin(), in.end());
          auto loadA = [&](Value m, Value kk) {
            iv[p.mDim] = m;
            iv[p.kDim] = kk;
            return loadOperand(b, loc, p, op, aOp, iv);
          };
          auto loadB = [&](Value kk, Value n) {
            iv[p.nDim] = n;
            iv[p.kDim] = kk;
            return loadOperand(b, loc, p, op, bOp, iv);
          };
          if (scalar) {
            // Each lane: its four elements of every tile, from the
            // whole operands, in f32.
            updateElements(
                b, loc, out, MT, NT,
                [&](int64_t i, int64_t j, int64_t h, int64_t o, Value sum) {
                  for (int64_t q = 0; q < tileK; ++q) {
                    Value kq = add(k, q);
                    Value x = rounded(b, loc, loadA(rowOf(i, h), kq), true);
                    Value y = rounded(b, loc, loadB(kq, colOf(j, o)), true);
                    sum = arith::AddFOp::create(
                        b, loc, sum, arith::MulFOp::create(b, loc, x, y));
                  }
                  return sum;
                });
            return out;
          }
          if (tf32) {
            Value kt = arith::AddIOp::create(b, loc, k, t);
            // The operands in TF32 (cvt.rna): the mma reads only their
            // top 19 bits, and the PTX ISA leaves what it makes of the
            // rest unspecified. 3xTF32: each fragment as a head and a
            // tail fragment (splitTF32).
            bool x3 = o.tf32x3();
            // (The exact host multiplies the values as loaded, unless
            // they are split.)
            auto fragments = [&](int64_t rows,
                                 llvm::function_ref<Value(int64_t)> load)
                -> std::pair<Value, Value> {
              SmallVector<Value, 2> values;
              for (int64_t r = 0; r < rows; ++r)
                values.push_back(load(r));
              if (o.emulate && o.exact && !x3)
                return {vector::FromElementsOp::create(
                            b, loc, VectorType::get({rows, 1}, f32), values),
                        Value()};
              return cuda::tf32Fragments(b, loc, values, x3);
            };
            SmallVector<std::pair<Value, Value>> aFrag, bFrag;
            for (int64_t i = 0; i < MT; ++i)
              aFrag.push_back(fragments(
                  2, [&](int64_t h) { return loadA(rowOf(i, h), kt); }));
            for (int64_t j = 0; j < NT; ++j)
              bFrag.push_back(fragments(
                  1, [&](int64_t) { return loadB(kt, add(nG, j * kTileN)); }));
            auto mma = [&](Value x, Value y, Value acc) -> Value {
              return nvgpu::MmaSyncOp::create(
                  b, loc, x, y, acc, ArrayRef<int64_t>{kTileM, kTileN, 4},
                  /*tf32Enabled=*/true);
            };
            for (int64_t i = 0; i < MT; ++i)
              for (int64_t j = 0; j < NT; ++j) {
                Value &acc = out[i * NT + j];
                // The small terms first, then head by head.
                if (x3) {
                  acc = mma(aFrag[i].first, bFrag[j].second, acc);
                  acc = mma(aFrag[i].second, bFrag[j].first, acc);
                }
                acc = mma(aFrag[i].first, bFrag[j].first, acc);
              }
            return out;
          }
          // m16n8k16 on bf16 / f16 pairs.
          Value k2t = arith::AddIOp::create(b, loc, k, two_t);
          Value k2t1 = add(k2t, 1), k2t8 = add(k2t, 8), k2t9 = add(k2t, 9);
          // B fragments first, then each A fragment right before its
          // row of mma: 4 + 2 NT fragment registers live, not 4 MT + 2 NT.
          SmallVector<SmallVector<Value, 4>> bFrag(NT);
          for (int64_t j = 0; j < NT; ++j) {
            Value n = add(nG, j * kTileN);
            bFrag[j] = {packPair(b, loc, loadB(k2t, n), loadB(k2t1, n)),
                        packPair(b, loc, loadB(k2t8, n), loadB(k2t9, n))};
          }
          for (int64_t i = 0; i < MT; ++i) {
            Value r0 = rowOf(i, 0), r8 = rowOf(i, 1);
            SmallVector<Value, 4> aFrag = {
                packPair(b, loc, loadA(r0, k2t), loadA(r0, k2t1)),
                packPair(b, loc, loadA(r8, k2t), loadA(r8, k2t1)),
                packPair(b, loc, loadA(r0, k2t8), loadA(r0, k2t9)),
                packPair(b, loc, loadA(r8, k2t8), loadA(r8, k2t9))};
            for (int64_t j = 0; j < NT; ++j)
              out[i * NT + j] = mlir::linformer::cuda::mmaM16N8K16(
                  b, loc, aFrag, bFrag[j], out[i * NT + j], precision);
          }
          return out;
        };

        // The k loops: outer k dimensions one by one, the innermost in
        // steps of the mma depth.
        accs = kLoops(b, loc, p, extents, iv, part, tileK, accs, step);
        storeAccs(b, loc, op, p, accs, MT, NT, element, partials, part);
      });
  par->setAttr(mlir::linformer::kTensorCoreAttrName, rewriter.getUnitAttr());
}

} // namespace mlir::linformer::cuda
