//===- Contractions.h - a contraction's loops and operands --*- C++ -*-===//
//
// Facts about a contraction that the schedules (compiler/Schedule) and the
// CPU code generator (compiler/Codegen/CPU) both read: the loops a
// register tile spans, the operand it streams, the reduction it may step
// in bf16 pairs, and the function arguments (weights) an operand is.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_ANALYSIS_CONTRACTIONS_H
#define LINFORMER_COMPILER_ANALYSIS_CONTRACTIONS_H

#include "dialect/IR/LinformerDialect.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

#include <optional>

namespace mlir::linformer {

/// For a contraction (two inputs and an init, reduction loops): its M and N
/// loops as inferred from the indexing maps (upstream
/// inferContractionDims), the innermost-in-the-result of each when there are
/// several. A register tile spans rows of M and columns of N, whatever the
/// loop order. None for other ops.
struct RegisterTileDims {
  unsigned rows, columns;
  /// Every loop on the columns' side: indexing the streamed operand and the
  /// result but not the broadcast one (a head loop next to the channels).
  /// A workgroup keeps them whole, so that the broadcast operand's rows are
  /// read once for all of them.
  SmallVector<unsigned> columnSide;
};
std::optional<RegisterTileDims> registerTileDims(linalg::LinalgOp op);

/// The input of contraction `op` that a register tile streams: indexed by
/// the columns loop and not by the rows loop (the other one is broadcast).
OpOperand *streamedOperand(linalg::LinalgOp op, const RegisterTileDims &dims);

/// The reduction loop of contraction `op` that a register tile may step two
/// at a time, reading bf16 pairs (`vdpbf16ps`: two products a lane): the
/// loop of the broadcast operand's innermost dimension, so that each row's
/// pair is one 32-bit element in memory, when its static range is at least
/// 2. A token loop stopped at the sequences' lengths qualifies when its
/// range is even and it walks one unmasked token a step (register tiling
/// then steps the odd real token alone). None otherwise.
std::optional<unsigned> pairedReductionDim(linalg::LinalgOp op);

/// Both factors of contraction `op` bf16 (linformer-bf16-products' pairs),
/// or with `f16` both f16 (its f16 pairs).
bool allBF16(linalg::LinalgOp op, bool f16 = false);

/// A static `[K, N]` argument of a function as an operand reads it: whole,
/// or through a `tensor.expand_shape` that splits K into the leading
/// `rowDims` dims and N into the rest (a projection per head: `[K, H, C]`
/// for its heads' columns, `[H, R, N]` for its rows); either of them
/// converted by an elementwise `linalg.generic` (`converted`: a 16-bit
/// argument extended to f32, a bf16 or f16 model's weight as f32
/// contractions read it; or an f32 argument rounded to bf16, an f32 model's
/// weight as bf16 products read it).
struct MatrixArgument {
  BlockArgument arg;
  unsigned rowDims = 1;
  bool converted = false;
};

/// The tensor that `v` converts element by element (a `linalg.generic` of
/// identity maps whose body is one `arith.extf` of a 16-bit float to f32,
/// or one `arith.truncf` of f32 to bf16), if any.
Value convertedFrom(Value v);

/// The matrix argument that `v` is (see MatrixArgument), if any.
std::optional<MatrixArgument> matrixArgumentOf(Value v);

/// The operand of contraction `op` that streams a matrix argument of the
/// function `op` is in (matrixArgumentOf): indexed by loops alone, K's dims
/// by reduction loops, N's last by the register tile's columns and N's
/// others (a head) by parallel loops (an FFN's or a projection's weight).
/// Null otherwise.
OpOperand *streamedMatrixArgument(linalg::LinalgOp op);

/// The operand of contraction `op` that streams a weight: a matrix argument
/// (streamedMatrixArgument) that isWeightArgument (LinformerDialect.h) says
/// is a weight. Null otherwise.
OpOperand *streamedWeight(linalg::LinalgOp op);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_ANALYSIS_CONTRACTIONS_H
