//===- HoistStaticAllocas.cpp - stack buffers out of loops -----*- C++ -*-===//
//
// Moves statically sized memref.alloca ops to the entry block of their
// function, so that loops reuse one buffer instead of growing the stack.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERHOISTSTATICALLOCASPASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {
struct HoistStaticAllocasPass
    : mlir::linformer::impl::LinformerHoistStaticAllocasPassBase<
          HoistStaticAllocasPass> {
  void runOnOperation() override {
    func::FuncOp fn = getOperation();
    if (fn.isExternal())
      return;
    Block &entry = fn.getBody().front();
    SmallVector<memref::AllocaOp> toHoist;
    fn.walk([&](memref::AllocaOp alloca) {
      if (alloca->getBlock() != &entry && alloca.getType().hasStaticShape() &&
          alloca->getNumOperands() == 0)
        toHoist.push_back(alloca);
    });
    for (memref::AllocaOp alloca : toHoist)
      alloca->moveBefore(&entry, entry.begin());
  }
};
} // namespace
