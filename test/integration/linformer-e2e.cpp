//===- linformer-e2e.cpp - compile, run and check one layer ----*- C++ -*-===//
//
// End-to-end check of the CPU code generator: builds one Linformer attention
// layer in the dialect for a configuration given on the command line, runs
// the whole CPU pipeline, emits and links a shared object in process, loads
// it, runs the generated kernel on seeded random inputs, and compares the
// result with the plain C++ reference (lib/Reference).
//
// The error measure is the normwise relative error
//   max_i |out_i - ref_i| / max_i |ref_i|
// which, unlike an elementwise relative error, stays meaningful for outputs
// near zero. Exit status 0 means within --tolerance.
//
//===----------------------------------------------------------------------===//

#include "compiler/Codegen/Halide/HalideTarget.h"
#include "compiler/Model/ModelBuilder.h"
#include "compiler/Pipelines/CUDAFlags.h"
#include "compiler/Pipelines/Pipelines.h"
#include "compiler/Schedule/ScheduleAttrs.h"
#include "compiler/Target/CPU/CPUTarget.h"
#include "dialect/IR/LinformerDialect.h"
#include "lib/Model/ModelConfig.h"
#include "lib/Reference/Encoder.h"
#include "lib/Reference/Reference.h"
#include "lib/Support/Half.h"
#include "lib/Support/Random.h"

#include "dialect/IR/LinformerOps.h"
#include "dialect/Transforms/Passes.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/InitAllDialects.h"
#include "mlir/InitAllExtensions.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

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
#include <dlfcn.h>
#include <map>
#include <thread>
#include <utility>
#include <string>
#include <vector>

using namespace mlir;
namespace cl = llvm::cl;
namespace ref = ::linformer::ref;

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
static cl::opt<std::string> workDirOpt("work-dir", cl::desc("where the .so goes"),
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
             "(none, tf32, bf16 or f16: linformer-cuda-tensor-core-"
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
    cl::desc("run the kernels' workgroups on this many threads through their "
             "_dispatch entries, as the runtime does (0: call the sequential "
             "entry function instead)"),
    cl::init(2));
static cl::opt<unsigned> repeatOpt(
    "repeat",
    cl::desc("time this many runs of the dispatch plan after the checked one "
             "and report the median (a benchmark, see bench/layer)"),
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

/// One kernel of the dispatch plan the compiler recorded on the entry.
struct KernelPlan {
  std::string name;
  int64_t workgroups;
  std::vector<int64_t> buffers;
};

/// Reads the lowered entry function's #linformer.dispatch_plan.
bool readPlan(ModuleOp module, StringRef entry, std::vector<KernelPlan> &plan,
              std::vector<int64_t> &intermediates) {
  // An llvm.func or a func.func.
  auto dispatch = mlir::linformer::getDispatchPlan(module.lookupSymbol(entry));
  if (!dispatch)
    return false;
  intermediates.assign(dispatch.getIntermediates().begin(),
                       dispatch.getIntermediates().end());
  for (mlir::linformer::KernelLaunchAttr launch : dispatch.getKernels())
    plan.push_back({launch.getName().str(), launch.getWorkgroups(),
                    std::vector<int64_t>(launch.getBuffers().begin(),
                                         launch.getBuffers().end())});
  return true;
}

/// Runs every kernel's workgroups split across `threads` threads, kernels in
/// order with a join (barrier) between them.
bool runPlan(void *handle, const std::vector<KernelPlan> &plan,
             std::vector<void *> buffers, unsigned threads,
             std::vector<double> *kernelMs = nullptr) {
  using Dispatch = void (*)(void **, int64_t, int64_t);
  for (const KernelPlan &k : plan) {
    auto start = std::chrono::steady_clock::now();
    auto fn = reinterpret_cast<Dispatch>(
        dlsym(handle, (k.name + "_dispatch").c_str()));
    if (!fn) {
      llvm::errs() << "error: no symbol '" << k.name << "_dispatch'\n";
      return false;
    }
    std::vector<void *> bound;
    for (int64_t id : k.buffers)
      bound.push_back(buffers[id]);
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      int64_t begin = k.workgroups * t / threads;
      int64_t end = k.workgroups * (t + 1) / threads;
      pool.emplace_back([=, &bound] { fn(bound.data(), begin, end); });
    }
    for (std::thread &t : pool)
      t.join();
    if (kernelMs)
      kernelMs->push_back(std::chrono::duration<double, std::milli>(
                              std::chrono::steady_clock::now() - start)
                              .count());
  }
  return true;
}

