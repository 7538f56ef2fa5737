//===- linformer-opt.cpp - mlir-opt with the Linformer dialect -*- C++ -*-===//
//
// The driver for lit tests and for replaying any pass or pipeline alone:
// mlir-opt plus the Linformer dialect, its passes and pipelines, and the
// upstream dialects and passes the lowering goes through.
//
//===----------------------------------------------------------------------===//

#include "compiler/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialect/IR/LinformerDialect.h"
#include "dialect/Transforms/Passes.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/InitAllPasses.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::registerAllPasses();
  mlir::linformer::registerLinformerDialectPasses();
  mlir::linformer::registerAllLinformerPasses();
  mlir::linformer::registerLinformerPipelines();

  mlir::DialectRegistry registry;
  registry.insert<mlir::linformer::LinformerDialect>();
  mlir::registerAllDialects(registry);
  mlir::registerAllExtensions(registry);
  // gpu-module-to-binary translates GPU modules (NVVM) to LLVM IR.
  mlir::registerAllToLLVMIRTranslations(registry);
  return mlir::asMainReturnCode(mlir::MlirOptMain(
      argc, argv, "Linformer optimizer driver\n", registry));
}
