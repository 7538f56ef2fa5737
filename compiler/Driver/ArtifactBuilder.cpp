//===- ArtifactBuilder.cpp - dispatch plan -> manifest + sections ---------===//
//
// What an artifact records: the entry's buffers (from the source signature:
// the lowered entry takes plain pointers), the dispatch plan the pipeline
// wrote on the entry, every kernel's schedule record, and the hash of the
// code it carries.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/DriverImpl.h"

#include "compiler/Schedule/ScheduleAttrs.h"
#include "lib/Support/Sha256.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"

#include <set>

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;

bool Compile::readPlan(ModuleOp module, const sched::CPUTarget &target,
                       const std::map<std::string, TunedTimes> &times,
                       Plan &plan) {
  // The entry is an llvm.func after the CPU pipeline, a func.func after the
  // Halide one.
  DispatchPlanAttr dispatch =
      getDispatchPlan(module.lookupSymbol(src.entry.name));
  if (!dispatch)
    return false;
  plan.kernels.assign(dispatch.getKernels().begin(),
                      dispatch.getKernels().end());
  plan.intermediates.assign(dispatch.getIntermediates().begin(),
                            dispatch.getIntermediates().end());
  plan.packedSequences = dispatch.getPackedSequences();
  plan.sequences.assign(dispatch.getSequences().begin(),
                        dispatch.getSequences().end());
  plan.schedules.target = target;
  plan.schedules.hasTarget = true;
  plan.printed = plan.schedules;
  std::set<std::string> splitPrinted;
  for (KernelLaunchAttr launch : plan.kernels) {
    if (KernelShapeAttr info = launch.getShape();
        info && info.getSplitOf() &&
        splitPrinted.insert(info.getSplitOf().getKey().str()).second) {
      sched::ScheduleRecord whole;
      if (kernelRecord(info.getSplitOf(), info.getSplitSchedule(), target,
                       whole))
        plan.printed.kernels.push_back(whole);
    }
    sched::ScheduleRecord record;
    std::string json = "{}";
    if (kernelRecord(launch.getShape(), launch.getSchedule(), target,
                     record)) {
      record.kernel = launch.getName().str();
      record.workgroups = launch.getWorkgroups();
      if (auto it = times.find(record.key); it != times.end()) {
        record.modelMs = it->second.modelMs;
        record.tunedMs = it->second.tunedMs;
      }
      json = sched::recordToJson(record);
      plan.schedules.kernels.push_back(record);
      plan.printed.kernels.push_back(record);
    }
    plan.scheduleJson.push_back(json);
  }
  return true;
}

/// A manifest for `target` with what every artifact records of the source.
lf::Manifest Compile::startManifest(lf::ManifestTarget target) {
  lf::Manifest manifest;
  manifest.compilerVersion = kCompilerVersion;
  manifest.target = std::move(target);
  manifest.entry = src.entry.name;
  if (src.fromModel)
    manifest.modelJson = lf::modelConfigJson(src.config);
  return manifest;
}

/// Output buffer names: "y" (a model) or "result" (a module) for a single
/// result, else numbered.
static std::string resultName(const Source &src, unsigned index,
                              unsigned count) {
  if (src.fromModel)
    return count == 1 ? "y" : "y" + std::to_string(index);
  return count == 1 ? "result" : "result" + std::to_string(index);
}

/// The manifest's buffers: the entry's arguments in order (the output is
/// the appended last argument), then the plan's intermediates. Types come
/// from the source signature (the lowered entry takes plain pointers). An
/// output is a sequence (rows past a length are padding) when the plan
/// lists its out-parameter among the `sequences`.
llvm::Error Compile::addBuffers(ArrayRef<int64_t> intermediates,
                                ArrayRef<int64_t> sequences,
                                lf::Manifest &manifest) {
  const EntryInfo &entry = src.entry;
  OwningOpRef<ModuleOp> original = buildModule();
  if (!original)
    return diagnosed("the input could not be built");
  auto sourceFn = original->lookupSymbol<func::FuncOp>(entry.name);
  for (unsigned i = 0; i < sourceFn.getNumArguments(); ++i) {
    auto type = cast<RankedTensorType>(sourceFn.getArgument(i).getType());
    lf::ManifestBuffer b;
    b.name = entry.argNames[i];
    b.kind = entry.argKinds[i];
    if (!toDType(type.getElementType(), b.dtype))
      return makeError("argument " + std::to_string(i) +
                       " has an element type the runtime cannot take");
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    if (static_cast<int>(i) == entry.paddingArg)
      b.role = entry.paddingRole;
    if (auto parts = sourceFn.getArgAttrOfType<IntegerAttr>(
            i, kSequenceSplitArgAttrName))
      b.sequenceSplit = parts.getInt();
    manifest.buffers.push_back(b);
  }
  for (auto [i, t] : llvm::enumerate(sourceFn.getResultTypes())) {
    auto type = cast<RankedTensorType>(t);
    lf::ManifestBuffer b;
    b.name = resultName(src, unsigned(i), sourceFn.getNumResults());
    b.kind = lf::BufferKind::Output;
    toDType(type.getElementType(), b.dtype);
    b.shape.assign(type.getShape().begin(), type.getShape().end());
    b.sequence = llvm::is_contained(
        sequences, int64_t(sourceFn.getNumArguments() + i));
    manifest.buffers.push_back(b);
  }
  for (auto [i, bytes] : llvm::enumerate(intermediates)) {
    lf::ManifestBuffer b;
    b.name = "tmp" + std::to_string(i);
    b.kind = lf::BufferKind::Intermediate;
    b.bytes = bytes;
    manifest.buffers.push_back(b);
  }
  return llvm::Error::success();
}