/// Calls a bare-pointer kernel with `args.size()` pointer arguments.
template <size_t> using Pointer = void *;
template <size_t... I>
void callWith(void *fn, std::vector<void *> &a, std::index_sequence<I...>) {
  reinterpret_cast<void (*)(Pointer<I>...)>(fn)(a[I]...);
}

/// Calls the entry `fn` with the pointers `a` (one argument each).
template <size_t N = 1>
bool callKernel(void *fn, std::vector<void *> &a) {
  if constexpr (N > 40) {
    return false;
  } else {
    if (a.size() != N)
      return callKernel<N + 1>(fn, a);
    callWith(fn, a, std::make_index_sequence<N>{});
    return true;
  }
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

/// Lowers `module` with --pipeline's chain and compiles it to a shared
/// object, `soPath`, in `dir` (--work-dir or a new directory); false after
/// printing why.
bool compileModule(ModuleOp module, llvm::SmallString<128> &dir,
                   llvm::SmallString<128> &soPath) {
  // Schedules are chosen for the CPU the code is generated for.
  module->setAttr(mlir::linformer::kTargetAttrName,
                  mlir::linformer::toAttr(module.getContext(),
                                          mlir::linformer::hostCPUTarget(
                                              cpuOpt, cpuFeaturesOpt)));
  PassManager pm(module.getContext());
  mlir::linformer::CPUPipelineOptions options;
  options.reassociate = reassociateOpt;
  options.rowTile = rowTileOpt;
  options.vectorWidth = vectorWidthOpt;
  options.unroll = unrollOpt;
  options.reductionTile = reductionTileOpt;
  options.scheduleFile = scheduleOpt;
  options.candidate = candidateOpt;
  if (pipelineOpt == "cuda-host") {
    mlir::linformer::CUDAPipelineOptions cudaOptions;
    cudaOptions.onHost = true;
    cudaOptions.mma = cudaMmaOpt;
    cudaOptions.mmaExact = cudaMmaExactOpt;
    // A CUDA schedule file (as linformer-compile --target=cuda
    // --print-schedule writes it) for the contractions' schedules.
    cudaOptions.scheduleFile = scheduleOpt;
    mlir::linformer::applyCUDAFlags(cudaOptions);
    mlir::linformer::buildCUDAPipeline(pm, cudaOptions);
  } else if (pipelineOpt == "halide") {
    mlir::linformer::buildHalidePipeline(pm);
  } else {
    mlir::linformer::buildCPUPipeline(pm, options);
  }
  if (failed(pm.run(module)))
    return false;
  dir = workDirOpt.getValue();
  if (dir.empty() &&
      llvm::sys::fs::createUniqueDirectory("linformer-e2e", dir)) {
    llvm::errs() << "error: cannot create a work directory\n";
    return false;
  }
  llvm::sys::fs::create_directories(dir);
  soPath = dir;
  llvm::sys::path::append(soPath, "layer.so");
  mlir::linformer::CPUTargetOptions target;
  target.cpu = cpuOpt;
  target.features = cpuFeaturesOpt;
  if (pipelineOpt == "halide") {
    mlir::linformer::HalideTargetOptions halide;
    halide.features = mlir::linformer::resolveCPUTarget(target).features;
    halide.autoscheduler = halideSchedulerOpt;
    halide.cores = threadsOpt;
    if (failed(mlir::linformer::compileHalideToSharedObject(module, halide,
                                                             StringRef(soPath))))
      return false;
  } else if (failed(mlir::linformer::compileToSharedObject(module, target,
                                                           soPath))) {
    return false;
  }
  return true;
}

/// max |out - expected| / max |expected|; `finite` is false if `out` has a
/// NaN or an infinity.
double relativeError(const std::vector<float> &out,
                     const std::vector<float> &expected, bool &finite) {
  double maxErr = 0, maxRef = 0;
  finite = true;
  for (size_t i = 0; i < out.size(); ++i) {
    finite &= std::isfinite(out[i]);
    maxErr = std::max(maxErr, std::fabs(double(out[i]) - double(expected[i])));
    maxRef = std::max(maxRef, std::fabs(double(expected[i])));
  }
  return maxErr / std::max(maxRef, 1e-30);
}

/// --model: the whole encoder a model.json describes, built as
/// linformer-compile builds it, with x and the padding drawn as for a layer
/// and the weights linformer-compile would draw (rounded to the model's
/// dtype, which the reference then sees too), run through its entry
/// against the reference encoder.
int runModel(MLIRContext &context) {
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
  } else if (config.padding == ::linformer::PaddingInput::Mask) {
    mask = ::linformer::randomMask(b, n, seed + 2, 0.6);
    args.push_back(mask.data());
  }
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

  mlir::linformer::EncoderSignature signature;
  OwningOpRef<ModuleOp> module =
      mlir::linformer::buildEncoderModule(&context, config, signature);
  if (!module)
    return 1;
  llvm::SmallString<128> dir, soPath;
  if (!compileModule(*module, dir, soPath))
    return 1;
  void *handle = dlopen(soPath.c_str(), RTLD_NOW | RTLD_LOCAL);
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
  if (!callKernel(fn, args)) {
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
  bool finite = true;
  double relErr = relativeError(out, expected, finite);
  bool ok = finite && relErr <= toleranceOpt;
  llvm::outs() << llvm::formatv(
      "{0} model={1} layers={2} dtype={3} b={4} n={5} d_model={6}: "
      "rel_err={7:e2} (tol {8:e1})\n",
      ok ? "PASS" : "FAIL", llvm::sys::path::filename(modelPathOpt),
      config.layers, config.dtype, b, n, dm, relErr, toleranceOpt.getValue());
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
  DialectRegistry registry;
  registry.insert<mlir::linformer::LinformerDialect>();
  registerAllDialects(registry);
  registerAllExtensions(registry);
  MLIRContext context(registry);
  if (!modelPathOpt.empty())
    return runModel(context);

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
    llvm::errs() << "error: --pipeline=halide runs the dispatch plan "
                    "(--run-threads=N > 0): it has no entry function\n";
    return 1;
  }
  if (pipelineOpt == "cuda-host" && (threadsOpt != 0 || repeatOpt != 0)) {
    llvm::errs() << "error: --pipeline=cuda-host runs the entry function "
                    "(--run-threads=0, no --repeat): it has no dispatch plan\n";
    return 1;
  }
  llvm::SmallString<128> dir, soPath;
  if (!compileModule(*module, dir, soPath))
    return 1;
  double compileSeconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();

  // Run.
  void *handle = dlopen(soPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle) {
    llvm::errs() << "error: dlopen: " << dlerror() << "\n";
    return 1;
  }
  // The sequential entry exists only where it is called (--run-threads=0).
  void *fn = dlsym(handle, "layer");
  if (!fn && threadsOpt == 0) {
    llvm::errs() << "error: no symbol 'layer' in " << soPath << "\n";
    return 1;
  }
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
  args.push_back(out.data());
  if (threadsOpt == 0) {
    if (!callKernel(fn, args)) {
      llvm::errs() << "error: unsupported argument count " << args.size()
                   << "\n";
      return 1;
    }
  } else {
    std::vector<KernelPlan> plan;
    std::vector<int64_t> intermediateBytes;
    if (!readPlan(*module, "layer", plan, intermediateBytes)) {
      llvm::errs() << "error: the entry has no dispatch plan\n";
      return 1;
    }
    // Intermediates are filled with NaN bytes: a kernel that reads what no
    // kernel wrote shows up in the result.
    std::vector<std::vector<float>> scratch;
    std::vector<void *> buffers = args;
    for (int64_t bytes : intermediateBytes) {
      scratch.emplace_back((bytes + 3) / 4 + 16, std::nanf(""));
      buffers.push_back(scratch.back().data());
    }
    if (!runPlan(handle, plan, buffers, threadsOpt))
      return 1;
    if (repeatOpt > 0) {
      std::vector<double> ms;
      std::vector<std::vector<double>> perKernel(plan.size());
      for (unsigned r = 0; r < repeatOpt; ++r) {
        auto start = std::chrono::steady_clock::now();
        std::vector<double> kms;
        runPlan(handle, plan, buffers, threadsOpt, &kms);
        for (size_t i = 0; i < kms.size(); ++i)
          perKernel[i].push_back(kms[i]);
        ms.push_back(std::chrono::duration<double, std::milli>(
                         std::chrono::steady_clock::now() - start)
                         .count());
      }
      std::sort(ms.begin(), ms.end());
      double median = ms[ms.size() / 2];
      for (size_t i = 0; i < plan.size(); ++i) {
        std::sort(perKernel[i].begin(), perKernel[i].end());
        llvm::outs() << llvm::formatv(
            "KERNEL {0} workgroups={1} median_ms={2:f3}\n", plan[i].name,
            plan[i].workgroups, perKernel[i][perKernel[i].size() / 2]);
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
  }
  dlclose(handle);
  llvm::sys::fs::remove(soPath);
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
