//===- linformer-compile.cpp - model -> artifact ----------------*- C++ -*-===//
//
// The compiler driver. Takes a model description (model.json) or a module in
// the Linformer dialect (.mlir), runs the CPU pipeline, and writes one
// artifact (.lfa): the generated kernels as a shared object plus a manifest
// (entry, buffers, weights expected, kernels in launch order with their
// schedules). --emit stops at any stage, Toy-style. On a failing pass it
// writes a reproducer and prints the linformer-opt line that replays it.
// --random-weights writes seeded random weights for a model description.
// Schedules: the cost model picks one per kernel for the target (host or
// --cpu/--cpu-features); --print-schedule shows them, --schedule FILE
// replaces them, --autotune times candidates through the runtime and keeps
// the fastest (compiler/Schedule/Autotune.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Halide/HalideTarget.h"
#include "compiler/Model/ModelBuilder.h"
#include "compiler/Passes.h"
#include "compiler/Pipelines/CUDAFlags.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Schedule/Autotune.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Target/CPU/CPUTarget.h"
#include "dialect/IR/LinformerDialect.h"
#include "dialect/Transforms/Passes.h"
#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/Manifest.h"
#include "lib/Model/ModelConfig.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Random.h"
#include "lib/Support/Sha256.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Target/LLVMIR/Dialect/All.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/IR/Module.h"
#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <set>
#include <string>
#include <unistd.h>

using namespace mlir;
namespace cl = llvm::cl;
namespace lf = ::linformer;

static const char *kCompilerVersion = "0.1.0";

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.json | module.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                       cl::value_desc("path"), cl::init(""));
enum class Emit { Linformer, Linalg, Halide, GPU, PTX, LLVM, LLVMIR, Obj, Artifact };
static cl::opt<Emit> emit(
    "emit", cl::desc("stop after this stage"), cl::init(Emit::Artifact),
    cl::values(
        clEnumValN(Emit::Linformer, "linformer", "the input in the dialect"),
        clEnumValN(Emit::Linalg, "linalg", "linalg on tensors"),
        clEnumValN(Emit::Halide, "halide",
                   "--backend=halide: each kernel's Funcs and schedule"),
        clEnumValN(Emit::GPU, "gpu",
                   "--target=cuda: host code and kernels in NVVM"),
        clEnumValN(Emit::PTX, "ptx", "--target=cuda: every kernel's PTX"),
        clEnumValN(Emit::LLVM, "llvm", "the LLVM dialect"),
        clEnumValN(Emit::LLVMIR, "llvm-ir", "optimized LLVM IR"),
        clEnumValN(Emit::Obj, "obj", "a native object file"),
        clEnumValN(Emit::Artifact, "artifact", "the .lfa artifact")));
static cl::opt<std::string>
    backend("backend",
            cl::desc("CPU code generator: mlir (our pipeline), halide "
                     "(the same kernels as Halide Funcs, autoscheduled) or "
                     "best (both timed here, the faster kept)"),
            cl::init("mlir"));
static cl::opt<std::string> halideAutoscheduler(
    "halide-autoscheduler",
    cl::desc("--backend=halide: adams2019, mullapudi2016 or li2018"),
    cl::init("adams2019"));
static cl::list<std::string> bestHalideKernels(
    "best-halide-kernels", cl::CommaSeparated, cl::Hidden,
    cl::desc("--backend=best: take these kernels from Halide whatever the "
             "times (to test the mixing)"));
static cl::opt<std::string>
    target("target",
           cl::desc("cpu, or cuda (the first, naive CUDA path; "
                    "docs/Pipeline.md)"),
           cl::init("cpu"));
static cl::opt<int> sm("sm", cl::desc("--target=cuda: the SM version (90, "
                                      "80, ...)"),
                       cl::init(90));
static cl::opt<std::string> cudaToolkit(
    "cuda-toolkit",
    cl::desc("--target=cuda: the CUDA toolkit whose ptxas makes the "
             "artifact's cubin (default: $CUDA_HOME, else /usr/local/cuda); "
             "without ptxas the artifact carries PTX only"),
    cl::init(""));
static cl::opt<std::string> cudaMma(
    "cuda-mma",
    cl::desc("--target=cuda: tensor cores for contractions: none (f32 "
             "products), tf32 (mma.sync m16n8k4, TF32 products), bf16 or f16 "
             "(m16n8k16, operands rounded to that type), all with f32 "
             "accumulation and sm_80 or later; auto (the default): the "
             "model's dtype (bf16 or f16 models) on sm_80 and later, else "
             "none"),
    cl::init("auto"));
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
static cl::opt<bool> autotuneOpt(
    "autotune",
    cl::desc("time candidate schedules around the cost model's pick through "
             "the runtime on this machine and keep the fastest per kernel "
             "shape; results go to the tuning cache, so a second compile of "
             "the same shapes for the same target is instant"),
    cl::init(false));
static cl::opt<std::string> tuningCache(
    "tuning-cache",
    cl::desc("directory of the tuning cache (default: "
             "$LINFORMER_TUNING_CACHE, else ~/.cache/linformer/tuning)"),
    cl::init(""));
static cl::opt<unsigned> autotuneRuns(
    "autotune-runs",
    cl::desc("timed runs per candidate (after one warm-up); the median "
             "counts"),
    cl::init(5));
static cl::opt<std::string> runnerPath(
    "runner",
    cl::desc("linformer-run to time candidates with (default: the one next "
             "to linformer-compile, or $LINFORMER_RUN)"),
    cl::init(""));

namespace {

int fail(const llvm::Twine &msg) {
  llvm::errs() << "linformer-compile: error: " << msg << "\n";
  return 1;
}

bool isJson(StringRef path) { return path.ends_with(".json"); }

/// Seeded weights: U(-1/sqrt(fan_in), 1/sqrt(fan_in)) for matrices, small
/// biases, LayerNorm gamma near 1 and beta near 0.
int writeRandomWeights(const lf::ModelConfig &config, const std::string &path,
                       bool quiet = false) {
  // The weights are built in memory, then serialized: about three copies.
  // Refuse up front rather than be killed halfway.
  uint64_t bytes = lf::modelWeightBytes(config);
  long pages = sysconf(_SC_PHYS_PAGES), pageSize = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && pageSize > 0 &&
      bytes > uint64_t(pages) * uint64_t(pageSize) / 3)
    return fail("the model's weights need " +
                std::to_string(bytes >> 20) +
                " MiB; writing them needs about three times that, more than "
                "this machine's " +
                std::to_string((uint64_t(pages) * uint64_t(pageSize)) >> 20) +
                " MiB of memory");
  size_t count = 0;
  if (std::string err = lf::writeRandomWeights(config, seed, path, &count);
      !err.empty())
    return fail(err);
  if (!quiet)
    llvm::outs() << "wrote " << count << " weights to " << path
                 << "\n";
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

/// What is compiled: a model description or a module's text. The module is
/// rebuilt from it for every compile (the autotuner compiles many times;
/// the pipeline consumes its input).
struct Source {
  bool fromModel = false;
  lf::ModelConfig config;
  std::string text;
  EntryInfo entry;
};

OwningOpRef<ModuleOp> buildModule(MLIRContext &context, const Source &src) {
  if (src.fromModel) {
    mlir::linformer::EncoderSignature sig;
    return mlir::linformer::buildEncoderModule(&context, src.config, sig);
  }
  return parseSourceString<ModuleOp>(src.text, &context,
                                     llvm::StringRef(inputFile));
}

/// Fills `src.entry` (and checks the module has one public function).
int readEntry(MLIRContext &context, Source &src) {
  EntryInfo &entry = src.entry;
  if (src.fromModel) {
    mlir::linformer::EncoderSignature sig;
    OwningOpRef<ModuleOp> m =
        mlir::linformer::buildEncoderModule(&context, src.config, sig);
    if (!m)
      return 1;
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
    return 0;
  }
  OwningOpRef<ModuleOp> module = buildModule(context, src);
  if (!module)
    return 1;
  func::FuncOp fn;
  for (func::FuncOp f : module->getOps<func::FuncOp>())
    if (f.isPublic() && !f.isExternal()) {
      if (fn)
        return fail("the module has more than one public function; "
                    "compile one entry at a time");
      fn = f;
    }
  if (!fn)
    return fail("the module has no public function to compile");
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
  for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
    if (!checkType(fn.getArgument(i).getType(),
                   "argument " + std::to_string(i)))
      return 1;
    entry.argNames.push_back("arg" + std::to_string(i));
    entry.argKinds.push_back(lf::BufferKind::Input);
  }
  if (fn.getNumResults() == 0) {
    fn.emitError() << "returns nothing; an entry function must return at "
                      "least one tensor";
    return 1;
  }
  for (unsigned i = 0; i < fn.getNumResults(); ++i)
    if (!checkType(fn.getResultTypes()[i], "result " + std::to_string(i)))
      return 1;
  return 0;
}