void Compile::nameBuffers(lf::Manifest &manifest,
                          ArrayRef<KernelLaunchAttr> kernels) {
  // What an initializer writes (panels of a weight, E's row sums) is made
  // once per session and kept: a constant ("const0", ...), not an
  // intermediate of every run ("tmp0", ...; numbered apart, so that a plan
  // without initializers names its buffers as before).
  for (KernelLaunchAttr k : kernels)
    for (int64_t id : k.getInitializer() ? k.getWrites() : ArrayRef<int64_t>{})
      if (size_t(id) < manifest.buffers.size() &&
          manifest.buffers[size_t(id)].kind == lf::BufferKind::Intermediate)
        manifest.buffers[size_t(id)].kind = lf::BufferKind::Constant;
  int64_t temporaries = 0, constants = 0;
  for (lf::ManifestBuffer &b : manifest.buffers) {
    if (b.kind == lf::BufferKind::Intermediate)
      b.name = "tmp" + std::to_string(temporaries++);
    else if (b.kind == lf::BufferKind::Constant)
      b.name = "const" + std::to_string(constants++);
  }
}

/// The CPU sections of an artifact: the lowered module's kernels as a
/// shared object (or `prebuilt`'s bytes) plus the manifest, added to
/// `writer`.
llvm::Error Compile::addCPUSections(ModuleOp module,
                                    const sched::CPUTarget &target,
                                    const Plan &plan,
                                    lf::ArtifactWriter &writer,
                                    const std::string *prebuilt) {
  CPUTargetOptions targetOptions = llvmTargetOf(target);
  lf::Manifest manifest =
      startManifest({"cpu", targetOptions.cpu, targetOptions.features,
                     sched::toJson(target)});
  if (llvm::Error err =
          addBuffers(plan.intermediates, plan.sequences, manifest))
    return err;
  manifest.packedSequences = plan.packedSequences;
  // What the contractions multiply: --precision (auto resolved for the
  // target), which verify() allows only for the MLIR CPU kernels.
  manifest.products = cpuProducts(target);
  for (auto [i, launch] : llvm::enumerate(plan.kernels)) {
    lf::ManifestKernel k;
    k.symbol = launch.getName().str();
    k.workgroups = launch.getWorkgroups();
    k.buffers.assign(launch.getBuffers().begin(), launch.getBuffers().end());
    k.scheduleJson = plan.scheduleJson[i];
    if (StringAttr generator = launch.getGenerator())
      k.generator = generator.str();
    k.initializer = launch.getInitializer();
    k.allReduce = launch.getAllReduce();
    k.gatherBlocks = launch.getGather();
    // The length rule (the code follows it: K_abi). The runtime evaluates
    // it with the model's lengths input.
    if (TokenRowsAttr rows = launch.getRows()) {
      if (src.entry.paddingRole != lf::BufferRole::Lengths)
        return makeError("kernel '" + k.symbol +
                         "' has a length rule (its entry marks an argument "
                         "linformer.lengths), but the artifact has no "
                         "lengths input for the runtime to fill; compile "
                         "from a model.json with \"padding\": \"lengths\"");
      k.rowsGrid.assign(rows.getGrid().asArrayRef().begin(),
                        rows.getGrid().asArrayRef().end());
      k.rowsBatch = rows.getBatch();
      k.rowsRow = rows.getRow();
      k.rowsTile = rows.getTile();
    }
    manifest.kernels.push_back(k);
  }
  nameBuffers(manifest, plan.kernels);
  // The object first: the manifest records its hash.
  std::string so;
  if (prebuilt)
    so = *prebuilt;
  else if (failed(compileToSharedObject(module, targetOptions, so)))
    return diagnosed("the kernels could not be compiled to a shared object");
  manifest.codeSha256 = {{lf::kCpuObjectSection, lf::sha256Hex(so)}};
  manifest.formatVersion = lf::formatVersionFor(manifest);
  std::string manifestText;
  if (std::string err = lf::serializeManifest(manifest, manifestText);
      !err.empty())
    return makeError(err);
  if (std::string err = writer.addSection(lf::kManifestSection, manifestText);
      !err.empty())
    return makeError(err);
  if (std::string err = writer.addSection(lf::kCpuObjectSection, std::move(so));
      !err.empty())
    return makeError(err);
  return llvm::Error::success();
}

/// A CPU artifact at `path` (the autotuner's and --backend=best's
/// candidates).
llvm::Error Compile::writeArtifact(ModuleOp module,
                                   const sched::CPUTarget &target,
                                   const Plan &plan, const std::string &path) {
  lf::ArtifactWriter writer;
  if (llvm::Error err = addCPUSections(module, target, plan, writer))
    return err;
  if (std::string err = writer.write(path); !err.empty())
    return makeError(err);
  return llvm::Error::success();
}
