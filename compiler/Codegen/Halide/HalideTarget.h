//===- HalideTarget.h - kernels of the linalg stage through Halide -*- C++ -*-===//
//
// The Halide code generator's MLIR side. After --linformer-halide-pipeline
// every kernel is a function on buffers whose body is a few linalg.generic
// ops over views; this reads each into a KernelSpec (HalideSpec.h), has
// Halide build, autoschedule and compile it, and links the objects with
// per-kernel dispatch entries (the same `K_dispatch` / `K_abi` interface the
// MLIR kernels have) and the few Halide runtime functions the pipelines
// call, into one shared object. The runtime needs no change: the manifest
// only records which generator made a kernel.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_CODEGEN_HALIDE_HALIDETARGET_H
#define LINFORMER_COMPILER_CODEGEN_HALIDE_HALIDETARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include <set>
#include <string>
#include <vector>

namespace mlir::linformer {

struct HalideTargetOptions {
  /// LLVM CPU features ("+avx2,+fma,..."), resolved (host ones filled in).
  std::string features;
  /// adams2019 (default), mullapudi2016 or li2018.
  std::string autoscheduler = "adams2019";
  /// Cores the runtime runs workgroups on (workgroup counts follow).
  int64_t cores = 1;
  /// Where each kernel's Funcs and schedule are printed, if set.
  llvm::raw_ostream *describe = nullptr;
  /// If not empty, only these kernels are compiled (the others keep their
  /// plan entries and get no code here).
  std::set<std::string> only;
  /// More inputs for the link (another generator's kernels).
  std::vector<std::string> extraInputs;
};

/// True if this compiler was built with Halide.
bool haveHalide();

/// The Halide target string for an LLVM x86 feature string.
std::string halideTargetFor(StringRef features);

/// Compiles every kernel of `module` (after the Halide pipeline) with
/// Halide into the shared object `object` (its bytes). Updates the dispatch
/// plan in place: each kernel's workgroups and `generator = "halide"`.
LogicalResult compileHalideToSharedObject(ModuleOp module,
                                          const HalideTargetOptions &options,
                                          std::string &object);

/// The same, writing the shared object to `path`.
LogicalResult compileHalideToSharedObject(ModuleOp module,
                                          const HalideTargetOptions &options,
                                          StringRef path);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_CODEGEN_HALIDE_HALIDETARGET_H
