//===- SinkConstants.cpp - constant-like ops into gpu.launch -----*- C++ -*-===//
//
// Before kernel outlining (see Passes.td): constant-like ops a gpu.launch
// uses from outside are cloned into it, as upstream's sink pass does for
// arith.constant, so that the kernel does not take them as arguments.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/GPU/Utils/GPUUtils.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDASINKCONSTANTSPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

struct CUDASinkConstantsPass
    : mlir::linformer::impl::LinformerCUDASinkConstantsPassBase<
          CUDASinkConstantsPass> {
  void runOnOperation() override {
    auto constant = [](Operation *op) {
      return op->hasTrait<OpTrait::ConstantLike>();
    };
    WalkResult result = getOperation().walk([&](gpu::LaunchOp launch) {
      return failed(sinkOperationsIntoLaunchOp(launch, constant))
                 ? WalkResult::interrupt()
                 : WalkResult::advance();
    });
    if (result.wasInterrupted())
      return signalPassFailure();
    // Outside the launches, what no op uses any more goes (the runtime
    // runs no host code; canonicalization left some hoisted and unused).
    SmallVector<Operation *> dead;
    getOperation().walk([&](Operation *op) {
      if (constant(op) && op->use_empty() &&
          !op->getParentOfType<gpu::LaunchOp>())
        dead.push_back(op);
    });
    for (Operation *op : dead)
      op->erase();
  }
};

} // namespace
