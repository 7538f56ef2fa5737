//===- Best.cpp - the Halide generator and --backend=best -----------------===//
//
// --backend=halide compiles the CPU pipeline's kernels (untiled) through
// Halide with one of its autoschedulers (compiler/Codegen/Halide);
// --backend=best compiles both generators, times both artifacts through the
// runtime on this machine and keeps the faster, per kernel where the two
// plans can be mixed (docs/Rationale.md, "Halide").
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/DriverImpl.h"

#include "compiler/Schedule/ScheduleAttrs.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;
using namespace mlir::linformer;
using namespace mlir::linformer::driver;

/// The Halide generator's options for a target (its features as LLVM
/// resolved them, the autoscheduler asked for, the target's cores).
static HalideTargetOptions halideOptionsOf(const sched::CPUTarget &t,
                                           const CPUTargetOptions &llvmTarget,
                                           const std::string &autoscheduler) {
  HalideTargetOptions options;
  options.features = llvmTarget.features;
  options.autoscheduler = autoscheduler;
  options.cores = t.cores;
  return options;
}

/// The Halide generator on `module`: its pipeline, then every kernel
/// through Halide (compiler/Codegen/Halide). The shared object's bytes go
/// to `so`, the dispatch plan to `plan`; `describe` gets each kernel's
/// Funcs and schedule if set.
llvm::Error Compile::lowerWithHalide(ModuleOp module,
                                     const sched::CPUTarget &cpuTarget,
                                     std::string &so, Plan &plan,
                                     llvm::raw_ostream *describe) {
  module->setAttr(mlir::linformer::kTargetAttrName,
                  mlir::linformer::toAttr(&context, cpuTarget));
  PassManager pm(&context);
  if (failed(applyFlags(pm)))
    return diagnosed("the pass manager's options");
  mlir::linformer::CPUPipelineOptions pipelineOptions;
  setPipelineOptions(pipelineOptions, "");
  pipelineOptions.halide = true;
  mlir::linformer::buildCPUPipeline(pm, pipelineOptions);
  if (llvm::Error err = runWithReproducer(pm, module, "halide-pipeline"))
    return err;
  mlir::linformer::CPUTargetOptions targetOptions = llvmTargetOf(cpuTarget);
  HalideTargetOptions halide =
      halideOptionsOf(cpuTarget, targetOptions, options.halideAutoscheduler);
  halide.describe = describe;
  if (failed(compileHalideToSharedObject(module, halide, so)))
    return diagnosed("the Halide kernels could not be compiled");
  if (!readPlan(module, cpuTarget, {}, plan))
    return makeError("the Halide pipeline produced no dispatch plan for @" +
                     src.entry.name);
  return llvm::Error::success();
}

/// --backend=halide: a CPU artifact of Halide kernels.
llvm::Error Compile::compileHalide(ModuleOp module) {
  const Emit emit = options.emit;
  sched::CPUTarget cpuTarget = chooseTarget(module);
  std::string description;
  llvm::raw_string_ostream describe(description);
  std::string so;
  Plan plan;
  if (llvm::Error err =
          lowerWithHalide(module, cpuTarget, so, plan,
                          emit == Emit::Halide ? &describe : nullptr))
    return err;
  if (emit == Emit::Halide)
    return writeText([&](raw_ostream &os) { os << description; });
  lf::ArtifactWriter writer;
  if (llvm::Error err = addCPUSections(module, cpuTarget, plan, writer, &so))
    return err;
  if (llvm::Error err = finishArtifact(writer))
    return err;
  status() << "wrote " << outputName() << ": " << plan.kernels.size()
           << " kernels (Halide, " << options.halideAutoscheduler << "), "
           << src.entry.argNames.size() + 1 + plan.intermediates.size()
           << " buffers\n";
  return llvm::Error::success();
}

