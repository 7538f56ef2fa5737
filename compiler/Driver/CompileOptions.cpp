//===- CompileOptions.cpp - the cross-checks between options --------------===//

#include "compiler/Driver/CompileOptions.h"

#include "compiler/Codegen/Halide/HalideTarget.h"
#include "compiler/Pipelines/CUDAFlags.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Schedule/Target.h"

#include "llvm/ADT/StringRef.h"

using namespace mlir::linformer;
using namespace mlir::linformer::driver;

const char *const mlir::linformer::driver::kCompilerVersion = "0.1.0";

bool CompileOptions::inputIsModel() const {
  return llvm::StringRef(inputPath).ends_with(".json");
}

void CompileOptions::applyCUDAKnobs(CUDAPipelineOptions &options) const {
  if (cudaKnobs)
    cudaKnobs(options);
}

llvm::Error CompileOptions::verify(bool toMemory) const {
  auto fail = [](const llvm::Twine &message) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
  };
  if (target != "cpu" && target != "cuda" && target != "cpu,cuda")
    return fail("target '" + target + "' is not one of cpu, cuda, cpu,cuda");
  // cpu,cuda: one artifact with both; the runtime takes the GPU when it can.
  bool both = target == "cpu,cuda";
  if (both && emit != Emit::Artifact)
    return fail("--target=cpu,cuda makes an artifact only; emit one target's "
                "stages with --target=cpu or --target=cuda");
  ::linformer::schedule::CUDATarget cudaTarget;
  if (target != "cpu" && !::linformer::schedule::knownCUDATarget(sm, cudaTarget))
    return fail("--sm=" + std::to_string(sm) +
                " is not an SM version this compiler knows (70, 75, 80, 86, "
                "89, 90, 100, 120)");
  if (cudaOnHost && (target != "cuda" || emit != Emit::SharedObject))
    return fail("the CUDA pipeline on the host makes a shared object for "
                "--target=cuda only");
  if (cudaMmaExact && !cudaOnHost)
    return fail("exact tensor-core emulation is for the CUDA pipeline on "
                "the host only");
  if (target == "cuda" && !cudaOnHost && emit != Emit::Linformer &&
      emit != Emit::Linalg && emit != Emit::GPU && emit != Emit::PTX &&
      emit != Emit::Artifact)
    return fail("--target=cuda emits linformer, linalg, gpu, ptx or an "
                "artifact (the LLVM stages are the CPU's)");
  if (emit == Emit::SharedObject && (outputPath.empty() || target == "cpu,cuda" ||
                                     backend != "mlir"))
    return fail("--emit=so needs -o FILE.so and one target's MLIR pipeline");
  if (cudaMma != "auto" && cudaMma != "none" && cudaMma != "tf32" &&
      cudaMma != "bf16" && cudaMma != "f16")
    return fail("--cuda-mma takes auto, none, tf32, bf16 or f16, not '" +
                cudaMma + "'");
  CUDAPipelineOptions cudaOptions;
  applyCUDAKnobs(cudaOptions);
  if (std::string err = checkCUDAOptions(cudaOptions); !err.empty())
    return fail(err);
  if (target != "cpu" && cudaOptions.wgmma && sm != 90)
    return fail("--cuda-wgmma needs --sm=90 (wgmma is an sm_90a instruction, "
                "which other SMs do not have), not --sm=" +
                std::to_string(sm));
  if (target != "cpu" && cudaMma != "auto" && cudaMma != "none" && sm < 80)
    return fail("--cuda-mma=" + cudaMma +
                " needs sm_80 or later (mma.sync on " + cudaMma +
                " tensor cores), not --sm=" + std::to_string(sm));
  if (target == "cuda" && emit == Emit::Artifact && outputPath.empty() &&
      !toMemory && !printSchedule)
    return fail("an artifact needs -o FILE.lfa");
  // A CPU and a CUDA schedule file are different files.
  if (target == "cpu,cuda" && (printSchedule || !scheduleFile.empty()))
    return fail("--print-schedule and --schedule take one target's "
                "schedules: --target=cpu or --target=cuda, not cpu,cuda");
  if (target == "cpu" && (emit == Emit::GPU || emit == Emit::PTX))
    return fail("--emit=gpu and --emit=ptx need --target=cuda");
  if (precision != "auto" && precision != "f32" && precision != "bf16")
    return fail("--precision takes auto, f32 or bf16, not '" + precision +
                "'");
  // Whether the value is one at all (the target decides the rest).
  if (!mlir::linformer::bf16EngineFor(bf16Dot, {}))
    return fail("--bf16-dot takes " + kBF16DotValues.str() + ", not '" +
                bf16Dot + "'");
  if (precision == "bf16" && (target != "cpu" || backend != "mlir"))
    return fail("--precision=bf16 is for CPU kernels of --backend=mlir "
                "(--target=cpu); CUDA's tensor-core precision is --cuda-mma");
  if (backend != "mlir" && backend != "halide" && backend != "best")
    return fail("--backend takes mlir, halide or best, not '" + backend + "'");
  if (backend == "best" &&
      (emit != Emit::Artifact || target != "cpu" || !inputIsModel() ||
       autotune || !scheduleFile.empty()))
    return fail("--backend=best makes a CPU artifact from a model.json "
                "(timing runs it on generated weights), without --autotune "
                "or --schedule");
  if (backend != "mlir" && !haveHalide())
    return fail("--backend=" + backend + ": this compiler was built without "
                "Halide (scripts/setup installs it into build/halide-venv)");
  if (backend == "best" && outputPath.empty() && !toMemory)
    return fail("an artifact needs -o FILE.lfa");
  if (backend == "halide") {
    if (target != "cpu")
      return fail("--backend=halide generates CPU kernels; it takes "
                  "--target=cpu, not --target=" + target);
    if (emit != Emit::Linformer && emit != Emit::Linalg &&
        emit != Emit::Halide && emit != Emit::Artifact)
      return fail("--backend=halide emits linformer, linalg, halide or an "
                  "artifact");
    if (autotune || !scheduleFile.empty() || printSchedule)
      return fail("--backend=halide: schedules come from Halide's "
                  "autoscheduler; --autotune, --schedule and --print-schedule "
                  "are for --backend=mlir");
    if (emit == Emit::Artifact && outputPath.empty() &&
      !toMemory)
      return fail("an artifact needs -o FILE.lfa");
  } else if (emit == Emit::Halide) {
    return fail("--emit=halide needs --backend=halide");
  }
  if (!randomWeights.empty() && !inputIsModel())
    return fail("--random-weights needs a model.json input");
  if (printSchedule && !printSchedule->empty() && *printSchedule != "json" &&
      *printSchedule != "table")
    return fail("--print-schedule takes 'json' (the default) or 'table', "
                "not '" + *printSchedule + "'");
  if (autotune) {
    if (!scheduleFile.empty())
      return fail("--autotune and --schedule exclude each other: a schedule "
                  "file fixes what the autotuner would search");
    if (!inputIsModel())
      return fail("--autotune needs a model.json input: timing a candidate "
                  "runs the model on generated weights and inputs");
  }
  for (int64_t length : lengthsHint)
    if (length < 1)
      return fail("--lengths-hint: " + std::to_string(length) +
                  " is not a sequence length (at least 1 token)");
  return llvm::Error::success();
}
