//===- Steps.cpp - the driver's steps: input, CPU lowering, outputs -------===//
//
// The steps every path of a compile is built from (Compile::run in
// Driver.cpp, --autotune in Autotune.cpp, --backend=best in Best.cpp,
// --target=cuda in CUDA.cpp and the artifact in ArtifactBuilder.cpp call
// them; they call none of those): read the input (a model description or
// a module) and its entry, build the module, choose the CPU target and
// lower for it, and write a stage's text or a finished artifact. On a
// failing pass a step writes a reproducer and names the linformer-opt
// line that replays it.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/DriverImpl.h"

#include "compiler/Model/ModelBuilder.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "dialect/IR/LinformerDialect.h"
#include "dialect/IR/LinformerOps.h"
#include "lib/Support/Random.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

#include <unistd.h>

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;

char DiagnosedError::ID = 0;

void DiagnosedError::log(llvm::raw_ostream &os) const {
  os << (diagnostics.empty() ? what : StringRef(diagnostics).rtrim().str());
}

llvm::Error mlir::linformer::driver::makeError(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

std::string mlir::linformer::driver::absolutePath(llvm::StringRef path) {
  llvm::SmallString<256> absolute(path);
  if (!absolute.empty())
    (void)llvm::sys::fs::make_absolute(absolute);
  return absolute.str().str();
}

bool mlir::linformer::driver::toDType(Type t, lf::DType &out) {
  if (t.isF32()) out = lf::DType::F32;
  else if (t.isF16()) out = lf::DType::F16;
  else if (t.isBF16()) out = lf::DType::BF16;
  else if (t.isInteger(32)) out = lf::DType::I32;
  else if (t.isInteger(64)) out = lf::DType::I64;
  else if (t.isInteger(8) || t.isInteger(1)) out = lf::DType::U8;
  else return false;
  return true;
}

CPUTargetOptions mlir::linformer::driver::llvmTargetOf(const sched::CPUTarget &t) {
  CPUTargetOptions options;
  options.cpu = t.cpu;
  options.features = t.features;
  return resolveCPUTarget(options);
}

llvm::Error Compile::diagnosed(const llvm::Twine &what) {
  return llvm::make_error<DiagnosedError>(what.str(), takeDiagnostics());
}

//===----------------------------------------------------------------------===//
// The source
//===----------------------------------------------------------------------===//

OwningOpRef<ModuleOp> Compile::buildModule() {
  if (src.fromModel) {
    EncoderSignature sig;
    return buildEncoderModule(&context, src.config, sig);
  }
  return parseSourceString<ModuleOp>(src.text, &context,
                                     llvm::StringRef(options.inputPath));
}

/// Seeded weights: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for matrices, small
/// biases, LayerNorm gamma near 1 and beta near 0.
llvm::Error Compile::writeRandomWeights(const std::string &path, bool quiet) {
  // The weights are built in memory, then serialized: about three copies.
  // Refuse up front rather than be killed halfway.
  uint64_t bytes = lf::modelWeightBytes(src.config);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0 &&
      bytes > uint64_t(pages) * uint64_t(pageSize) / 3)
    return makeError(
        "the model's weights need " + std::to_string(bytes >> 20) +
        " MiB; writing them needs about three times that, more than "
        "this machine's " +
        std::to_string((uint64_t(pages) * uint64_t(pageSize)) >> 20) +
        " MiB of memory");
  size_t count = 0;
  if (std::string err =
          lf::writeRandomWeights(src.config, options.seed, path, &count);
      !err.empty())
    return makeError(err);
  if (!quiet)
    status() << "wrote " << count << " weights to " << path << "\n";
  return llvm::Error::success();
}

