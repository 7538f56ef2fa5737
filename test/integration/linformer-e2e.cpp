//===- linformer-e2e.cpp - compile, run and check one layer ----*- C++ -*-===//
//
// End-to-end check of the code generators: builds one Linformer attention
// layer in the dialect for a configuration given on the command line,
// compiles it with the compiler library (compiler/Driver, as
// linformer-compile does), runs it on seeded random inputs and compares the
// result with the plain C++ reference (lib/Reference). With threads the
// artifact runs in the runtime (linformer/runtime.hpp, as an application
// runs it); without, the driver's shared object is loaded here and its
// sequential entry function called (the CUDA pipeline's host nest has
// only that).
//
// The error measure is the normwise relative error
//   max_i |out_i - ref_i| / max_i |ref_i|
// which, unlike an elementwise relative error, stays meaningful for outputs
// near zero. Exit status 0 means within --tolerance.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"
#include "compiler/Model/ModelBuilder.h"
#include "compiler/Pipelines/CUDAFlags.h"
#include "compiler/Pipelines/Pipelines.h"
#include "dialect/IR/LinformerDialect.h"
#include "lib/Model/ModelConfig.h"
#include "lib/Reference/Encoder.h"
#include "lib/Reference/Reference.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Half.h"
#include "lib/Support/Random.h"
#include "linformer/runtime.h"

#include "dialect/IR/LinformerOps.h"
#include "dialect/Transforms/Passes.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <malloc.h>
#include <map>
#include <string>
#include <utility>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;
namespace ref = ::linformer::ref;
namespace driver = mlir::linformer::driver;

static cl::opt<std::string> kindOpt("kind", cl::desc("learned|mean_pool|max_pool|conv"),
                                    cl::init("learned"));
static cl::opt<std::string>
    sharingOpt("sharing",
               cl::desc("none|headwise|key_value|layerwise|kv|heads,layers|..."),
               cl::init("none"));
static cl::opt<int64_t> batchOpt("batch", cl::init(1));
static cl::opt<int64_t> seqOpt("n", cl::init(64));
static cl::opt<int64_t> modelOpt("d-model", cl::init(32));
static cl::opt<int64_t> headsOpt("heads", cl::init(4));
static cl::opt<int64_t> projOpt("k", cl::init(16));
static cl::opt<std::string> paddingOpt("padding", cl::desc("none|lengths|mask|one-token"),
                                       cl::init("none"));
static cl::opt<bool> biasOpt("bias", cl::desc("with biases"), cl::init(false));
static cl::opt<double> logitScaleOpt(
    "logit-scale", cl::desc("multiplies W_q so that logits reach this scale"),
    cl::init(1.0));
static cl::opt<unsigned> seedOpt("seed", cl::init(1));
static cl::opt<double> toleranceOpt("tolerance", cl::init(1e-4));
static cl::opt<std::string> workDirOpt("work-dir",
                                       cl::desc("where the artifact or the "
                                                ".so and the weights go"),
                                       cl::init(""));
static cl::opt<std::string>
    reassociateOpt("reassociate",
                   cl::desc("auto|always|never: order of the K/V projection"),
                   cl::init("auto"));
static cl::opt<std::string> cpuOpt("cpu", cl::desc("LLVM CPU name (default: host)"),
                                   cl::init(""));
static cl::opt<std::string>
    cpuFeaturesOpt("cpu-features",
                   cl::desc("LLVM target features (default: host's)"),
                   cl::init(""));
static cl::opt<std::string> pipelineOpt(
    "pipeline",
    cl::desc("cpu (the CPU pipeline), halide (the Halide code generator), "
             "or cuda-host: the CUDA pipeline's tiled and mapped loop nest, "
             "run on the CPU (needs --run-threads=0)"),
    cl::init("cpu"));
static cl::opt<std::string> cudaMmaOpt(
    "cuda-mma",
    cl::desc("--pipeline=cuda-host: the tensor-core tiles to check "
             "(none, tf32, tf32x3, bf16 or f16: linformer-cuda-tensor-core-"
             "contractions' warp tiles, emulated with scalar products)"),
    cl::init("none"));
static cl::opt<bool> cudaMmaExactOpt(
    "cuda-mma-exact",
    cl::desc("--pipeline=cuda-host with --cuda-mma: emulate the tensor-core "
             "tiles without rounding their operands (their structure, "
             "checked at f32 accuracy)"),
    cl::init(false));
static cl::opt<bool> bf16StorageOpt(
    "bf16-storage",
    cl::desc("x, Wq, Wk, Wv, Wo, E and F stored as bf16 (rounded to nearest "
             "even; the reference uses the rounded values) and extended to "
             "f32 in the function, as a bf16 model's entry does"),
    cl::init(false));
static cl::opt<std::string> halideSchedulerOpt(
    "halide-autoscheduler",
    cl::desc("--pipeline=halide: adams2019, mullapudi2016 or li2018"),
    cl::init("adams2019"));
static cl::opt<unsigned> threadsOpt(
    "run-threads",
    cl::desc("run the artifact in the runtime on this many threads (0: call "
             "the sequential entry function of the driver's shared object "
             "instead)"),
    cl::init(2));
static cl::opt<unsigned> repeatOpt(
    "repeat",
    cl::desc("time this many runs in the runtime after the checked one and "
             "report the median (a benchmark, see bench/layer)"),
    cl::init(0));
static cl::opt<int64_t> rowTileOpt("row-tile",
                                   cl::desc("force rows per workgroup tile "
                                            "(0: cost model)"),
                                   cl::init(0));
