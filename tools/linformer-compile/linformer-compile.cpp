//===- linformer-compile.cpp - model -> artifact ----------------*- C++ -*-===//
//
// The compiler driver's command line. Takes a model description (model.json)
// or a module in the Linformer dialect (.mlir) and writes one artifact
// (.lfa): the generated kernels plus a manifest (entry, buffers, weights
// expected, kernels in launch order with their schedules). --emit stops at
// any stage, Toy-style; on a failing pass a reproducer is written and the
// linformer-opt line that replays it printed. The work is the compiler
// library's (compiler/Driver): this file maps flags onto CompileOptions.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "compiler/Pipelines/CUDAFlags.h"

#include "mlir/Pass/PassManager.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir::linformer::driver;
namespace cl = llvm::cl;

static cl::opt<std::string> inputFile(cl::Positional,
                                      cl::desc("<model.json | module.mlir>"),
                                      cl::Required);
static cl::opt<std::string> outputFile("o", cl::desc("output file"),
                                       cl::value_desc("path"), cl::init(""));
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
        clEnumValN(Emit::SharedObject, "so",
                   "a shared object with the kernels and the entry function"),
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
           cl::desc("cpu, cuda (docs/CUDA.md), or cpu,cuda (one "
                    "artifact with both; the runtime takes the GPU when it "
                    "can)"),
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
             "products), tf32 (mma.sync m16n8k4, TF32 products), tf32x3 "
             "(3xTF32: each f32 operand as a TF32 head and tail, three "
             "products a pair, near f32 accuracy; the f32 core stays on "
             "f32 unless a --schedule puts it on tensor cores), bf16 or f16 "
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
static cl::opt<std::string> precision(
    "precision",
    cl::desc("What CPU contractions multiply: auto (the default: bf16 for a "
             "bf16 model where the target CPU has AVX512_BF16 or AMX, f16 "
             "for an f16 model where it has AMX-FP16, else f32), f32 "
             "(exact; a bf16 or f16 model's values extended), bf16 (bf16 "
             "factors, f32 sums, for f32 models too, as torch's "
             "float32_matmul_precision) or f16 (f16 factors, f32 sums, on "
             "AMX-FP16 tiles; f32 FMAs on rounded factors without them)"),
    cl::init("auto"));
static cl::opt<std::string> bf16Dot(
    "bf16-dot",
    cl::desc("With --precision=bf16, how pairs of bf16 factors multiply: "
             "auto (vdpbf16ps where the target CPU has AVX512_BF16, else "
             "f32 FMAs), emulate "
             "(the dot-product kernels on any CPU, the instruction emulated "
             "where it lacks it), amx (the AMX kernels on any CPU, the tile "
             "operations emulated likewise) or off (f32 FMAs). With "
             "--precision=f16: auto (AMX-FP16 tiles where the CPU has them, "
             "else f32 FMAs), emulate or amx (the AMX kernels, emulated "
             "without AMX-FP16) or off"),
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
static cl::opt<bool> packedSequences(
    "packed-sequences", cl::init(true),
    cl::desc("with a lengths input, CPU kernels index the sequence inputs "
             "and outputs packed, and the runtime binds packed and shorter "
             "tensors in place (false: the padded [b, n, ...] layout, "
             "which the runtime copies such tensors into)"));
static cl::opt<bool> prepackWeights(
    "prepack-weights", cl::init(true),
    cl::desc("contractions that stream a weight read it from panels that "
             "an initializer kernel makes once per session, instead of "
             "every workgroup copying its own in every run (false: the "
             "weights read in place)"));
static cl::opt<bool> padRowStrides(
    "pad-row-strides", cl::init(true),
    cl::desc("CPU intermediate buffers whose rows span a multiple of 4 KiB "
             "get one cache line more a row, so that a kernel's block of "
             "rows spreads over the L1 cache's sets (false: rows end to "
             "end)"));
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
static cl::list<int64_t> lengthsHint(
    "lengths-hint", cl::CommaSeparated,
    cl::desc("the real lengths the artifact will serve (L1,L2,...; a model "
             "with a lengths input): the cost model gives a run of the "
             "shortest at least a workgroup a core in every kernel whose "
             "rows the length rule cuts (default: a 16th of the rows); with "
             "--autotune each candidate is timed at these lengths (one "
             "sequence of L tokens a run, times added) instead of the "
             "compiled batch at full length, and the tuning cache keeps such "
             "results apart"));

/// The flags whose values are one of a few words, parsed into
/// CompileOptions' enums (parseOption names a bad one and what it takes).
static llvm::Error parseEnumFlags(CompileOptions &options) {
  if (llvm::Error err = setOption(options.target, target))
    return err;
  if (llvm::Error err = setOption(options.backend, backend))
    return err;
  if (llvm::Error err = setOption(options.reassociate, reassociate))
    return err;
  if (llvm::Error err = setOption(options.precision, precision))
    return err;
  if (llvm::Error err = setOption(options.bf16Dot, bf16Dot))
    return err;
  return setOption(options.cudaMma, cudaMma);
}

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::registerPassManagerCLOptions();
  mlir::linformer::registerCUDAFlags();
  cl::ParseCommandLineOptions(argc, argv,
                              "linformer-compile: model -> artifact\n");
  CompileOptions options;
  if (llvm::Error err = parseEnumFlags(options)) {
    llvm::errs() << "linformer-compile: error: "
                 << llvm::toString(std::move(err)) << "\n";
    return 1;
  }
  options.inputPath = inputFile;
  options.outputPath = outputFile;
  options.emit = emit;
  options.halideAutoscheduler = halideAutoscheduler;
  options.bestHalideKernels.assign(bestHalideKernels.begin(),
                                   bestHalideKernels.end());
  options.cpu = cpu;
  options.cpuFeatures = cpuFeatures;
  options.rowTile = rowTile;
  options.vectorWidth = vectorWidth;
  options.unroll = unroll;
  options.reductionTile = reductionTile;
  options.packedSequences = packedSequences;
  options.prepackWeights = prepackWeights;
  options.padRowStrides = padRowStrides;
  options.scheduleFile = scheduleFile;
  if (printSchedule.getNumOccurrences())
    options.printSchedule = printSchedule.getValue();
  options.autotune = autotuneOpt;
  options.tuningCache = tuningCache;
  options.autotuneRuns = autotuneRuns;
  options.lengthsHint.assign(lengthsHint.begin(), lengthsHint.end());
  options.randomWeights = randomWeights;
  options.seed = seed;
  options.sm = sm;
  options.cudaToolkit = cudaToolkit;
  options.cudaKnobs = mlir::linformer::applyCUDAFlags;
  options.passManagerCLOptions = true;

  CompilerSession session;
  llvm::Error err = session.compile(options, llvm::outs(), llvm::errs());
  if (!err)
    return 0;
  llvm::handleAllErrors(
      std::move(err),
      [](const DiagnosedError &e) {
        // Printed already, as diagnostics with their locations.
        if (!e.printed())
          llvm::errs() << "linformer-compile: error: " << e.message() << "\n";
      },
      [](const llvm::ErrorInfoBase &e) {
        llvm::errs() << "linformer-compile: error: " << e.message() << "\n";
      });
  return 1;
}
