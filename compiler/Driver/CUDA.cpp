//===- CUDA.cpp - --target=cuda: PTX, cubin and the CUDA artifact ---------===//
//
// The CUDA pipeline (compiler/Pipelines), then the GPU IR, every kernel's
// PTX with the budgets ptxas is held to, or an artifact: the one kernel
// module's PTX, its cubin when ptxas is found (Target/CUDA), and a manifest
// with the launch plan the pipeline recorded on the entry
// (Codegen/CUDA/PlanLaunches.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/CUDA/Contractions.h"
#include "compiler/Driver/DriverImpl.h"

#include "compiler/Target/CUDA/CUDATarget.h"
#include "lib/Support/Sha256.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"

#include <set>

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;

namespace {

/// What the launch plan (linformer-cuda-plan-launches) says of one kernel
/// that sets ptxas's budget: its block's threads, its dynamic shared
/// memory and the blocks an SM is meant to hold.
struct PlannedLaunch {
  std::string name;
  int64_t threads = 1, sharedBytes = 0, blocksPerSM = 1;

  explicit PlannedLaunch(KernelLaunchAttr launch)
      : name(launch.getName().str()), threads(launch.threads()),
        sharedBytes(launch.getShared()),
        blocksPerSM(launch.getBlocksPerSm()) {}

  /// Registers per thread ptxas may use.
  int64_t registerBudget(const sched::CUDATarget &t) const {
    return t.registerBudget(threads, blocksPerSM);
  }
};

} // namespace

/// The tensor-core precision: --cuda-mma, with auto resolved from the
/// model's storage dtype (f32 stays on the f32 path: TF32 changes its
/// numerics, so it is asked for, not implied).
std::string Compile::cudaMma() {
  if (options.cudaMma != CudaMma::Auto)
    return spelling(options.cudaMma).str();
  if (options.sm < 80 || !src.fromModel)
    return "none";
  if (src.config.dtype == "bf16" || src.config.dtype == "f16")
    return src.config.dtype;
  return "none";
}

