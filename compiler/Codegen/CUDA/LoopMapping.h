//===- LoopMapping.h - scf.parallel onto blocks and threads -----*- C++ -*-===//
//
// What the CUDA passes that map loops share: tile sizes that divide an
// extent exactly (no idle thread, constant bounds), the mapping
// attributes convert-parallel-loops-to-gpu reads, the length rule of a
// block loop over tokens, the token bound of a reduction that stops at the
// lengths, and the lanes' xor butterflies.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Transforms/ParallelLoopMapper.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "compiler/Conversion/LinalgBuilders.h"
#include "compiler/Schedule/Schedule.h"
#include "dialect/IR/LinformerDialect.h"

#include <algorithm>

namespace mlir::linformer::cuda {

/// The largest divisor of `extent` that is at most `bound` (the schedule
/// library's, shared with the CPU tiling and the Halide generator).
using ::linformer::schedule::largestDivisorAtMost;

/// Maps `op`'s dimensions, outermost first, to `processors` (identity
/// index and bound maps).
inline void mapLoop(scf::ParallelOp op, ArrayRef<gpu::Processor> processors) {
  MLIRContext *ctx = op.getContext();
  AffineMap id = AffineMap::getMultiDimIdentityMap(1, ctx);
  SmallVector<gpu::ParallelLoopDimMappingAttr> mapping;
  for (gpu::Processor p : processors)
    mapping.push_back(gpu::ParallelLoopDimMappingAttr::get(ctx, p, id, id));
  (void)gpu::setMappingAttr(op, mapping);
}

/// The slots a fused attention core's steps stay within: it walks a
/// sequence's slots 16, 32 or 64 at a time (a step dividing k) up to the
/// first step past the ones that can be valid (ExpandAttentionCore's
/// slotEnd), so every step it reads lies in one granule of this many: the
/// largest of 64, 32 and 16 that divides k (k where none does).
inline int64_t slotGranule(int64_t k) {
  for (int64_t g : {64, 32, 16})
    if (k % g == 0)
      return g;
  return k;
}

/// The length rule of a block loop over tokens: blocks row-major over
/// `grid`, dimension `batch` (before `row`) the sequence, dimension `row`
/// tiles of `tileRows` rows of `tokensPerRow` tokens. With `slotRows`, the
/// loop's `linformer.cuda_slot_rows` [w, g] (rows that are pooled slots of w
/// tokens, read by fused cores in steps within granules of g slots), a
/// slot counts w tokens and the rule launches whole granules: a tile of a
/// multiple of g slots keeps the grid; g / tileRows smaller tiles make one
/// row of the rule (the grid's row dimension split in two, which numbers
/// the blocks as before). Null where tiles and granules do not nest: every
/// block then runs.
inline TokenRowsAttr tokenRowsRule(MLIRContext *ctx, SmallVector<int64_t> grid,
                                   int64_t batch, int64_t row, int64_t tileRows,
                                   int64_t tokensPerRow,
                                   DenseI64ArrayAttr slotRows) {
  auto rule = [&](int64_t tile) {
    return TokenRowsAttr::get(ctx, DenseI64ArrayAttr::get(ctx, grid), batch,
                              row, tile);
  };
  if (!slotRows)
    return rule(tileRows * tokensPerRow);
  if (slotRows.size() != 2 || slotRows[0] < 1 || slotRows[1] < 1 ||
      tokensPerRow != 1 || batch >= row)
    return {};
  int64_t window = slotRows[0], granule = slotRows[1];
  if (tileRows % granule == 0)
    return rule(tileRows * window);
  int64_t group = granule / tileRows;
  if (granule % tileRows != 0 || grid[row] % group != 0)
    return {};
  grid[row] /= group;
  grid.insert(grid.begin() + row + 1, group);
  return rule(granule * window);
}

/// `op`'s token bound where the CUDA loops stop its reduction at the
/// lengths (linformer-cuda-token-parallel-loops, the warp row sums): the
/// token loop the only reduction and innermost, steps of one token, the
/// batch and part loops parallel, and the function's lengths marked.
inline TokenBoundAttr appliedTokenBound(linalg::LinalgOp op) {
  auto bound = op->getAttrOfType<TokenBoundAttr>(kTokenBoundAttrName);
  if (!bound || bound.getPerStep() != 1 || !op.hasPureBufferSemantics() ||
      !markedLengthsArgument(op->getParentOfType<func::FuncOp>()))
    return {};
  int64_t loops = op.getNumLoops();
  auto iterators = op.getIteratorTypesArray();
  for (int64_t d = 0; d < loops; ++d)
    if ((iterators[d] == utils::IteratorType::reduction) !=
        (d == bound.getToken()))
      return {};
  if (bound.getToken() != loops - 1 || bound.getBatch() >= loops - 1 ||
      bound.getPart() >= loops - 1 ||
      (bound.hasParts() && bound.getPerPart() < 1))
    return {};
  return bound;
}

/// Sequence `s`'s real length, `lengths[s]` as an index.
inline Value sequenceLength(OpBuilder &b, Location loc, Value lengths,
                            Value s) {
  return arith::IndexCastOp::create(
      b, loc, b.getIndexType(),
      memref::LoadOp::create(b, loc, lengths, ValueRange{s}));
}

/// One loop over a block's `warps` x 32 threads, mapped to thread y
/// (the warp) and thread x (the lane), running `body(w, lane)`: the inner
/// loop of the nests that come out mapped already (the staged core and
/// GEMMs, the warp row sums).
inline void blockThreads(OpBuilder &b, Location loc, int64_t warps,
                         function_ref<void(OpBuilder &, Value, Value)> body) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  Value one = arith::ConstantIndexOp::create(b, loc, 1);
  auto inner = scf::ParallelOp::create(
      b, loc, ValueRange{zero, zero},
      ValueRange{arith::ConstantIndexOp::create(b, loc, warps),
                 arith::ConstantIndexOp::create(b, loc, 32)},
      ValueRange{one, one}, [&](OpBuilder &b, Location loc, ValueRange tv) {
        body(b, tv[0], tv[1]);
        scf::ReduceOp::create(b, loc);
      });
  mapLoop(inner, {gpu::Processor::ThreadY, gpu::Processor::ThreadX});
}