/// Output buffer names: "result" for a single result, else result0, ...
std::string resultName(const Source &src, unsigned index, unsigned count) {
  if (src.fromModel)
    return count == 1 ? "y" : "y" + std::to_string(index);
  return count == 1 ? "result" : "result" + std::to_string(index);
}

namespace sched = ::linformer::schedule;

/// The target schedules are chosen for: the module's own when no flag says
/// otherwise, else the host or what --cpu / --cpu-features say (caches and
/// cores from this machine).
sched::CPUTarget chooseTarget(ModuleOp module) {
  if (auto attr = module->getAttrOfType<mlir::linformer::CPUTargetAttr>(
          mlir::linformer::kTargetAttrName);
      attr && cpu.empty() && cpuFeatures.empty())
    return mlir::linformer::fromAttr(attr);
  return mlir::linformer::hostCPUTarget(cpu, cpuFeatures);
}

void setPipelineOptions(mlir::linformer::CPUPipelineOptions &options,
                        StringRef scheduleFile) {
  options.reassociate = reassociate;
  options.rowTile = rowTile;
  options.vectorWidth = vectorWidth;
  options.unroll = unroll;
  options.reductionTile = reductionTile;
  options.scheduleFile = scheduleFile.str();
}

/// Runs the CPU pipeline on `module` (to the LLVM dialect).
LogicalResult lowerModule(MLIRContext &context, ModuleOp module,
                          const sched::CPUTarget &target,
                          StringRef scheduleFile) {
  module->setAttr(mlir::linformer::kTargetAttrName,
                  mlir::linformer::toAttr(&context, target));
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return failure();
  mlir::linformer::CPUPipelineOptions options;
  setPipelineOptions(options, scheduleFile);
  mlir::linformer::buildCPUPipeline(pm, options);
  return runWithReproducer(pm, module, "cpu-pipeline");
}

/// Measured times of a tuned kernel shape, for its record.
struct TunedTimes {
  double modelMs = -1, tunedMs = -1;
};

/// The lowered module's dispatch plan with every kernel's schedule record.
struct Plan {
  ArrayAttr kernels, intermediates;
  sched::ScheduleFile schedules;
  /// Per kernel of the plan: its record as JSON ("{}" if it has none).
  std::vector<std::string> scheduleJson;
};

bool readPlan(ModuleOp module, StringRef entryName,
              const sched::CPUTarget &target,
              const std::map<std::string, TunedTimes> &times, Plan &plan) {
  // The entry is an llvm.func after the CPU pipeline, a func.func after the
  // Halide one.
  Operation *entryFn = module.lookupSymbol(entryName);
  plan.kernels =
      entryFn ? entryFn->getAttrOfType<ArrayAttr>("linformer.kernels") : nullptr;
  plan.intermediates =
      entryFn ? entryFn->getAttrOfType<ArrayAttr>("linformer.intermediates")
              : nullptr;
  if (!plan.kernels || !plan.intermediates)
    return false;
  plan.schedules.target = target;
  plan.schedules.hasTarget = true;
  for (Attribute a : plan.kernels) {
    auto dict = cast<DictionaryAttr>(a);
    sched::ScheduleRecord record;
    std::string json = "{}";
    if (mlir::linformer::kernelRecord(
            dict.getAs<DictionaryAttr>("kernel"),
            dict.getAs<mlir::linformer::CPUScheduleAttr>("schedule"), target,
            record)) {
      record.kernel = cast<StringAttr>(dict.get("name")).str();
      record.workgroups = cast<IntegerAttr>(dict.get("workgroups")).getInt();
      if (auto it = times.find(record.key); it != times.end()) {
        record.modelMs = it->second.modelMs;
        record.tunedMs = it->second.tunedMs;
      }
      json = sched::recordToJson(record);
      plan.schedules.kernels.push_back(record);
    }
    plan.scheduleJson.push_back(json);
  }
  return true;
}

/// A manifest for `target` with what every artifact records of the source.
lf::Manifest startManifest(const Source &src, lf::ManifestTarget target) {
  lf::Manifest manifest;
  manifest.compilerVersion = kCompilerVersion;
  manifest.target = std::move(target);
  manifest.entry = src.entry.name;
  if (src.fromModel)
    manifest.modelJson = lf::modelConfigJson(src.config);
  return manifest;
}

/// The manifest's buffers: the entry's arguments in order (the output is
/// the appended last argument), then the plan's intermediates. Types come
/// from the source signature (the lowered entry takes plain pointers).
int addBuffers(MLIRContext &context, const Source &src,
               ArrayAttr intermediates, lf::Manifest &manifest) {
  const EntryInfo &entry = src.entry;
  OwningOpRef<ModuleOp> original = buildModule(context, src);
  if (!original)
    return 1;
  auto sourceFn = original->lookupSymbol<func::FuncOp>(entry.name);
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
  for (auto [i, t] : llvm::enumerate(sourceFn.getResultTypes())) {
    auto type = cast<RankedTensorType>(t);
    lf::ManifestBuffer b;
    b.name = resultName(src, unsigned(i), sourceFn.getNumResults());
    b.kind = lf::BufferKind::Output;
    toDType(type.getElementType(), b.dtype);
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    manifest.buffers.push_back(b);
  }
  for (auto [i, a] : llvm::enumerate(intermediates)) {
    lf::ManifestBuffer b;
    b.name = "tmp" + std::to_string(i);
    b.kind = lf::BufferKind::Intermediate;
    b.bytes = cast<IntegerAttr>(a).getInt();
    manifest.buffers.push_back(b);
  }
  return 0;
}

/// What the launch plan (linformer-cuda-plan-launches) says of one kernel
/// that sets ptxas's budget: its block's threads, its dynamic shared
/// memory and the blocks an SM is meant to hold.
struct PlannedLaunch {
  std::string name;
  int64_t threads = 1, sharedBytes = 0, blocksPerSM = 1;

  explicit PlannedLaunch(DictionaryAttr dict)
      : name(cast<StringAttr>(dict.get("name")).str()),
        sharedBytes(cast<IntegerAttr>(dict.get("shared")).getInt()),
        blocksPerSM(cast<IntegerAttr>(dict.get("blocks_per_sm")).getInt()) {
    for (Attribute d : cast<ArrayAttr>(dict.get("block")))
      threads *= cast<IntegerAttr>(d).getInt();
  }

  /// Registers per thread ptxas may use.
  int64_t registerBudget(const sched::CUDATarget &t) const {
    return t.registerBudget(threads, blocksPerSM);
  }
};

/// LLVM's target options for a schedule target (features resolved).
mlir::linformer::CPUTargetOptions llvmTargetOf(const sched::CPUTarget &t) {
  mlir::linformer::CPUTargetOptions options;
  options.cpu = t.cpu;
  options.features = t.features;
  return mlir::linformer::resolveCPUTarget(options);
}

