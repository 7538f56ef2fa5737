//===- linformer-compile.cpp - model -> artifact ----------------*- C++ -*-===//
//
// The compiler driver. Takes a model description (model.json) or a module in
// the Linformer dialect (.mlir), runs the CPU pipeline, and writes one
// artifact (.lfa): the generated kernels as a shared object plus a manifest
// (entry, buffers, weights expected, kernels in launch order with their
// schedules). --emit stops at any stage, Toy-style. On a failing pass it
// writes a reproducer and prints the linformer-opt line that replays it.
// --random-weights writes seeded random weights for a model description.
//
//===----------------------------------------------------------------------===//

#include "compiler/Model/ModelBuilder.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Target/CPU/CPUTarget.h"
#include "dialect/IR/LinformerDialect.h"
#include "dialect/Transforms/Passes.h"
#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/Manifest.h"
#include "lib/Model/ModelConfig.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Random.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/IR/Module.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <string>

using namespace mlir;
namespace cl = llvm::cl;
namespace lf = ::linformer;

static const char *kCompilerVersion = "0.1.0";

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.json | module.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                       cl::value_desc("path"), cl::init(""));
enum class Emit { Linformer, Linalg, LLVM, LLVMIR, Obj, Artifact };
static cl::opt<Emit> emit(
    "emit", cl::desc("stop after this stage"), cl::init(Emit::Artifact),
    cl::values(
        clEnumValN(Emit::Linformer, "linformer", "the input in the dialect"),
        clEnumValN(Emit::Linalg, "linalg", "linalg on tensors"),
        clEnumValN(Emit::LLVM, "llvm", "the LLVM dialect"),
        clEnumValN(Emit::LLVMIR, "llvm-ir", "optimized LLVM IR"),
        clEnumValN(Emit::Obj, "obj", "a native object file"),
        clEnumValN(Emit::Artifact, "artifact", "the .lfa artifact")));
static cl::opt<std::string> target("target", cl::desc("cpu (cuda: later)"),
                                   cl::init("cpu"));
static cl::opt<std::string> cpu("cpu", cl::desc("LLVM CPU (default: host)"),
                                cl::init(""));
static cl::opt<std::string> cpuFeatures("cpu-features",
                                        cl::desc("LLVM features (default: host)"),
                                        cl::init(""));
static cl::opt<std::string>
    reassociate("reassociate", cl::desc("auto | always | never"),
                cl::init("auto"));
static cl::opt<int64_t>
    rowTile("row-tile", cl::init(0),
            cl::desc("force every kernel's rows per workgroup tile "
                     "(0: cost model)"));
static cl::opt<int64_t>
    vectorWidth("vector-width", cl::init(0),
                cl::desc("force every kernel's register-tile columns "
                         "(0: cost model)"));
static cl::opt<int64_t>
    unroll("unroll", cl::init(0),
           cl::desc("force every kernel's register-tile rows (0: cost "
                    "model)"));
static cl::opt<int64_t> reductionTile(
    "reduction-tile", cl::init(0),
    cl::desc("force every kernel's reduction block (0: cost model, -1: "
             "none)"));
static cl::opt<std::string> scheduleFile(
    "schedule",
    cl::desc("JSON schedule file (as --print-schedule writes): its records "
             "replace the cost model's schedules of kernels with the same "
             "key"),
    cl::value_desc("FILE.json"), cl::init(""));
static cl::opt<std::string> printSchedule(
    "print-schedule",
    cl::desc("print every kernel's schedule: as a JSON schedule file "
             "(--print-schedule, editable and accepted by --schedule) or as "
             "a table (--print-schedule=table); without -o nothing else is "
             "written"),
    cl::ValueOptional, cl::init(""));
static cl::opt<std::string>
    randomWeights("random-weights",
                  cl::desc("write seeded random weights for a model.json "
                           "to this safetensors file (and compile nothing "
                           "unless -o is given)"),
                  cl::init(""));
