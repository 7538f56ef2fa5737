//===- AbsorbInitEpilogue.cpp - what a contraction's tiles take over -*- C++
//-*-===//
//
// The tensor-core path's fusion decision: for each scheduled contraction,
// whether its warp tiles compute the op right before it (C's initial
// values) and the op right after it (what C's values become on their way
// out), recorded as `linformer.cuda_absorbs`; see
// LinformerCUDAAbsorbInitEpiloguePass in Passes.td. What may be absorbed is
// Contractions.h's (absorbableInit, absorbableEpilogue); what is, this
// pass's attribute (absorbedBy reads it).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAABSORBINITEPILOGUEPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {

struct CUDAAbsorbInitEpiloguePass
    : mlir::linformer::impl::LinformerCUDAAbsorbInitEpiloguePassBase<
          CUDAAbsorbInitEpiloguePass> {
  void runOnOperation() override {
    getOperation().walk([](linalg::GenericOp op) {
      if (!op->hasAttr(kCUDAScheduleAttrName))
        return;
      Operation *init = cuda::absorbableInit(op);
      OpOperand *epilogueRead = cuda::absorbableEpilogue(op, init);
      op->setAttr(kCUDAAbsorbsAttrName,
                  CUDAAbsorptionAttr::get(op.getContext(), init != nullptr,
                                          epilogueRead != nullptr));
    });
  }
};

} // namespace
