//===- CompileOptions.h - what one compile is asked to do -------*- C++ -*-===//
//
// The options of one compile, as a plain struct the tools, the tests and the
// Python package fill in (linformer-compile maps its flags onto it one to
// one). `verify()` holds every cross-check between options in one place, so
// a bad combination is refused the same way whoever asks, before anything
// is compiled.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_COMPILER_DRIVER_COMPILEOPTIONS_H
#define LINFORMER_COMPILER_DRIVER_COMPILEOPTIONS_H

#include "compiler/Schedule/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace mlir::linformer {
struct CUDAPipelineOptions;
} // namespace mlir::linformer

namespace mlir::linformer::driver {

/// The stage a compile stops after.
enum class Emit {
  Linformer,
  Linalg,
  Halide,
  GPU,
  PTX,
  LLVM,
  LLVMIR,
  Obj,
  /// The lowered module linked as a shared object: the kernels' dispatch
  /// entries and the sequential entry function, for a caller that loads it
  /// itself (linformer-e2e); --target=cpu, or --target=cuda with
  /// `cudaOnHost`.
  SharedObject,
  Artifact
};

/// What a compile makes kernels for: the CPU, CUDA, or one artifact with
/// both (the runtime takes the GPU when it can).
enum class Target { CPU, CUDA, CPUAndCUDA };
/// The CPU code generator: our pipeline, Halide's, or both timed and the
/// faster kept (per kernel where it can).
enum class Backend { MLIR, Halide, Best };
/// What CPU contractions multiply (CompileOptions::precision).
enum class Precision { Auto, F32, BF16, F16 };
/// The order of the K/V projection: the cost model's, always (E X) W, never
/// (E (X W)).
enum class Reassociate { Auto, Always, Never };
/// How pairs of bf16 factors multiply (CompileOptions::bf16Dot; the
/// passes' enum and spellings, compiler/Schedule/Target.h).
using ::linformer::schedule::BF16Dot;
/// The CUDA pipeline's tensor-core precision (CompileOptions::cudaMma).
enum class CudaMma { Auto, None, TF32, TF32x3, BF16, F16 };

/// Each option's values as linformer-compile's flags, the pipelines' pass
/// options and Python's compile() spell them ("cpu,cuda", "best", "bf16",
/// ...): one table per option (CompileOptions.cpp), read both ways.
llvm::StringRef spelling(Target value);
llvm::StringRef spelling(Backend value);
llvm::StringRef spelling(Precision value);
llvm::StringRef spelling(Reassociate value);
llvm::StringRef spelling(BF16Dot value);
llvm::StringRef spelling(CudaMma value);

/// Parses `text` as the value of the option of type E; the error names the
/// flag and lists what it takes ("--precision takes auto, f32, bf16 or f16,
/// not 'fp8'"). Instantiated for the six enums above.
template <typename E>
llvm::Expected<E> parseOption(llvm::StringRef text);

/// parseOption into `field`, which keeps its value on an error.
template <typename E>
llvm::Error setOption(E &field, llvm::StringRef text) {
  llvm::Expected<E> value = parseOption<E>(text);
  if (!value)
    return value.takeError();
  field = *value;
  return llvm::Error::success();
}

/// The compiler's version, recorded in every artifact and in the tuning
/// cache's key.
extern const char *const kCompilerVersion;

struct CompileOptions {
  /// The input: a model description (a path ending in .json) or a module in
  /// the Linformer dialect. `inputText`, when set, is the input's contents
  /// (`inputPath` then only names it, for diagnostics and its kind).
  std::string inputPath;
  std::optional<std::string> inputText;
  /// Where the result goes: the artifact, the object, or the text of an
  /// --emit stage (empty: standard output, for text).
  std::string outputPath;
  Emit emit = Emit::Artifact;

  Target target = Target::CPU;
  Backend backend = Backend::MLIR;
  std::string halideAutoscheduler = "adams2019";
  /// --backend=best: these kernels from Halide whatever the times.
  std::vector<std::string> bestHalideKernels;