static cl::opt<unsigned> seed("seed", cl::init(1),
                              cl::desc("seed for --random-weights"));

namespace {

int fail(const llvm::Twine &msg) {
  llvm::errs() << "linformer-compile: error: " << msg << "\n";
  return 1;
}

bool isJson(StringRef path) { return path.ends_with(".json"); }

/// Seeded weights: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for matrices, small
/// biases, LayerNorm gamma near 1 and beta near 0.
int writeRandomWeights(const lf::ModelConfig &config, const std::string &path) {
  std::vector<lf::WeightSpec> specs = lf::modelWeights(config);
  std::map<std::string, lf::SafetensorsEntry> entries;
  uint64_t s = seed;
  for (const lf::WeightSpec &w : specs) {
    int64_t count = 1;
    for (int64_t d : w.shape)
      count *= d;
    std::vector<float> values;
    StringRef name(w.name);
    if (name.ends_with(".gamma")) {
      values = lf::uniformVector(count, s++, 0.9f, 1.1f);
    } else if (name.ends_with(".beta") || w.shape.size() == 1) {
      values = lf::uniformVector(count, s++, -0.1f, 0.1f);
    } else {
      // Fan-in: the reduced dimension (rows of W, n for E, the window for
      // conv kernels).
      int64_t fanIn = w.shape[0];
      if (name.ends_with(".e") || name.ends_with(".f"))
        fanIn = w.shape.back();
      float bound = 1.0f / std::sqrt(static_cast<float>(fanIn));
      values = lf::uniformVector(count, s++, -bound, bound);
    }
    lf::SafetensorsEntry e;
    e.dtype = lf::DType::F32;
    e.shape = w.shape;
    e.bytes.assign(reinterpret_cast<const char *>(values.data()),
                   values.size() * sizeof(float));
    entries[w.name] = std::move(e);
  }
  std::map<std::string, std::string> metadata = {
      {"linformer.model", lf::modelConfigJson(config)},
      {"linformer.seed", std::to_string(seed)}};
  if (std::string err = lf::writeSafetensors(path, entries, metadata);
      !err.empty())
    return fail(err);
  llvm::outs() << "wrote " << specs.size() << " weights to " << path << "\n";
  return 0;
}

/// Runs `pm`; on failure writes a reproducer next to the output and prints
/// the linformer-opt command that replays the failing pass.
LogicalResult runWithReproducer(PassManager &pm, ModuleOp module,
                                StringRef stage) {
  std::string reproducer =
      (outputFile.empty() ? std::string("linformer") : outputFile.getValue()) +
      "." + stage.str() + ".reproducer.mlir";
  pm.enableCrashReproducerGeneration(reproducer, /*genLocalReproducer=*/false);
  if (succeeded(pm.run(module)))
    return success();
  llvm::errs() << "linformer-compile: error: the " << stage
               << " stage failed; to replay it (input and pipeline are in the "
                  "reproducer):\n"
               << "  linformer-opt --run-reproducer " << reproducer << "\n";
  return failure();
}

/// Entry argument names/kinds: from the model signature or, for a plain
/// .mlir module, argN (inputs) and "result" for the output.
struct EntryInfo {
  std::string name;
  std::vector<std::string> argNames;
  std::vector<lf::BufferKind> argKinds;
  int paddingArg = -1;
  lf::BufferRole paddingRole = lf::BufferRole::None;
};

bool toDType(Type t, lf::DType &out) {
  if (t.isF32()) out = lf::DType::F32;
  else if (t.isF16()) out = lf::DType::F16;
  else if (t.isBF16()) out = lf::DType::BF16;
  else if (t.isInteger(32)) out = lf::DType::I32;
  else if (t.isInteger(64)) out = lf::DType::I64;
  else if (t.isInteger(8) || t.isInteger(1)) out = lf::DType::U8;
  else return false;
  return true;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerPassManagerCLOptions();
  cl::ParseCommandLineOptions(argc, argv,
                              "linformer-compile: model -> artifact\n");
  if (target != "cpu")
    return fail("target '" + target +
                "' is not available yet (only cpu; CUDA code generation is a "
                "later issue)");

  DialectRegistry registry;
  registry.insert<mlir::linformer::LinformerDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // Parse the input.
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  OwningOpRef<ModuleOp> module;
  EntryInfo entry;
  lf::ModelConfig config;
  bool fromModel = isJson(inputFile);
  if (fromModel) {
    if (std::string err =
            lf::parseModelConfig(file->getBuffer().str(), config);
        !err.empty())
      return fail(inputFile + ": " + err);
    if (!randomWeights.empty()) {
      if (int rc = writeRandomWeights(config, randomWeights))
        return rc;
      if (outputFile.empty())
        return 0;
    }
    mlir::linformer::EncoderSignature sig;
    module = mlir::linformer::buildEncoderModule(&context, config, sig);
    entry.name = sig.entry;
    entry.argNames = sig.argNames;
    entry.paddingArg = sig.paddingArg;
    if (config.padding == lf::PaddingInput::Lengths)
      entry.paddingRole = lf::BufferRole::Lengths;
    else if (config.padding == lf::PaddingInput::Mask)
      entry.paddingRole = lf::BufferRole::Mask;
    for (size_t i = 0; i < sig.argNames.size(); ++i)
      entry.argKinds.push_back(
          static_cast<int>(i) <= sig.paddingArg || i == 0
              ? lf::BufferKind::Input
              : lf::BufferKind::Weight);
  } else {
    if (!randomWeights.empty())
      return fail("--random-weights needs a model.json input");
    llvm::SourceMgr sourceMgr;
    sourceMgr.AddNewSourceBuffer(std::move(file), SMLoc());
    module = parseSourceFile<ModuleOp>(sourceMgr, &context);
    if (!module)
      return 1;
    auto fns = llvm::to_vector(module->getOps<func::FuncOp>());
    func::FuncOp fn;
    for (func::FuncOp f : fns)
      if (f.isPublic() && !f.isExternal()) {
        if (fn)
          return fail("the module has more than one public function; "
                      "compile one entry at a time");
        fn = f;
      }
    if (!fn)
      return fail("the module has no public function to compile");
    entry.name = fn.getSymName().str();
    for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
      entry.argNames.push_back("arg" + std::to_string(i));
      entry.argKinds.push_back(lf::BufferKind::Input);
    }
  }
  if (!module)
    return 1;

