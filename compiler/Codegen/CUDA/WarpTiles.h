//===- WarpTiles.h - the warp tiles of a tensor-core contraction -*- C++
//-*-===//
//
// What linformer-cuda-tensor-core-contractions emits for a contraction and
// its plan (Contractions.h): the unstaged warp tiles (WarpTiles.cpp), every
// warp loading its own fragments, or the staged blocks (StagedTiles.cpp),
// whose warps share their operands through shared memory; and the pieces
// both use: operand loads that compute absorbed extensions, the k loops,
// and the accumulator fragments' initial values and stores (through the
// absorbed init and epilogue). The pass decides what a contraction absorbs
// and its split-K; these emit the loop nests.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_WARPTILES_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_WARPTILES_H

#include "compiler/Codegen/CUDA/Contractions.h"

#include "mlir/IR/PatternMatch.h"

#include <string>

namespace mlir::linformer::cuda {

/// How the warp tiles are built: the mma precision, and the host's
/// emulation (each lane its own C elements in f32 scalars, from the same
/// rounded operands; `exact`: f32 words, nothing rounded).
struct WarpTileOptions {
  std::string precision = "tf32"; ///< tf32, tf32x3, bf16, f16, or f32 (SIMT)
  bool emulate = false;
  bool exact = false;

  bool tf32() const { return isTF32(precision); }
  /// 3xTF32: each operand split into a TF32 head and tail (splitTF32),
  /// three mma a tile and step; the exact emulation rounds nothing, so
  /// there one product of the whole operands.
  bool tf32x3() const { return precision == "tf32x3" && !(emulate && exact); }
  /// f32 without tensor cores: the staged tiles, each lane multiplying its
  /// own C elements with fma from staged f32 pairs.
  bool simt() const { return precision == "f32"; }
  /// Whether staged words are f32 pairs (SIMT, TF32, exact emulation)
  /// rather than two rounded 16-bit operands.
  bool f32Words() const { return simt() || tf32() || exact; }
  /// The instruction's depth: m16n8k4 (tf32) or m16n8k16.
  int64_t tileK() const { return mmaDepth(precision); }
};

/// `op` as unstaged warp tiles: one scf.parallel over (split-K part,) warp
/// rows, warp columns and lanes, every warp loading its fragments from
/// `op`'s operands; with split-K into `partials` ([split] + C's shape).
void emitUnstagedTiles(IRRewriter &rewriter, linalg::GenericOp op,
                       const Plan &p, const WarpTileOptions &o, Value partials);

/// `op` as staged blocks (`p.staging`): an scf.parallel over blocks
/// (block x) around the block's threads, each chunk of k copied into
/// shared memory before its mma steps; with split-K into `partials`,
/// and given `counters` (i32, one a block tile, zero) the parts added to
/// C in the kernel by the block that stores a tile's last part.
void emitStagedTiles(IRRewriter &rewriter, linalg::GenericOp op, const Plan &p,
                     const WarpTileOptions &o, Value partials,
                     Value counters = Value());

/// A lane's elements of its MT x NT accumulator tiles (vector<2x2xf32>
/// each: [row half h][column o]), each replaced by `update(i, j, h, o,
/// element)` (the emulated and SIMT products: each lane its own).
using ElementUpdate =
    function_ref<Value(int64_t, int64_t, int64_t, int64_t, Value)>;
void updateElements(OpBuilder &b, Location loc, MutableArrayRef<Value> accs,
                    int64_t MT, int64_t NT, ElementUpdate update);

/// Splits `linear` into the indices of `dims` (row-major) and records
/// them in `iv`.
void delinearize(OpBuilder &b, Location loc, Value linear,
                 ArrayRef<unsigned> dims, ArrayRef<int64_t> extents,
                 SmallVectorImpl<Value> &iv);

/// `operand` of `op` at loop indices `iv`, as f32, or computed as the
/// guarded extension that plan `p` absorbed for it would have stored it.
Value loadOperand(OpBuilder &b, Location loc, const Plan &p,
                  linalg::GenericOp op, OpOperand *operand, ArrayRef<Value> iv);

/// The loop indices of a lane's element (h, o) of C tile (i, j).
using TileElement = function_ref<SmallVector<Value>(int64_t i, int64_t h,
                                                    int64_t j, int64_t o)>;

/// C's initial value at `indices`: loaded, or computed as `from` (see
/// absorbableInit) would have stored it.
Value initialValue(OpBuilder &b, Location loc, Value c, Operation *from,
                   ArrayRef<Value> indices);

/// Stores C's final value `acc` at `indices` where plan `p` puts it: run
/// through its epilogue, rounded to its output's type.
void storeResult(OpBuilder &b, Location loc, const Plan &p, Value acc,
                 ArrayRef<Value> indices);

/// Split-K's end at C's `indices`: C's initial value plus the parts' sums
/// in `partials` ([split] + C's shape), part 0 first, stored as
/// storeResult does.
void storeSumOfParts(OpBuilder &b, Location loc, linalg::GenericOp op,
                     const Plan &p, Value partials, ArrayRef<Value> indices);

/// A warp's MT x NT accumulator fragments as it starts: C's initial
/// values, or zero for a split-K part's partial sums.
SmallVector<Value> initialAccs(OpBuilder &b, Location loc, linalg::GenericOp op,
                               int64_t MT, int64_t NT, bool zero,
                               TileElement at, Operation *initFrom);

/// The accumulator fragments into C, or with split-K into part `part` of
/// the partial sums. With the plan's `pairStores`, a lane's elements (h, 0)
/// and (h, 1) of a tile, adjacent columns, go as one 2-element vector
/// store where the destination's layout allows it (pairedColumns).
void storeAccs(OpBuilder &b, Location loc, linalg::GenericOp op, const Plan &p,
               ValueRange accs, int64_t MT, int64_t NT, TileElement at,
               Value partials, Value part);

/// The alignment of a pair of C's elements that a lane stores as one
/// vector (columns 2t + o of an mma tile, o = 0, 1) in `dest` (C's
/// shape, or `[parts] + C's shape`): two elements' bytes when `op`'s
/// output indexes its last dimension by the n loop alone and `dest` is
/// contiguous along it, with an even last extent and even strides and
/// offset besides (so that every even column is that far aligned), and
/// no transcendental math in the epilogue; none otherwise.
llvm::MaybeAlign pairedColumns(linalg::GenericOp op, const Plan &p,
                               Value dest);

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_WARPTILES_H