llvm::Error Compile::readSource() {
  src.fromModel = options.inputIsModel();
  std::string text;
  if (options.inputText) {
    text = *options.inputText;
  } else {
    std::string errorMessage;
    auto file = openInputFile(options.inputPath, &errorMessage);
    if (!file)
      return makeError(errorMessage);
    text = file->getBuffer().str();
  }
  if (!src.fromModel) {
    src.text = std::move(text);
    return llvm::Error::success();
  }
  if (std::string err = lf::parseModelConfig(text, src.config); !err.empty())
    return makeError(options.inputPath + ": " + err);
  // A sequence-parallel plan's collective steps run on the CPU runtime,
  // between our pipeline's kernels. (--autotune times rank 0 alone.)
  if (src.config.sequenceParallel > 1 &&
      (options.target != Target::CPU || options.backend != Backend::MLIR))
    return makeError(options.inputPath + ": \"sequence_parallel\" compiles "
                     "CPU kernels of our pipeline (--target=cpu "
                     "--backend=mlir): its all-reduce steps run between them "
                     "on the CPU runtime");
  return llvm::Error::success();
}

/// Fills `src.entry` (and checks the module has one public function).
llvm::Error Compile::readEntry() {
  EntryInfo &entry = src.entry;
  if (src.fromModel) {
    EncoderSignature sig;
    OwningOpRef<ModuleOp> m = buildEncoderModule(&context, src.config, sig);
    if (!m)
      return diagnosed("the model could not be built");
    entry.name = sig.entry;
    entry.argNames = sig.argNames;
    entry.paddingArg = sig.paddingArg;
    if (src.config.padding == lf::PaddingInput::Lengths)
      entry.paddingRole = lf::BufferRole::Lengths;
    else if (src.config.padding == lf::PaddingInput::Mask)
      entry.paddingRole = lf::BufferRole::Mask;
    for (size_t i = 0; i < sig.argNames.size(); ++i)
      entry.argKinds.push_back(static_cast<int>(i) <= sig.paddingArg || i == 0
                                   ? lf::BufferKind::Input
                                   : lf::BufferKind::Weight);
    return llvm::Error::success();
  }
  OwningOpRef<ModuleOp> module = buildModule();
  if (!module)
    return diagnosed("the module could not be parsed");
  func::FuncOp fn;
  for (func::FuncOp f : module->getOps<func::FuncOp>())
    if (f.isPublic() && !f.isExternal()) {
      if (fn)
        return makeError("the module has more than one public function; "
                         "compile one entry at a time");
      fn = f;
    }
  if (!fn)
    return makeError("the module has no public function to compile");
  entry.name = fn.getSymName().str();
  // The runtime binds every argument and result to a buffer of a manifest
  // dtype: say so here, at the offending type, rather than deep in the
  // pipeline (dynamic shapes are refused by the pipeline, with a
  // reproducer).
  auto checkType = [&](Type t, const std::string &what) -> bool {
    auto tensor = dyn_cast<RankedTensorType>(t);
    lf::DType dtype;
    if (!tensor) {
      fn.emitError() << what << " has type " << t
                     << "; an entry function takes and returns ranked "
                        "tensors only (the runtime binds each to a buffer)";
      return false;
    }
    if (!toDType(tensor.getElementType(), dtype)) {
      fn.emitError() << what << " has element type "
                     << tensor.getElementType()
                     << ", which the runtime cannot take (f32, f16, bf16, "
                        "i32, i64, i8 or i1)";
      return false;
    }
    return true;
  };
  // Roles: an argument an attention op takes as its lengths (or marked
  // linformer.lengths) or as its mask is the artifact's padding input, as a
  // model's is. Arguments marked linformer.sequence are the sequence inputs
  // [b, n, ...]; when the entry marks one, every other argument is a weight
  // (the runtime binds it from the weights file), so that the runtime can
  // tell the sequences from the parameters. Without a mark every argument
  // is an input.
  bool marksSequences = false;
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    marksSequences |= bool(fn.getArgAttr(i, kSequenceArgAttrName));
    if (fn.getArgAttr(i, kLengthsArgAttrName)) {
      entry.paddingArg = int(i);
      entry.paddingRole = lf::BufferRole::Lengths;
    }
  }
  fn.walk([&](AttentionOp op) {
    auto arg = dyn_cast_if_present<BlockArgument>(
        op.getLengths() ? op.getLengths() : op.getMask());
    if (!arg || arg.getOwner() != &fn.getBody().front())
      return;
    entry.paddingArg = int(arg.getArgNumber());
    entry.paddingRole = op.getLengths() ? lf::BufferRole::Lengths
                                        : lf::BufferRole::Mask;
  });
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    if (!checkType(fn.getArgument(i).getType(),
                   "argument " + std::to_string(i)))
      return diagnosed("the entry's signature");
    entry.argNames.push_back("arg" + std::to_string(i));
    bool input = !marksSequences || int(i) == entry.paddingArg ||
                 fn.getArgAttr(i, kSequenceArgAttrName);
    entry.argKinds.push_back(input ? lf::BufferKind::Input
                                   : lf::BufferKind::Weight);
  }
  // Unmarked, the runtime takes the first input of rank 2 or more as the
  // sequence input [b, n, ...] and every other such input as one too: say
  // here which argument could not be, rather than at load. (Dynamic shapes
  // are the pipeline's to refuse, with its reproducer.)
  bool dynamic = llvm::any_of(fn.getArgumentTypes(), [](Type t) {
    return !cast<RankedTensorType>(t).hasStaticShape();
  });
  if (!marksSequences && !dynamic) {
    std::optional<std::pair<int64_t, int64_t>> first;
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      auto type = cast<RankedTensorType>(fn.getArgument(i).getType());
      if (int(i) == entry.paddingArg || type.getRank() < 2)
        continue;
      std::pair<int64_t, int64_t> bn{type.getDimSize(0), type.getDimSize(1)};
      if (!first) {
        first = bn;
      } else if (bn != *first) {
        fn.emitError() << "argument " << i << " (" << type
                       << ") does not start with the batch and tokens of "
                          "the first sequence input; mark the sequence "
                          "input(s) {linformer.sequence}, and the other "
                          "arguments become the artifact's weights";
        return diagnosed("the entry's signature");
      }
    }
  }
  if (fn.getNumResults() == 0) {
    fn.emitError() << "returns nothing; an entry function must return at "
                      "least one tensor";
    return diagnosed("the entry's signature");
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (!checkType(fn.getResultTypes()[i], "result " + std::to_string(i)))
      return diagnosed("the entry's signature");
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Pipelines
//===----------------------------------------------------------------------===//

/// Runs `pm`; on failure writes a reproducer next to the output and prints
/// the linformer-opt command that replays the failing pass.
llvm::Error Compile::runWithReproducer(PassManager &pm, ModuleOp module,
                                       StringRef stage) {
  std::string reproducer = (options.outputPath.empty()
                                ? std::string("linformer")
                                : options.outputPath) +
                           "." + stage.str() + ".reproducer.mlir";
  pm.enableCrashReproducerGeneration(reproducer, /*genLocalReproducer=*/false);
  if (succeeded(pm.run(module)))
    return llvm::Error::success();
  std::string replay = ("the " + stage + " stage failed; to replay it (input "
                        "and pipeline are in the reproducer):\n"
                        "  linformer-opt --run-reproducer " +
                        reproducer)
                           .str();
  // Printed diagnostics come before the error; collected ones go in it.
  return makeError(takeDiagnostics() + replay);
}

/// The target schedules are chosen for: the module's own when no option
/// says otherwise, else the host or what `cpu` / `cpuFeatures` say (cores
/// from this machine; caches from it too unless `cpu` names another CPU
/// that schedule::knownCPUCaches knows).
sched::CPUTarget Compile::chooseTarget(ModuleOp module) {
  if (auto attr = module->getAttrOfType<CPUTargetAttr>(kTargetAttrName);
      attr && options.cpu.empty() && options.cpuFeatures.empty())
    return fromAttr(attr);
  return hostCPUTarget(options.cpu, options.cpuFeatures);
}

std::string Compile::cpuProducts(const sched::CPUTarget &target) const {
  if (options.precision != Precision::Auto)
    return spelling(options.precision).str();
  if (options.backend != Backend::MLIR || !src.fromModel)
    return "f32";
  sched::MatrixEngines engines = sched::matrixEngines(target);
  // A 16-bit model multiplies its own type where the CPU has an engine
  // for it: bf16 on AVX512_BF16 or AMX-BF16, f16 on AMX-FP16 (the only
  // engine that multiplies f16 and sums in f32).
  if (src.config.dtype == "bf16")
    return engines.avx512BF16 || engines.amxBF16 ? "bf16" : "f32";
  if (src.config.dtype == "f16")
    return engines.amxFP16 ? "f16" : "f32";
  return "f32";
}

void Compile::setPipelineOptions(CPUPipelineOptions &pipeline,
                                 StringRef scheduleFile) {
  pipeline.reassociate = spelling(options.reassociate).str();
  // Kernels that mix with Halide's (--backend=best) compute as Halide's
  // do: f32; lowerModule resolves auto for its target.
  pipeline.precision =
      spelling(options.precision == Precision::BF16 ||
                       options.precision == Precision::F16
                   ? options.precision
                   : Precision::F32)
          .str();
  pipeline.bf16Dot = spelling(options.bf16Dot).str();
  pipeline.rowTile = options.rowTile;
  pipeline.vectorWidth = options.vectorWidth;
  pipeline.unroll = options.unroll;
  pipeline.reductionTile = options.reductionTile;
  pipeline.scheduleFile = absolutePath(scheduleFile);
  pipeline.candidate = options.candidate;
  pipeline.unreadPadding = !mixable;
  // Packed sequence buffers, which the runtime binds in place; a Halide
  // kernel (--backend=best) would index them padded.
  pipeline.packedSequences = options.packedSequences && !mixable;
  // A Halide plan has no packing kernels to mix with (--backend=best).
  pipeline.prepackWeights = options.prepackWeights && !mixable;
  // A Halide kernel (--backend=best) indexes the buffers rows end to end.
  pipeline.padRowStrides = options.padRowStrides && !mixable;
  // The cost model plans for the shortest hinted run.
  if (!options.lengthsHint.empty())
    pipeline.shortLength = *std::min_element(options.lengthsHint.begin(),
                                             options.lengthsHint.end());
}

/// Runs the CPU pipeline on `module` (to the LLVM dialect).
llvm::Error Compile::lowerModule(ModuleOp module,
                                 const sched::CPUTarget &target,
                                 StringRef scheduleFile) {
  module->setAttr(kTargetAttrName, toAttr(&context, target));
  PassManager pm(&context);
  if (failed(applyFlags(pm)))
    return diagnosed("the pass manager's options");
  CPUPipelineOptions pipeline;
  setPipelineOptions(pipeline, scheduleFile);
  pipeline.precision = cpuProducts(target);
  buildCPUPipeline(pm, pipeline);
  return runWithReproducer(pm, module, "cpu-pipeline");
}

//===----------------------------------------------------------------------===//
// Outputs
//===----------------------------------------------------------------------===//

llvm::Error
Compile::writeText(llvm::function_ref<void(llvm::raw_ostream &)> print) {
  if (options.outputPath.empty()) {
    print(out);
    return llvm::Error::success();
  }
  std::string errorMessage;
  auto file = openOutputFile(options.outputPath, &errorMessage);
  if (!file)
    return makeError(errorMessage);
  print(file->os());
  file->keep();
  return llvm::Error::success();
}

llvm::Error Compile::finishArtifact(const lf::ArtifactWriter &writer) {
  if (image) {
    *image = writer.serialize();
    return llvm::Error::success();
  }
  if (std::string err = writer.write(options.outputPath); !err.empty())
    return makeError(err);
  return llvm::Error::success();
}