  std::string output = outputFile;
  auto writeText = [&](auto print) -> int {
    auto out = openOutputFile(output.empty() ? "-" : output, &errorMessage);
    if (!out)
      return fail(errorMessage);
    print(out->os());
    out->keep();
    return 0;
  };
  if (emit == Emit::Linformer)
    return writeText([&](raw_ostream &os) { module->print(os); });

  // The target the schedules are chosen for: the module's own, or the
  // host, or what --cpu / --cpu-features say (caches and cores from this
  // machine).
  namespace sched = ::linformer::schedule;
  sched::CPUTarget cpuTarget;
  if (auto attr = (*module)->getAttrOfType<mlir::linformer::CPUTargetAttr>(
          mlir::linformer::kTargetAttrName);
      attr && cpu.empty() && cpuFeatures.empty()) {
    cpuTarget = mlir::linformer::fromAttr(attr);
  } else {
    cpuTarget = mlir::linformer::hostCPUTarget(cpu, cpuFeatures);
    (*module)->setAttr(mlir::linformer::kTargetAttrName,
                       mlir::linformer::toAttr(&context, cpuTarget));
  }

  mlir::linformer::CPUPipelineOptions options;
  options.reassociate = reassociate;
  options.rowTile = rowTile;
  options.vectorWidth = vectorWidth;
  options.unroll = unroll;
  options.reductionTile = reductionTile;
  options.scheduleFile = scheduleFile;
  {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    if (emit == Emit::Linalg) {
      mlir::linformer::buildLinalgPipeline(pm);
      if (failed(runWithReproducer(pm, *module, "linalg")))
        return 1;
      return writeText([&](raw_ostream &os) { module->print(os); });
    }
    mlir::linformer::buildCPUPipeline(pm, options);
    if (failed(runWithReproducer(pm, *module, "cpu-pipeline")))
      return 1;
  }
  // Every kernel's schedule record, from the dispatch plan.
  auto entryFn = module->lookupSymbol<LLVM::LLVMFuncOp>(entry.name);
  auto kernels =
      entryFn ? entryFn->getAttrOfType<ArrayAttr>("linformer.kernels") : nullptr;
  auto intermediates =
      entryFn ? entryFn->getAttrOfType<ArrayAttr>("linformer.intermediates")
              : nullptr;
  if (!kernels || !intermediates)
    return fail("the pipeline produced no dispatch plan for @" + entry.name);
  sched::ScheduleFile schedules;
  schedules.target = cpuTarget;
  schedules.hasTarget = true;
  std::vector<std::string> scheduleJson;
  for (Attribute a : kernels) {
    auto dict = cast<DictionaryAttr>(a);
    sched::ScheduleRecord record;
    std::string json = "{}";
    if (mlir::linformer::kernelRecord(
            dict.getAs<DictionaryAttr>("kernel"),
            dict.getAs<mlir::linformer::CPUScheduleAttr>("schedule"),
            cpuTarget, record)) {
      record.kernel = cast<StringAttr>(dict.get("name")).str();
      record.workgroups = cast<IntegerAttr>(dict.get("workgroups")).getInt();
      json = sched::recordToJson(record);
      schedules.kernels.push_back(record);
    }
    scheduleJson.push_back(json);
  }
  if (printSchedule.getNumOccurrences()) {
    if (printSchedule == "table")
      llvm::outs() << sched::formatScheduleTable(schedules);
    else if (printSchedule.empty() || printSchedule == "json")
      llvm::outs() << sched::scheduleFileToJson(schedules);
    else
      return fail("--print-schedule takes 'json' (the default) or 'table', "
                  "not '" + printSchedule + "'");
    if (output.empty())
      return 0;
  }

