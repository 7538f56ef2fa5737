//===- DriverImpl.h - the driver's steps, shared by its files ---*- C++ -*-===//
//
// Internal to compiler/Driver. One `Compile` is one call of the session:
// the options, the context, the source, where text and progress go, and the
// steps (input, CPU lowering and outputs in Steps.cpp, the artifact in
// ArtifactBuilder.cpp, --autotune in Autotune.cpp, the Halide generator and
// --backend=best in Best.cpp, --target=cuda in CUDA.cpp), which Compile::run
// (Driver.cpp) puts together. Each file calls only into the ones listed
// before it.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_COMPILER_DRIVER_DRIVERIMPL_H
#define LINFORMER_COMPILER_DRIVER_DRIVERIMPL_H

#include "compiler/Driver/Driver.h"
#include "compiler/Codegen/Halide/HalideTarget.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Schedule/Schedule.h"
#include "compiler/Schedule/Target.h"
#include "compiler/Target/CPU/CPUTarget.h"
#include "dialect/IR/LinformerDialect.h"
#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/Manifest.h"
#include "lib/Model/ModelConfig.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Pass/PassManager.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/JSON.h"

#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

namespace mlir::linformer::driver {

namespace sched = ::linformer::schedule;
namespace lf = ::linformer;

/// An error with `message`.
llvm::Error makeError(const llvm::Twine &message);
/// `path` made absolute against the working directory (empty stays empty):
/// a pass option naming a file is written into crash reproducers, which are
/// replayed from anywhere.
std::string absolutePath(llvm::StringRef path);

/// Entry argument names/kinds: from the model signature or, for a plain
/// .mlir module, argN (inputs) and "result" for the output.
struct EntryInfo {
  std::string name;
  std::vector<std::string> argNames;
  std::vector<lf::BufferKind> argKinds;
  int paddingArg = -1;
  lf::BufferRole paddingRole = lf::BufferRole::None;
};

/// What is compiled: a model description or a module's text. The module is
/// rebuilt from it for every compile (the autotuner compiles many times;
/// the pipeline consumes its input).
struct Source {
  bool fromModel = false;
  lf::ModelConfig config;
  std::string text;
  EntryInfo entry;
};

/// Measured times of a tuned kernel shape, for its record.
struct TunedTimes {
  double modelMs = -1, tunedMs = -1;
};

/// The lowered module's dispatch plan with every kernel's schedule record.
struct Plan {
  SmallVector<KernelLaunchAttr> kernels;
  SmallVector<int64_t> intermediates;
  /// The kernels index the sequence buffers packed (the plan's
  /// packed_sequences).
  bool packedSequences = false;
  /// The entry's arguments that hold tokens (the plan's sequences; the
  /// outputs are the arguments after the source's).
  SmallVector<int64_t> sequences;
  sched::ScheduleFile schedules;
  /// What --print-schedule writes: `schedules` with, before the parts of a
  /// split reduction, the record of the kernel they were split from (its
  /// schedule has the split), so that the file given back to --schedule
  /// makes the same split.
  sched::ScheduleFile printed;
  /// Per kernel of the plan: its record as JSON ("{}" if it has none).
  std::vector<std::string> scheduleJson;
};

/// The manifest dtype of `t`, if the runtime can bind it.
bool toDType(Type t, lf::DType &out);

/// One compile: the session's context, the options, the source and the
/// steps. Each step returns an llvm::Error; `diagnosed(what)` is the error
/// of a step whose reasons MLIR reported as diagnostics.
struct Compile {
  const CompileOptions &options;
  MLIRContext &context;
  llvm::raw_ostream &out, &log;
  /// Takes the diagnostics collected since the last call ("" when they are
  /// printed as they come).
  std::function<std::string()> takeDiagnostics;
  Source src;
  /// compileToArtifact: the artifact's bytes go here, not to a file.
  std::string *image = nullptr;
  /// --backend=best: the CPU kernels may be mixed with Halide ones, whose
  /// E X reads every token of E' (so E' gets no length rule).
  bool mixable = false;

  llvm::Error diagnosed(const llvm::Twine &what);
  /// The tool's pass-manager flags on `pm`, when it asked for them.
  LogicalResult applyFlags(PassManager &pm) {
    return options.passManagerCLOptions ? applyPassManagerCLOptions(pm)
                                        : success();
  }