/// The Halide generator's options for a target (its features as LLVM
/// resolved them, --halide-autoscheduler, the target's cores).
mlir::linformer::HalideTargetOptions
halideOptionsOf(const sched::CPUTarget &t,
                const mlir::linformer::CPUTargetOptions &llvmTarget) {
  mlir::linformer::HalideTargetOptions options;
  options.features = llvmTarget.features;
  options.autoscheduler = halideAutoscheduler;
  options.cores = t.cores;
  return options;
}

/// The CPU sections of an artifact: the lowered module's kernels as a
/// shared object plus the manifest (buffers from the source signature, the
/// plan, the schedules), added to `writer`.
int addCPUSections(MLIRContext &context, ModuleOp module, const Source &src,
                   const sched::CPUTarget &target, const Plan &plan,
                   lf::ArtifactWriter &writer,
                   const std::string *prebuilt = nullptr) {
  mlir::linformer::CPUTargetOptions targetOptions = llvmTargetOf(target);
  lf::Manifest manifest =
      startManifest(src, {"cpu", targetOptions.cpu, targetOptions.features,
                          sched::toJson(target)});
  if (int rc = addBuffers(context, src, plan.intermediates, manifest))
    return rc;
  for (auto [i, a] : llvm::enumerate(plan.kernels)) {
    auto dict = cast<DictionaryAttr>(a);
    lf::ManifestKernel k;
    k.symbol = cast<StringAttr>(dict.get("name")).str();
    k.workgroups = cast<IntegerAttr>(dict.get("workgroups")).getInt();
    for (Attribute id : cast<ArrayAttr>(dict.get("buffers")))
      k.buffers.push_back(cast<IntegerAttr>(id).getInt());
    k.scheduleJson = plan.scheduleJson[i];
    if (auto generator = dict.getAs<StringAttr>("generator"))
      k.generator = generator.str();
    manifest.kernels.push_back(k);
  }
  // The object first: the manifest records its hash.
  std::string so;
  if (prebuilt)
    so = *prebuilt;
  else if (failed(mlir::linformer::compileToSharedObject(module, targetOptions,
                                                          so)))
    return 1;
  manifest.codeSha256 = {{lf::kCpuObjectSection, lf::sha256Hex(so)}};
  std::string manifestText;
  if (std::string err = lf::serializeManifest(manifest, manifestText);
      !err.empty())
    return fail(err);
  if (std::string err = writer.addSection(lf::kManifestSection, manifestText);
      !err.empty())
    return fail(err);
  if (std::string err = writer.addSection(lf::kCpuObjectSection, std::move(so));
      !err.empty())
    return fail(err);
  return 0;
}

/// A CPU artifact at `output`.
int writeArtifact(MLIRContext &context, ModuleOp module, const Source &src,
                  const sched::CPUTarget &target, const Plan &plan,
                  const std::string &output) {
  lf::ArtifactWriter writer;
  if (int rc = addCPUSections(context, module, src, target, plan, writer))
    return rc;
  if (std::string err = writer.write(output); !err.empty())
    return fail(err);
  return 0;
}

/// Writes `schedules` (key -> schedule) as a schedule file at `path`, with
/// `source` as every record's source.
std::string writeScheduleMap(const sched::ScheduleMap &schedules,
                             const std::string &source,
                             const std::string &path) {
  sched::ScheduleFile f;
  for (const auto &[key, s] : schedules) {
    sched::ScheduleRecord r;
    r.key = key;
    r.schedule = s;
    r.source = source;
    f.kernels.push_back(r);
  }
  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_Text);
  if (ec)
    return "cannot write '" + path + "': " + ec.message();
  os << sched::scheduleFileToJson(f);
  return "";
}

/// Calls `each` with every kernel object of a linformer-run --profile-json
/// file.
std::string forEachProfiledKernel(
    const std::string &path,
    llvm::function_ref<void(const llvm::json::Object &)> each) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return "no profile was written";
  llvm::Expected<llvm::json::Value> value =
      llvm::json::parse((*buffer)->getBuffer());
  if (!value) {
    llvm::consumeError(value.takeError());
    return "the profile is not JSON";
  }
  const llvm::json::Object *root = value->getAsObject();
  const llvm::json::Array *kernels =
      root ? root->getArray("kernels") : nullptr;
  if (!kernels)
    return "the profile has no kernels";
  for (const llvm::json::Value &k : *kernels)
    if (const llvm::json::Object *o = k.getAsObject())
      each(*o);
  return "";
}

/// Per shape key: the sum of the median milliseconds of its kernels, from a
/// linformer-run --profile-json file.
std::string readProfile(const std::string &path,
                        std::map<std::string, double> &msByKey) {
  return forEachProfiledKernel(path, [&](const llvm::json::Object &o) {
    std::optional<StringRef> key = o.getString("key");
    std::optional<double> ms = o.getNumber("median_ms");
    if (key && ms && !key->empty())
      msByKey[key->str()] += *ms;
  });
}

/// The linformer-run the autotuner times candidates with.
std::string findRunner(const char *argv0) {
  if (!runnerPath.empty())
    return runnerPath;
  if (const char *env = std::getenv("LINFORMER_RUN"); env && *env)
    return env;
  std::string self =
      llvm::sys::fs::getMainExecutable(argv0, (void *)&findRunner);
  llvm::SmallString<256> sibling(llvm::sys::path::parent_path(self));
  llvm::sys::path::append(sibling, "linformer-run");
  if (llvm::sys::fs::can_execute(sibling))
    return sibling.str().str();
  llvm::ErrorOr<std::string> onPath =
      llvm::sys::findProgramByName("linformer-run");
  return onPath ? *onPath : std::string();
}