  if (emit == Emit::LLVM)
    return writeText([&](raw_ostream &os) { module->print(os); });

  mlir::linformer::CPUTargetOptions targetOptions;
  targetOptions.cpu = cpuTarget.cpu;
  targetOptions.features = cpuTarget.features;
  targetOptions = mlir::linformer::resolveCPUTarget(targetOptions);
  llvm::LLVMContext llvmContext;
  if (emit == Emit::LLVMIR) {
    auto llvmModule = mlir::linformer::translateToOptimizedLLVMIR(
        *module, llvmContext, targetOptions);
    if (!llvmModule)
      return 1;
    return writeText([&](raw_ostream &os) { llvmModule->print(os, nullptr); });
  }
  if (emit == Emit::Obj) {
    if (output.empty())
      return fail("--emit=obj needs -o");
    auto llvmModule = mlir::linformer::translateToOptimizedLLVMIR(
        *module, llvmContext, targetOptions);
    if (!llvmModule)
      return 1;
    std::string err;
    if (failed(mlir::linformer::emitObjectFile(*llvmModule, targetOptions,
                                               output, err)))
      return fail(err);
    return 0;
  }

  // The artifact: kernels as a shared object, plus the manifest.
  if (output.empty())
    return fail("an artifact needs -o FILE.lfa");
  lf::Manifest manifest;
  manifest.compilerVersion = kCompilerVersion;
  manifest.target.kind = "cpu";
  manifest.target.cpu = targetOptions.cpu;
  manifest.target.features = targetOptions.features;
  manifest.target.descriptionJson = sched::toJson(cpuTarget);
  manifest.entry = entry.name;
  if (fromModel)
    manifest.modelJson = lf::modelConfigJson(config);
  // Buffers in the entry's argument order (the output is the appended last
  // argument), then the intermediates.
  func::FuncOp sourceFn;
  {
    // Types come from the source signature, parsed again (the lowered
    // entry takes plain pointers).
    OwningOpRef<ModuleOp> original;
    if (fromModel) {
      mlir::linformer::EncoderSignature sig;
      original = mlir::linformer::buildEncoderModule(&context, config, sig);
    } else {
      original = parseSourceFile<ModuleOp>(inputFile, &context);
    }
    sourceFn = original->lookupSymbol<func::FuncOp>(entry.name);
    for (unsigned i = 0; i < sourceFn.getNumArguments(); ++i) {
      auto type = cast<RankedTensorType>(sourceFn.getArgument(i).getType());
      lf::ManifestBuffer b;
      b.name = entry.argNames[i];
      b.kind = entry.argKinds[i];
      if (!toDType(type.getElementType(), b.dtype))
        return fail("argument " + std::to_string(i) +
                    " has an element type the runtime cannot take");
      b.shape.assign(type.getShape().begin(), type.getShape().end());
      if (static_cast<int>(i) == entry.paddingArg)
        b.role = entry.paddingRole;
      manifest.buffers.push_back(b);
    }
    for (Type t : sourceFn.getResultTypes()) {
      auto type = cast<RankedTensorType>(t);
      lf::ManifestBuffer b;
      b.name = fromModel ? "y" : "result";
      b.kind = lf::BufferKind::Output;
      toDType(type.getElementType(), b.dtype);
      b.shape.assign(type.getShape().begin(), type.getShape().end());
      manifest.buffers.push_back(b);
    }
  }
  for (auto [i, a] : llvm::enumerate(intermediates)) {
    lf::ManifestBuffer b;
    b.name = "tmp" + std::to_string(i);
    b.kind = lf::BufferKind::Intermediate;
    b.bytes = cast<IntegerAttr>(a).getInt();
    manifest.buffers.push_back(b);
  }
  for (auto [i, a] : llvm::enumerate(kernels)) {
    auto dict = cast<DictionaryAttr>(a);
    lf::ManifestKernel k;
    k.symbol = cast<StringAttr>(dict.get("name")).str();
    k.workgroups = cast<IntegerAttr>(dict.get("workgroups")).getInt();
    for (Attribute id : cast<ArrayAttr>(dict.get("buffers")))
      k.buffers.push_back(cast<IntegerAttr>(id).getInt());
    k.scheduleJson = scheduleJson[i];
    manifest.kernels.push_back(k);
  }
  std::string manifestText;
  if (std::string err = lf::serializeManifest(manifest, manifestText);
      !err.empty())
    return fail(err);

  llvm::SmallString<128> soPath;
  if (llvm::sys::fs::createTemporaryFile("linformer-kernels", "so", soPath))
    return fail("cannot create a temporary file");
  if (failed(mlir::linformer::compileToSharedObject(*module, targetOptions,
                                                    soPath)))
    return 1;
  auto so = llvm::MemoryBuffer::getFile(soPath);
  llvm::sys::fs::remove(soPath);
  if (!so)
    return fail("cannot read back the shared object");
  lf::ArtifactWriter writer;
  if (std::string err = writer.addSection(lf::kManifestSection, manifestText);
      !err.empty())
    return fail(err);
  if (std::string err =
          writer.addSection(lf::kCpuObjectSection, (*so)->getBuffer().str());
      !err.empty())
    return fail(err);
  if (std::string err = writer.write(output); !err.empty())
    return fail(err);
  llvm::outs() << "wrote " << output << ": " << manifest.kernels.size()
               << " kernels, " << manifest.buffers.size() << " buffers\n";
  return 0;
}
