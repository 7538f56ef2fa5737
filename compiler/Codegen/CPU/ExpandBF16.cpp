//===- ExpandBF16.cpp - bf16 conversions without a runtime helper ---------===//
//
// Expands f32 <-> bf16 conversions into integer arithmetic for CPUs that
// cannot convert in hardware, so that generated kernels never call a
// compiler runtime helper the linking or the running machine may lack
// (see the pass description in Passes.td).
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Schedule/Target.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Transforms/Passes.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUEXPANDBF16PASS
#include "compiler/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;
using namespace mlir::linformer;

namespace {
struct ExpandBF16Pass
    : mlir::linformer::impl::LinformerCPUExpandBF16PassBase<ExpandBF16Pass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    ::linformer::schedule::CPUTarget target;
    if (auto attr = module->getAttrOfType<CPUTargetAttr>(kTargetAttrName))
      target = fromAttr(attr);
    else
      target = hostCPUTarget();
    if (::linformer::schedule::convertsBF16Natively(target))
      return;
    RewritePatternSet patterns(&getContext());
    arith::populateExpandBFloat16Patterns(patterns);
    if (failed(applyPatternsGreedily(module, std::move(patterns))))
      signalPassFailure();
  }
};
} // namespace