/// One artifact with each kernel from the generator that ran it faster.
/// The two plans have the same kernels but not the same intermediates (the
/// untiled kernels bufferize differently), so the Halide plan's buffers are
/// mapped onto the MLIR plan's through what each kernel writes; a Halide kernel's buffer that
/// maps to nothing (a fused producer's, which it never touches) gets a
/// fresh intermediate. The mix is run against the reference and timed;
/// on any doubt it is not used (the reason is returned).
std::string Compile::mixPlans(const sched::CPUTarget &cpuTarget, const Plan &mlirPlan,
                     const Plan &halidePlan,
                     const std::map<std::string, double> &mlirMs,
                     const std::map<std::string, double> &halideMs,
                     ModuleOp mlirModule, ModuleOp halideModule,
                     StringRef workDir, const std::string &weights,
                     std::string &so, Plan &mixed,
                     std::set<std::string> &halideKernels, double &mixedMs) {
  if (mlirPlan.kernels.size() != halidePlan.kernels.size())
    return "the two plans have different kernels";
  int64_t numFixed = static_cast<int64_t>(src.entry.argNames.size()) + 1;
  std::map<int64_t, int64_t> toMlir;
  for (size_t i = 0; i < mlirPlan.kernels.size(); ++i) {
    KernelLaunchAttr m = mlirPlan.kernels[i], h = halidePlan.kernels[i];
    std::string name = m.getName().str();
    if (m.getName() != h.getName())
      return "kernel " + std::to_string(i) + " has two names";
    ArrayRef<int64_t> mw = m.getWrites(), hw = h.getWrites();
    if (mw.size() != 1 || hw.size() != 1)
      return name + " writes more than one buffer";
    auto [it, inserted] = toMlir.emplace(hw[0], mw[0]);
    if ((!inserted && it->second != mw[0]) ||
        (hw[0] < numFixed && hw[0] != mw[0]))
      return name + "'s output is another buffer in the two plans";
    auto hm = halideMs.find(name), mm = mlirMs.find(name);
    bool faster = hm != halideMs.end() && mm != mlirMs.end() &&
                  hm->second < mm->second;
    if (options.bestHalideKernels.empty()
            ? faster
            : llvm::is_contained(options.bestHalideKernels, name))
      halideKernels.insert(name);
  }
  if (halideKernels.empty())
    return "no kernel is faster under Halide";
  mixed.intermediates = mlirPlan.intermediates;
  mixed.sequences = mlirPlan.sequences;
  mixed.schedules = mlirPlan.schedules;
  for (size_t i = 0; i < mlirPlan.kernels.size(); ++i) {
    KernelLaunchAttr m = mlirPlan.kernels[i], h = halidePlan.kernels[i];
    if (!halideKernels.count(m.getName().str())) {
      mixed.kernels.push_back(m);
      mixed.scheduleJson.push_back(mlirPlan.scheduleJson[i]);
      continue;
    }
    SmallVector<int64_t> bound;
    for (int64_t id : h.getBuffers()) {
      if (id < numFixed) {
        bound.push_back(id);
      } else if (auto it = toMlir.find(id); it != toMlir.end()) {
        bound.push_back(it->second);
      } else {
        bound.push_back(numFixed + mixed.intermediates.size());
        mixed.intermediates.push_back(halidePlan.intermediates[id - numFixed]);
        toMlir[id] = numFixed + mixed.intermediates.size() - 1;
      }
    }
    mixed.kernels.push_back(h.withBuffers(bound));
    mixed.scheduleJson.push_back(halidePlan.scheduleJson[i]);
  }

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
  HalideTargetOptions halide =
      halideOptionsOf(cpuTarget, targetOptions, options.halideAutoscheduler);
  halide.only = halideKernels;
  halide.extraInputs = {object};
  if (failed(compileHalideToSharedObject(halideModule, halide, so))) {
    so.clear();
    return "the mixed object did not link";
  }
  // Checked against the reference, and timed.
  std::string base = (workDir + "/mixed").str();
  lf::ArtifactWriter writer;
  if (llvm::Error err =
          addCPUSections(mlirModule, cpuTarget, mixed, writer, &so)) {
    llvm::consumeError(std::move(err));
    so.clear();
    return "the mixed artifact could not be written";
  }
  if (!writer.write(base + ".lfa").empty()) {
    so.clear();
    return "the mixed artifact could not be written";
  }
  std::map<std::string, double> ms;
  if (std::string e = timeArtifact(base + ".lfa", weights, base,
                                   cpuTarget.cores, "symbol", ms,
                                   /*check=*/true);
      !e.empty()) {
    so.clear();
    return "the mixed artifact failed: " + e;
  }
  for (auto &[symbol, t] : ms)
    mixedMs += t;
  return "";
}

