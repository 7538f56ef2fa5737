//===- Driver.h - the compiler as a library ---------------------*- C++ -*-===//
//
// One entry for every client of the compiler: linformer-compile maps its
// flags onto CompileOptions and calls `compile`; a program that wants the
// artifact in memory calls `compileToArtifact`. The session owns the MLIR
// context (dialects registered once, reused across compiles, as IREE's
// compiler session is) and decides where diagnostics go: printed as they
// come (FILE:LINE:COL with the source line, the tools' way) or collected
// into the error a failing compile returns (a library's way).
//
// Errors: an llvm::Error whose message says what is wrong. A failure that
// MLIR already reported as diagnostics is a DiagnosedError; when the
// session collects diagnostics, its message is their text.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_COMPILER_DRIVER_DRIVER_H
#define LINFORMER_COMPILER_DRIVER_DRIVER_H

#include "compiler/Driver/CompileOptions.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <memory>
#include <string>

namespace mlir {
class MLIRContext;
} // namespace mlir

namespace mlir::linformer::driver {

/// A failure already reported through MLIR's diagnostics (or, when the
/// session collects them, carrying their text).
class DiagnosedError : public llvm::ErrorInfo<DiagnosedError> {
public:
  static char ID;
  explicit DiagnosedError(std::string what, std::string diagnostics = "")
      : what(std::move(what)), diagnostics(std::move(diagnostics)) {}
  /// The collected diagnostics if any, else what failed.
  void log(llvm::raw_ostream &os) const override;
  std::error_code convertToErrorCode() const override {
    return llvm::inconvertibleErrorCode();
  }
  /// Whether the diagnostics were printed already (nothing left to say).
  bool printed() const { return diagnostics.empty(); }

  std::string what, diagnostics;
};

struct SessionOptions {
  /// Collect diagnostics into the returned errors instead of printing them
  /// to standard error.
  bool collectDiagnostics = false;
};

class CompilerSession {
public:
  explicit CompilerSession(SessionOptions options = {});
  ~CompilerSession();
  CompilerSession(const CompilerSession &) = delete;
  CompilerSession &operator=(const CompilerSession &) = delete;

  MLIRContext &context();

  /// Does what `options` ask, as linformer-compile does: writes the
  /// artifact, object or stage text to `options.outputPath` (text to `out`
  /// when it is empty), the schedules and what was written to `out`, and
  /// the progress of --autotune and --backend=best to `log`.
  llvm::Error compile(const CompileOptions &options, llvm::raw_ostream &out,
                      llvm::raw_ostream &log);

  /// The artifact `options` describe (their emit must be Artifact), as the
  /// bytes of a .lfa file; `outputPath` is not written.
  llvm::Expected<std::string> compileToArtifact(const CompileOptions &options,
                                                llvm::raw_ostream &log);

private:
  struct Impl;
  std::unique_ptr<Impl> impl;
};

} // namespace mlir::linformer::driver

#endif // LINFORMER_COMPILER_DRIVER_DRIVER_H
