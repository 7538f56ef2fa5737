//===- CPUTarget.h - LLVM dialect to native objects ------------*- C++ -*-===//
//
// The CPU back end's last steps, in process: translate a module in the LLVM
// dialect to LLVM IR, optimize it for the host (or a given) CPU, emit an
// object file, and link it into a shared object the runtime can dlopen.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_TARGET_CPU_CPUTARGET_H
#define LINFORMER_COMPILER_TARGET_CPU_CPUTARGET_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/SmallString.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class LLVMContext;
} // namespace llvm

namespace mlir::linformer {

struct CPUTargetOptions {
  /// LLVM CPU name; empty = the host's (llvm::sys::getHostCPUName).
  std::string cpu;
  /// Comma-separated LLVM features (+avx512f,...); empty = the named CPU's
  /// own, or the host's when `cpu` is empty too.
  std::string features;
  /// LLVM optimization level, 0-3.
  unsigned optLevel = 3;
};

/// The CPU and features actually used for `options` (host ones filled in).
CPUTargetOptions resolveCPUTarget(const CPUTargetOptions &options);

/// Translates `module` (LLVM dialect) to optimized LLVM IR for the target,
/// adding for each kernel K (an llvm.func with `linformer.workgroups`) the
/// runtime's entry `void K_dispatch(void **buffers, int64_t begin,
/// int64_t end)`, which runs workgroups [begin, end) with the kernel's
/// buffers taken in order from `buffers`. Errors are emitted as diagnostics
/// on the module.
std::unique_ptr<llvm::Module>
translateToOptimizedLLVMIR(ModuleOp module, llvm::LLVMContext &llvmContext,
                           const CPUTargetOptions &options);

/// Emits an object file for `llvmModule` into `objectPath`.
LogicalResult emitObjectFile(llvm::Module &llvmModule,
                             const CPUTargetOptions &options,
                             StringRef objectPath, std::string &error);

/// Links `objectPath` into the shared object `sharedObjectPath` with the
/// system C compiler driver (cc), which the runtime can dlopen.
LogicalResult linkSharedObject(StringRef objectPath,
                               StringRef sharedObjectPath, std::string &error);

/// A directory only this user can enter (createUniqueDirectory: mode 0700,
/// created exclusively), removed with its contents when it goes away. Every
/// temporary file of the CPU back ends lives in one, so no other user can
/// plant a file or symlink where the compiler will write.
struct PrivateTempDir {
  llvm::SmallString<128> path;
  std::error_code ec;
  explicit PrivateTempDir(StringRef prefix = "linformer-cc");
  ~PrivateTempDir();
  std::string file(StringRef name) const;
};

/// Runs `build` on a path in a private temporary directory and returns the
/// bytes of the shared object it wrote there in `object`.
LogicalResult
buildSharedObjectBytes(ModuleOp module,
                       function_ref<LogicalResult(StringRef path)> build,
                       std::string &object);

/// The same for several inputs: objects, and C sources compiled on the way.
LogicalResult linkSharedObject(ArrayRef<StringRef> inputs,
                               StringRef sharedObjectPath, std::string &error);

/// The whole chain: LLVM dialect module -> shared object at `path`. The
/// intermediate object file lives in a private temporary directory.
LogicalResult compileToSharedObject(ModuleOp module,
                                    const CPUTargetOptions &options,
                                    StringRef path);

/// The same, returning the shared object's bytes; every file it needs lives
/// in a private temporary directory (mode 0700) removed afterwards.
LogicalResult compileToSharedObject(ModuleOp module,
                                    const CPUTargetOptions &options,
                                    std::string &object);

} // namespace mlir::linformer

#endif // LINFORMER_COMPILER_TARGET_CPU_CPUTARGET_H
