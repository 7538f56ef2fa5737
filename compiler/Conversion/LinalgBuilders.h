//===- LinalgBuilders.h - small builders for linalg on tensors --*- C++ -*-===//
//
// Helpers shared by the decomposition and the lowering to linalg: generic
// ops described by the loop dimensions each operand is indexed by, and the
// padding computations (valid tokens, window counts, valid projected slots).
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CONVERSION_LINALGBUILDERS_H
#define LINFORMER_COMPILER_CONVERSION_LINALGBUILDERS_H

#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

namespace mlir::linformer {

/// The loop dimensions an operand of a generic is indexed by, in order.
using DimList = SmallVector<unsigned, 6>;

/// An empty tensor of a static shape.
Value emptyTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                  Type elementType);

/// A tensor filled with a scalar constant.
Value filledTensor(OpBuilder &b, Location loc, ArrayRef<int64_t> shape,
                   Type elementType, TypedAttr value);

/// A linalg.generic over `numLoops` loops. `inputDims[i]` and `outputDims`
/// name the loops each operand is indexed by; `reductionDims` lists the
/// reduction loops. Returns the single result.
Value buildGeneric(OpBuilder &b, Location loc, unsigned numLoops,
                   ValueRange inputs, ArrayRef<DimList> inputDims, Value init,
                   const DimList &outputDims, ArrayRef<unsigned> reductionDims,
                   function_ref<Value(OpBuilder &, Location, ValueRange)> body);

/// `init + sum(a * b)` over the reduction loops: a contraction written as a
/// generic so that linalg's vectorizer turns it into vector.contract.
Value buildContraction(OpBuilder &b, Location loc, unsigned numLoops, Value a,
                       const DimList &aDims, Value bOperand,
                       const DimList &bDims, Value init,
                       const DimList &outDims,
                       ArrayRef<unsigned> reductionDims);

/// Masks never live in memory as i1 during code generation: a vector of i1
/// is stored bit-packed, a scalar i1 as a byte, and mixing both corrupts
/// them. Builders below produce i8 flags (0/1); `maskBit` turns a flag of
/// either type into an i1 value inside a generic's body.
Value maskBit(OpBuilder &b, Location loc, Value flag);

/// [batch, n] i8: 1 where the token is real. From `lengths` ([batch],
/// i32/i64: token t is real iff t < lengths[b]) or from `mask`.
Value buildValidTokens(OpBuilder &b, Location loc, Value lengths, Value mask,
                       int64_t batch, int64_t seqLen);

/// [batch, k] of `elementType`: how many real tokens each window of n / k
/// tokens holds.
Value buildWindowCounts(OpBuilder &b, Location loc, Value validTokens,
                        int64_t k, Type elementType);

/// [batch, k] i8: 1 where a window's count (buildWindowCounts, f32) is
/// positive.
Value buildSlotFlags(OpBuilder &b, Location loc, Value counts);

/// [batch, k] i8: 1 where a pooled/convolved slot has a real token.
Value buildValidSlots(OpBuilder &b, Location loc, Value lengths, Value mask,
                      int64_t batch, int64_t seqLen, int64_t k);

/// Converts a float scalar to `type` (window counts are kept in f32 so that
/// they are exact for any window, and converted where they divide).
Value castFloat(OpBuilder &b, Location loc, Value v, Type type);

/// The argument of `op`'s enclosing function marked `linformer.lengths`;
/// null when there is none.
BlockArgument markedLengthsArgument(Operation *op);
/// The same for the function `fn` itself.
BlockArgument markedLengthsArgument(func::FuncOp fn);

/// n, the token dimension of `fn`'s `linformer.sequence` arguments
/// (tensors or buffers of rank >= 2); 0 when none gives a static one.
int64_t markedSequenceLength(func::FuncOp fn);

/// Marks the op defining `v` as a kernel root; returns `v`.
Value markRoot(Value v);

/// Whether an attention core of `slots` (k) and `queries` (n), its pairs on
/// AMX tiles and no pooled slots stopped at a length, has the shape whose
/// lowering computes S = Q K^T (linformer-lower-to-linalg's CoreLowering):
/// AMX's 16-row tiles of keys, 8-row blocks of queries.
/// linformer-bf16-products transposes the keys once for that form.
inline bool isUntransposedAMXCoreShape(int64_t slots, int64_t queries) {
  return slots % 16 == 0 && queries % 8 == 0;
}

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_CONVERSION_LINALGBUILDERS_H