/// --autotune: tunes the kernel shapes not in the tuning cache and returns,
/// in `scheduleFilePath`, a schedule file with a tuned schedule for every
/// shape, and their times in `times`.
int autotune(MLIRContext &context, const Source &src,
             const sched::CPUTarget &target, const char *argv0,
             llvm::SmallString<128> &workDir, std::string &scheduleFilePath,
             std::map<std::string, TunedTimes> &times) {
  // The cost model's picks, from one pass through the pipeline.
  OwningOpRef<ModuleOp> module = buildModule(context, src);
  if (!module || failed(lowerModule(context, *module, target, "")))
    return 1;
  Plan plan;
  if (!readPlan(*module, src.entry.name, target, {}, plan))
    return fail("the pipeline produced no dispatch plan for @" +
                src.entry.name);

  std::string cacheDir =
      tuningCache.empty() ? sched::defaultTuningCacheDir() : tuningCache;
  std::string cachePath =
      sched::tuningCachePath(cacheDir, target, kCompilerVersion);
  sched::ScheduleFile cache;
  if (std::string err = sched::loadTuningCache(cachePath, cache); !err.empty())
    return fail(err);
  std::map<std::string, sched::ScheduleRecord> cached;
  for (const sched::ScheduleRecord &r : cache.kernels)
    cached[r.key] = r;

  std::vector<sched::TuningKernel> toTune;
  std::set<std::string> seen;
  sched::ScheduleMap fixed; // from the cache
  for (const sched::ScheduleRecord &r : plan.schedules.kernels) {
    if (!seen.insert(r.key).second)
      continue;
    if (auto it = cached.find(r.key); it != cached.end()) {
      fixed[r.key] = it->second.schedule;
      times[r.key] = {it->second.modelMs, it->second.tunedMs};
      continue;
    }
    if (r.kind == sched::KernelKind::Other)
      continue; // elementwise and row reductions: nothing to tune
    toTune.push_back({r.key, sched::shapeOf(r), r.schedule});
  }
  llvm::errs() << "autotune: target " << sched::describe(target) << "\n"
               << "autotune: " << seen.size() << " kernel shape(s), "
               << fixed.size() << " from the tuning cache (" << cachePath
               << "), " << toTune.size() << " to tune\n";

  sched::AutotuneResult result;
  if (!toTune.empty()) {
    std::string runner = findRunner(argv0);
    if (runner.empty())
      return fail("--autotune needs linformer-run to time candidates; none "
                  "was found next to linformer-compile (use --runner PATH)");
    llvm::SmallString<128> weightsPath(workDir);
    llvm::sys::path::append(weightsPath, "weights.safetensors");
    // Random weights: timing does not depend on the values.
    if (int rc = writeRandomWeights(src.config, weightsPath.str().str(),
                                    /*quiet=*/true))
      return rc;
    int variant = 0;
    sched::AutotuneOptions options;
    options.progress = [](const std::string &line) {
      llvm::errs() << "autotune: " << line << "\n";
    };
    options.measure = [&](const sched::ScheduleMap &schedules,
                          std::map<std::string, double> &msByKey)
        -> std::string {
      std::string base =
          (workDir + "/variant" + std::to_string(variant++)).str();
      sched::ScheduleMap all = fixed;
      for (const auto &[key, s] : schedules)
        all[key] = s;
      if (std::string err = writeScheduleMap(all, "file", base + ".json");
          !err.empty())
        return err;
      OwningOpRef<ModuleOp> m = buildModule(context, src);
      if (!m || failed(lowerModule(context, *m, target, base + ".json")))
        return "the variant did not compile";
      Plan p;
      if (!readPlan(*m, src.entry.name, target, {}, p))
        return "the variant has no dispatch plan";
      if (writeArtifact(context, *m, src, target, p, base + ".lfa"))
        return "the variant's artifact could not be written";
      std::string threads = std::to_string(target.cores);
      std::string runs = std::to_string(std::max(1u, autotuneRuns.getValue()));
      std::string profile = base + ".profile.json";
      std::string log = base + ".log";
      std::string artifact = base + ".lfa";
      SmallVector<StringRef> args = {runner,        artifact,
                                     "--weights",   weightsPath,
                                     "--random-input", "--threads",
                                     threads,       "--warmup",
                                     "1",           "--repeat",
                                     runs,          "--profile-json",
                                     profile};
      std::optional<StringRef> redirects[] = {StringRef(""), StringRef(log),
                                              StringRef(log)};
      std::string message;
      int rc = llvm::sys::ExecuteAndWait(runner, args, std::nullopt,
                                         redirects, /*secondsToWait=*/600, 0,
                                         &message);
      llvm::sys::fs::remove(artifact);
      if (rc != 0)
        return "linformer-run failed (exit " + std::to_string(rc) + ")" +
               (message.empty() ? "" : ": " + message) + "; see " + log;
      return readProfile(profile, msByKey);
    };
    if (std::string err =
            sched::autotune(target, toTune, options, result);
        !err.empty())
      return fail("autotune: " + err);
    llvm::errs() << "autotune: " << result.variants
                 << " variants built and timed\n";
    for (const sched::TuningKernel &k : toTune) {
      fixed[k.key] = result.best[k.key];
      times[k.key] = {result.startMs[k.key], result.bestMs[k.key]};
      sched::ScheduleRecord r;
      for (const sched::ScheduleRecord &p : plan.schedules.kernels)
        if (p.key == k.key) {
          r = p;
          break;
        }
      r.kernel.clear();
      r.schedule = result.best[k.key];
      r.source = "tuned";
      r.hasModelSchedule = true;
      r.modelSchedule = k.start;
      r.modelMs = result.startMs[k.key];
      r.tunedMs = result.bestMs[k.key];
      cached[k.key] = r;
    }
    cache.target = target;
    cache.hasTarget = true;
    cache.kernels.clear();
    for (auto &[key, r] : cached)
      cache.kernels.push_back(r);
    if (std::string err = sched::saveTuningCache(cachePath, cache);
        !err.empty())
      return fail(err);
    llvm::errs() << "autotune: wrote the tuning cache " << cachePath << "\n";
  }
  scheduleFilePath = (workDir + "/tuned.json").str();
  if (std::string err = writeScheduleMap(fixed, "tuned", scheduleFilePath);
      !err.empty())
    return fail(err);
  return 0;
}

/// --target=cuda's artifact: the one kernel module's PTX, its cubin when
/// ptxas is found, and a manifest with the launch plan the pipeline recorded
/// on the entry (CUDAPlanLaunches.cpp).
int writeCUDAArtifact(MLIRContext &context, ModuleOp module, const Source &src,
                      const sched::CUDATarget &cudaTarget,
                      const mlir::linformer::CUDAPipelineOptions &options,
                      lf::ArtifactWriter *combined) {
  auto fn = module.lookupSymbol<func::FuncOp>(src.entry.name);
  ArrayAttr kernels =
      fn ? fn->getAttrOfType<ArrayAttr>("linformer.kernels") : nullptr;
  ArrayAttr intermediates =
      fn ? fn->getAttrOfType<ArrayAttr>("linformer.intermediates") : nullptr;
  if (!kernels || !intermediates)
    return fail("the CUDA pipeline produced no launch plan for @" +
                src.entry.name);
  std::string ptx;
  int objects = 0;
  module.walk([&](gpu::BinaryOp binary) {
    for (Attribute a : binary.getObjects()) {
      ptx = cast<gpu::ObjectAttr>(a).getObject().getValue().str();
      ++objects;
    }
  });
  if (objects != 1 || ptx.empty())
    return fail("the CUDA pipeline produced " + std::to_string(objects) +
                " kernel modules; an artifact carries exactly one");

  lf::Manifest manifest =
      startManifest(src, {"cuda", options.chip, options.features,
                          sched::toJson(cudaTarget)});
  if (int rc = addBuffers(context, src, intermediates, manifest))
    return rc;
  auto ints = [](Attribute a) {
    std::vector<int64_t> v;
    for (Attribute e : cast<ArrayAttr>(a))
      v.push_back(cast<IntegerAttr>(e).getInt());
    return v;
  };
  for (Attribute a : kernels) {
    auto dict = cast<DictionaryAttr>(a);
    lf::ManifestKernel k;
    k.symbol = cast<StringAttr>(dict.get("name")).str();
    k.workgroups = cast<IntegerAttr>(dict.get("workgroups")).getInt();
    k.buffers = ints(dict.get("buffers"));
    k.grid = ints(dict.get("grid"));
    k.block = ints(dict.get("block"));
    k.sharedBytes = cast<IntegerAttr>(dict.get("shared")).getInt();
    // What the schedule allows this launch: the budget ptxas is held to.
    PlannedLaunch launch(dict);
    llvm::json::Object schedule{
        {"source", "cuda-first-path"},
        {"mma", options.mma},
        {"threads", launch.threads},
        {"blocks_per_sm", launch.blocksPerSM},
        {"register_budget", launch.registerBudget(cudaTarget)},
        {"static_shared_budget", cudaTarget.staticSharedBytesPerBlock},
        {"dynamic_shared", k.sharedBytes},
        {"dynamic_shared_budget", cudaTarget.sharedBytesPerBlock}};
    if (k.sharedBytes > cudaTarget.sharedBytesPerBlock)
      return fail("kernel '" + k.symbol + "' needs " +
                  std::to_string(k.sharedBytes) +
                  " bytes of shared memory, more than the " +
                  std::to_string(cudaTarget.sharedBytesPerBlock) +
                  " a block of sm_" + std::to_string(cudaTarget.sm) +
                  " may have");
    std::string json;
    llvm::raw_string_ostream os(json);
    os << llvm::json::Value(std::move(schedule));
    k.scheduleJson = json;
    manifest.kernels.push_back(std::move(k));
  }

  // The cubin, from the toolkit's ptxas, in a private directory.
  std::string toolkit = cudaToolkit;
  if (toolkit.empty())
    if (const char *home = std::getenv("CUDA_HOME"); home && *home)
      toolkit = home;
  if (toolkit.empty())
    toolkit = "/usr/local/cuda";
  std::string ptxas = toolkit + "/bin/ptxas";
  std::string cubin;
  std::string cubinSection = lf::cudaCubinSection(options.chip);
  if (llvm::sys::fs::can_execute(ptxas)) {
    llvm::SmallString<128> dir;
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("linformer-ptxas", dir))
      return fail("cannot create a temporary directory: " + ec.message());
    llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(dir); });
    std::string in = (dir + "/kernels.ptx").str();
    std::string out = (dir + "/kernels.cubin").str();
    std::string log = (dir + "/ptxas.log").str();
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(in, ec);
      if (ec)
        return fail("cannot write " + in + ": " + ec.message());
      os << ptx;
    }
    std::string arch = "-arch=" + options.chip;
    StringRef args[] = {ptxas, arch, "-O3", in, "-o", out};
    std::optional<StringRef> redirects[] = {StringRef(""), StringRef(log),
                                            StringRef(log)};
    std::string message;
    int rc = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                       /*secondsToWait=*/600, 0, &message);
    if (rc != 0) {
      auto text = llvm::MemoryBuffer::getFile(log);
      return fail(ptxas + " rejected the generated PTX (exit " +
                  std::to_string(rc) + "): " +
                  (text ? (*text)->getBuffer().trim().str() : message));
    }
    auto bytes = llvm::MemoryBuffer::getFile(out, /*IsText=*/false);
    if (!bytes)
      return fail("cannot read " + out);
    cubin = (*bytes)->getBuffer().str();
  } else {
    llvm::errs() << "linformer-compile: note: no ptxas at " << ptxas
                 << "; the artifact carries PTX only, which the driver "
                    "compiles when the module is loaded\n";
  }
  manifest.codeSha256 = {{lf::kCudaPtxSection, lf::sha256Hex(ptx)}};
  if (!cubin.empty())
    manifest.codeSha256.push_back({cubinSection, lf::sha256Hex(cubin)});
  std::string manifestText;
  if (std::string err = lf::serializeManifest(manifest, manifestText);
      !err.empty())
    return fail(err);
  // Beside CPU sections, the CUDA manifest is "manifest.cuda".
  lf::ArtifactWriter own;
  lf::ArtifactWriter &writer = combined ? *combined : own;
  for (auto &[name, payload] :
       std::vector<std::pair<std::string, std::string>>{
           {combined ? lf::kCudaManifestSection : lf::kManifestSection,
            manifestText},
           {lf::kCudaPtxSection, ptx},
           {cubinSection, cubin}}) {
    if (payload.empty())
      continue;
    if (std::string err = writer.addSection(name, payload); !err.empty())
      return fail(err);
  }
  if (!combined)
    if (std::string err = writer.write(outputFile); !err.empty())
      return fail(err);
  llvm::outs() << (combined ? "cuda part" : "wrote " + outputFile) << ": "
               << manifest.kernels.size() << " CUDA kernels for "
               << options.chip << ", " << manifest.buffers.size()
               << " buffers ("
               << (cubin.empty() ? "PTX only" : "PTX and cubin") << ")\n";
  return 0;
}