static cl::opt<int64_t> vectorWidthOpt(
    "vector-width", cl::desc("force register-tile columns (0: cost model)"),
    cl::init(0));
static cl::opt<int64_t> unrollOpt(
    "unroll", cl::desc("force register-tile rows (0: cost model)"),
    cl::init(0));
static cl::opt<int64_t> reductionTileOpt(
    "reduction-tile",
    cl::desc("force the reduction block (0: cost model, -1: none)"),
    cl::init(0));
static cl::opt<std::string> candidateOpt(
    "candidate",
    cl::desc("ROUND:INDEX: run every kernel with that autotuning candidate "
             "(what --autotune may pick) instead of the model's schedule"),
    cl::init(""));
static cl::opt<std::string> scheduleOpt(
    "schedule", cl::desc("JSON schedule file overriding the cost model"),
    cl::init(""));
static cl::opt<std::string> modelPathOpt(
    "model",
    cl::desc("a model.json: its whole encoder (built as linformer-compile "
             "builds it, with the weights it draws) against the reference "
             "encoder; the layer options are ignored"),
    cl::init(""));
static cl::list<int32_t> lengthsOpt(
    "lengths", cl::CommaSeparated,
    cl::desc("with --model and a lengths input: these real lengths, one a "
             "sequence (default: random in [1, n])"));
static cl::opt<bool> packedOpt(
    "packed",
    cl::desc("with --model and a lengths input: compile the kernels for "
             "packed sequences (linformer-packed-sequences) and pass the "
             "input packed, each sequence's real rows end to end and NaN "
             "after the last; the output comes back packed, and the rows "
             "past the real ones must stay as they were"),
    cl::init(false));
static cl::opt<bool> printIR("print-ir", cl::desc("print the input IR"),
                             cl::init(false));

namespace {
struct Config {
  ref::LayerConfig layer;
  bool layers = false;
  std::string padding;
  /// The input and the weights (x, Wq, Wk, Wv, Wo, E, F) stored as bf16:
  /// the function takes them in bf16 and extends them to f32, as a bf16
  /// model's entry does.
  bool bf16Storage = false;
};

std::string tensorType(std::initializer_list<int64_t> shape,
                       const char *et = "f32") {
  std::string s = "tensor<";
  for (int64_t d : shape)
    s += std::to_string(d) + "x";
  return s + et + ">";
}

/// The layer as a function in the dialect, with arguments in the order the
/// kernel takes them: x, wq, wk, wv, wo, [bq, bk, bv, bo], [e], [f],
/// [lengths | mask]; the output buffer is appended by the pipeline.
std::string buildModule(const Config &c, std::vector<std::string> &argTypes) {
  const ref::LayerConfig &l = c.layer;
  int64_t b = l.batch, n = l.seqLen, dm = l.dModel, h = l.heads, k = l.projLen;
  std::vector<std::string> args, uses;
  std::string extensions;
  auto add = [&](const std::string &name, const std::string &type) {
    args.push_back("%" + name + ": " + type);
    argTypes.push_back(type);
  };
  // The input or a weight: with bf16 storage the argument is bf16 and one
  // linalg.generic extends it (what ModelBuilder's entry does for a bf16
  // model).
  auto addWeight = [&](const std::string &name, const std::string &type) {
    if (!c.bf16Storage)
      return add(name, type);
    std::string stored = type.substr(0, type.size() - 4) + "bf16>";
    args.push_back("%" + name + "_bf16: " + stored);
    argTypes.push_back(type);
    size_t rank = llvm::count(type, 'x');
    std::vector<std::string> dims;
    for (size_t i = 0; i < rank; ++i)
      dims.push_back("d" + std::to_string(i));
    std::string id = "affine_map<(" + llvm::join(dims, ", ") + ") -> (" +
                     llvm::join(dims, ", ") + ")>";
    extensions += "  %" + name + "_init = tensor.empty() : " + type + "\n";
    extensions += "  %" + name + " = linalg.generic {indexing_maps = [" + id +
                  ", " + id + "], iterator_types = [" +
                  llvm::join(std::vector<std::string>(rank, "\"parallel\""),
                             ", ") +
                  "]} ins(%" + name + "_bf16 : " + stored + ") outs(%" + name +
                  "_init : " + type + ") {\n  ^bb0(%a: bf16, %o: f32):\n" +
                  "    %f = arith.extf %a : bf16 to f32\n" +
                  "    linalg.yield %f : f32\n  } -> " + type + "\n";
  };
  std::string x = tensorType({b, n, dm}), w = tensorType({dm, dm});
  addWeight("x", x);
  // The sequence input, as a model's entry marks it: the other arguments
  // are the artifact's weights, and the pipeline knows which rows are
  // tokens (the row tiles past the lengths are skipped).
  args.back() += " {linformer.sequence}";
  for (const char *name : {"wq", "wk", "wv", "wo"})
    addWeight(name, w);
  if (l.hasBias)
    for (const char *name : {"bq", "bk", "bv", "bo"})
      add(name, tensorType({dm}));
  std::string sharingFlags;
  std::vector<std::string> flags;
  if (l.sharing.heads)
    flags.push_back("heads");
  if (l.sharing.kv)
    flags.push_back("kv");
  if (c.layers)
    flags.push_back("layers");
  sharingFlags = flags.empty() ? "none" : llvm::join(flags, ", ");
  bool hasParams = l.kind == ref::ProjectionKind::Learned ||
                   l.kind == ref::ProjectionKind::Conv;
  std::string projShape;
  if (hasParams) {
    std::vector<int64_t> shape = ref::projectionWeightShape(
        l.kind, h, n, l.headDim(), k, l.sharing.heads);
    projShape = "tensor<";
    for (int64_t d : shape)
      projShape += std::to_string(d) + "x";
    projShape += "f32>";
    addWeight("e", projShape);
    if (!l.sharing.kv)
      addWeight("f", projShape);
  }
  if (c.padding == "mask")
    add("mask", tensorType({b, n}, "i1"));
  else if (c.padding != "none")
    add("lengths", tensorType({b}, "i32"));

  std::string op = "%y = linformer.attention %x weights(%wq, %wk, %wv, %wo) ";
  if (l.hasBias)
    op += "biases(%bq, %bk, %bv, %bo) ";
  op += llvm::formatv("heads({0}) k({1}) projection<{2}> ", h, k,
                      ref::projectionKindName(l.kind))
            .str();
  if (hasParams) {
    op += "e(%e) ";
    if (!l.sharing.kv)
      op += "f(%f) ";
  }
  op += "sharing<" + sharingFlags + "> ";
  if (c.padding == "mask")
    op += "mask(%mask) ";
  else if (c.padding != "none")
    op += "lengths(%lengths) ";
  op += ": (" + llvm::join(argTypes, ", ") + ") -> " + x;
  return "func.func @layer(" + llvm::join(args, ", ") + ") -> " + x +
         " {\n" + extensions + "  " + op + "\n  return %y : " + x + "\n}\n";
}

/// Calls a bare-pointer kernel with `args.size()` pointer arguments.
template <size_t> using Pointer = void *;
template <size_t... I>
void callWith(void *fn, std::vector<void *> &a, std::index_sequence<I...>) {
  reinterpret_cast<void (*)(Pointer<I>...)>(fn)(a[I]...);
}

/// Calls the entry `fn` with the pointers `a` (one argument each): up to
/// 96, a 5-layer encoder's weights without layer sharing (18 a layer).
template <size_t N = 1>
bool callKernel(void *fn, std::vector<void *> &a) {
  if constexpr (N > 96) {
    return false;
  } else {
    if (a.size() != N)
      return callKernel<N + 1>(fn, a);
    callWith(fn, a, std::make_index_sequence<N>{});
    return true;
  }
}

/// Calls the entry `fn` (see callKernel) with the memory it allocates, its
/// intermediates, starting as NaN bytes, as LINFORMER_DEBUG_POISON starts
/// the runtime's buffers: a kernel that reads what no kernel wrote (in a
/// block a length rule skipped) then makes the output non-finite. glibc
/// fills each malloc'd chunk with the complement of its perturb byte
/// (0x100: bytes 0xff, a NaN in every f32, bf16 and f16), and with the mmap
/// threshold at its most (32 MiB) such chunks come from the heap, not from
/// fresh zeroed pages.
bool callEntryPoisoned(void *fn, std::vector<void *> &a) {
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_PERTURB, 0x100);
  bool called = callKernel(fn, a);
  mallopt(M_PERTURB, 0);
  return called;
}

