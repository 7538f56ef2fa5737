//===- CPUTarget.cpp - LLVM dialect to native objects ----------*- C++ -*-===//
//
// See CPUTarget.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Target/CPU/CPUTarget.h"
#include "dialect/IR/LinformerDialect.h"

#include "lib/Manifest/KernelObject.h"

#include "mlir/ExecutionEngine/OptUtils.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Target/LLVMIR/Export.h"

#include "llvm/ADT/StringExtras.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/Target/TargetOptions.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/TargetParser/Triple.h"
#include "llvm/TargetParser/X86TargetParser.h"

using namespace mlir;
using namespace mlir::linformer;

CPUTargetOptions
mlir::linformer::resolveCPUTarget(const CPUTargetOptions &options) {
  CPUTargetOptions resolved = options;
  bool namedCPU = !resolved.cpu.empty() && resolved.cpu != "host";
  if (!namedCPU)
    resolved.cpu = llvm::sys::getHostCPUName().str();
  bool noFeatures = resolved.features.empty() || resolved.features == "host";
  if (namedCPU && noFeatures) {
    // A named CPU brings its own features, not the host's: `--cpu=znver3`
    // on an AVX-512 host means AVX2 code and AVX2 schedules. Written out on
    // x86, so that the runtime checks them against the machine it runs on;
    // elsewhere LLVM takes the CPU's defaults.
    resolved.features.clear();
    if (llvm::Triple(llvm::sys::getDefaultTargetTriple()).isX86()) {
      SmallVector<StringRef> own;
      llvm::X86::getFeaturesForCPU(resolved.cpu, own, /*NeedPlus=*/true);
      // Not AMD's own scalar extensions (SSE4A, TBM, XOP, FMA4), which the
      // kernels gain nothing from: with them LLVM emitted SSE4A's insertq
      // for znver4, and the artifact died with SIGILL on an Intel CPU that
      // has every vector feature of a Zen 4. Turned off by name, as the
      // CPU's name alone would turn them on.
      std::vector<std::string> written;
      for (StringRef feature : own) {
        StringRef name = feature.drop_front();
        written.push_back(llvm::is_contained({"sse4a", "tbm", "xop", "fma4"},
                                             name)
                              ? ("-" + name).str()
                              : feature.str());
      }
      resolved.features = llvm::join(written, ",");
    }
  } else if (noFeatures) {
    llvm::SubtargetFeatures features;
    for (const auto &feature : llvm::sys::getHostCPUFeatures())
      features.AddFeature(feature.first(), feature.second);
    resolved.features = features.getString();
  }
  return resolved;
}

static std::unique_ptr<llvm::TargetMachine>
createTargetMachine(const CPUTargetOptions &options, std::string &error) {
  static bool initialized = [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
    // linformer-cpu-lower-vectors' 8 x 8 transposes blend with inline
    // assembly (upstream's AVX2 lowering), which the object streamer parses.
    llvm::InitializeNativeTargetAsmParser();
    return true;
  }();
  (void)initialized;
  llvm::Triple triple(llvm::sys::getDefaultTargetTriple());
  const llvm::Target *target =
      llvm::TargetRegistry::lookupTarget(triple, error);
  if (!target)
    return nullptr;
  llvm::TargetOptions targetOptions;
  // Kernels are position independent: they end up in a shared object.
  std::unique_ptr<llvm::TargetMachine> machine(target->createTargetMachine(
      triple, options.cpu, options.features, targetOptions,
      llvm::Reloc::PIC_, std::nullopt,
      options.optLevel >= 3   ? llvm::CodeGenOptLevel::Aggressive
      : options.optLevel == 0 ? llvm::CodeGenOptLevel::None
                              : llvm::CodeGenOptLevel::Default));
  if (!machine)
    error = "could not create a target machine for CPU '" + options.cpu + "'";
  return machine;
}