/// --target=cuda: the CUDA pipeline, then the GPU IR or every kernel's
/// PTX (the `gpu.binary` objects, format isa) on the output.
/// The Halide generator on `module`: its pipeline, then every kernel
/// through Halide (compiler/Codegen/Halide). The shared object's bytes go
/// to `so`, the dispatch plan to `plan`; `describe` gets each kernel's
/// Funcs and schedule if set.
int lowerWithHalide(MLIRContext &context, ModuleOp module, const Source &src,
                    const sched::CPUTarget &cpuTarget, std::string &so,
                    Plan &plan, llvm::raw_ostream *describe = nullptr) {
  module->setAttr(mlir::linformer::kTargetAttrName,
                  mlir::linformer::toAttr(&context, cpuTarget));
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  mlir::linformer::CPUPipelineOptions pipelineOptions;
  setPipelineOptions(pipelineOptions, "");
  pipelineOptions.halide = true;
  mlir::linformer::buildCPUPipeline(pm, pipelineOptions);
  if (failed(runWithReproducer(pm, module, "halide-pipeline")))
    return 1;
  mlir::linformer::CPUTargetOptions targetOptions = llvmTargetOf(cpuTarget);
  mlir::linformer::HalideTargetOptions options =
      halideOptionsOf(cpuTarget, targetOptions);
  options.describe = describe;
  if (failed(mlir::linformer::compileHalideToSharedObject(module, options, so)))
    return 1;
  if (!readPlan(module, src.entry.name, cpuTarget, {}, plan))
    return fail("the Halide pipeline produced no dispatch plan for @" +
                src.entry.name);
  return 0;
}

/// --backend=halide: a CPU artifact of Halide kernels.
template <typename WriteText>
int compileHalide(MLIRContext &context, ModuleOp module, const Source &src,
                  WriteText writeText, const std::string &output) {
  sched::CPUTarget cpuTarget = chooseTarget(module);
  std::string description;
  llvm::raw_string_ostream describe(description);
  std::string so;
  Plan plan;
  if (int rc = lowerWithHalide(context, module, src, cpuTarget, so, plan,
                               emit == Emit::Halide ? &describe : nullptr))
    return rc;
  if (emit == Emit::Halide)
    return writeText([&](raw_ostream &os) { os << description; });
  lf::ArtifactWriter writer;
  if (int rc = addCPUSections(context, module, src, cpuTarget, plan, writer,
                              &so))
    return rc;
  if (std::string err = writer.write(output); !err.empty())
    return fail(err);
  llvm::outs() << "wrote " << output << ": " << plan.kernels.size()
               << " kernels (Halide, " << halideAutoscheduler << "), "
               << src.entry.argNames.size() + 1 + plan.intermediates.size()
               << " buffers\n";
  return 0;
}

/// Per kernel symbol, the median milliseconds of a linformer-run
/// --profile-json file.
std::string readProfileBySymbol(const std::string &path,
                                std::map<std::string, double> &msBySymbol) {
  return forEachProfiledKernel(path, [&](const llvm::json::Object &o) {
    std::optional<StringRef> symbol = o.getString("symbol");
    std::optional<double> ms = o.getNumber("median_ms");
    if (symbol && ms)
      msBySymbol[symbol->str()] = *ms;
  });
}

/// Times `artifact` with linformer-run on this machine (random weights and
/// input; one warm-up, --autotune-runs timed runs) and reads every kernel's
/// median.
std::string timeArtifact(const std::string &runner, const std::string &artifact,
                         const std::string &weights, const std::string &base,
                         int64_t threads,
                         std::map<std::string, double> &msBySymbol,
                         bool check = false) {
  std::string threadText = std::to_string(threads);
  std::string runs = std::to_string(std::max(1u, autotuneRuns.getValue()));
  std::string profile = base + ".profile.json";
  std::string log = base + ".log";
  SmallVector<StringRef> args = {runner,       artifact,     "--weights",
                                 weights,      "--random-input", "--threads",
                                 threadText,   "--warmup",   "1",
                                 "--repeat",   runs,         "--profile-json",
                                 profile};
  if (check)
    args.push_back("--check");
  std::optional<StringRef> redirects[] = {StringRef(""), StringRef(log),
                                          StringRef(log)};
  std::string message;
  int rc = llvm::sys::ExecuteAndWait(runner, args, std::nullopt, redirects,
                                     /*secondsToWait=*/600, 0, &message);
  if (rc != 0)
    return "linformer-run failed (exit " + std::to_string(rc) + ")" +
           (message.empty() ? "" : ": " + message) + "; see " + log;
  return readProfileBySymbol(profile, msBySymbol);
}

