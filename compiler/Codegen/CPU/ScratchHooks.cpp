//===- ScratchHooks.cpp - kernels' heap buffers through the runtime -------===//
//
// A kernel's buffer too large for its stack (a bf16 copy of E' or X, 2 MiB
// at n = 4096) is a heap allocation every workgroup makes and frees in every
// run. From glibc's malloc such a block comes fresh from the kernel after a
// trim, and its first touch of each page faults: 2.5 ms of a 13 ms run at
// 256 tokens of a bf16 encoder. The memref lowering calls
// `_mlir_memref_to_llvm_alloc` / `_free` (its generic functions); this pass
// defines them in the module, calling the functions the exported hooks
// `linformer_scratch_alloc` / `linformer_scratch_free` point to where the
// runtime has set them (its per-thread cache of blocks), else malloc and
// free. See LinformerCPUScratchHooksPass in Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CPU/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCPUSCRATCHHOOKSPASS
#include "compiler/Codegen/CPU/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

/// The function `name` of `type` declared in `module` (declared now at its
/// end when it is not).
LLVM::LLVMFuncOp declared(ModuleOp module, StringRef name,
                          LLVM::LLVMFunctionType type) {
  if (auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return fn;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// Gives `fn` (a declaration) a body that calls the function the pointer
/// global `hook` holds, or `fallback` while it is null. The global is
/// exported, zero at load; `fn` becomes internal to the module.
LogicalResult defineThroughHook(ModuleOp module, LLVM::LLVMFuncOp fn,
                                StringRef hook, StringRef fallback) {
  if (module.lookupSymbol(hook))
    return module.emitError() << "'" << hook << "' is already defined";
  MLIRContext *ctx = module.getContext();
  Location loc = fn.getLoc();
  auto ptr = LLVM::LLVMPointerType::get(ctx);
  LLVM::LLVMFunctionType type = fn.getFunctionType();
  LLVM::LLVMFuncOp fall = declared(module, fallback, type);

  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto global = LLVM::GlobalOp::create(b, loc, ptr, /*isConstant=*/false,
                                       LLVM::Linkage::External, hook,
                                       Attribute());
  Block *init = b.createBlock(&global.getInitializerRegion());
  b.setInsertionPointToStart(init);
  LLVM::ReturnOp::create(b, loc, LLVM::ZeroOp::create(b, loc, ptr).getResult());

  fn.setLinkage(LLVM::Linkage::Internal);
  Block *entry = fn.addEntryBlock(b);
  Block *viaHook = b.createBlock(&fn.getBody());
  Block *viaFallback = b.createBlock(&fn.getBody());
  b.setInsertionPointToStart(entry);
  Value address = LLVM::AddressOfOp::create(b, loc, global);
  Value target = LLVM::LoadOp::create(b, loc, ptr, address);
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  Value unset =
      LLVM::ICmpOp::create(b, loc, LLVM::ICmpPredicate::eq, target, null);
  LLVM::CondBrOp::create(b, loc, unset, viaFallback, viaHook);
  bool returns = !isa<LLVM::LLVMVoidType>(type.getReturnType());
  auto finish = [&](LLVM::CallOp call) {
    if (returns)
      LLVM::ReturnOp::create(b, loc, call.getResult());
    else
      LLVM::ReturnOp::create(b, loc, ValueRange());
  };
  b.setInsertionPointToStart(viaHook);
  SmallVector<Value> operands = {target};
  llvm::append_range(operands, entry->getArguments());
  finish(LLVM::CallOp::create(b, loc, type, operands));
  b.setInsertionPointToStart(viaFallback);
  finish(LLVM::CallOp::create(b, loc, fall, entry->getArguments()));
  return success();
}

struct ScratchHooksPass
    : mlir::linformer::impl::LinformerCPUScratchHooksPassBase<
          ScratchHooksPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    struct Hook {
      StringRef generic, hook, fallback;
    };
    for (Hook h : {Hook{"_mlir_memref_to_llvm_alloc",
                        "linformer_scratch_alloc", "malloc"},
                   Hook{"_mlir_memref_to_llvm_free", "linformer_scratch_free",
                        "free"}}) {
      auto fn = module.lookupSymbol<LLVM::LLVMFuncOp>(h.generic);
      if (!fn || !fn.isExternal())
        continue;
      if (failed(defineThroughHook(module, fn, h.hook, h.fallback)))
        return signalPassFailure();
    }
  }
};
} // namespace