/// Adds, for every kernel K (an llvm.func with `linformer.workgroups`):
///  - `void K_dispatch(void **buffers, int64_t begin, int64_t end)`: the
///    uniform entry the runtime calls from its threads, whatever the
///    kernel's arity. It clamps [begin, end) to the compiled workgroups, so
///    no caller can make the kernel index past its buffers;
///  - `const uint64_t K_abi[]`: what the code assumes (workgroups, arity,
///    each buffer's bytes; lib/Manifest/KernelObject.h), which the runtime
///    compares with the manifest before it loads the object.
static LogicalResult addDispatchWrappers(ModuleOp module,
                                         llvm::Module &llvmModule) {
  llvm::LLVMContext &ctx = llvmModule.getContext();
  llvm::Type *ptrTy = llvm::PointerType::getUnqual(ctx);
  llvm::Type *i64Ty = llvm::Type::getInt64Ty(ctx);
  for (auto fn : module.getOps<LLVM::LLVMFuncOp>()) {
    auto workgroupsAttr = fn->getAttrOfType<IntegerAttr>(kWorkgroupsAttrName);
    if (!workgroupsAttr)
      continue;
    auto bytesAttr =
        fn->getAttrOfType<DenseI64ArrayAttr>(kBufferBytesAttrName);
    llvm::Function *kernel = llvmModule.getFunction(fn.getSymName());
    if (!kernel || kernel->arg_size() == 0 ||
        !kernel->getArg(kernel->arg_size() - 1)->getType()->isIntegerTy(64))
      return fn.emitOpError("is not a kernel taking (buffers..., i64)");
    if (!bytesAttr || size_t(bytesAttr.size()) + 1 != kernel->arg_size())
      return fn.emitOpError("needs 'linformer.buffer_bytes' with one entry "
                            "per buffer argument");
    int64_t workgroups = workgroupsAttr.getInt();
    SmallVector<uint64_t> record = {::linformer::kKernelAbiMagic,
                                    uint64_t(workgroups),
                                    uint64_t(bytesAttr.size())};
    for (int64_t bytes : bytesAttr.asArrayRef())
      record.push_back(uint64_t(bytes));
    // The buffers it indexes packed, when it has any: "LFKABI02".
    if (auto packed =
            fn->getAttrOfType<DenseI64ArrayAttr>(kPackedBuffersAttrName);
        packed && llvm::is_contained(packed.asArrayRef(), 1)) {
      if (packed.size() != bytesAttr.size())
        return fn.emitOpError("needs 'linformer.packed_buffers' with one "
                              "entry per buffer argument");
      record[0] = ::linformer::kKernelAbiMagicPacked;
      for (int64_t flag : packed.asArrayRef())
        record.push_back(uint64_t(flag != 0));
    }
    // The length rule the code's workgroup numbering follows: rank, then
    // `linformer.token_rows_record` (grid..., batch, row, tile).
    if (auto rows = fn->getAttrOfType<DenseI64ArrayAttr>(
            kTokenRowsRecordAttrName);
        rows && rows.size() > 3) {
      record.push_back(uint64_t(rows.size() - 3));
      for (int64_t w : rows.asArrayRef())
        record.push_back(uint64_t(w));
    }
    llvm::Constant *init = llvm::ConstantDataArray::get(ctx, record);
    new llvm::GlobalVariable(llvmModule, init->getType(), /*isConstant=*/true,
                             llvm::GlobalValue::ExternalLinkage, init,
                             kernel->getName() + ::linformer::kAbiSuffix);
    auto *type = llvm::FunctionType::get(llvm::Type::getVoidTy(ctx),
                                         {ptrTy, i64Ty, i64Ty}, false);
    auto *dispatch = llvm::Function::Create(
        type, llvm::GlobalValue::ExternalLinkage,
        kernel->getName() + "_dispatch", llvmModule);
    llvm::Argument *buffers = dispatch->getArg(0);
    auto *entry = llvm::BasicBlock::Create(ctx, "entry", dispatch);
    auto *loop = llvm::BasicBlock::Create(ctx, "loop", dispatch);
    auto *exit = llvm::BasicBlock::Create(ctx, "exit", dispatch);
    llvm::IRBuilder<> b(entry);
    // [max(begin, 0), min(end, workgroups)).
    llvm::Value *begin = b.CreateIntrinsic(
        llvm::Intrinsic::smax, {i64Ty}, {dispatch->getArg(1), b.getInt64(0)});
    llvm::Value *end =
        b.CreateIntrinsic(llvm::Intrinsic::smin, {i64Ty},
                          {dispatch->getArg(2), b.getInt64(workgroups)});
    SmallVector<llvm::Value *> args;
    for (unsigned i = 0; i + 1 < kernel->arg_size(); ++i) {
      llvm::Value *slot = b.CreateConstInBoundsGEP1_64(ptrTy, buffers, i);
      args.push_back(b.CreateLoad(ptrTy, slot));
    }
    b.CreateCondBr(b.CreateICmpSLT(begin, end), loop, exit);
    b.SetInsertPoint(loop);
    llvm::PHINode *wg = b.CreatePHI(i64Ty, 2);
    wg->addIncoming(begin, entry);
    args.push_back(wg);
    b.CreateCall(kernel, args);
    args.pop_back();
    llvm::Value *next = b.CreateAdd(wg, b.getInt64(1));
    wg->addIncoming(next, loop);
    b.CreateCondBr(b.CreateICmpSLT(next, end), loop, exit);
    b.SetInsertPoint(exit);
    b.CreateRetVoid();
  }
  return success();
}

