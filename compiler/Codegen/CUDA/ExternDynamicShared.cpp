//===- ExternDynamicShared.cpp - dynamic shared memory as extern -*- C++
//-*-===//
//
// After convert-gpu-to-nvvm (see Passes.td): zero-length arrays in the
// shared address space (what gpu.dynamic_shared_memory lowers to) become
// external declarations, which NVPTX emits as `.extern .shared` arrays,
// aligned to 1024 bytes (the repeat of a 128-byte swizzle, which wgmma
// computes from the address: a swizzled staging buffer starts there).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Passes.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::linformer {
#define GEN_PASS_DEF_LINFORMERCUDAEXTERNDYNAMICSHAREDPASS
#include "compiler/Codegen/CUDA/Passes.h.inc"
} // namespace mlir::linformer

using namespace mlir;

namespace {

struct CUDAExternDynamicSharedPass
    : mlir::linformer::impl::LinformerCUDAExternDynamicSharedPassBase<
          CUDAExternDynamicSharedPass> {
  void runOnOperation() override {
    getOperation().walk([](LLVM::GlobalOp global) {
      auto array = dyn_cast<LLVM::LLVMArrayType>(global.getGlobalType());
      if (!array || array.getNumElements() != 0 ||
          global.getAddrSpace() !=
              static_cast<unsigned>(NVVM::NVVMMemorySpace::Shared) ||
          global.getInitializerRegion().getBlocks().size() != 0 ||
          global.getValueOrNull())
        return;
      global.setLinkage(LLVM::Linkage::External);
      global.setDsoLocal(false);
      global.setAlignment(
          std::max<uint64_t>(global.getAlignment().value_or(1), 1024));
    });
  }
};

} // namespace