/// --backend=best: the artifacts of both generators, timed through the
/// runtime on this machine, and the fastest kept: ours as --backend=mlir
/// builds it, ours as Halide's plan has it (no packed weights, padded
/// sequence buffers: the same kernels as Halide's, so that the two mix
/// kernel by kernel), Halide's, and their per-kernel mix. The kept
/// artifact's kernels carry their times in their schedule records
/// (docs/Rationale.md, "Halide").
llvm::Error Compile::compileBest() {
  llvm::SmallString<128> workDir;
  if (std::error_code ec =
          llvm::sys::fs::createUniqueDirectory("linformer-best", workDir))
    return makeError("cannot create a temporary directory: " + ec.message());
  llvm::scope_exit cleanup(
      [&] { llvm::sys::fs::remove_directories(workDir); });
  std::string weights = (workDir + "/weights.safetensors").str();
  if (llvm::Error err = writeRandomWeights(weights, /*quiet=*/true))
    return err;

  struct Variant {
    const char *generator;
    const char *file;
    // Built to mix with Halide's plan (see setPipelineOptions).
    bool mixable;
    OwningOpRef<ModuleOp> module;
    std::string so;
    Plan plan;
    std::map<std::string, double> ms;
    double totalMs = 0;
  };
  Variant variants[3] = {{"mlir", "mlir", false},
                         {"mlir as Halide's plan", "mlir-mixable", true},
                         {"halide", "halide", true}};
  sched::CPUTarget cpuTarget;
  for (Variant &v : variants) {
    // Halide's E X does not stop at the lengths: our E' must write every
    // token for the two to mix.
    mixable = v.mixable;
    v.module = buildModule();
    if (!v.module)
      return diagnosed("the input could not be built");
    cpuTarget = chooseTarget(*v.module);
    if (StringRef(v.file) != "halide") {
      if (llvm::Error err = lowerModule(*v.module, cpuTarget, ""))
        return err;
      if (!readPlan(*v.module, cpuTarget, {}, v.plan))
        return makeError("the pipeline produced no dispatch plan for @" +
                         src.entry.name);
      if (failed(mlir::linformer::compileToSharedObject(
              *v.module, llvmTargetOf(cpuTarget), v.so)))
        return diagnosed("the kernels could not be compiled");
    } else if (llvm::Error err =
                   lowerWithHalide(*v.module, cpuTarget, v.so, v.plan)) {
      return err;
    }
    std::string base = (workDir + "/" + v.file).str();
    lf::ArtifactWriter writer;
    if (llvm::Error err =
            addCPUSections(*v.module, cpuTarget, v.plan, writer, &v.so))
      return err;
    if (std::string err = writer.write(base + ".lfa"); !err.empty())
      return makeError(err);
    log << "best: timing the " << v.generator << " kernels ("
        << v.plan.kernels.size() << ")\n";
    if (std::string err = timeArtifact(base + ".lfa", weights, base,
                                       cpuTarget.cores, "symbol", v.ms);
        !err.empty())
      return makeError("best: " + err);
    for (auto &[symbol, ms] : v.ms)
      v.totalMs += ms;
  }
  mixable = false;
  Variant &wholeV = variants[0], &mlirV = variants[1], &halideV = variants[2];
  Variant *chosen = &wholeV;
  for (Variant &v : variants)
    if (v.totalMs < chosen->totalMs)
      chosen = &v;
  std::string mixedSo;
  Plan mixedPlan;
  std::set<std::string> halideKernels;
  double mixedMs = 0;
  if (std::string why = mixPlans(cpuTarget, mlirV.plan,
                                 halideV.plan, mlirV.ms, halideV.ms,
                                 *mlirV.module, *halideV.module, workDir,
                                 weights, mixedSo, mixedPlan,
                                 halideKernels, mixedMs);
      !why.empty()) {
    log << "best: no per-kernel mix: " << why << "\n";
  } else {
    // What the mix took, so that a test can hold it to the times below.
    log << "best: the mix takes " << halideKernels.size()
        << " kernels from Halide:";
    for (const std::string &name : halideKernels)
      log << " " << name;
    log << "\n";
  }
  // Kernel by kernel, the two plans that have the same kernels.
  log << llvm::formatv("{0,-22} {1,10} {2,10}  faster\n", "kernel", "mlir ms",
                       "halide ms");
  for (KernelLaunchAttr launch : mlirV.plan.kernels) {
    std::string symbol = launch.getName().str();
    auto m = mlirV.ms.find(symbol), h = halideV.ms.find(symbol);
    if (m != mlirV.ms.end() && h != halideV.ms.end())
      log << llvm::formatv("{0,-22} {1,10:f3} {2,10:f3}  {3}\n", symbol,
                           m->second, h->second,
                           h->second < m->second ? "halide" : "mlir");
  }
  bool mixed = !mixedSo.empty() && (!options.bestHalideKernels.empty() ||
                                    mixedMs < chosen->totalMs);
  if (mixed) {
    // The mix is our Halide-shaped plan with some kernels swapped.
    chosen = &mlirV;
    chosen->plan = mixedPlan;
    chosen->so = mixedSo;
  }
  // Both generators' times in each kernel's record where its plan is
  // Halide's (the Halide generator compiles the same kernels, untiled);
  // ours as --backend=mlir builds it has kernels of its own (the weights'
  // packing kernels first), and its records carry their own times.
  for (auto [i, launch] : llvm::enumerate(chosen->plan.kernels)) {
    std::string symbol = launch.getName().str();
    std::optional<double> mlirMs, halideMs;
    if (chosen == &wholeV) {
      if (auto m = wholeV.ms.find(symbol); m != wholeV.ms.end())
        mlirMs = m->second;
    } else if (auto m = mlirV.ms.find(symbol), h = halideV.ms.find(symbol);
               m != mlirV.ms.end() && h != halideV.ms.end()) {
      mlirMs = m->second;
      halideMs = h->second;
    }
    if (!mlirMs)
      continue;
    llvm::json::Value record = llvm::json::Object{};
    if (auto parsed = llvm::json::parse(chosen->plan.scheduleJson[i]))
      record = std::move(*parsed);
    else
      llvm::consumeError(parsed.takeError());
    if (llvm::json::Object *o = record.getAsObject()) {
      (*o)["mlir_ms"] = *mlirMs;
      if (halideMs)
        (*o)["halide_ms"] = *halideMs;
      std::string text;
      llvm::raw_string_ostream os(text);
      os << record;
      chosen->plan.scheduleJson[i] = text;
    }
  }
  std::string kept = mixed ? "mixed (" + std::to_string(halideKernels.size()) +
                                 " Halide kernels)"
                           : std::string(chosen->generator);
  log << llvm::formatv("best: kernels sum to {0:f3} ms with mlir, {1:f3} ms "
                       "with mlir as Halide's plan, {2:f3} ms with halide",
                       wholeV.totalMs, mlirV.totalMs, halideV.totalMs);
  if (mixedMs > 0)
    log << llvm::formatv(", {0:f3} ms mixed", mixedMs);
  log << ": keeping " << kept << "\n";
  lf::ArtifactWriter writer;
  if (llvm::Error err = addCPUSections(*chosen->module, cpuTarget, chosen->plan,
                                       writer, &chosen->so))
    return err;
  if (llvm::Error err = finishArtifact(writer))
    return err;
  status() << "wrote " << outputName() << ": " << chosen->plan.kernels.size()
           << " kernels (best: " << kept << ")\n";
  return llvm::Error::success();
}
