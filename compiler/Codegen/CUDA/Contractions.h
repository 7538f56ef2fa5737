//===- Contractions.h - what the tensor-core path takes and absorbs -*- C++ -*-===//
//
// The facts about a contraction that linformer-cuda-tensor-core-contractions
// acts on and the passes before it must agree with
// (linformer-cuda-narrow-intermediates narrows the buffers that only
// contractions the tensor-core pass maps read, and gives a contraction its
// epilogue where it had none): whether the pass maps a contraction, the op
// that writes its initial values, and the elementwise op after it that its
// stores run through. Defined in TensorCoreContractions.cpp.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_CUDA_CONTRACTIONS_H
#define LINFORMER_COMPILER_CODEGEN_CUDA_CONTRACTIONS_H

#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::linformer::cuda {

/// Whether linformer-cuda-tensor-core-contractions maps `op` onto warp
/// tiles (tensor cores, or SIMT tiles where a block stages it) with steps
/// of `tileK` (4: tf32; 16: bf16 / f16) and warp blocks of at most
/// `maxTilesM` x `maxTilesN` tiles: an f32 contraction whose innermost m,
/// n and k extents divide into mma tiles and whose folded tiles fit a grid
/// dimension. Readers of such an op's operands round them as they load them.
bool mapsContraction(linalg::GenericOp op, int64_t tileK, int64_t maxTilesM,
                     int64_t maxTilesN);

/// `op` when it is an elementwise linalg.generic that writes its one
/// output at its own loop indices without reading it, reads its inputs at
/// projected permutations of them, and has a body that can be cloned into
/// a kernel. Null otherwise.
linalg::GenericOp clonableElementwise(Operation *op);

/// The op right before contraction `op` when it only writes `op`'s C,
/// elementwise from operands other than C (a bias broadcast, a constant
/// fill): the accumulators start from the values it would have written,
/// and it goes. Null otherwise.
Operation *absorbableInit(linalg::GenericOp op);

/// The op right after contraction `op` when it is elementwise over C's
/// shape and reads C only at the element it produces: the stores run its
/// body on the accumulators, and it goes. Its output is C itself or a
/// buffer of C's shape; then C's values must be read by it alone: C has no
/// users but `op`, it and `initFrom`, or the op is marked
/// `linformer.narrowed`. Returns its operand that reads C, or null.
OpOperand *absorbableEpilogue(linalg::GenericOp op, Operation *initFrom);

} // namespace mlir::linformer::cuda

#endif // LINFORMER_COMPILER_CODEGEN_CUDA_CONTRACTIONS_H