  // Driver.cpp
  llvm::Error run();
  // Steps.cpp
  llvm::Error readSource();
  llvm::Error readEntry();
  OwningOpRef<ModuleOp> buildModule();
  llvm::Error runWithReproducer(PassManager &pm, ModuleOp module,
                                StringRef stage);
  llvm::Error writeRandomWeights(const std::string &path, bool quiet);
  sched::CPUTarget chooseTarget(ModuleOp module);
  void setPipelineOptions(CPUPipelineOptions &pipeline,
                          StringRef scheduleFile);
  /// What the CPU contractions multiply on `target`: --precision, with auto
  /// resolved: bf16 for a bf16 model where the target has a bf16 engine
  /// (AVX512_BF16 or AMX-BF16), else f32 (bf16 products on f32 FMAs are no
  /// faster, and f32 ones are exact).
  std::string cpuProducts(const sched::CPUTarget &target) const;
  llvm::Error lowerModule(ModuleOp module, const sched::CPUTarget &target,
                          StringRef scheduleFile);
  llvm::Error writeText(llvm::function_ref<void(llvm::raw_ostream &)> print);
  /// The finished artifact: to `image`, else to the output file.
  llvm::Error finishArtifact(const lf::ArtifactWriter &writer);
  bool needsOutputFile() const { return !image && options.outputPath.empty(); }
  /// Where "wrote ..." goes: `out`, or `log` when `out` carries the
  /// --print-schedule file (JSON), so that redirecting it gives a file
  /// --schedule reads back, or the artifact itself (-o /dev/stdout).
  llvm::raw_ostream &status() {
    bool outIsData =
        (options.printSchedule && *options.printSchedule != "table") ||
        options.outputPath == "/dev/stdout";
    return outIsData ? log : out;
  }
  /// What "wrote ..." names: the output file, or "the artifact".
  std::string outputName() const {
    return image ? "the artifact" : options.outputPath;
  }

  // ArtifactBuilder.cpp
  bool readPlan(ModuleOp module, const sched::CPUTarget &target,
                const std::map<std::string, TunedTimes> &times, Plan &plan);
  lf::Manifest startManifest(lf::ManifestTarget target);
  llvm::Error addBuffers(ArrayRef<int64_t> intermediates,
                         ArrayRef<int64_t> sequences, lf::Manifest &manifest);
  /// What the initializers among `kernels` (the plan's) write becomes
  /// constants, and the intermediates and constants are named in order
  /// ("tmp0", ..., "const0", ...).
  static void nameBuffers(lf::Manifest &manifest,
                          ArrayRef<KernelLaunchAttr> kernels);
  llvm::Error addCPUSections(ModuleOp module, const sched::CPUTarget &target,
                             const Plan &plan, lf::ArtifactWriter &writer,
                             const std::string *prebuilt = nullptr);
  llvm::Error writeArtifact(ModuleOp module, const sched::CPUTarget &target,
                            const Plan &plan, const std::string &path);

  // Autotune.cpp
  /// --lengths-hint's lengths against the model: a lengths input, at most
  /// max_seq_len.
  llvm::Error checkLengthsHint();
  llvm::Error autotune(const sched::CPUTarget &target,
                       llvm::SmallString<128> &workDir,
                       std::string &scheduleFilePath,
                       std::map<std::string, TunedTimes> &times);
  std::string timeArtifact(const std::string &artifact,
                           const std::string &weights, const std::string &base,
                           int64_t threads, StringRef by,
                           std::map<std::string, double> &ms,
                           bool check = false,
                           std::optional<int64_t> length = std::nullopt);

  // Best.cpp
  llvm::Error lowerWithHalide(ModuleOp module,
                              const sched::CPUTarget &cpuTarget,
                              std::string &so, Plan &plan,
                              llvm::raw_ostream *describe = nullptr);
  llvm::Error compileHalide(ModuleOp module);
  llvm::Error compileBest();
  std::string mixPlans(const sched::CPUTarget &cpuTarget, const Plan &mlirPlan,
                       const Plan &halidePlan,
                       const std::map<std::string, double> &mlirMs,
                       const std::map<std::string, double> &halideMs,
                       ModuleOp mlirModule, ModuleOp halideModule,
                       StringRef workDir, const std::string &weights,
                       std::string &so,
                       Plan &mixed, std::set<std::string> &halideKernels,
                       double &mixedMs);

  // CUDA.cpp
  std::string cudaMma();
  /// --print-schedule for --target=cuda: each contraction's schedule.
  void printCUDASchedules(ModuleOp module, const sched::CUDATarget &cudaTarget,
                          StringRef chip, bool table);
  /// --schedule with --target=cuda: a warning when the file was printed
  /// for another chip.
  void warnOtherTarget(ModuleOp module, StringRef path, StringRef chip);
  llvm::Error compileCUDA(ModuleOp module, const sched::CUDATarget &cudaTarget,
                          lf::ArtifactWriter *combined = nullptr);
  llvm::Error writeCUDAArtifact(ModuleOp module,
                                const sched::CUDATarget &cudaTarget,
                                const CUDAPipelineOptions &pipeline,
                                lf::ArtifactWriter *combined);
};

/// LLVM's target options for a schedule target (features resolved).
CPUTargetOptions llvmTargetOf(const sched::CPUTarget &t);

} // namespace mlir::linformer::driver

#endif // LINFORMER_COMPILER_DRIVER_DRIVERIMPL_H