bool parseSharing(const std::string &text, Config &c) {
  std::string s = text;
  if (s == "none")
    s = "";
  else if (s == "headwise")
    s = "heads";
  else if (s == "key_value")
    s = "heads,kv";
  else if (s == "layerwise")
    s = "heads,kv,layers";
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(s).split(parts, ',', -1, /*KeepEmpty=*/false);
  for (llvm::StringRef p : parts) {
    p = p.trim();
    if (p == "heads")
      c.layer.sharing.heads = true;
    else if (p == "kv")
      c.layer.sharing.kv = true;
    else if (p == "layers")
      c.layers = true;
    else
      return false;
  }
  return true;
}

/// Rounds `v` in place to `dtype` (the reference then sees what the kernels
/// see) and returns the data to hand the entry: `v` itself for f32, else
/// its 16-bit patterns, kept in `stored`.
void *toStorage(std::vector<float> &v, ::linformer::DType dtype,
                std::vector<std::vector<uint16_t>> &stored) {
  if (dtype == ::linformer::DType::F32)
    return v.data();
  bool bf16 = dtype == ::linformer::DType::BF16;
  std::vector<uint16_t> bits(v.size());
  for (size_t i = 0; i < v.size(); ++i) {
    bits[i] =
        bf16 ? ::linformer::floatToBF16(v[i]) : ::linformer::floatToF16(v[i]);
    v[i] = bf16 ? ::linformer::bf16ToFloat(bits[i])
                : ::linformer::f16ToFloat(bits[i]);
  }
  stored.push_back(std::move(bits));
  return stored.back().data();
}

/// Prints `err` as linformer-compile does; false.
bool report(llvm::Error err) {
  llvm::handleAllErrors(
      std::move(err),
      [](const driver::DiagnosedError &e) {
        // Printed already, as diagnostics with their locations.
        if (!e.printed())
          llvm::errs() << "error: " << e.message() << "\n";
      },
      [](const llvm::ErrorInfoBase &e) {
        llvm::errs() << "error: " << e.message() << "\n";
      });
  return false;
}

/// The work directory (--work-dir, else a new one) in `dir`; false after
/// printing why.
bool makeWorkDir(llvm::SmallString<128> &dir) {
  dir = workDirOpt.getValue();
  if (dir.empty() &&
      llvm::sys::fs::createUniqueDirectory("linformer-e2e", dir)) {
    llvm::errs() << "error: cannot create a work directory\n";
    return false;
  }
  llvm::sys::fs::create_directories(dir);
  return true;
}