/// One artifact with each kernel from the generator that ran it faster.
/// The two plans have the same kernels but not the same intermediates (the
/// untiled kernels bufferize differently), so the Halide plan's buffers are
/// mapped onto the MLIR plan's through what each kernel writes; a Halide kernel's buffer that
/// maps to nothing (a fused producer's, which it never touches) gets a
/// fresh intermediate. The mix is run against the reference and timed;
/// on any doubt it is not used (the reason is returned).
std::string mixPlans(MLIRContext &context, const Source &src,
                     const sched::CPUTarget &cpuTarget, const Plan &mlirPlan,
                     const Plan &halidePlan,
                     const std::map<std::string, double> &mlirMs,
                     const std::map<std::string, double> &halideMs,
                     ModuleOp mlirModule, ModuleOp halideModule,
                     StringRef workDir, const std::string &runner,
                     const std::string &weights, std::string &so, Plan &mixed,
                     std::set<std::string> &halideKernels, double &mixedMs) {
  if (mlirPlan.kernels.size() != halidePlan.kernels.size())
    return "the two plans have different kernels";
  int64_t numFixed = static_cast<int64_t>(src.entry.argNames.size()) + 1;
  auto ids = [](DictionaryAttr d, StringRef field) {
    std::vector<int64_t> out;
    if (auto a = d.getAs<ArrayAttr>(field))
      for (Attribute x : a)
        out.push_back(cast<IntegerAttr>(x).getInt());
    return out;
  };
  std::map<int64_t, int64_t> toMlir;
  for (size_t i = 0; i < mlirPlan.kernels.size(); ++i) {
    auto m = cast<DictionaryAttr>(mlirPlan.kernels[i]);
    auto h = cast<DictionaryAttr>(halidePlan.kernels[i]);
    std::string name = cast<StringAttr>(m.get("name")).str();
    if (name != cast<StringAttr>(h.get("name")).str())
      return "kernel " + std::to_string(i) + " has two names";
    std::vector<int64_t> mw = ids(m, "writes"), hw = ids(h, "writes");
    if (mw.size() != 1 || hw.size() != 1)
      return name + " writes more than one buffer";
    auto [it, inserted] = toMlir.emplace(hw[0], mw[0]);
    if ((!inserted && it->second != mw[0]) ||
        (hw[0] < numFixed && hw[0] != mw[0]))
      return name + "'s output is another buffer in the two plans";
    auto hm = halideMs.find(name), mm = mlirMs.find(name);
    bool faster = hm != halideMs.end() && mm != mlirMs.end() &&
                  hm->second < mm->second;
    if (bestHalideKernels.empty() ? faster
                                  : llvm::is_contained(bestHalideKernels, name))
      halideKernels.insert(name);
  }
  if (halideKernels.empty())
    return "no kernel is faster under Halide";
  MLIRContext *ctx = &context;
  Builder b(ctx);
  SmallVector<Attribute> kernels, intermediates(mlirPlan.intermediates.begin(),
                                                 mlirPlan.intermediates.end());
  mixed.schedules = mlirPlan.schedules;
  for (size_t i = 0; i < mlirPlan.kernels.size(); ++i) {
    auto m = cast<DictionaryAttr>(mlirPlan.kernels[i]);
    auto h = cast<DictionaryAttr>(halidePlan.kernels[i]);
    if (!halideKernels.count(cast<StringAttr>(m.get("name")).str())) {
      kernels.push_back(m);
      mixed.scheduleJson.push_back(mlirPlan.scheduleJson[i]);
      continue;
    }
    SmallVector<Attribute> bound;
    for (int64_t id : ids(h, "buffers")) {
      if (id < numFixed) {
        bound.push_back(b.getI64IntegerAttr(id));
      } else if (auto it = toMlir.find(id); it != toMlir.end()) {
        bound.push_back(b.getI64IntegerAttr(it->second));
      } else {
        bound.push_back(b.getI64IntegerAttr(numFixed + intermediates.size()));
        intermediates.push_back(halidePlan.intermediates[id - numFixed]);
        toMlir[id] = numFixed + intermediates.size() - 1;
      }
    }
    NamedAttrList fields(h);
    fields.set("buffers", b.getArrayAttr(bound));
    kernels.push_back(fields.getDictionary(ctx));
    mixed.scheduleJson.push_back(halidePlan.scheduleJson[i]);
  }
  mixed.kernels = b.getArrayAttr(kernels);
  mixed.intermediates = b.getArrayAttr(intermediates);

  // The object: our kernels but the Halide ones (and no entry function:
  // the runtime runs the plan), linked with the Halide kernels.
  for (StringRef name : halideKernels)
    if (Operation *op = mlirModule.lookupSymbol(name))
      op->erase();
  if (Operation *entry = mlirModule.lookupSymbol(src.entry.name))
    entry->erase();
  mlir::linformer::CPUTargetOptions targetOptions = llvmTargetOf(cpuTarget);
  llvm::LLVMContext llvmContext;
  auto llvmModule = mlir::linformer::translateToOptimizedLLVMIR(
      mlirModule, llvmContext, targetOptions);
  if (!llvmModule)
    return "our kernels did not translate without the Halide ones";
  std::string object = (workDir + "/mixed-mlir.o").str();
  std::string err;
  if (failed(mlir::linformer::emitObjectFile(*llvmModule, targetOptions,
                                             object, err)))
    return err;
  mlir::linformer::HalideTargetOptions options =
      halideOptionsOf(cpuTarget, targetOptions);
  options.only = halideKernels;
  options.extraInputs = {object};
  if (failed(mlir::linformer::compileHalideToSharedObject(halideModule,
                                                           options, so))) {
    so.clear();
    return "the mixed object did not link";
  }
  // Checked against the reference, and timed.
  std::string base = (workDir + "/mixed").str();
  lf::ArtifactWriter writer;
  if (addCPUSections(context, mlirModule, src, cpuTarget, mixed, writer, &so) ||
      !writer.write(base + ".lfa").empty()) {
    so.clear();
    return "the mixed artifact could not be written";
  }
  std::map<std::string, double> ms;
  if (std::string e = timeArtifact(runner, base + ".lfa", weights, base,
                                   cpuTarget.cores, ms, /*check=*/true);
      !e.empty()) {
    so.clear();
    return "the mixed artifact failed: " + e;
  }
  for (auto &[symbol, t] : ms)
    mixedMs += t;
  return "";
}