std::unique_ptr<llvm::Module> mlir::linformer::translateToOptimizedLLVMIR(
    ModuleOp module, llvm::LLVMContext &llvmContext,
    const CPUTargetOptions &requested) {
  CPUTargetOptions options = resolveCPUTarget(requested);
  DialectRegistry registry;
  registerAllToLLVMIRTranslations(registry);
  module->getContext()->appendDialectRegistry(registry);

  std::unique_ptr<llvm::Module> llvmModule =
      translateModuleToLLVMIR(module, llvmContext);
  if (!llvmModule) {
    module.emitError("could not translate the module to LLVM IR");
    return nullptr;
  }
  if (failed(addDispatchWrappers(module, *llvmModule)))
    return nullptr;
  std::string error;
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine) {
    module.emitError() << error;
    return nullptr;
  }
  llvmModule->setTargetTriple(machine->getTargetTriple());
  llvmModule->setDataLayout(machine->createDataLayout());
  // Function attributes so that LLVM's own passes use the full ISA too.
  // With AVX-512, a vector division marked arcp (only the erf of a bf16
  // epilogue, linformer-cpu-lower-vectors' ErfRational with afn: its value
  // is rounded to bf16 after) is vrcp14ps times the dividend, without the
  // Newton step LLVM adds by default: 2^-14 relative in erf, a 32nd of
  // bf16's half ulp, for three operations less a vector (the bf16
  // encoder's first FFN GEMM spent 27% of its time in the GELU epilogue on
  // a Xeon with AMX, 21% without the step). AVX2's vrcpps (1.5 2^-12)
  // keeps the step.
  bool avx512 = llvm::is_contained(
      llvm::split(options.features, ','), StringRef("+avx512f"));
  for (llvm::Function &fn : *llvmModule) {
    if (fn.isDeclaration())
      continue;
    fn.addFnAttr("target-cpu", options.cpu);
    fn.addFnAttr("target-features", options.features);
    if (avx512)
      fn.addFnAttr("reciprocal-estimates", "vec-divf:0");
  }
  auto transformer =
      makeOptimizingTransformer(options.optLevel, /*sizeLevel=*/0,
                                machine.get());
  if (llvm::Error err = transformer(llvmModule.get())) {
    module.emitError() << "LLVM optimization failed: "
                       << llvm::toString(std::move(err));
    return nullptr;
  }
  return llvmModule;
}