/// Parses a flag as linformer-compile parses its own of that name; a bad
/// value is named and ends the run.
template <typename E>
void setOrExit(E &field, const std::string &text) {
  if (llvm::Error err = driver::setOption(field, text)) {
    llvm::errs() << "linformer-e2e: error: " << llvm::toString(std::move(err))
                 << "\n";
    std::exit(2);
  }
}

/// What linformer-compile's flags would say for --pipeline and the schedule
/// flags, for the input `path` (text `text` when set).
driver::CompileOptions compileOptions(const std::string &path,
                                      std::optional<std::string> text) {
  driver::CompileOptions o;
  o.inputPath = path;
  o.inputText = std::move(text);
  o.cpu = cpuOpt;
  o.cpuFeatures = cpuFeaturesOpt;
  setOrExit(o.reassociate, reassociateOpt);
  o.rowTile = rowTileOpt;
  o.vectorWidth = vectorWidthOpt;
  o.unroll = unrollOpt;
  o.reductionTile = reductionTileOpt;
  // The entry and the threaded dispatch here take padded [b, n, ...]
  // tensors, or with --packed (--model) packed ones. (Packed CPU kernels
  // are also checked through the runtime: linformer-run --check,
  // integration/cpu-packed-in-place.test.)
  o.packedSequences = packedOpt;
  // A CPU schedule file, or for cuda-host a CUDA one (as linformer-compile
  // --target=cuda --print-schedule writes it).
  o.scheduleFile = scheduleOpt;
  o.candidate = candidateOpt;
  if (pipelineOpt == "halide") {
    o.backend = driver::Backend::Halide;
    o.halideAutoscheduler = halideSchedulerOpt;
  } else if (pipelineOpt == "cuda-host") {
    o.target = driver::Target::CUDA;
    o.cudaOnHost = true;
    setOrExit(o.cudaMma, cudaMmaOpt);
    o.cudaMmaExact = cudaMmaExactOpt;
    o.cudaKnobs = [](mlir::linformer::CUDAPipelineOptions &p) {
      mlir::linformer::applyCUDAFlags(p);
      if (packedOpt)
        p.packedSequences = true;
    };
  }
  return o;
}