/// --backend=best: both generators' artifacts, timed through the runtime on
/// this machine; the faster whole one is kept, with every kernel's time
/// under both generators in its schedule record (docs/Rationale.md,
/// "Halide": why the choice is per model, not yet per kernel).
int compileBest(MLIRContext &context, const Source &src, const char *argv0,
                const std::string &output) {
  llvm::SmallString<128> workDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("linformer-best", workDir))
    return fail("cannot create a temporary directory: " + ec.message());
  llvm::scope_exit cleanup([&] { llvm::sys::fs::remove_directories(workDir); });
  std::string runner = findRunner(argv0);
  if (runner.empty())
    return fail("--backend=best needs linformer-run to time both generators; "
                "none was found next to linformer-compile (use --runner PATH)");
  std::string weights = (workDir + "/weights.safetensors").str();
  if (int rc = writeRandomWeights(src.config, weights, /*quiet=*/true))
    return rc;

  struct Variant {
    const char *generator;
    OwningOpRef<ModuleOp> module;
    std::string so;
    Plan plan;
    std::map<std::string, double> ms;
    double totalMs = 0;
  };
  Variant variants[2];
  variants[0].generator = "mlir";
  variants[1].generator = "halide";
  sched::CPUTarget cpuTarget;
  for (Variant &v : variants) {
    v.module = buildModule(context, src);
    if (!v.module)
      return 1;
    cpuTarget = chooseTarget(*v.module);
    if (StringRef(v.generator) == "mlir") {
      if (failed(lowerModule(context, *v.module, cpuTarget, "")))
        return 1;
      if (!readPlan(*v.module, src.entry.name, cpuTarget, {}, v.plan))
        return fail("the pipeline produced no dispatch plan for @" +
                    src.entry.name);
      if (failed(mlir::linformer::compileToSharedObject(
              *v.module, llvmTargetOf(cpuTarget), v.so)))
        return 1;
    } else if (int rc = lowerWithHalide(context, *v.module, src, cpuTarget,
                                        v.so, v.plan)) {
      return rc;
    }
    std::string base = (workDir + "/" + v.generator).str();
    lf::ArtifactWriter writer;
    if (int rc = addCPUSections(context, *v.module, src, cpuTarget, v.plan,
                                writer, &v.so))
      return rc;
    if (std::string err = writer.write(base + ".lfa"); !err.empty())
      return fail(err);
    llvm::errs() << "best: timing the " << v.generator << " kernels ("
                 << v.plan.kernels.size() << ")\n";
    if (std::string err = timeArtifact(runner, base + ".lfa", weights, base,
                                       cpuTarget.cores, v.ms);
        !err.empty())
      return fail("best: " + err);
    for (auto &[symbol, ms] : v.ms)
      v.totalMs += ms;
  }
  Variant &mlirV = variants[0], &halideV = variants[1];
  bool halideWins = halideV.totalMs < mlirV.totalMs;
  Variant &chosen = halideWins ? halideV : mlirV;
  std::string mixedSo;
  Plan mixedPlan;
  std::set<std::string> halideKernels;
  double mixedMs = 0;
  if (std::string why = mixPlans(context, src, cpuTarget, mlirV.plan,
                                 halideV.plan, mlirV.ms, halideV.ms,
                                 *mlirV.module, *halideV.module, workDir,
                                 runner, weights, mixedSo, mixedPlan,
                                 halideKernels, mixedMs);
      !why.empty())
    llvm::errs() << "best: no per-kernel mix: " << why << "\n";
  bool mixed = !mixedSo.empty() &&
               (!bestHalideKernels.empty() ||
                mixedMs < std::min(mlirV.totalMs, halideV.totalMs));
  if (mixed) {
    chosen.plan = mixedPlan;
    chosen.so = mixedSo;
  }
  // Both times in each kernel's record (the kernels are the same ones:
  // the Halide generator compiles the CPU pipeline's kernels untiled).
  llvm::errs() << llvm::formatv("{0,-22} {1,10} {2,10}  faster\n", "kernel",
                                "mlir ms", "halide ms");
  for (auto [i, a] : llvm::enumerate(chosen.plan.kernels)) {
    std::string symbol =
        cast<StringAttr>(cast<DictionaryAttr>(a).get("name")).str();
    auto m = mlirV.ms.find(symbol), h = halideV.ms.find(symbol);
    if (m == mlirV.ms.end() || h == halideV.ms.end())
      continue;
    llvm::errs() << llvm::formatv("{0,-22} {1,10:f3} {2,10:f3}  {3}\n",
                                  symbol, m->second, h->second,
                                  h->second < m->second ? "halide" : "mlir");
    llvm::json::Value record = llvm::json::Object{};
    if (auto parsed = llvm::json::parse(chosen.plan.scheduleJson[i]))
      record = std::move(*parsed);
    else
      llvm::consumeError(parsed.takeError());
    if (llvm::json::Object *o = record.getAsObject()) {
      (*o)["mlir_ms"] = m->second;
      (*o)["halide_ms"] = h->second;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << record;
      chosen.plan.scheduleJson[i] = text;
    }
  }
  std::string kept =
      mixed ? "mixed (" + std::to_string(halideKernels.size()) +
                  " Halide kernels)"
            : std::string(chosen.generator);
  llvm::errs() << llvm::formatv(
      "best: kernels sum to {0:f3} ms with mlir, {1:f3} ms with halide",
      mlirV.totalMs, halideV.totalMs);
  if (mixedMs > 0)
    llvm::errs() << llvm::formatv(", {0:f3} ms mixed", mixedMs);
  llvm::errs() << ": keeping " << kept << "\n";
  lf::ArtifactWriter writer;
  if (int rc = addCPUSections(context, *chosen.module, src, cpuTarget,
                              chosen.plan, writer, &chosen.so))
    return rc;
  if (std::string err = writer.write(output); !err.empty())
    return fail(err);
  llvm::outs() << "wrote " << output << ": " << chosen.plan.kernels.size()
               << " kernels (best: " << kept << ")\n";
  return 0;
}

/// The tensor-core precision: --cuda-mma, with auto resolved from the
/// model's storage dtype (f32 stays on the f32 path: TF32 changes its
/// numerics, so it is asked for, not implied).
std::string cudaMmaFor(const Source &src) {
  if (cudaMma != "auto")
    return cudaMma;
  if (sm < 80 || !src.fromModel)
    return "none";
  if (src.config.dtype == "bf16" || src.config.dtype == "f16")
    return src.config.dtype;
  return "none";
}