/// `x` combined with the values of the lanes `lane xor off`, for each
/// offset in turn (gpu.shuffle xor over the whole warp, so every lane must
/// be there): with offsets that are the bits of a group of lanes, every
/// lane of the group ends with the same result (each combine commutes).
inline Value
xorButterfly(OpBuilder &b, Location loc, Value x, ArrayRef<int32_t> offsets,
             function_ref<Value(OpBuilder &, Location, Value, Value)> combine) {
  for (int32_t off : offsets) {
    Value other =
        gpu::ShuffleOp::create(b, loc, x, off, 32, gpu::ShuffleMode::XOR)
            .getShuffleResult();
    x = combine(b, loc, x, other);
  }
  return x;
}

/// The sum of `x` over each group of `lanes` consecutive lanes (a power of
/// two up to 32), by xor offsets lanes / 2, ..., 1.
inline Value butterflySum(OpBuilder &b, Location loc, Value x, int64_t lanes) {
  SmallVector<int32_t> offsets;
  for (int64_t off = lanes / 2; off >= 1; off /= 2)
    offsets.push_back(int32_t(off));
  return xorButterfly(
      b, loc, x, offsets, [](OpBuilder &b, Location loc, Value lhs, Value rhs) {
        return arith::AddFOp::create(b, loc, lhs, rhs).getResult();
      });
}

/// The buffer `v` views, through views (subviews, reshapes, casts and
/// strided metadata): a function argument, an allocation, shared memory.
inline Value viewedBuffer(Value v) {
  while (Operation *def = v.getDefiningOp()) {
    if (auto view = dyn_cast<ViewLikeOpInterface>(def))
      v = view.getViewSource();
    else if (auto meta = dyn_cast<memref::ExtractStridedMetadataOp>(def))
      v = meta.getSource();
    else
      break;
  }
  return v;
}

/// Records on `fn` each outermost loop's length rule (a launch from
/// linformer-cuda-tile-parallel-loops on) in order, unit for one without,
/// as `linformer.cuda_launch_rows`: launches carry no attributes of the
/// loops they come from, so the plan takes the rules from this list, in
/// the same order. Passes that add, remove or reorder launches record it
/// again.
inline void recordLaunchRows(func::FuncOp fn) {
  MLIRContext *ctx = fn.getContext();
  SmallVector<Attribute> rows;
  bool any = false;
  fn.walk<WalkOrder::PreOrder>([&](scf::ParallelOp op) {
    Attribute rule = op->getAttr(kCUDATokenRowsAttrName);
    any |= bool(rule);
    rows.push_back(rule ? rule : UnitAttr::get(ctx));
    return WalkResult::skip();
  });
  if (any)
    fn->setAttr(kCUDALaunchRowsAttrName, ArrayAttr::get(ctx, rows));
}

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_LOOPMAPPING_H
