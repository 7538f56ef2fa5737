//===- CompileOptions.cpp - the cross-checks between options --------------===//

#include "compiler/Driver/CompileOptions.h"

#include "compiler/Codegen/Halide/HalideTarget.h"
#include "compiler/Pipelines/CUDAFlags.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Schedule/Target.h"

#include "llvm/ADT/StringRef.h"

#include <iterator>
#include <utility>

using namespace mlir::linformer;
using namespace mlir::linformer::driver;

//===----------------------------------------------------------------------===//
// The options' spellings
//===----------------------------------------------------------------------===//

namespace {
/// One option's flag and its values' spellings, in the order its error
/// lists them.
template <typename E>
struct Spellings;

#define LINFORMER_SPELLINGS(E, FLAG, ...)                                      \
  template <>                                                                  \
  struct Spellings<E> {                                                        \
    static constexpr llvm::StringLiteral flag = FLAG;                          \
    static constexpr std::pair<E, llvm::StringLiteral> values[] = __VA_ARGS__; \
  };
LINFORMER_SPELLINGS(Target, "--target",
                    {{Target::CPU, "cpu"},
                     {Target::CUDA, "cuda"},
                     {Target::CPUAndCUDA, "cpu,cuda"}})
LINFORMER_SPELLINGS(Backend, "--backend",
                    {{Backend::MLIR, "mlir"},
                     {Backend::Halide, "halide"},
                     {Backend::Best, "best"}})
LINFORMER_SPELLINGS(Precision, "--precision",
                    {{Precision::Auto, "auto"},
                     {Precision::F32, "f32"},
                     {Precision::BF16, "bf16"},
                     {Precision::F16, "f16"}})
LINFORMER_SPELLINGS(Reassociate, "--reassociate",
                    {{Reassociate::Auto, "auto"},
                     {Reassociate::Always, "always"},
                     {Reassociate::Never, "never"}})
// The passes' table (their bf16-dot options read it too).
template <>
struct Spellings<BF16Dot> {
  static constexpr llvm::StringLiteral flag = "--bf16-dot";
  static constexpr const auto &values = ::linformer::schedule::kBF16DotSpellings;
};
LINFORMER_SPELLINGS(CudaMma, "--cuda-mma",
                    {{CudaMma::Auto, "auto"},
                     {CudaMma::None, "none"},
                     {CudaMma::TF32, "tf32"},
                     {CudaMma::TF32x3, "tf32x3"},
                     {CudaMma::BF16, "bf16"},
                     {CudaMma::F16, "f16"}})
#undef LINFORMER_SPELLINGS

template <typename E>
llvm::StringRef spellingOf(E value) {
  for (const auto &[v, text] : Spellings<E>::values)
    if (v == value)
      return text;
  llvm_unreachable("an option value without a spelling");
}
} // namespace

llvm::StringRef driver::spelling(Target v) { return spellingOf(v); }
llvm::StringRef driver::spelling(Backend v) { return spellingOf(v); }
llvm::StringRef driver::spelling(Precision v) { return spellingOf(v); }
llvm::StringRef driver::spelling(Reassociate v) { return spellingOf(v); }
llvm::StringRef driver::spelling(BF16Dot v) { return spellingOf(v); }
llvm::StringRef driver::spelling(CudaMma v) { return spellingOf(v); }

template <typename E>
llvm::Expected<E> driver::parseOption(llvm::StringRef text) {
  const auto &values = Spellings<E>::values;
  std::string list;
  for (size_t i = 0; i < std::size(values); ++i) {
    if (text == values[i].second)
      return values[i].first;
    list += (i == 0 ? "" : i + 1 == std::size(values) ? " or " : ", ");
    list += llvm::StringRef(values[i].second);
  }
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 Spellings<E>::flag + " takes " + list +
                                     ", not '" + text + "'");
}

template llvm::Expected<Target> driver::parseOption(llvm::StringRef);
template llvm::Expected<Backend> driver::parseOption(llvm::StringRef);
template llvm::Expected<Precision> driver::parseOption(llvm::StringRef);
template llvm::Expected<Reassociate> driver::parseOption(llvm::StringRef);
template llvm::Expected<BF16Dot> driver::parseOption(llvm::StringRef);
template llvm::Expected<CudaMma> driver::parseOption(llvm::StringRef);