template <typename WriteText>
int compileCUDA(MLIRContext &context, ModuleOp module, const Source &src,
                const sched::CUDATarget &cudaTarget, WriteText writeText,
                lf::ArtifactWriter *combined = nullptr) {
  PassManager pm(&context);
  if (failed(applyPassManagerCLOptions(pm)))
    return 1;
  mlir::linformer::CUDAPipelineOptions options;
  mlir::linformer::applyCUDAFlags(options);
  // wgmma is an sm_90a instruction: code for sm_90 devices only.
  options.chip =
      "sm_" + std::to_string(sm.getValue()) + (options.wgmma ? "a" : "");
  options.format = emit == Emit::GPU ? "none" : "isa";
  options.mma = cudaMmaFor(src);
  mlir::linformer::buildCUDAPipeline(pm, options);
  if (failed(runWithReproducer(pm, module, "cuda")))
    return 1;
  if (emit == Emit::Artifact)
    return writeCUDAArtifact(context, module, src, cudaTarget, options,
                             combined);
  if (emit == Emit::GPU)
    return writeText([&](raw_ostream &os) { module.print(os); });
  // Each kernel's block size from the plan: the budget ptxas must stay
  // within is the target's registers per block shared by its threads.
  std::map<std::string, PlannedLaunch> launches;
  module.walk([&](func::FuncOp fn) {
    if (auto kernels = fn->getAttrOfType<ArrayAttr>("linformer.kernels"))
      for (Attribute a : kernels) {
        PlannedLaunch launch(cast<DictionaryAttr>(a));
        launches.emplace(launch.name, launch);
      }
  });
  return writeText([&](raw_ostream &os) {
    module.walk([&](gpu::BinaryOp binary) {
      for (Attribute a : binary.getObjects()) {
        auto object = cast<gpu::ObjectAttr>(a);
        os << "// kernel module @" << binary.getName() << ", "
           << object.getTarget() << "\n";
        for (auto &[name, l] : launches)
          os << "// budget @" << name << ": " << l.registerBudget(cudaTarget)
             << " registers per thread, "
             << cudaTarget.staticSharedBytesPerBlock
             << " bytes shared memory (" << l.threads
             << " threads per block, " << l.blocksPerSM << " an SM)\n";
        for (auto &[name, l] : launches)
          if (l.sharedBytes > 0)
            os << "// dynamic shared @" << name << ": " << l.sharedBytes
               << " bytes (budget " << cudaTarget.sharedBytesPerBlock
               << ")\n";
        os << "// target: " << sched::describe(cudaTarget) << "\n"
           << object.getObject().getValue() << "\n";
      }
    });
  });
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  registerPassManagerCLOptions();
  mlir::linformer::registerCUDAFlags();
  cl::ParseCommandLineOptions(argc, argv,
                              "linformer-compile: model -> artifact\n");
  if (target != "cpu" && target != "cuda" && target != "cpu,cuda")
    return fail("target '" + target + "' is not one of cpu, cuda, cpu,cuda");
  // cpu,cuda: one artifact with both; the runtime takes the GPU when it can.
  bool both = target == "cpu,cuda";
  if (both && emit != Emit::Artifact)
    return fail("--target=cpu,cuda makes an artifact only; emit one target's "
                "stages with --target=cpu or --target=cuda");
  sched::CUDATarget cudaTarget;
  if ((target == "cuda" || target == "cpu,cuda") &&
      !sched::knownCUDATarget(sm, cudaTarget))
    return fail("--sm=" + std::to_string(sm) +
                " is not an SM version this compiler knows (70, 75, 80, 86, "
                "89, 90, 100, 120)");
  if (target == "cuda" && emit != Emit::Linformer && emit != Emit::Linalg &&
      emit != Emit::GPU && emit != Emit::PTX && emit != Emit::Artifact)
    return fail("--target=cuda emits linformer, linalg, gpu, ptx or an "
                "artifact (the LLVM stages are the CPU's)");
  if (cudaMma != "auto" && cudaMma != "none" && cudaMma != "tf32" &&
      cudaMma != "bf16" && cudaMma != "f16")
    return fail("--cuda-mma takes auto, none, tf32, bf16 or f16, not '" +
                cudaMma + "'");
  mlir::linformer::CUDAPipelineOptions cudaFlags;
  mlir::linformer::applyCUDAFlags(cudaFlags);
  if (std::string err = mlir::linformer::checkCUDAOptions(cudaFlags);
      !err.empty())
    return fail(err);
  if (target != "cpu" && cudaFlags.wgmma && sm != 90)
    return fail("--cuda-wgmma needs --sm=90 (wgmma is an sm_90a instruction, "
                "which other SMs do not have), not --sm=" +
                std::to_string(sm));
  if (target != "cpu" && cudaMma != "auto" && cudaMma != "none" && sm < 80)
    return fail("--cuda-mma=" + cudaMma +
                " needs sm_80 or later (mma.sync on " + cudaMma +
                " tensor cores), not --sm=" + std::to_string(sm));
  if (target == "cuda" && emit == Emit::Artifact && outputFile.empty())
    return fail("an artifact needs -o FILE.lfa");
  if (target == "cpu" && (emit == Emit::GPU || emit == Emit::PTX))
    return fail("--emit=gpu and --emit=ptx need --target=cuda");
  if (backend != "mlir" && backend != "halide" && backend != "best")
    return fail("--backend takes mlir, halide or best, not '" + backend +
                "'");
  if (backend == "best" &&
      (emit != Emit::Artifact || target != "cpu" || !isJson(inputFile) ||
       autotuneOpt || !scheduleFile.empty()))
    return fail("--backend=best makes a CPU artifact from a model.json "
                "(timing runs it on generated weights), without --autotune "
                "or --schedule");
  if (backend != "mlir" && !mlir::linformer::haveHalide())
    return fail("--backend=" + backend + ": this compiler was built without "
                "Halide (scripts/setup installs it into build/halide-venv)");
  if (backend == "best" && outputFile.empty())
    return fail("an artifact needs -o FILE.lfa");
  if (backend == "halide") {
    if (target != "cpu")
      return fail("--backend=halide generates CPU kernels; it takes "
                  "--target=cpu, not --target=" + target);
    if (emit != Emit::Linformer && emit != Emit::Linalg &&
        emit != Emit::Halide && emit != Emit::Artifact)
      return fail("--backend=halide emits linformer, linalg, halide or an "
                  "artifact");
    if (autotuneOpt || !scheduleFile.empty() ||
        printSchedule.getNumOccurrences())
      return fail("--backend=halide: schedules come from Halide's "
                  "autoscheduler; --autotune, --schedule and --print-schedule "
                  "are for --backend=mlir");
    if (emit == Emit::Artifact && outputFile.empty())
      return fail("an artifact needs -o FILE.lfa");
  } else if (emit == Emit::Halide) {
    return fail("--emit=halide needs --backend=halide");
  }

  DialectRegistry registry;
  registry.insert<mlir::linformer::LinformerDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  // gpu-module-to-binary translates the kernels (NVVM) to LLVM IR.
  registerAllToLLVMIRTranslations(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // Read the input.
  std::string errorMessage;
  auto file = openInputFile(inputFile, &errorMessage);
  if (!file)
    return fail(errorMessage);
  Source src;
  src.fromModel = isJson(inputFile);
  if (src.fromModel) {
    if (std::string err =
            lf::parseModelConfig(file->getBuffer().str(), src.config);
        !err.empty())
      return fail(inputFile + ": " + err);
    if (!randomWeights.empty()) {
      if (int rc = writeRandomWeights(src.config, randomWeights))
        return rc;
      if (outputFile.empty())
        return 0;
    }
  } else {
    if (!randomWeights.empty())
      return fail("--random-weights needs a model.json input");
    src.text = file->getBuffer().str();
  }
  // Diagnostics on a .mlir input print as FILE:LINE:COL with the source
  // line (the module is parsed from `src.text` under the input's name).
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(src.text, inputFile),
      llvm::SMLoc());
  SourceMgrDiagnosticHandler diagnostics(sourceMgr, &context);
  if (int rc = readEntry(context, src))
    return rc;
  OwningOpRef<ModuleOp> module = buildModule(context, src);
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
  if (emit == Emit::Linalg) {
    PassManager pm(&context);
    if (failed(applyPassManagerCLOptions(pm)))
      return 1;
    mlir::linformer::buildLinalgPipeline(pm);
    if (failed(runWithReproducer(pm, *module, "linalg")))
      return 1;
    return writeText([&](raw_ostream &os) { module->print(os); });
  }

  if (target == "cuda")
    return compileCUDA(context, *module, src, cudaTarget, writeText);
  if (backend == "halide")
    return compileHalide(context, *module, src, writeText, output);
  if (backend == "best")
    return compileBest(context, src, argv[0], output);

  sched::CPUTarget cpuTarget = chooseTarget(*module);
  std::string schedulePath = scheduleFile;
  std::map<std::string, TunedTimes> times;
  // Temporaries (the autotuner's variants) live in a private directory.
  llvm::SmallString<128> workDir;
  llvm::scope_exit cleanup([&] {
    if (!workDir.empty())
      llvm::sys::fs::remove_directories(workDir);
  });
  if (autotuneOpt) {
    if (!scheduleFile.empty())
      return fail("--autotune and --schedule exclude each other: a schedule "
                  "file fixes what the autotuner would search");
    if (!src.fromModel)
      return fail("--autotune needs a model.json input: timing a candidate "
                  "runs the model on generated weights and inputs");
    if (std::error_code ec =
            llvm::sys::fs::createUniqueDirectory("linformer-autotune",
                                                 workDir))
      return fail("cannot create a temporary directory: " + ec.message());
    if (int rc = autotune(context, src, cpuTarget, argv[0], workDir,
                          schedulePath, times))
      return rc;
  }

  if (failed(lowerModule(context, *module, cpuTarget, schedulePath)))
    return 1;
  Plan plan;
  if (!readPlan(*module, src.entry.name, cpuTarget, times, plan))
    return fail("the pipeline produced no dispatch plan for @" +
                src.entry.name);
  if (printSchedule.getNumOccurrences()) {
    if (printSchedule == "table")
      llvm::outs() << sched::formatScheduleTable(plan.schedules);
    else if (printSchedule.empty() || printSchedule == "json")
      llvm::outs() << sched::scheduleFileToJson(plan.schedules);
    else
      return fail("--print-schedule takes 'json' (the default) or 'table', "
                  "not '" + printSchedule + "'");
    if (output.empty())
      return 0;
  }
  if (emit == Emit::LLVM)
    return writeText([&](raw_ostream &os) { module->print(os); });

  mlir::linformer::CPUTargetOptions targetOptions = llvmTargetOf(cpuTarget);
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
  if (output.empty())
    return fail("an artifact needs -o FILE.lfa");
  if (both) {
    lf::ArtifactWriter writer;
    if (int rc =
            addCPUSections(context, *module, src, cpuTarget, plan, writer))
      return rc;
    OwningOpRef<ModuleOp> gpuModule = buildModule(context, src);
    if (!gpuModule)
      return 1;
    if (int rc = compileCUDA(context, *gpuModule, src, cudaTarget, writeText,
                             &writer))
      return rc;
    if (std::string err = writer.write(output); !err.empty())
      return fail(err);
  } else if (int rc = writeArtifact(context, *module, src, cpuTarget, plan,
                                    output)) {
    return rc;
  }
  llvm::outs() << "wrote " << output << ": " << plan.kernels.size()
               << " kernels, " << src.entry.argNames.size() + 1 +
                                      plan.intermediates.size()
               << " buffers\n";
  return 0;
}