  /// The CPU target: LLVM CPU name and features (empty: the host's, or the
  /// named CPU's own features).
  std::string cpu, cpuFeatures;
  Reassociate reassociate = Reassociate::Auto;
  /// What CPU contractions multiply: f32 (exact, bf16 and f16 models'
  /// values extended), bf16 (bf16 factors, f32 sums, for f32 models too:
  /// linformer-bf16-products), or auto: bf16 for a bf16 model whose target
  /// CPU multiplies bf16 faster than f32 (AVX512_BF16, AMX), else f32
  /// (Compile::cpuProducts). The CUDA pipeline's is cudaMma.
  Precision precision = Precision::Auto;
  /// With bf16 products, how the pairs of factors are multiplied: auto
  /// (`vdpbf16ps` where the target CPU has AVX512_BF16, else f32 FMAs of
  /// the bf16 values), emulate (the dot-product path on every target, the
  /// instruction emulated by shifts and FMAs where it lacks it: for tests)
  /// or off (f32 FMAs).
  BF16Dot bf16Dot = BF16Dot::Auto;
  /// CPU schedule overrides (0: the cost model's choice).
  int64_t rowTile = 0, vectorWidth = 0, unroll = 0, reductionTile = 0;
  /// CPU kernels of a model with a lengths input index the sequence inputs
  /// and outputs packed (each sequence's real tokens end to end), so the
  /// runtime binds packed and shorter tensors in place; false: padded
  /// ([b, n, ...]: sequence s at row s * n). Never with Halide kernels.
  bool packedSequences = true;
  /// Contractions that stream a weight read it from panels that an
  /// initializer kernel makes once per session (linformer-cpu-prepack-
  /// weights; the cost model plans for them), instead of every workgroup
  /// copying its own in every run. --backend=best builds ours both ways: with
  /// packed weights as a whole candidate, without them as the plan that
  /// mixes with Halide's (which has no initializers).
  bool prepackWeights = true;
  /// Intermediate buffers whose rows span a multiple of 4 KiB get one cache
  /// line more a row (linformer-cpu-pad-row-strides).
  bool padRowStrides = true;
  /// A schedule file whose records replace the cost model's.
  std::string scheduleFile;
  /// "ROUND:INDEX": every kernel takes that --autotune candidate instead of
  /// the cost model's schedule (tests of what the autotuner may pick).
  std::string candidate;
  /// Print every kernel's schedule: "json" or "table"; unset: do not.
  std::optional<std::string> printSchedule;

  /// Time candidate schedules through the runtime and keep the fastest.
  bool autotune = false;
  std::string tuningCache; // empty: the default cache directory
  unsigned autotuneRuns = 5;
  /// The real lengths (tokens of one sequence) the artifact will serve: the
  /// cost model plans length-cut kernels for a run of the shortest (empty:
  /// a 16th of their rows), and --autotune times each candidate at them,
  /// one run each, their times added (empty: the compiled batch at full
  /// length).
  std::vector<int64_t> lengthsHint;

  /// Write seeded random weights for a model description to this file.
  std::string randomWeights;
  unsigned seed = 1;

  /// CUDA: the SM version, the toolkit whose ptxas makes the cubin (empty:
  /// $CUDA_HOME, else /usr/local/cuda), the tensor-core precision.
  int sm = 90;
  std::string cudaToolkit;
  CudaMma cudaMma = CudaMma::Auto;
  /// --target=cuda, Emit::SharedObject: the CUDA pipeline's tiled and mapped
  /// loop nest lowered for this CPU instead of the GPU (tensor-core tiles
  /// emulated with scalar products), to check the mapping without a GPU.
  bool cudaOnHost = false;
  /// With `cudaOnHost`: emulate the tensor-core tiles without rounding
  /// their operands (their structure, checked at f32 accuracy).
  bool cudaMmaExact = false;
  /// Sets the CUDA pipeline's schedule knobs (linformer-compile: its
  /// --cuda-* flags); unset: the pipeline's defaults.
  std::function<void(CUDAPipelineOptions &)> cudaKnobs;

  /// Apply MLIR's pass-manager command-line options (--mlir-print-ir-*,
  /// --mlir-timing, ...) to every pipeline; only a tool that registered
  /// them (registerPassManagerCLOptions) may ask.
  bool passManagerCLOptions = false;

  /// Every cross-check between the options; the first violation, named as
  /// linformer-compile's flags name it. `toMemory`: the artifact is returned
  /// in memory (compileToArtifact), so it needs no output path.
  llvm::Error verify(bool toMemory = false) const;

  /// Whether the input is a model description.
  bool inputIsModel() const;
  /// The CUDA pipeline options with `cudaKnobs` applied.
  void applyCUDAKnobs(CUDAPipelineOptions &options) const;
};

} // namespace mlir::linformer::driver

#endif // LINFORMER_COMPILER_DRIVER_COMPILEOPTIONS_H