LogicalResult mlir::linformer::emitObjectFile(llvm::Module &llvmModule,
                                              const CPUTargetOptions &requested,
                                              StringRef objectPath,
                                              std::string &error) {
  CPUTargetOptions options = resolveCPUTarget(requested);
  std::unique_ptr<llvm::TargetMachine> machine =
      createTargetMachine(options, error);
  if (!machine)
    return failure();
  std::error_code ec;
  llvm::raw_fd_ostream os(objectPath, ec, llvm::sys::fs::OF_None);
  if (ec) {
    error = "cannot write '" + objectPath.str() + "': " + ec.message();
    return failure();
  }
  llvm::legacy::PassManager pm;
  if (machine->addPassesToEmitFile(pm, os, nullptr,
                                   llvm::CodeGenFileType::ObjectFile)) {
    error = "the target cannot emit object files";
    return failure();
  }
  pm.run(llvmModule);
  os.flush();
  return success();
}

LogicalResult mlir::linformer::linkSharedObject(StringRef objectPath,
                                                StringRef sharedObjectPath,
                                                std::string &error) {
  return linkSharedObject(ArrayRef<StringRef>{objectPath}, sharedObjectPath,
                          error);
}

LogicalResult mlir::linformer::linkSharedObject(ArrayRef<StringRef> inputs,
                                                StringRef sharedObjectPath,
                                                std::string &error) {
  llvm::ErrorOr<std::string> cc = llvm::sys::findProgramByName("cc");
  if (!cc) {
    error = "no C compiler driver ('cc') on PATH to link the shared object";
    return failure();
  }
  // C sources among the inputs are compiled on the way (-O2, position
  // independent); undefined symbols are an error here, not at dlopen.
  SmallVector<StringRef> args = {*cc,      "-shared", "-nostartfiles",
                                 "-fPIC",  "-O2",     "-Wl,--no-undefined",
                                 "-o",     sharedObjectPath};
  args.append(inputs.begin(), inputs.end());
  args.push_back("-lm");
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(*cc, args, std::nullopt, {}, 0, 0,
                                     &message);
  if (rc != 0) {
    error = "linking '" + sharedObjectPath.str() + "' failed (exit " +
            std::to_string(rc) + ")" + (message.empty() ? "" : ": " + message);
    return failure();
  }
  return success();
}

mlir::linformer::PrivateTempDir::PrivateTempDir(StringRef prefix) {
  ec = llvm::sys::fs::createUniqueDirectory(prefix, path);
}

mlir::linformer::PrivateTempDir::~PrivateTempDir() {
  if (!ec)
    llvm::sys::fs::remove_directories(path);
}

std::string mlir::linformer::PrivateTempDir::file(StringRef name) const {
  llvm::SmallString<128> p(path);
  llvm::sys::path::append(p, name);
  return p.str().str();
}

LogicalResult mlir::linformer::buildSharedObjectBytes(
    ModuleOp module, function_ref<LogicalResult(StringRef path)> build,
    std::string &object) {
  PrivateTempDir dir;
  if (dir.ec)
    return module.emitError() << "cannot create a private temporary "
                                 "directory: "
                              << dir.ec.message();
  std::string soPath = dir.file("kernels.so");
  if (failed(build(soPath)))
    return failure();
  auto buffer = llvm::MemoryBuffer::getFile(soPath);
  if (!buffer)
    return module.emitError() << "cannot read back the shared object: "
                              << buffer.getError().message();
  object = (*buffer)->getBuffer().str();
  return success();
}

LogicalResult mlir::linformer::compileToSharedObject(
    ModuleOp module, const CPUTargetOptions &options, StringRef path) {
  llvm::LLVMContext llvmContext;
  std::unique_ptr<llvm::Module> llvmModule =
      translateToOptimizedLLVMIR(module, llvmContext, options);
  if (!llvmModule)
    return failure();
  PrivateTempDir dir;
  if (dir.ec)
    return module.emitError() << "cannot create a private temporary "
                                 "directory: "
                              << dir.ec.message();
  std::string objectPath = dir.file("kernels.o");
  std::string error;
  if (failed(emitObjectFile(*llvmModule, options, objectPath, error)) ||
      failed(linkSharedObject(objectPath, path, error)))
    return module.emitError() << error;
  return success();
}

LogicalResult mlir::linformer::compileToSharedObject(
    ModuleOp module, const CPUTargetOptions &options, std::string &object) {
  return buildSharedObjectBytes(
      module,
      [&](StringRef path) { return compileToSharedObject(module, options, path); },
      object);
}