//===----------------------------------------------------------------------===//
// CompileOptions
//===----------------------------------------------------------------------===//

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
  bool both = target == Target::CPUAndCUDA;
  if (both && emit != Emit::Artifact)
    return fail("--target=cpu,cuda makes an artifact only; emit one target's "
                "stages with --target=cpu or --target=cuda");
  ::linformer::schedule::CUDATarget cudaTarget;
  if (target != Target::CPU &&
      !::linformer::schedule::knownCUDATarget(sm, cudaTarget))
    return fail("--sm=" + std::to_string(sm) +
                " is not an SM version this compiler knows (70, 75, 80, 86, "
                "89, 90, 100, 120)");
  if (cudaOnHost && (target != Target::CUDA || emit != Emit::SharedObject))
    return fail("the CUDA pipeline on the host makes a shared object for "
                "--target=cuda only");
  if (cudaMmaExact && !cudaOnHost)
    return fail("exact tensor-core emulation is for the CUDA pipeline on "
                "the host only");
  if (target == Target::CUDA && !cudaOnHost && emit != Emit::Linformer &&
      emit != Emit::Linalg && emit != Emit::GPU && emit != Emit::PTX &&
      emit != Emit::Artifact)
    return fail("--target=cuda emits linformer, linalg, gpu, ptx or an "
                "artifact (the LLVM stages are the CPU's)");
  if (emit == Emit::SharedObject &&
      (outputPath.empty() || target == Target::CPUAndCUDA ||
       backend != Backend::MLIR))
    return fail("--emit=so needs -o FILE.so and one target's MLIR pipeline");
  CUDAPipelineOptions cudaOptions;
  applyCUDAKnobs(cudaOptions);
  if (std::string err = checkCUDAOptions(cudaOptions); !err.empty())
    return fail(err);
  if (target != Target::CPU && cudaOptions.wgmma && sm != 90)
    return fail("--cuda-wgmma needs --sm=90 (wgmma is an sm_90a instruction, "
                "which other SMs do not have), not --sm=" +
                std::to_string(sm));
  if (target != Target::CPU && cudaMma != CudaMma::Auto &&
      cudaMma != CudaMma::None && sm < 80)
    return fail("--cuda-mma=" + spelling(cudaMma) +
                " needs sm_80 or later (mma.sync on " + spelling(cudaMma) +
                " tensor cores), not --sm=" + std::to_string(sm));
  if (target == Target::CUDA && emit == Emit::Artifact && outputPath.empty() &&
      !toMemory && !printSchedule)
    return fail("an artifact needs -o FILE.lfa");
  // A CPU and a CUDA schedule file are different files.
  if (target == Target::CPUAndCUDA && (printSchedule || !scheduleFile.empty()))
    return fail("--print-schedule and --schedule take one target's "
                "schedules: --target=cpu or --target=cuda, not cpu,cuda");
  if (target == Target::CPU && (emit == Emit::GPU || emit == Emit::PTX))
    return fail("--emit=gpu and --emit=ptx need --target=cuda");
  if ((precision == Precision::BF16 || precision == Precision::F16) &&
      (target != Target::CPU || backend != Backend::MLIR))
    return fail("--precision=" + spelling(precision) +
                " is for CPU kernels of --backend=mlir "
                "(--target=cpu); CUDA's tensor-core precision is --cuda-mma");
  if (backend == Backend::Best &&
      (emit != Emit::Artifact || target != Target::CPU || !inputIsModel() ||
       autotune || !scheduleFile.empty()))
    return fail("--backend=best makes a CPU artifact from a model.json "
                "(timing runs it on generated weights), without --autotune "
                "or --schedule");
  if (backend != Backend::MLIR && !haveHalide())
    return fail("--backend=" + spelling(backend) +
                ": this compiler was built without "
                "Halide (scripts/setup installs it into build/halide-venv)");
  if (backend == Backend::Best && outputPath.empty() && !toMemory)
    return fail("an artifact needs -o FILE.lfa");
  if (backend == Backend::Halide) {
    if (target != Target::CPU)
      return fail("--backend=halide generates CPU kernels; it takes "
                  "--target=cpu, not --target=" + spelling(target));
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
