//===- Driver.cpp - the compiler session and the path of a compile -------===//
//
// The session (its context and diagnostics) and Compile::run, the path a
// compile takes once its input is read: the stages every target shares,
// then the target's and the generator's steps (Steps.cpp for the CPU
// lowering and the outputs, ArtifactBuilder.cpp, Autotune.cpp, Best.cpp,
// CUDA.cpp), writing what the options ask for: a stage's text, an object
// or an artifact.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/DriverImpl.h"

#include "dialect/IR/LinformerDialect.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;

/// Where the compile goes after the input is read: the stages every target
/// shares, then the target's and the generator's path.
llvm::Error Compile::run() {
  if (!options.randomWeights.empty()) {
    if (llvm::Error err = writeRandomWeights(options.randomWeights, false))
      return err;
    if (options.outputPath.empty() && !image)
      return llvm::Error::success();
  }
  if (llvm::Error err = readEntry())
    return err;
  OwningOpRef<ModuleOp> module = buildModule();
  if (!module)
    return diagnosed("the input could not be built");

  const Emit emit = options.emit;
  if (emit == Emit::Linformer)
    return writeText([&](raw_ostream &os) { module->print(os); });
  if (emit == Emit::Linalg) {
    PassManager pm(&context);
    if (failed(applyFlags(pm)))
      return diagnosed("the pass manager's options");
    buildLinalgPipeline(pm);
    if (llvm::Error err = runWithReproducer(pm, *module, "linalg"))
      return err;
    return writeText([&](raw_ostream &os) { module->print(os); });
  }

  sched::CUDATarget cudaTarget;
  if (options.target != Target::CPU)
    sched::knownCUDATarget(options.sm, cudaTarget); // verify() checked it
  if (options.target == Target::CUDA)
    return compileCUDA(*module, cudaTarget);
  if (options.backend == Backend::Halide)
    return compileHalide(*module);
  if (options.backend == Backend::Best)
    return compileBest();

  sched::CPUTarget cpuTarget = chooseTarget(*module);
  if (llvm::Error err = checkLengthsHint())
    return err;
  std::string schedulePath = options.scheduleFile;
  std::map<std::string, TunedTimes> times;
  // Temporaries (the autotuner's variants) live in a private directory.
  llvm::SmallString<128> workDir;
  llvm::scope_exit cleanup([&] {
    if (!workDir.empty())
      llvm::sys::fs::remove_directories(workDir);
  });
  if (options.autotune) {
    if (std::error_code ec = llvm::sys::fs::createUniqueDirectory(
            "linformer-autotune", workDir))
      return makeError("cannot create a temporary directory: " +
                       ec.message());
    if (llvm::Error err = autotune(cpuTarget, workDir, schedulePath, times))
      return err;
  }

  if (llvm::Error err = lowerModule(*module, cpuTarget, schedulePath))
    return err;
  Plan plan;
  if (!readPlan(*module, cpuTarget, times, plan))
    return makeError("the pipeline produced no dispatch plan for @" +
                     src.entry.name);
  if (options.printSchedule) {
    if (*options.printSchedule == "table")
      out << sched::formatScheduleTable(plan.printed);
    else
      out << sched::scheduleFileToJson(plan.printed);
    if (options.outputPath.empty() && !image)
      return llvm::Error::success();
  }
  if (emit == Emit::LLVM)
    return writeText([&](raw_ostream &os) { module->print(os); });

  CPUTargetOptions targetOptions = llvmTargetOf(cpuTarget);
  llvm::LLVMContext llvmContext;
  if (emit == Emit::LLVMIR) {
    auto llvmModule =
        translateToOptimizedLLVMIR(*module, llvmContext, targetOptions);
    if (!llvmModule)
      return diagnosed("the translation to LLVM IR failed");
    return writeText([&](raw_ostream &os) { llvmModule->print(os, nullptr); });
  }
  if (emit == Emit::Obj) {
    if (options.outputPath.empty())
      return makeError("--emit=obj needs -o");
    auto llvmModule =
        translateToOptimizedLLVMIR(*module, llvmContext, targetOptions);
    if (!llvmModule)
      return diagnosed("the translation to LLVM IR failed");
    std::string err;
    if (failed(emitObjectFile(*llvmModule, targetOptions, options.outputPath,
                              err)))
      return makeError(err);
    return llvm::Error::success();
  }
  if (emit == Emit::SharedObject) {
    if (failed(compileToSharedObject(*module, targetOptions,
                                     StringRef(options.outputPath))))
      return diagnosed("the kernels could not be compiled to a shared object");
    return llvm::Error::success();
  }
  if (needsOutputFile())
    return makeError("an artifact needs -o FILE.lfa");
  lf::ArtifactWriter writer;
  if (llvm::Error err = addCPUSections(*module, cpuTarget, plan, writer))
    return err;
  if (options.target == Target::CPUAndCUDA) {
    OwningOpRef<ModuleOp> gpuModule = buildModule();
    if (!gpuModule)
      return diagnosed("the input could not be built");
    if (llvm::Error err = compileCUDA(*gpuModule, cudaTarget, &writer))
      return err;
  }
  if (llvm::Error err = finishArtifact(writer))
    return err;
  status() << "wrote " << outputName() << ": " << plan.kernels.size()
           << " kernels, "
           << src.entry.argNames.size() + 1 + plan.intermediates.size()
           << " buffers\n";
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// The session
//===----------------------------------------------------------------------===//

struct CompilerSession::Impl {
  SessionOptions options;
  MLIRContext context;
  /// Collected diagnostics (SessionOptions::collectDiagnostics).
  std::string diagnostics;

  static DialectRegistry registry() {
    DialectRegistry registry;
    registry.insert<LinformerDialect>();
    registerAllDialects(registry);
    registerAllExtensions(registry);
    // gpu-module-to-binary translates the kernels (NVVM) to LLVM IR.
    registerAllToLLVMIRTranslations(registry);
    return registry;
  }

  explicit Impl(SessionOptions options)
      : options(options), context(registry()) {
    context.loadAllAvailableDialects();
  }

  llvm::Error run(const CompileOptions &compileOptions, llvm::raw_ostream &out,
                  llvm::raw_ostream &log, std::string *image) {
    if (llvm::Error err = compileOptions.verify(/*toMemory=*/image != nullptr))
      return err;
    Compile c{compileOptions, context, out, log, [this] {
                std::string taken = diagnostics;
                diagnostics.clear();
                return taken;
              }};
    c.image = image;
    if (llvm::Error err = c.readSource())
      return err;
    // Diagnostics on a .mlir input name FILE:LINE:COL with the source line:
    // the module is parsed from the input's text under the input's name.
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBufferCopy(
                                     c.src.text, compileOptions.inputPath),
                                 llvm::SMLoc());
    diagnostics.clear();
    llvm::raw_string_ostream collect(diagnostics);
    SourceMgrDiagnosticHandler handler(
        sourceMgr, &context,
        options.collectDiagnostics ? static_cast<llvm::raw_ostream &>(collect)
                                   : llvm::errs());
    llvm::Error err = c.run();
    diagnostics.clear();
    return err;
  }
};

CompilerSession::CompilerSession(SessionOptions options)
    : impl(std::make_unique<Impl>(options)) {}

CompilerSession::~CompilerSession() = default;

MLIRContext &CompilerSession::context() { return impl->context; }

llvm::Error CompilerSession::compile(const CompileOptions &options,
                                     llvm::raw_ostream &out,
                                     llvm::raw_ostream &log) {
  return impl->run(options, out, log, nullptr);
}

llvm::Expected<std::string>
CompilerSession::compileToArtifact(const CompileOptions &options,
                                   llvm::raw_ostream &log) {
  if (options.emit != Emit::Artifact)
    return makeError("compileToArtifact makes an artifact; the options ask "
                     "for another stage");
  std::string image, summary;
  llvm::raw_string_ostream out(summary);
  if (llvm::Error err = impl->run(options, out, log, &image))
    return std::move(err);
  return image;
}