/// Compiles `o` to the shared object `soPath` (the kernels and the
/// sequential entry) and loads it; null after printing why.
void *compileAndLoad(driver::CompilerSession &session,
                     driver::CompileOptions o, StringRef soPath) {
  o.emit = driver::Emit::SharedObject;
  o.outputPath = soPath.str();
  llvm::raw_null_ostream quiet;
  if (llvm::Error err = session.compile(o, llvm::outs(), quiet))
    return report(std::move(err)), nullptr;
  void *handle = dlopen(o.outputPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    llvm::errs() << "error: dlopen: " << dlerror() << "\n";
  return handle;
}

/// max |out - expected| / max |expected|; `finite` is false if `out` has a
/// NaN or an infinity.
double relativeError(const std::vector<float> &out,
                     const std::vector<float> &expected, bool &finite,
                     double *maxErrOut = nullptr, double *maxRefOut = nullptr) {
  double maxErr = 0, maxRef = 0;
  finite = true;
  for (size_t i = 0; i < out.size(); ++i) {
    finite &= std::isfinite(out[i]);
    maxErr = std::max(maxErr, std::fabs(double(out[i]) - double(expected[i])));
    maxRef = std::max(maxRef, std::fabs(double(expected[i])));
  }
  if (maxErrOut)
    *maxErrOut = maxErr;
  if (maxRefOut)
    *maxRefOut = maxRef;
  return maxErr / std::max(maxRef, 1e-30);
}

/// --model: the whole encoder a model.json describes, built as
/// linformer-compile builds it, with x and the padding drawn as for a layer
/// and the weights linformer-compile would draw (rounded to the model's
/// dtype, which the reference then sees too), run through its entry
/// against the reference encoder.
int runModel(driver::CompilerSession &session) {
  if (threadsOpt != 0 || pipelineOpt == "halide") {
    llvm::errs() << "error: --model runs the entry function "
                    "(--run-threads=0; not --pipeline=halide)\n";
    return 1;
  }
  auto file = llvm::MemoryBuffer::getFile(modelPathOpt);
  if (!file) {
    llvm::errs() << "error: cannot read " << modelPathOpt << "\n";
    return 2;
  }
  ::linformer::ModelConfig config;
  if (std::string err =
          ::linformer::parseModelConfig((*file)->getBuffer().str(), config);
      !err.empty() ||
      !(err = ::linformer::validateModelConfig(config)).empty()) {
    llvm::errs() << "error: " << modelPathOpt << ": " << err << "\n";
    return 2;
  }
  int64_t b = config.batch, n = config.maxSeqLen, dm = config.dModel;
  uint64_t seed = seedOpt;
  ::linformer::DType dtype = ::linformer::storageType(config);
  // Rounds `v` to the storage type in place; returns the data to pass.
  // The input and weights in their storage type (moving `stored`'s
  // vectors keeps their data where it is).
  std::vector<std::vector<uint16_t>> stored;
  std::vector<::linformer::WeightSpec> specs = ::linformer::modelWeights(config);
  std::vector<std::vector<float>> weights =
      ::linformer::randomWeightValues(config, seed + 1);
  std::vector<float> x = ::linformer::uniformVector(b * n * dm, seed, -1, 1);
  // With --packed the entry reads `packedX` (filled below, once the
  // lengths are known, from `x` rounded to the storage type as the
  // reference reads it) in place of `x`.
  std::vector<float> packedX;
  std::vector<void *> args = {toStorage(x, dtype, stored)};
  std::vector<int32_t> lengths;
  std::vector<uint8_t> mask;
  if (config.padding == ::linformer::PaddingInput::Lengths) {
    lengths = ::linformer::randomLengths(b, n, seed + 2);
    if (!lengthsOpt.empty()) {
      if (int64_t(lengthsOpt.size()) != b ||
          llvm::any_of(lengthsOpt, [&](int32_t l) { return l < 1 || l > n; })) {
        llvm::errs() << "error: --lengths needs " << b
                     << " lengths in [1, " << n << "]\n";
        return 2;
      }
      lengths.assign(lengthsOpt.begin(), lengthsOpt.end());
    }
    args.push_back(lengths.data());
  } else if (packedOpt) {
    llvm::errs() << "error: --packed needs a model with a lengths input\n";
    return 2;
  } else if (config.padding == ::linformer::PaddingInput::Mask) {
    mask = ::linformer::randomMask(b, n, seed + 2, 0.6);
    args.push_back(mask.data());
  }
  // Sequence s's real rows start at row start[s] of a packed tensor.
  std::vector<int64_t> start(size_t(b) + 1, 0);
  for (int64_t s = 0; s < b && packedOpt; ++s)
    start[size_t(s) + 1] = start[size_t(s)] + lengths[size_t(s)];
  if (packedOpt) {
    packedX.assign(size_t(b * n * dm), std::nanf(""));
    for (int64_t s = 0; s < b; ++s)
      std::copy_n(x.begin() + s * n * dm, lengths[size_t(s)] * dm,
                  packedX.begin() + start[size_t(s)] * dm);
  }
  if (packedOpt)
    args[0] = toStorage(packedX, dtype, stored);
  std::map<std::string, const float *> byName;
  for (size_t i = 0; i < specs.size(); ++i) {
    args.push_back(toStorage(weights[i], dtype, stored));
    byName[specs[i].name] = weights[i].data();
  }
  std::vector<float> expected(b * n * dm);
  if (std::string err = ::linformer::ref::encoderForward(
          config,
          [&](const std::string &name) -> const float * {
            auto it = byName.find(name);
            return it == byName.end() ? nullptr : it->second;
          },
          x.data(), lengths.empty() ? nullptr : lengths.data(),
          mask.empty() ? nullptr : mask.data(), expected.data());
      !err.empty()) {
    llvm::errs() << "error: reference: " << err << "\n";
    return 2;
  }

  // The entry's name (the driver builds the module again from the file).
  mlir::linformer::EncoderSignature signature;
  if (!mlir::linformer::buildEncoderModule(&session.context(), config,
                                           signature))
    return 1;
  llvm::SmallString<128> dir, soPath;
  if (!makeWorkDir(dir))
    return 1;
  soPath = dir;
  llvm::sys::path::append(soPath, "model.so");
  void *handle = compileAndLoad(
      session, compileOptions(modelPathOpt, std::nullopt), soPath);
  void *fn = handle ? dlsym(handle, signature.entry.c_str()) : nullptr;
  if (!fn) {
    llvm::errs() << "error: no entry '" << signature.entry << "' in "
                 << soPath << "\n";
    return 1;
  }
  // The output in the storage type, NaN patterns until the entry writes.
  std::vector<float> out(b * n * dm, std::nanf(""));
  std::vector<uint16_t> outBits(b * n * dm, 0x7fc0);
  args.push_back(dtype == ::linformer::DType::F32
                     ? static_cast<void *>(out.data())
                     : static_cast<void *>(outBits.data()));
  if (!callEntryPoisoned(fn, args)) {
    llvm::errs() << "error: unsupported argument count " << args.size()
                 << "\n";
    return 1;
  }
  dlclose(handle);
  llvm::sys::fs::remove(soPath);
  if (workDirOpt.empty())
    llvm::sys::fs::remove(dir);
  if (dtype != ::linformer::DType::F32)
    for (size_t i = 0; i < out.size(); ++i)
      out[i] = dtype == ::linformer::DType::BF16
                   ? ::linformer::bf16ToFloat(outBits[i])
                   : ::linformer::f16ToFloat(outBits[i]);
  if (packedOpt) {
    // The rows past the real ones keep their NaN (nothing was stored
    // there); the real rows go back to their padded places, and the
    // padded rows compare as the reference's.
    int64_t total = start[size_t(b)];
    for (int64_t i = total * dm; i < b * n * dm; ++i)
      if (!std::isnan(out[size_t(i)])) {
        llvm::outs() << "FAIL: the packed output was written at row " << i / dm
                     << ", past its " << total << " real rows\n";
        return 1;
      }
    std::vector<float> unpacked = expected;
    for (int64_t s = 0; s < b; ++s)
      std::copy_n(out.begin() + start[size_t(s)] * dm, lengths[size_t(s)] * dm,
                  unpacked.begin() + s * n * dm);
    out = std::move(unpacked);
  }
  bool finite = true;
  double maxErr = 0, maxRef = 0;
  double relErr = relativeError(out, expected, finite, &maxErr, &maxRef);
  // As linformer-run --check: an f16 output below 2^-14 is subnormal, its
  // rounding there absolute (spacing 2^-24), so the bound is tolerance *
  // max|ref| plus one subnormal step (an attention-only stack shrinks its
  // outputs layer by layer: random seed 20261345, case 101, erred by half a
  // step, 2.3e-3 of outputs near 1e-5).
  double absFloor =
      dtype == ::linformer::DType::F16 ? std::ldexp(1.0, -24) : 0.0;
  bool ok = finite && maxErr <= toleranceOpt * maxRef + absFloor;
  llvm::outs() << llvm::formatv(
      "{0} model={1} layers={2} dtype={3} b={4} n={5} d_model={6}{9}: "
      "rel_err={7:e2} (tol {8:e1}{10})\n",
      ok ? "PASS" : "FAIL", llvm::sys::path::filename(modelPathOpt),
      config.layers, config.dtype, b, n, dm, relErr, toleranceOpt.getValue(),
      packedOpt ? " packed" : "",
      absFloor > 0 && relErr > toleranceOpt
          ? llvm::formatv(", plus {0:e1} absolute: f16's subnormal step",
                          absFloor)
                .str()
          : std::string());
  if (!finite)
    llvm::outs() << "output has non-finite values\n";
  return ok ? 0 : 1;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  mlir::linformer::registerCUDAFlags();
  cl::ParseCommandLineOptions(argc, argv, "Linformer end-to-end CPU check\n");
  {
    mlir::linformer::CUDAPipelineOptions cudaFlags;
    mlir::linformer::applyCUDAFlags(cudaFlags);
    if (std::string err = mlir::linformer::checkCUDAOptions(cudaFlags);
        !err.empty()) {
      llvm::errs() << "error: " << err << "\n";
      return 1;
    }
  }
  driver::CompilerSession session;
  MLIRContext &context = session.context();
  if (!modelPathOpt.empty())
    return runModel(session);

  Config c;
  c.layer.batch = batchOpt;
  c.layer.seqLen = seqOpt;
  c.layer.dModel = modelOpt;
  c.layer.heads = headsOpt;
  c.layer.projLen = projOpt;
  c.layer.hasBias = biasOpt;
  c.padding = paddingOpt;
  c.bf16Storage = bf16StorageOpt;
  if (!ref::parseProjectionKind(kindOpt, c.layer.kind) ||
      !parseSharing(sharingOpt, c)) {
    llvm::errs() << "error: unknown --kind or --sharing\n";
    return 2;
  }
  if (std::string err = ref::validate(c.layer); !err.empty()) {
    llvm::errs() << "error: " << err << "\n";
    return 2;
  }
  const ref::LayerConfig &l = c.layer;

  // Inputs, weights and padding, seeded.
  int64_t b = l.batch, n = l.seqLen, dm = l.dModel;
  uint64_t seed = seedOpt;
  float wScale = 1.0f / std::sqrt(static_cast<float>(dm));
  auto x = ::linformer::uniformVector(b * n * dm, seed++, -1, 1);
  std::vector<std::vector<float>> w;
  for (int i = 0; i < 4; ++i)
    w.push_back(::linformer::uniformVector(dm * dm, seed++, -wScale, wScale));
  for (float &v : w[0])
    v *= static_cast<float>(logitScaleOpt);
  std::vector<std::vector<float>> biases;
  if (l.hasBias)
    for (int i = 0; i < 4; ++i)
      biases.push_back(::linformer::uniformVector(dm, seed++, -0.5, 0.5));
  int64_t projElems = ref::projectionWeightElements(l);
  std::vector<float> e, f;
  if (projElems > 0) {
    float s = 1.0f / std::sqrt(static_cast<float>(n / l.projLen));
    if (l.kind == ref::ProjectionKind::Learned)
      s = 1.0f / std::sqrt(static_cast<float>(n));
    e = ::linformer::uniformVector(projElems, seed++, -s, s);
    if (!l.sharing.kv)
      f = ::linformer::uniformVector(projElems, seed++, -s, s);
  }
  // bf16 storage: x and the weights rounded in place (the reference sees
  // what the kernels see) and kept as their 16-bit patterns for the
  // function.
  std::vector<std::vector<uint16_t>> stored;
  ::linformer::DType storage =
      c.bf16Storage ? ::linformer::DType::BF16 : ::linformer::DType::F32;
  void *xArg = toStorage(x, storage, stored);
  std::vector<void *> weightArgs;
  for (auto &m : w)
    weightArgs.push_back(toStorage(m, storage, stored));
  void *eArg = e.empty() ? nullptr : toStorage(e, storage, stored);
  void *fArg = f.empty() ? nullptr : toStorage(f, storage, stored);
  std::vector<int32_t> lengths;
  std::vector<uint8_t> mask;
  if (c.padding == "lengths")
    lengths = ::linformer::randomLengths(b, n, seed++);
  else if (c.padding == "one-token")
    lengths.assign(b, 1);
  else if (c.padding == "mask")
    mask = ::linformer::randomMask(b, n, seed++, 0.6);
  else if (c.padding != "none") {
    llvm::errs() << "error: unknown --padding '" << c.padding << "'\n";
    return 2;
  }

  // Reference.
  ref::LayerWeights rw;
  rw.wq = w[0].data(), rw.wk = w[1].data(), rw.wv = w[2].data(),
  rw.wo = w[3].data();
  if (l.hasBias)
    rw.bq = biases[0].data(), rw.bk = biases[1].data(),
    rw.bv = biases[2].data(), rw.bo = biases[3].data();
  rw.e = e.empty() ? nullptr : e.data();
  rw.f = f.empty() ? nullptr : f.data();
  std::vector<float> expected(b * n * dm);
  if (std::string err = ref::attentionLayer(
          l, rw, x.data(), lengths.empty() ? nullptr : lengths.data(),
          mask.empty() ? nullptr : mask.data(), expected.data());
      !err.empty()) {
    llvm::errs() << "error: reference: " << err << "\n";
    return 2;
  }

  // Compile.
  std::vector<std::string> argTypes;
  std::string source = buildModule(c, argTypes);
  if (printIR)
    llvm::outs() << source << "\n", llvm::outs().flush();
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  if (!module)
    return 1;
  // Make the reassociation choice first, so that the FLOP count below is the
  // one of the order that runs (the pipeline keeps a choice already made).
  {
    PassManager choose(&context);
    mlir::linformer::LinformerReassociatePassOptions o;
    o.mode = reassociateOpt;
    choose.addNestedPass<func::FuncOp>(
        mlir::linformer::createLinformerReassociatePass(o));
    if (failed(choose.run(*module)))
      return 1;
  }
  bool reassociated = false;
  module->walk([&](mlir::linformer::AttentionOp op) {
    reassociated = op.getReassociate().value_or(false);
  });
  auto t0 = std::chrono::steady_clock::now();
  if (pipelineOpt != "cpu" && pipelineOpt != "cuda-host" &&
      pipelineOpt != "halide") {
    llvm::errs() << "error: --pipeline is cpu, halide or cuda-host\n";
    return 1;
  }
  if (pipelineOpt == "halide" && threadsOpt == 0) {
    llvm::errs() << "error: --pipeline=halide runs the artifact "
                    "(--run-threads=N > 0): it has no entry function\n";
    return 1;
  }
  if (pipelineOpt == "cuda-host" && (threadsOpt != 0 || repeatOpt != 0)) {
    llvm::errs() << "error: --pipeline=cuda-host runs the entry function "
                    "(--run-threads=0, no --repeat): it has no dispatch plan\n";
    return 1;
  }
  llvm::SmallString<128> dir;
  if (!makeWorkDir(dir))
    return 1;
  auto inDir = [&](StringRef name) {
    llvm::SmallString<128> path = dir;
    llvm::sys::path::append(path, name);
    return std::string(path);
  };
  std::string text;
  {
    llvm::raw_string_ostream os(text);
    module->print(os);
  }
  driver::CompileOptions options =
      compileOptions(inDir("layer.mlir"), std::move(text));

  std::vector<float> out(b * n * dm, std::nanf(""));
  std::vector<void *> args = {xArg, weightArgs[0], weightArgs[1],
                              weightArgs[2], weightArgs[3]};
  for (auto &bias : biases)
    args.push_back(bias.data());
  if (eArg)
    args.push_back(eArg);
  if (fArg)
    args.push_back(fArg);
  if (!mask.empty())
    args.push_back(mask.data());
  if (!lengths.empty())
    args.push_back(lengths.data());
  double compileSeconds = 0;
  std::vector<std::string> removeAfter;
  if (threadsOpt == 0) {
    // The sequential entry of the driver's shared object, called here.
    std::string soPath = inDir("layer.so");
    void *handle = compileAndLoad(session, options, soPath);
    if (!handle)
      return 1;
    removeAfter.push_back(soPath);
    compileSeconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    void *fn = dlsym(handle, "layer");
    if (!fn) {
      llvm::errs() << "error: no symbol 'layer' in " << soPath << "\n";
      return 1;
    }
    args.push_back(out.data());
    if (!callEntryPoisoned(fn, args)) {
      llvm::errs() << "error: unsupported argument count " << args.size()
                   << "\n";
      return 1;
    }
    dlclose(handle);
  } else {
    // The artifact in the runtime. Its inputs are the sequence (arg0) and
    // the padding; every other argument is a weight, bound from a
    // safetensors file of the same bytes.
    auto image = session.compileToArtifact(options, llvm::nulls());
    if (!image)
      return report(image.takeError()), 1;
    compileSeconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - t0)
                         .count();
    std::string artifactPath = inDir("layer.lfa"),
                weightsPath = inDir("layer.safetensors");
    removeAfter = {artifactPath, weightsPath};
    {
      std::error_code ec;
      llvm::raw_fd_ostream os(artifactPath, ec);
      if (ec) {
        llvm::errs() << "error: " << artifactPath << ": " << ec.message()
                     << "\n";
        return 1;
      }
      os << *image;
    }
    auto fn = module->lookupSymbol<func::FuncOp>("layer");
    size_t paddingArg = mask.empty() && lengths.empty() ? args.size()
                                                        : args.size() - 1;
    std::map<std::string, ::linformer::SafetensorsEntry> tensors;
    struct Input {
      std::string name;
      lf_dtype dtype;
      std::vector<int64_t> shape;
      void *data;
    };
    std::vector<Input> inputs;
    auto dtypeOf = [](Type t) {
      return t.isBF16()          ? LF_DTYPE_BF16
             : t.isInteger(32)   ? LF_DTYPE_I32
             : t.isInteger(1)    ? LF_DTYPE_U8
                                 : LF_DTYPE_F32;
    };
    for (size_t i = 0; i < args.size(); ++i) {
      auto type = cast<RankedTensorType>(fn.getArgument(i).getType());
      std::vector<int64_t> shape(type.getShape().begin(),
                                 type.getShape().end());
      std::string name = "arg" + std::to_string(i);
      if (i == 0 || i == paddingArg) {
        inputs.push_back({name, dtypeOf(type.getElementType()), shape,
                          args[i]});
        continue;
      }
      ::linformer::SafetensorsEntry &t = tensors[name];
      t.dtype = type.getElementType().isBF16() ? ::linformer::DType::BF16
                                               : ::linformer::DType::F32;
      t.shape = shape;
      t.bytes.assign(static_cast<const char *>(args[i]),
                     size_t(type.getNumElements()) *
                         ::linformer::dtypeSize(t.dtype));
    }
    if (std::string err = ::linformer::writeSafetensors(weightsPath, tensors);
        !err.empty()) {
      llvm::errs() << "error: " << err << "\n";
      return 1;
    }
    // Intermediates start as NaN bytes: a kernel that reads what no kernel
    // wrote shows up in the result.
    setenv("LINFORMER_DEBUG_POISON", "1", 1);
    lf_module *loaded = nullptr;
    lf_weights *weights = nullptr;
    lf_session *run = nullptr;
    llvm::scope_exit release([&] {
      lf_session_free(run);
      lf_weights_free(weights);
      lf_module_free(loaded);
    });
    auto ok = [](lf_status status) {
      if (!status)
        return true;
      llvm::errs() << "error: runtime: "
                   << lf_status_code_name(lf_status_get_code(status)) << ": "
                   << lf_status_get_message(status) << "\n";
      lf_status_free(status);
      return false;
    };
    lf_session_options sessionOptions;
    lf_session_options_init(&sessionOptions);
    sessionOptions.num_threads = int32_t(threadsOpt);
    std::vector<lf_tensor> in;
    for (const Input &t : inputs)
      in.push_back({t.name.c_str(), t.dtype, int32_t(t.shape.size()),
                    t.shape.data(), t.data});
    std::vector<int64_t> outShape = {b, n, dm};
    lf_tensor result = {"result", LF_DTYPE_F32, 3, outShape.data(),
                        out.data()};
    auto runOnce = [&] {
      return ok(lf_session_run(run, in.data(), in.size(), &result, 1));
    };
    if (!ok(lf_module_load_on(artifactPath.c_str(), "cpu", &loaded)) ||
        !ok(lf_weights_load(weightsPath.c_str(), &weights)) ||
        !ok(lf_session_create(loaded, weights, &sessionOptions, &run)) ||
        !runOnce())
      return 1;
    if (repeatOpt > 0) {
      // Timed in a session of its own, without the poisoning's fills (an
      // application's runs have none).
      unsetenv("LINFORMER_DEBUG_POISON");
      lf_session_free(run);
      run = nullptr;
      sessionOptions.profile = 1;
      // The checked output stays as the poisoned run left it.
      std::vector<float> timed(out.size());
      result.data = timed.data();
      if (!ok(lf_session_create(loaded, weights, &sessionOptions, &run)) ||
          !runOnce() || !ok(lf_session_profile_reset(run)))
        return 1;
      std::vector<double> ms;
      for (unsigned r = 0; r < repeatOpt; ++r) {
        auto start = std::chrono::steady_clock::now();
        if (!runOnce())
          return 1;
        ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count());
      }
      std::sort(ms.begin(), ms.end());
      double median = ms[ms.size() / 2];
      size_t kernels = 0;
      if (!ok(lf_session_kernel_count(run, &kernels)))
        return 1;
      for (size_t i = 0; i < kernels; ++i) {
        lf_kernel_profile k;
        if (!ok(lf_session_profile(run, i, &k)))
          return 1;
        llvm::outs() << llvm::formatv(
            "KERNEL {0} workgroups={1} median_ms={2:f3}\n", k.symbol,
            k.workgroups, k.median_ms);
      }
      // Multiply-add FLOPs of the order that ran (2 per multiply-add);
      // pooling adds and softmax are left out, as is usual for GEMM-bound
      // layers.
      double B = b, N = n, M = dm, K = l.projLen, H = l.heads;
      double flops = 2 * (2 * B * N * M * M);      // Q and output projections
      flops += 2 * (2 * B * N * K * M);            // Q Kp^T and P Vp, all heads
      bool learned = l.kind == ref::ProjectionKind::Learned;
      bool conv = l.kind == ref::ProjectionKind::Conv;
      if (reassociated) {
        double copies = (learned && !l.sharing.kv ? 2 : 1) *
                        (learned && !l.sharing.heads ? H : 1);
        flops += copies * (learned ? 2 * B * K * N * M : 0);
        flops += 2 * (2 * B * K * M * M);
      } else {
        flops += 2 * (2 * B * N * M * M);          // K and V projections
        if (learned)
          flops += 2 * (2 * B * K * N * M);
        if (conv)
          flops += 2 * (2 * B * N * M);
      }
      llvm::outs() << llvm::formatv(
          "TIME median_ms={0:f3} min_ms={1:f3} gflops={2:f1} flops={3:e3} "
          "threads={4} reassociated={5}\n",
          median, ms.front(), flops / (median * 1e6), flops,
          threadsOpt.getValue(), reassociated ? 1 : 0);
    }
    // The runtime returns zeros in the rows past each length.
    for (size_t i = 0; i < lengths.size(); ++i)
      std::fill(expected.begin() + (int64_t(i) * n + lengths[i]) * dm,
                expected.begin() + (int64_t(i) + 1) * n * dm, 0.0f);
  }
  for (const std::string &path : removeAfter)
    llvm::sys::fs::remove(path);
  if (workDirOpt.empty())
    llvm::sys::fs::remove(dir);

  // Compare.
  bool finite = true;
  double relErr = relativeError(out, expected, finite);
  bool ok = finite && relErr <= toleranceOpt;
  llvm::outs() << llvm::formatv(
      "{0} kind={1} sharing={2} b={3} n={4} d_model={5} h={6} k={7} "
      "padding={8} bias={9} reassociate={13} threads={14}: rel_err={10:e2} (tol {11:e1}) compile={12:f2}s\n",
      ok ? "PASS" : "FAIL", kindOpt, sharingOpt, b, n, dm, l.heads,
      l.projLen, c.padding, l.hasBias ? 1 : 0, relErr, toleranceOpt.getValue(),
      compileSeconds, reassociateOpt.getValue(), threadsOpt.getValue());
  if (!finite)
    llvm::outs() << "output has non-finite values\n";
  return ok ? 0 : 1;
}