/// --target=cuda's artifact: the one kernel module's PTX, its cubin when
/// ptxas is found, and a manifest with the launch plan the pipeline recorded
/// on the entry (CUDAPlanLaunches.cpp).
llvm::Error Compile::writeCUDAArtifact(ModuleOp module,
                                       const sched::CUDATarget &cudaTarget,
                                       const CUDAPipelineOptions &pipeline,
                                       lf::ArtifactWriter *combined) {
  DispatchPlanAttr plan =
      getDispatchPlan(module.lookupSymbol<func::FuncOp>(src.entry.name));
  if (!plan)
    return makeError("the CUDA pipeline produced no launch plan for @" +
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
    return makeError("the CUDA pipeline produced " + std::to_string(objects) +
                " kernel modules; an artifact carries exactly one");

  lf::Manifest manifest = startManifest(
      {"cuda", pipeline.chip, pipeline.features, sched::toJson(cudaTarget)});
  if (llvm::Error err = addBuffers(plan.getIntermediates(),
                                   plan.getSequences(), manifest))
    return err;
  manifest.packedSequences = plan.getPackedSequences();
  for (KernelLaunchAttr a : plan.getKernels()) {
    lf::ManifestKernel k;
    k.symbol = a.getName().str();
    k.workgroups = a.getWorkgroups();
    k.buffers.assign(a.getBuffers().begin(), a.getBuffers().end());
    k.grid.assign(a.getGrid().begin(), a.getGrid().end());
    k.block.assign(a.getBlock().begin(), a.getBlock().end());
    k.sharedBytes = a.getShared();
    // The length rule over block x: the runtime launches the blocks up to
    // the last one that holds a real token.
    if (TokenRowsAttr rows = a.getRows()) {
      k.rowsGrid.assign(rows.getGrid().asArrayRef().begin(),
                        rows.getGrid().asArrayRef().end());
      k.rowsBatch = rows.getBatch();
      k.rowsRow = rows.getRow();
      k.rowsTile = rows.getTile();
    }
    // A length variant: launched only for the longest lengths it covers.
    k.maxLength.assign(a.getMaxLength().begin(), a.getMaxLength().end());
    // Run once, when a session is created (linformer-cuda-plan-launches
    // {initializers}): what it writes is a constant.
    k.initializer = a.getInitializer();
    // What it may write (the rest it only reads): the runtime's graphs
    // order kernels by it.
    k.writes.assign(a.getWrites().begin(), a.getWrites().end());
    k.hasWrites = true;
    // What the schedule allows this launch: the budget ptxas is held to.
    PlannedLaunch launch(a);
    llvm::json::Object schedule{
        {"source", "cuda-first-path"},
        {"mma", pipeline.mma},
        {"threads", launch.threads},
        {"blocks_per_sm", launch.blocksPerSM},
        {"register_budget", launch.registerBudget(cudaTarget)},
        {"static_shared_budget", cudaTarget.staticSharedBytesPerBlock},
        {"dynamic_shared", k.sharedBytes},
        {"dynamic_shared_budget", cudaTarget.sharedBytesPerBlock}};
    if (k.sharedBytes > cudaTarget.sharedBytesPerBlock)
      return makeError("kernel '" + k.symbol + "' needs " +
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
  nameBuffers(manifest, plan.getKernels());
  manifest.formatVersion = lf::formatVersionFor(manifest);

  // The cubin, from the toolkit's ptxas (Target/CUDA).
  std::string ptxas = ptxasPath(options.cudaToolkit);
  std::string cubin;
  std::string cubinSection = lf::cudaCubinSection(pipeline.chip);
  if (llvm::sys::fs::can_execute(ptxas)) {
    llvm::Expected<std::string> assembled =
        assemblePTX(ptxas, ptx, pipeline.chip);
    if (!assembled)
      return assembled.takeError();
    cubin = std::move(*assembled);
  } else {
    log << "linformer-compile: note: no ptxas at " << ptxas
        << "; the artifact carries PTX only, which the driver compiles when "
           "the module is loaded\n";
  }
  manifest.codeSha256 = {{lf::kCudaPtxSection, lf::sha256Hex(ptx)}};
  if (!cubin.empty())
    manifest.codeSha256.push_back({cubinSection, lf::sha256Hex(cubin)});
  std::string manifestText;
  if (std::string err = lf::serializeManifest(manifest, manifestText);
      !err.empty())
    return makeError(err);
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
      return makeError(err);
  }
  if (!combined)
    if (llvm::Error err = finishArtifact(writer))
      return err;
  status() << (combined ? "cuda part" : "wrote " + outputName()) << ": "
           << manifest.kernels.size() << " CUDA kernels for " << pipeline.chip
           << ", " << manifest.buffers.size() << " buffers ("
           << (cubin.empty() ? "PTX only" : "PTX and cubin") << ")\n";
  return llvm::Error::success();
}

/// Warns when CUDA schedule file `path` was printed for another chip than
/// `chip`: its schedules fit the contractions (the pipeline checks that),
/// but were chosen for another GPU's SMs and shared memory. A file that
/// cannot be read or parsed is the pipeline's error to report.
void Compile::warnOtherTarget(ModuleOp module, StringRef path,
                              StringRef chip) {
  if (path.empty())
    return;
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer)
    return;
  llvm::Expected<llvm::json::Value> json =
      llvm::json::parse((*buffer)->getBuffer());
  if (!json) {
    llvm::consumeError(json.takeError());
    return;
  }
  const llvm::json::Object *top = json->getAsObject();
  std::optional<StringRef> target =
      top ? top->getString("target") : std::nullopt;
  if (target && *target != chip)
    emitWarning(module.getLoc())
        << path << " was printed for " << *target << ", and this compile is "
        << "for " << chip << ": its schedules were chosen for another GPU";
}

/// Every contraction's CUDA schedule (the `linformer.cuda_schedules` that
/// linformer-cuda-select-schedules left on the entry) as a table, or as a
/// schedule file that --schedule takes back (one record a key).
void Compile::printCUDASchedules(ModuleOp module,
                                 const sched::CUDATarget &cudaTarget,
                                 StringRef chip, bool table) {
  auto fn = module.lookupSymbol<func::FuncOp>(src.entry.name);
  auto records =
      fn ? fn->getAttrOfType<ArrayAttr>(kCUDASchedulesAttrName) : ArrayAttr();
  auto text = [](Attribute a) {
    std::string s;
    llvm::raw_string_ostream os(s);
    a.print(os);
    return s;
  };
  if (table) {
    out << "target: " << sched::describe(cudaTarget) << "\n";
    out << llvm::formatv("{0,-4} {1,-9} {2,-9} {3}\n", "#", "source",
                         "key", "schedule");
    for (auto [i, a] : llvm::enumerate(records ? records.getValue()
                                               : ArrayRef<Attribute>())) {
      auto r = cast<DictionaryAttr>(a);
      out << llvm::formatv("{0,-4} {1,-9} {2}\n     {3}\n", i,
                           r.getAs<StringAttr>("source").getValue(),
                           r.getAs<StringAttr>("key").getValue(),
                           text(r.get("schedule")));
      if (auto splits = r.getAs<DenseI64ArrayAttr>("length_splits")) {
        out << "     shorter runs:";
        for (int64_t j = 0; j + 1 < splits.size(); j += 2)
          out << (j ? "," : "") << " <= " << splits[j] << " tokens split "
              << splits[j + 1];
        out << "\n";
      }
    }
    return;
  }
  llvm::json::Array kernels;
  std::set<std::string> seen;
  if (records)
    for (Attribute a : records) {
      auto r = cast<DictionaryAttr>(a);
      std::string key = r.getAs<StringAttr>("key").getValue().str();
      if (!seen.insert(key).second)
        continue;
      llvm::json::Object record{
          {"key", key},
          {"schedule", text(r.get("schedule"))},
          {"source", r.getAs<StringAttr>("source").getValue().str()}};
      if (auto splits = r.getAs<DenseI64ArrayAttr>("length_splits")) {
        llvm::json::Array pairs;
        for (int64_t j = 0; j + 1 < splits.size(); j += 2)
          pairs.push_back(llvm::json::Array{splits[j], splits[j + 1]});
        record["length_splits"] = std::move(pairs);
      }
      kernels.push_back(std::move(record));
    }
  llvm::json::Object file{{"format", cuda::kCUDAScheduleFormat.str()},
                          {"target", chip.str()},
                          {"kernels", std::move(kernels)}};
  out << llvm::formatv("{0:2}", llvm::json::Value(std::move(file))) << "\n";
}

/// --target=cuda: the CUDA pipeline, then the GPU IR, every kernel's PTX
/// (the `gpu.binary` objects, format isa) or the artifact; with cudaOnHost
/// its mapped loop nest lowered for this CPU, as a shared object with the
/// entry function.
llvm::Error Compile::compileCUDA(ModuleOp module,
                                 const sched::CUDATarget &cudaTarget,
                                 lf::ArtifactWriter *combined) {
  const Emit emit = options.emit;
  PassManager pm(&context);
  if (failed(applyFlags(pm)))
    return diagnosed("the pass manager's options");
  CUDAPipelineOptions pipeline;
  options.applyCUDAKnobs(pipeline);
  // wgmma is an sm_90a instruction: code for sm_90 devices only.
  pipeline.chip =
      "sm_" + std::to_string(options.sm) + (pipeline.wgmma ? "a" : "");
  pipeline.format = emit == Emit::GPU ? "none" : "isa";
  pipeline.mma = cudaMma();
  pipeline.scheduleFile = absolutePath(options.scheduleFile);
  pipeline.onHost = options.cudaOnHost;
  pipeline.mmaExact = options.cudaMmaExact;
  if (!options.cudaOnHost)
    warnOtherTarget(module, options.scheduleFile, pipeline.chip);
  buildCUDAPipeline(pm, pipeline);
  if (llvm::Error err = runWithReproducer(
          pm, module, options.cudaOnHost ? "cuda-host" : "cuda"))
    return err;
  if (options.cudaOnHost) {
    // The length marks have been read (the token loops); LLVM has no use
    // for them (the CPU pipeline's outlining drops them the same way).
    module.walk([](LLVM::LLVMFuncOp fn) {
      for (unsigned i = 0; i < fn.getNumArguments(); ++i) {
        fn.removeArgAttr(i, kSequenceArgAttrName);
        fn.removeArgAttr(i, kLengthsArgAttrName);
        fn.removeArgAttr(i, kPackedSequenceArgAttrName);
      }
    });
    CPUTargetOptions target;
    target.cpu = options.cpu;
    target.features = options.cpuFeatures;
    if (failed(compileToSharedObject(module, target,
                                     StringRef(options.outputPath))))
      return diagnosed(
          "the host nest could not be compiled to a shared object");
    return llvm::Error::success();
  }
  if (options.printSchedule) {
    printCUDASchedules(module, cudaTarget, pipeline.chip,
                       *options.printSchedule == "table");
    if (options.outputPath.empty() && !combined)
      return llvm::Error::success();
  }
  if (emit == Emit::Artifact)
    return writeCUDAArtifact(module, cudaTarget, pipeline, combined);
  if (emit == Emit::GPU)
    return writeText([&](raw_ostream &os) { module.print(os); });
  // Each kernel's block size from the plan: the budget ptxas must stay
  // within is the target's registers per block shared by its threads.
  std::map<std::string, PlannedLaunch> launches;
  module.walk([&](func::FuncOp fn) {
    if (DispatchPlanAttr plan = getDispatchPlan(fn))
      for (KernelLaunchAttr a : plan.getKernels()) {
        PlannedLaunch launch(a);
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

