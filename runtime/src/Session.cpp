//===- Session.cpp - Planning buffers and running kernels -----------------===//
//
// A session binds one module to one set of weights. At creation it plans
// every buffer the kernels touch: weights point into the mapped safetensors
// file, and inputs (padded to the compiled n), outputs and intermediates get
// 64-byte-aligned slots in one arena that every run reuses. A run validates
// the caller's tensors against the manifest, copies inputs in (padding with
// zeros and filling lengths/mask), runs the kernels in manifest order on the
// thread pool with a barrier between them, and copies outputs out.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Internal.h"
#include "ThreadPool.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

namespace linformer {
namespace runtime {

namespace {

constexpr size_t kAlign = 64;

size_t alignUp(size_t v) { return (v + kAlign - 1) / kAlign * kAlign; }

/// What generated CUDA kernels assume of every buffer they are given (a
/// k-adjacent pair of elements is one aligned vector load); cuMemAlloc's
/// allocations are 256-byte aligned.
constexpr uintptr_t kDeviceAlign = 16;

/// Whether the CPU kernels can take `p` as a buffer of `dtype` in place.
/// They assume natural alignment of their arguments and nothing more (the
/// generated loads of a buffer argument are element-aligned; the 64-byte
/// aligned ones are of their own stack tiles), as weights bound from the
/// mapped file already show: a caller's buffer from malloc or NumPy (16
/// bytes) is bound, not copied in and out every run.
bool isAligned(const void *p, DType dtype) {
  return reinterpret_cast<uintptr_t>(p) % dtypeSize(dtype) == 0;
}

/// An aligned, zero-initialised allocation.
struct AlignedBuffer {
  void *data = nullptr;
  explicit AlignedBuffer(size_t size) {
    size = alignUp(std::max<size_t>(size, 1));
    data = std::aligned_alloc(kAlign, size);
    if (!data)
      throw Error(LF_INTERNAL, "cannot allocate " + std::to_string(size) +
                                   " bytes for session buffers");
    std::memset(data, 0, size);
  }
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer &) = delete;
  AlignedBuffer &operator=(const AlignedBuffer &) = delete;
};

/// memcpy from `src`, or memset to `fill` where `src` is null, of `bytes`
/// bytes: over the pool's threads where that is a few chunks or more (a
/// short run's rows into the padded layout and back out: the default
/// encoder's 1024 rows are 2 MiB each way).
void copyBytes(ThreadPool &pool, uint8_t *dst, const uint8_t *src, int fill,
               size_t bytes) {
  constexpr size_t kChunk = size_t(256) << 10;
  auto part = [&](size_t begin, size_t end) {
    if (src)
      std::memcpy(dst + begin, src + begin, end - begin);
    else
      std::memset(dst + begin, fill, end - begin);
  };
  if (pool.size() == 1 || bytes < 2 * kChunk) {
    part(0, bytes);
    return;
  }
  pool.parallelFor(
      int64_t((bytes + kChunk - 1) / kChunk), [&](int64_t begin, int64_t end) {
        part(size_t(begin) * kChunk, std::min(bytes, size_t(end) * kChunk));
      });
}

[[noreturn]] void invalid(const std::string &msg) {
  throw Error(LF_INVALID_ARGUMENT, msg);
}
[[noreturn]] void shapeError(const std::string &msg) {
  throw Error(LF_SHAPE_MISMATCH, msg);
}

/// Refuses a caller's device buffer the kernels cannot read: `what` (input
/// or output) `name` at `p`.
void checkDeviceAligned(const void *p, const char *what,
                        const std::string &name) {
  if (reinterpret_cast<uintptr_t>(p) % kDeviceAlign)
    invalid(std::string(what) + " '" + name +
            "' is at a device address that is not " +
            std::to_string(kDeviceAlign) +
            "-byte aligned (the kernels read element pairs with aligned "
            "vector loads); pass memory from lf_device_alloc or cuMemAlloc, "
            "or an offset that keeps that alignment");
}

/// Refuses a caller's device sequence tensor (`what` `name`) whose
/// sequences do not start where packed kernels read them: nothing copies
/// device memory into that layout.
[[noreturn]] void notPackedOnDevice(const char *what, const std::string &name) {
  shapeError(std::string("device ") + what + " '" + name +
             "': its sequences are not where the packed kernels read them "
             "(each right after the one before); on the device pass it "
             "packed ([total tokens, ...] with cu_seqlens) or as [b, L, "
             "...] with every sequence but the last of length L, or pass "
             "host tensors");
}

std::vector<int64_t> tensorShape(const lf_tensor &t, const char *what) {
  std::string name = t.name ? t.name : "<null>";
  if (t.rank < 0 || t.rank > 32)
    invalid(std::string(what) + " '" + name + "' has rank " +
            std::to_string(t.rank));
  if (t.rank > 0 && !t.shape)
    invalid(std::string(what) + " '" + name + "' has a null shape");
  std::vector<int64_t> shape(t.shape, t.shape + t.rank);
  for (int64_t d : shape)
    if (d < 0)
      shapeError(std::string(what) + " '" + name + "' has shape " +
                 shapeString(shape) + " with a negative dimension");
  if (shapeNumElements(shape) < 0)
    shapeError(std::string(what) + " '" + name + "' has shape " +
               shapeString(shape) + ", too large");
  return shape;
}

const char *lfDtypeName(lf_dtype t) { return dtypeName(DType(int(t))); }

/// Reads a caller's lengths tensor (i32 or i64 [batch]) into `out`, each
/// checked to lie in [lowest, L]; `name` is the tensor's name in messages.
/// `lowest` is 1, or 0 for a rank of a sequence-parallel run, which may
/// hold no token of a short sequence (the kernels do no work for it, as
/// for the sequences a run leaves out of its batch).
void readLengths(const lf_tensor &t, const std::string &name, int64_t batch,
                 int64_t L, std::vector<int64_t> &out, int64_t lowest = 1) {
  std::vector<int64_t> shape = tensorShape(t, "input");
  if (shape != std::vector<int64_t>{batch})
    shapeError("input '" + name + "' has shape " + shapeString(shape) +
               ", expected [" + std::to_string(batch) + "]");
  if (t.dtype != LF_DTYPE_I32 && t.dtype != LF_DTYPE_I64)
    invalid("input '" + name + "' is " + lfDtypeName(t.dtype) +
            ", expected i32 or i64");
  out.resize(size_t(batch));
  for (int64_t i = 0; i < batch; ++i) {
    int64_t v = t.dtype == LF_DTYPE_I32
                    ? static_cast<const int32_t *>(t.data)[i]
                    : static_cast<const int64_t *>(t.data)[i];
    if (v < lowest || v > L)
      invalid("input '" + name + "': " + name + "[" + std::to_string(i) +
              "] = " + std::to_string(v) + " is outside [" +
              std::to_string(lowest) + ", " + std::to_string(L) + "]");
    out[size_t(i)] = v;
  }
}

/// Reads a packed run's offsets (`cu_seqlens`, i32 or i64 [b + 1], as
/// FlashAttention's varlen interface) into `out`: 0 first, then
/// increasing by at most `n`, so that sequence i is the rows
/// [out[i], out[i + 1]) of every packed tensor, with `lowest` (1, or 0 on
/// a sequence-parallel rank) to n of them.
void readOffsets(const lf_tensor &t, int64_t n, std::vector<int64_t> &out,
                 int64_t lowest = 1) {
  std::vector<int64_t> shape = tensorShape(t, "input");
  if (shape.size() != 1 || shape[0] < 2)
    shapeError("input 'cu_seqlens' has shape " + shapeString(shape) +
               ", expected [b + 1] (0, then where each of the b packed "
               "sequences ends)");
  if (t.dtype != LF_DTYPE_I32 && t.dtype != LF_DTYPE_I64)
    invalid(std::string("input 'cu_seqlens' is ") + lfDtypeName(t.dtype) +
            ", expected i32 or i64");
  out.resize(size_t(shape[0]));
  for (int64_t i = 0; i < shape[0]; ++i)
    out[size_t(i)] = t.dtype == LF_DTYPE_I32
                         ? static_cast<const int32_t *>(t.data)[i]
                         : static_cast<const int64_t *>(t.data)[i];
  if (out[0] != 0)
    shapeError("input 'cu_seqlens': cu_seqlens[0] = " +
               std::to_string(out[0]) + ", expected 0");
  // out[i] is in [0, i n] when it is read, so no difference overflows.
  for (size_t i = 0; i + 1 < out.size(); ++i) {
    std::string at = "cu_seqlens[" + std::to_string(i + 1) +
                     "] = " + std::to_string(out[i + 1]) + ", cu_seqlens[" +
                     std::to_string(i) + "] = " + std::to_string(out[i]);
    // Compared before subtracting: out[i + 1] may be anything.
    if (out[i + 1] < out[i] + lowest)
      shapeError("input 'cu_seqlens': sequence " + std::to_string(i) +
                 " has no tokens (" + at + "; offsets must increase" +
                 (lowest ? ")" : " or stay)"));
    if (out[i + 1] - out[i] > n)
      shapeError("input 'cu_seqlens': sequence " + std::to_string(i) +
                 " has " + std::to_string(out[i + 1] - out[i]) +
                 " tokens (" + at + "), more than the compiled n = " +
                 std::to_string(n));
  }
}

/// The generic checks every caller tensor gets: a name, a known dtype,
/// data unless empty.
void checkTensorBasics(const lf_tensor &t, const char *what) {
  if (!t.name)
    invalid(std::string(what) + " with a null name");
  if (int(t.dtype) < 0 || int(t.dtype) > int(LF_DTYPE_U8))
    invalid(std::string(what) + " '" + t.name + "' has unknown dtype " +
            std::to_string(int(t.dtype)));
  std::vector<int64_t> shape = tensorShape(t, what);
  if (!t.data && shapeNumElements(shape) > 0)
    invalid(std::string(what) + " '" + t.name + "' has null data");
}


} // namespace

/// The workgroups of `k` (which has a length rule) that hold real tokens
/// for sequences of lengths `lengths`, as merged [begin, end) ranges: for
/// every combination of the grid's dimensions before the row one, the row
/// tiles below ceil(len / tile) of that combination's sequence, with
/// everything inside them.
static void activeRanges(const ManifestKernel &k, const int32_t *lengths,
                         std::vector<std::pair<int64_t, int64_t>> &out) {
  out.clear();
  const std::vector<int64_t> &g = k.rowsGrid;
  size_t batchDim = size_t(k.rowsBatch), rowDim = size_t(k.rowsRow);
  int64_t inner = 1, outer = 1, batchStride = 1;
  for (size_t d = rowDim + 1; d < g.size(); ++d)
    inner *= g[d];
  for (size_t d = 0; d < rowDim; ++d)
    outer *= g[d];
  for (size_t d = batchDim + 1; d < rowDim; ++d)
    batchStride *= g[d];
  int64_t rowTiles = g[rowDim];
  for (int64_t o = 0; o < outer; ++o) {
    int64_t seq = (o / batchStride) % g[batchDim];
    int64_t len = std::max<int64_t>(0, lengths[seq]);
    int64_t rows = std::min(rowTiles, (len + k.rowsTile - 1) / k.rowsTile);
    if (rows == 0)
      continue;
    int64_t begin = o * rowTiles * inner, end = begin + rows * inner;
    if (!out.empty() && out.back().second == begin)
      out.back().second = end;
    else
      out.emplace_back(begin, end);
  }
}

struct Session::Impl {
  std::shared_ptr<const Module> module;
  std::shared_ptr<const Weights> weights;
  ThreadPool pool;
  std::mutex runMutex;

  std::unique_ptr<AlignedBuffer> arena;
  /// The constants the initializers made (null without any).
  std::unique_ptr<AlignedBuffer> constants;
  /// Per manifest buffer: the session's own slot (null for weights).
  std::vector<void *> owned;
  /// Per manifest buffer: the address kernels see in the current run.
  std::vector<void *> bound;
  /// Weights whose file data was not element-aligned, copied.
  std::vector<std::unique_ptr<AlignedBuffer>> weightCopies;
  /// Per kernel: base pointers in the kernel's binding order.
  std::vector<std::vector<void *>> args;
  /// Cuda artifacts: the device buffers and stream; the host side above
  /// stages inputs and receives outputs.
  std::unique_ptr<CudaSession> cuda;

  /// Profiling: per kernel, the milliseconds of each timed run (the last
  /// kMaxProfiledRuns), its FLOPs and shape key from the manifest.
  bool profiling = false;
  void *cudaStream = nullptr; ///< the caller's, or null
  int cudaGraphs = -1;        ///< lf_session_options::cuda_graphs
  int cudaGraphBranches = 0;  ///< lf_session_options::cuda_graph_branches
  static constexpr size_t kMaxProfiledRuns = 4096;
  std::vector<std::vector<double>> kernelMs;
  std::vector<double> kernelFlops;
  /// Per kernel: the workgroups the last run ran (its length rule may skip
  /// some), which scale its FLOPs in the profile.
  std::vector<int64_t> kernelRan;
  /// A CUDA run's blocks along x for each kernel, where its length rule
  /// launches fewer than its grid (-1: the whole grid).
  std::vector<int64_t> gridX;
  std::vector<std::string> kernelKeys;

  /// A sequence-parallel session's rank and the application's all-reduce.
  int rank = 0;
  lf_all_reduce_fn allReduce = nullptr;
  void *allReduceUserData = nullptr;

  Impl(std::shared_ptr<const Module> m, std::shared_ptr<const Weights> w,
       const SessionOptions &o, std::chrono::microseconds spin)
      : module(std::move(m)), weights(std::move(w)), pool(o.numThreads, spin),
        profiling(o.profile), cudaStream(o.cudaStream),
        cudaGraphs(o.cudaGraphs), cudaGraphBranches(o.cudaGraphBranches),
        rank(o.rank), allReduce(o.allReduce),
        allReduceUserData(o.allReduceUserData), B(module->batch()),
        n(module->seqLen()) {
    const Manifest &manifest = module->manifest();
    kernelMs.resize(manifest.kernels.size());
    for (const ManifestKernel &k : manifest.kernels) {
      // The schedule record is free-form; FLOPs and key are informative.
      nlohmann::json j = nlohmann::json::parse(k.scheduleJson, nullptr, false);
      double flops = 0;
      std::string key;
      if (j.is_object()) {
        if (j.contains("flops") && j["flops"].is_number())
          flops = std::max(0.0, j["flops"].get<double>());
        if (j.contains("key") && j["key"].is_string())
          key = j["key"].get<std::string>();
      }
      kernelFlops.push_back(flops);
      kernelRan.push_back(k.workgroups);
      kernelKeys.push_back(key);
    }
  }

  /// LINFORMER_DEBUG_POISON=1 at session creation: before every run, the
  /// intermediates and the padded rows of inputs are filled with NaN bytes
  /// (0xff) instead of zeros, so that a kernel reading what it must not
  /// (padding, or what no kernel wrote) shows in the output.
  bool poison = false;
  /// LINFORMER_DEBUG_ALL_WORKGROUPS=1: every workgroup runs, the length
  /// rules ignored (to compare with the rules' run).
  bool allWorkgroups = false;
  /// Whether some kernel reads the padded rows of its inputs (CUDA token
  /// reductions run every block; Halide ones every token): the runtime then
  /// zeroes them. Set by plan().
  bool kernelsReadPadding = false;
  /// Per kernel with a length rule: this run's workgroup ranges.
  std::vector<std::pair<int64_t, int64_t>> ranges;
  std::vector<int64_t> rangeEnds;
  /// Kernels of packed sequences: where each sequence starts in a sequence
  /// buffer this run (the lengths before it, added), and the batch's end.
  std::vector<int64_t> rowStart;
  /// The last cpu run's bytes copied from the caller's inputs into the
  /// session's buffers and from those into the caller's outputs.
  int64_t copiedIn = 0, copiedOut = 0;

  /// Allocates the session's buffers and runs the initializers.
  void plan();
  /// Runs the initializer kernels (once, from plan()).
  void initialize();
  /// Runs kernel `k`: the workgroups of the real tokens of `lengths` where
  /// it has a length rule, else all of them.
  void runKernel(size_t k, const int32_t *lengths);
  /// The shortest length a run's sequence may have: 1, or 0 for a rank of
  /// a sequence-parallel run, which may hold no token of a short sequence
  /// (its kernels do no work for it, as for the sequences a run leaves out
  /// of its batch, and it still takes part in every all-reduce).
  int64_t lowestLength() const {
    return module->sequenceParallel() ? 0 : 1;
  }
  /// Profiling: kernel `k`'s time since `start`, among its last
  /// kMaxProfiledRuns.
  void recordTime(size_t k, std::chrono::steady_clock::time_point start);
  /// Step `k`, an all-reduce: its buffer summed over the ranks through the
  /// application's all-reduce.
  void runAllReduce(size_t k);
  /// A split weight's columns of this rank, from a file that holds the
  /// whole weight, into a copy of the session's.
  void *bindRankColumns(const ManifestBuffer &b, const SafetensorsTensor &t);
  void run(const lf_tensor *inputs, size_t numInputs, const lf_tensor *outputs,
           size_t numOutputs, bool onDevice);

  /// A run, in the steps run() takes in this order: the caller's tensors
  /// checked, the lengths and mask filled in, the copies in, the kernels,
  /// the copies out.
  /// The caller's inputs by manifest buffer (given); a "lengths" or "mask"
  /// the model takes as the other; cu_seqlens.
  void matchInputs(const lf_tensor *inputs, size_t numInputs);
  /// A packed run's offsets: batch, offsets, T.
  void readPacking();
  /// The data inputs against the manifest; the caller's L and batch.
  void checkInputs();
  /// The outputs against the manifest (wanted).
  void checkOutputs(const lf_tensor *outputs, size_t numOutputs);
  /// The lengths buffer: the caller's (by the buffer's name, or converted
  /// from a prefix mask), else L for every sequence.
  void fillLengths();
  /// The mask buffer: the caller's [b, L] (by the buffer's name), or a
  /// prefix mask from a caller "lengths" tensor, else ones for the L real
  /// tokens.
  void fillMask();
  /// Inputs bound in place or copied (and padded) into the session's.
  void bindInputs();
  /// Outputs the caller wants in full, in aligned memory: written in place.
  void bindOutputs();
  /// The kernels: on the device, or in manifest order on the pool.
  void launch();
  /// The rest copied out: all rows, or the first L of each sequence. With
  /// lengths, a sequence's rows past its length are padding, which the
  /// kernels need not compute: they are returned as zeros.
  void copyOutputs();

  /// Copies between the caller's tensors and the session's buffers,
  /// counted (lf_session_copied_bytes).
  void copyIn(uint8_t *dst, const uint8_t *src, size_t bytes);
  void copyOut(uint8_t *dst, const uint8_t *src, size_t bytes);
  /// The model's input names, for messages.
  std::string inputNames() const;
  /// Tokens of packed sequence i.
  int64_t packedLength(int64_t i) const;
  /// Bytes of one token's row of sequence buffer `idx`.
  size_t rowBytes(size_t idx) const;
  /// Where sequence i starts in a caller's tensor of `rows` rows a sequence.
  int64_t callerStart(int64_t i, int64_t rows) const;
  /// Whether a caller's tensor of `rows` rows a sequence has each sequence
  /// where the packed kernels read it (rowStart).
  bool packedInPlace(int64_t rows) const;

  /// One run's state, set by its steps (runs are serialized by runMutex).
  /// B and n: the compiled batch (a maximum for models with lengths: a run
  /// may pass 1 <= batch <= B sequences; the others get length 0 and no
  /// work) and sequence length.
  const int64_t B, n;
  bool onDevice = false;
  std::vector<const lf_tensor *> given, wanted;
  const lf_tensor *lengthsForMask = nullptr, *maskForLengths = nullptr;
  /// A packed run's offsets: sequence inputs and outputs are [T, ...].
  const lf_tensor *cuSeqlens = nullptr;
  /// A model with lengths on host buffers takes 1 <= batch <= B sequences;
  /// device tensors where the kernels index them packed.
  bool dynamicBatch = false;
  /// Packed: the offsets give the batch and every sequence's length (T
  /// rows in all); the lengths or mask input is filled from them.
  bool packed = false;
  std::vector<int64_t> offsets;
  int64_t T = 0;
  /// The run's batch and the caller's sequence length.
  int64_t batch = -1, L = -1;
  /// Per buffer: bound to a caller's device memory this run; an output
  /// the kernels write in the caller's memory.
  std::vector<bool> devIo, direct;
  /// This run's real lengths (null without), and the ones the copies may
  /// stop at (null where kernels read padding).
  const int32_t *lengths = nullptr, *realLengths = nullptr;
  /// Kernels of packed sequences, with lengths.
  bool packedKernels = false;
};

void Session::Impl::plan() {
  const Manifest &m = module->manifest();
  // Packed CUDA kernels clamp their reads to the real rows.
  kernelsReadPadding = module->cuda() != nullptr && !m.packedSequences;
  for (const ManifestKernel &kernel : m.kernels)
    kernelsReadPadding |= kernel.generator == "halide";
  // validateManifest bounds this sum by 2^62: no wrap-around here.
  // The constants apart from the arena: nothing a run does (poisoning,
  // zeroing) touches them.
  size_t total = 0, constantTotal = 0;
  std::vector<size_t> slots(m.buffers.size(), 0);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    BufferKind kind = m.buffers[i].kind;
    if (kind == BufferKind::Weight)
      continue;
    size_t &end = kind == BufferKind::Constant ? constantTotal : total;
    slots[i] = end;
    end += alignUp(size_t(m.buffers[i].byteSize()));
  }
  // A CUDA session's constants live on the device only (CudaSession).
  if (constantTotal && !module->cuda())
    constants = std::make_unique<AlignedBuffer>(constantTotal);
  owned.assign(m.buffers.size(), nullptr);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.kind == BufferKind::Constant) {
      if (constants)
        owned[i] = static_cast<uint8_t *>(constants->data) + slots[i];
      continue;
    }
    if (b.kind != BufferKind::Weight)
      continue; // in the arena, below

    const SafetensorsTensor *t = weights->file().find(b.name);
    if (b.sequenceSplit && t->shape != b.shape) {
      owned[i] = bindRankColumns(b, *t);
      continue;
    }
    // Zero-copy unless the file misaligns the tensor for its element type
    // (possible in files from other writers): kernels may assume natural
    // alignment, so such a tensor is copied once here.
    if (isAligned(t->data, b.dtype)) {
      owned[i] = const_cast<uint8_t *>(t->data);
    } else {
      weightCopies.push_back(std::make_unique<AlignedBuffer>(t->size));
      std::memcpy(weightCopies.back()->data, t->data, t->size);
      owned[i] = weightCopies.back()->data;
    }
  }
  args.resize(m.kernels.size());
  for (size_t k = 0; k < m.kernels.size(); ++k)
    args[k].resize(m.kernels[k].buffers.size());
  // The initializers bind weights and constants only (validateManifest),
  // and release the weights they alone read: the arena, zeroed (resident)
  // when allocated, comes after, so that the weights, their packed copies
  // and the arena are never resident at once (the bench encoder's 48 MiB
  // of panels would otherwise add to its peak).
  bound = owned;
  // A CUDA session runs its initializers on the device, once, as it is
  // created (below).
  if (!module->cuda())
    initialize();
  arena = std::make_unique<AlignedBuffer>(total);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    BufferKind kind = m.buffers[i].kind;
    if (kind != BufferKind::Weight && kind != BufferKind::Constant)
      owned[i] = static_cast<uint8_t *>(arena->data) + slots[i];
  }
  bound = owned;
  if (module->cuda())
    cuda = std::make_unique<CudaSession>(module->cuda(), m, *weights, profiling,
                                         cudaStream, cudaGraphs,
                                         cudaGraphBranches);
  // An initializer's one run is its profile, as on the CPU.
  for (size_t k = 0; cuda && profiling && k < m.kernels.size(); ++k)
    if (m.kernels[k].initializer && cuda->initializerMs(k) >= 0)
      kernelMs[k].push_back(cuda->initializerMs(k));
}

void Session::Impl::initialize() {
  const Manifest &m = module->manifest();
  // The initializers read the weights from the mapping, as runs do.
  if (FileError err = weights->file().checkIntact())
    throwFileError(err);
  bool any = false;
  for (size_t k = 0; k < m.kernels.size(); ++k)
    if (m.kernels[k].initializer) {
      runKernel(k, nullptr);
      any = true;
    }
  if (!any)
    return;
  // A weight that only initializers read (packed into a constant) is not
  // read again: its mapped pages need not stay resident beside the copy.
  std::vector<bool> readByRuns(m.buffers.size(), false);
  for (const ManifestKernel &kernel : m.kernels)
    if (!kernel.initializer)
      for (int64_t id : kernel.buffers)
        readByRuns[size_t(id)] = true;
  for (size_t i = 0; i < m.buffers.size(); ++i)
    if (m.buffers[i].kind == BufferKind::Weight && !readByRuns[i])
      weights->file().release(owned[i], size_t(m.buffers[i].byteSize()));
}

void *Session::Impl::bindRankColumns(const ManifestBuffer &b,
                                     const SafetensorsTensor &t) {
  size_t element = dtypeSize(b.dtype);
  size_t share = size_t(b.shape.back()) * element;
  size_t whole = share * size_t(b.sequenceSplit);
  size_t rows = size_t(b.byteSize()) / share;
  weightCopies.push_back(
      std::make_unique<AlignedBuffer>(size_t(b.byteSize())));
  auto *dst = static_cast<uint8_t *>(weightCopies.back()->data);
  for (size_t r = 0; r < rows; ++r)
    std::memcpy(dst + r * share, t.data + r * whole + size_t(rank) * share,
                share);
  return dst;
}

void Session::Impl::runAllReduce(size_t k) {
  const ManifestKernel &step = module->manifest().kernels[k];
  size_t summed = size_t(step.buffers.back());
  const ManifestBuffer &b = module->manifest().buffers[summed];
  auto start = profiling ? std::chrono::steady_clock::now()
                         : std::chrono::steady_clock::time_point();
  if (step.gatherBlocks != 0) {
    // An all-gather: this rank's blocks in place among zeros, so that the
    // sum over the ranks is every rank's blocks in rank order.
    const ManifestBuffer &share =
        module->manifest().buffers[size_t(step.buffers[0])];
    size_t blocks = size_t(step.gatherBlocks);
    size_t block = size_t(share.byteSize()) / blocks;
    size_t ranks = size_t(step.allReduce);
    const char *from = static_cast<const char *>(bound[size_t(step.buffers[0])]);
    char *to = static_cast<char *>(bound[summed]);
    std::memset(to, 0, size_t(b.byteSize()));
    for (size_t i = 0; i < blocks; ++i)
      std::memcpy(to + (i * ranks + size_t(rank)) * block, from + i * block,
                  block);
  }
  int64_t count = int64_t(b.byteSize() / dtypeSize(step.allReduceDtype));
  int32_t rc = allReduce(allReduceUserData, bound[summed], count,
                         lf_dtype(step.allReduceDtype));
  if (rc != 0)
    throw Error(LF_ABORTED,
                "the all-reduce failed (returned " + std::to_string(rc) +
                    ") at step '" + step.symbol + "' (" +
                    std::to_string(count) + " " +
                    dtypeName(step.allReduceDtype) + " elements), rank " +
                    std::to_string(rank) + " of " +
                    std::to_string(step.allReduce));
  if (profiling) {
    kernelRan[k] = 1;
    recordTime(k, start);
  }
}

void Session::Impl::runKernel(size_t k, const int32_t *lengths) {
  const ManifestKernel &kernel = module->manifest().kernels[k];
  if (kernel.isCollective())
    return runAllReduce(k);
  std::vector<void *> &a = args[k];
  for (size_t j = 0; j < kernel.buffers.size(); ++j)
    a[j] = bound[size_t(kernel.buffers[j])];
  DispatchFn fn = module->dispatch()[k];
  void **argv = a.data();
  auto start = profiling ? std::chrono::steady_clock::now()
                         : std::chrono::steady_clock::time_point();
  if (!lengths || !kernel.hasRows() || allWorkgroups) {
    if (profiling)
      kernelRan[k] = kernel.workgroups;
    pool.parallelFor(kernel.workgroups, [fn, argv](int64_t begin, int64_t end) {
      fn(argv, begin, end);
    });
  } else {
    // Only the workgroups that hold real tokens, as one index space over
    // the ranges.
    activeRanges(kernel, lengths, ranges);
    rangeEnds.clear();
    int64_t total = 0;
    for (auto [b, e] : ranges)
      rangeEnds.push_back(total += e - b);
    if (profiling)
      kernelRan[k] = total;
    const auto *r = &ranges;
    const auto *ends = &rangeEnds;
    pool.parallelFor(total, [fn, argv, r, ends](int64_t begin, int64_t end) {
      size_t i = size_t(std::upper_bound(ends->begin(), ends->end(), begin) -
                        ends->begin());
      while (begin < end) {
        int64_t rangeStart = (*ends)[i] - ((*r)[i].second - (*r)[i].first);
        int64_t stop = std::min(end, (*ends)[i]);
        fn(argv, (*r)[i].first + (begin - rangeStart),
           (*r)[i].first + (stop - rangeStart));
        begin = stop;
        ++i;
      }
    });
  }
  if (profiling)
    recordTime(k, start);
}

void Session::Impl::recordTime(size_t k,
                               std::chrono::steady_clock::time_point start) {
  std::vector<double> &times = kernelMs[k];
  if (times.size() == kMaxProfiledRuns)
    times.erase(times.begin());
  times.push_back(std::chrono::duration<double, std::milli>(
                      std::chrono::steady_clock::now() - start)
                      .count());
}

void Session::Impl::run(const lf_tensor *inputs, size_t numInputs,
                        const lf_tensor *outputs, size_t numOutputs,
                        bool onDevice) {
  copiedIn = copiedOut = 0;
  if (onDevice && !cuda)
    invalid("device tensors need a cuda module; '" + module->path() +
            "' runs on the cpu (use lf_session_run)");
  // Kernels read weights in place from the mapping: a file truncated since
  // it was loaded would turn those reads into SIGBUS.
  if (FileError err = weights->file().checkIntact())
    throwFileError(err);
  if (numInputs && !inputs)
    invalid("inputs is null but num_inputs is " + std::to_string(numInputs));
  if (numOutputs && !outputs)
    invalid("outputs is null but num_outputs is " + std::to_string(numOutputs));
  this->onDevice = onDevice;
  batch = -1;
  // The caller's tensors are checked before the session's buffers are
  // bound; lengths and mask are checked as they are filled in.
  matchInputs(inputs, numInputs);
  readPacking();
  checkInputs();
  checkOutputs(outputs, numOutputs);
  fillLengths();
  fillMask();
  bindInputs();
  bindOutputs();
  launch();
  copyOutputs();
}

void Session::Impl::copyIn(uint8_t *dst, const uint8_t *src, size_t bytes) {
  copiedIn += int64_t(bytes);
  copyBytes(pool, dst, src, 0, bytes);
}

void Session::Impl::copyOut(uint8_t *dst, const uint8_t *src, size_t bytes) {
  copiedOut += int64_t(bytes);
  copyBytes(pool, dst, src, 0, bytes);
}

std::string Session::Impl::inputNames() const {
  const Manifest &m = module->manifest();
  std::string s;
  for (size_t i : module->ios(LF_IO_INPUT))
    s += (s.empty() ? "" : ", ") + m.buffers[i].name;
  return s;
}

int64_t Session::Impl::packedLength(int64_t i) const {
  return offsets[size_t(i) + 1] - offsets[size_t(i)];
}

size_t Session::Impl::rowBytes(size_t idx) const {
  const Manifest &m = module->manifest();
  return size_t(m.buffers[idx].byteSize()) / size_t(B * n);
}

int64_t Session::Impl::callerStart(int64_t i, int64_t rows) const {
  return packed ? offsets[size_t(i)] : i * rows;
}

bool Session::Impl::packedInPlace(int64_t rows) const {
  for (int64_t i = 0; i < batch; ++i)
    if (callerStart(i, rows) != rowStart[size_t(i)])
      return false;
  return true;
}

void Session::Impl::matchInputs(const lf_tensor *inputs, size_t numInputs) {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  given.assign(m.buffers.size(), nullptr);
  lengthsForMask = maskForLengths = cuSeqlens = nullptr;
  for (size_t i = 0; i < numInputs; ++i) {
    const lf_tensor &t = inputs[i];
    checkTensorBasics(t, "input");
    int64_t idx = m.findBuffer(t.name);
    const lf_tensor **slot = nullptr;
    if (idx >= 0 && m.buffers[size_t(idx)].kind == BufferKind::Input)
      slot = &given[size_t(idx)];
    else if (idx >= 0)
      invalid(std::string("'") + t.name + "' is a " +
              bufferKindName(m.buffers[size_t(idx)].kind) +
              " of the model, not an input");
    else if (std::strcmp(t.name, "lengths") == 0 && mod.maskBuffer() >= 0)
      slot = &lengthsForMask;
    else if (std::strcmp(t.name, "mask") == 0 && mod.lengthsBuffer() >= 0)
      slot = &maskForLengths;
    else if (std::strcmp(t.name, "cu_seqlens") == 0)
      slot = &cuSeqlens;
    else
      invalid(std::string("unknown input '") + t.name +
              "' (the model's inputs are: " + inputNames() + ")");
    if (*slot)
      invalid(std::string("input '") + t.name + "' is given twice");
    *slot = &t;
  }
}

void Session::Impl::readPacking() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  // A model with lengths on host buffers takes 1 <= batch <= B sequences.
  // The sequences a run does not have get length 0: the kernels with a
  // length rule skip them (on CUDA, the trailing ones), the others compute
  // them on zero input rows and their rows are dropped.
  // Device tensors take it where the kernels index them packed.
  dynamicBatch =
      mod.lengthsBuffer() >= 0 && (!onDevice || m.packedSequences);
  if (cuSeqlens) {
    if (onDevice && !m.packedSequences)
      invalid("packed input ('cu_seqlens') on the device needs kernels that "
              "index it packed (linformer-compile --cuda-packed-sequences); "
              "'" +
              mod.path() + "' was compiled for padded [b, n, ...] tensors");
    if (mod.lengthsBuffer() < 0 && mod.maskBuffer() < 0)
      shapeError("packed input ('cu_seqlens') needs a model with a lengths "
                 "or mask input to tell where each sequence ends, and '" +
                 mod.path() + "' has neither: pass [b, n, ...] tensors");
    for (const lf_tensor *t :
         {lengthsForMask, maskForLengths,
          mod.lengthsBuffer() >= 0 ? given[size_t(mod.lengthsBuffer())]
                                   : nullptr,
          mod.maskBuffer() >= 0 ? given[size_t(mod.maskBuffer())] : nullptr})
      if (t)
        invalid(std::string("'cu_seqlens' and '") + t->name +
                "' are both given: a packed run takes its sequences' "
                "lengths from cu_seqlens");
    readOffsets(*cuSeqlens, n, offsets, lowestLength());
    batch = int64_t(offsets.size()) - 1;
    if (batch > B || (batch < B && !dynamicBatch))
      shapeError("input 'cu_seqlens' has " + std::to_string(batch + 1) +
                 " entries: " + std::to_string(batch) +
                 " sequences, and the model was compiled for batch " +
                 std::to_string(B) +
                 (dynamicBatch ? " (at most " + std::to_string(B) +
                                     " sequences)"
                               : std::string(" (exactly that many)")));
  }
  packed = cuSeqlens != nullptr;
  T = packed ? offsets.back() : 0;
}

void Session::Impl::checkInputs() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  L = -1;
  for (size_t idx : mod.ios(LF_IO_INPUT)) {
    const ManifestBuffer &b = m.buffers[idx];
    if (b.role != BufferRole::None)
      continue;
    const lf_tensor *t = given[idx];
    if (!t)
      invalid("missing input '" + b.name + "' (" + dtypeName(b.dtype) + " " +
              shapeString(b.shape) + ")");
    if (DType(int(t->dtype)) != b.dtype)
      invalid("input '" + b.name + "' is " + lfDtypeName(t->dtype) +
              ", the model expects " + dtypeName(b.dtype));
    std::vector<int64_t> shape = tensorShape(*t, "input");
    std::string where =
        "input '" + b.name + "' has shape " + shapeString(shape) + ", ";
    if (onDevice)
      checkDeviceAligned(t->data, "input", b.name);
    if (onDevice && shape != b.shape &&
        !(m.packedSequences && mod.isSequence(idx)))
      shapeError(where + "and device inputs must have the compiled shape " +
                 shapeString(b.shape) +
                 " (no padding on the device: pass host tensors to pad)");
    if (!mod.isSequence(idx)) {
      if (shape != b.shape)
        shapeError(where + "the model expects " + shapeString(b.shape));
      continue;
    }
    if (packed) {
      std::vector<int64_t> want = {T};
      want.insert(want.end(), b.shape.begin() + 2, b.shape.end());
      if (shape != want)
        shapeError(where + "and packed inputs must be " + shapeString(want) +
                   " (the " + std::to_string(T) +
                   " tokens cu_seqlens ends at; model shape " +
                   shapeString(b.shape) + ")");
      L = n;
      continue;
    }
    if (shape.size() != b.shape.size())
      shapeError(where + "rank " + std::to_string(shape.size()) +
                 ", the model expects rank " + std::to_string(b.shape.size()) +
                 " " + shapeString(b.shape));
    if (batch >= 0 && shape[0] != batch)
      shapeError(where + "but other sequence inputs have batch " +
                 std::to_string(batch));
    if (shape[0] != B && !(dynamicBatch && shape[0] >= 1 && shape[0] < B))
      shapeError(where + "batch " + std::to_string(shape[0]) +
                 ", the model was compiled for batch " + std::to_string(B) +
                 (dynamicBatch ? " (at most " + std::to_string(B) +
                                     " sequences)"
                               : std::string(mod.lengthsBuffer() >= 0
                                                 ? ""
                                                 : "; a smaller batch needs "
                                                   "a model with a lengths "
                                                   "input")));
    batch = shape[0];
    for (size_t d = 2; d < shape.size(); ++d)
      if (shape[d] != b.shape[d])
        shapeError(where + "dimension " + std::to_string(d) + " must be " +
                   std::to_string(b.shape[d]) + " (model shape " +
                   shapeString(b.shape) + ")");
    if (shape[1] > n)
      shapeError(where + "sequence length " + std::to_string(shape[1]) +
                 " exceeds the compiled n = " + std::to_string(n));
    if (shape[1] < 1)
      shapeError(where + "the sequence is empty");
    if (L >= 0 && shape[1] != L)
      shapeError(where + "but other sequence inputs have length " +
                 std::to_string(L));
    L = shape[1];
  }
  if (L < 0)
    L = n;
  if (batch < 0)
    batch = B;
  if (L < n && mod.lengthsBuffer() < 0 && mod.maskBuffer() < 0)
    shapeError(
        "inputs have " + std::to_string(L) +
        " tokens but the model was compiled for n = " + std::to_string(n) +
        " and has no lengths or mask input to pad with; pass exactly " +
        std::to_string(n) + " tokens");
}

void Session::Impl::checkOutputs(const lf_tensor *outputs, size_t numOutputs) {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  wanted.assign(m.buffers.size(), nullptr);
  for (size_t i = 0; i < numOutputs; ++i) {
    const lf_tensor &t = outputs[i];
    checkTensorBasics(t, "output");
    int64_t idx = m.findBuffer(t.name);
    if (idx < 0 || m.buffers[size_t(idx)].kind != BufferKind::Output) {
      std::string names;
      for (size_t o : mod.ios(LF_IO_OUTPUT))
        names += (names.empty() ? "" : ", ") + m.buffers[o].name;
      invalid(std::string("unknown output '") + t.name +
              "' (the model's outputs are: " + names + ")");
    }
    const ManifestBuffer &b = m.buffers[size_t(idx)];
    if (wanted[size_t(idx)])
      invalid("output '" + b.name + "' is given twice");
    if (DType(int(t.dtype)) != b.dtype)
      invalid("output '" + b.name + "' is " + lfDtypeName(t.dtype) +
              ", the model produces " + dtypeName(b.dtype));
    std::vector<int64_t> shape = tensorShape(t, "output");
    std::vector<int64_t> asL = b.shape, asN = b.shape;
    if (mod.isSequence(size_t(idx)) && packed) {
      asN.erase(asN.begin());
      asN[0] = T;
      asL = asN;
    } else if (mod.isSequence(size_t(idx))) {
      asL[0] = asN[0] = batch;
      asL[1] = L;
    }
    if (onDevice)
      checkDeviceAligned(t.data, "output", b.name);
    if (onDevice && shape != b.shape &&
        !(m.packedSequences && mod.isSequence(size_t(idx))))
      shapeError("output '" + b.name + "' has shape " + shapeString(shape) +
                 ", and device outputs must have the compiled shape " +
                 shapeString(b.shape));
    if (shape != asN && shape != asL)
      shapeError("output '" + b.name + "' has shape " + shapeString(shape) +
                 ", expected " + shapeString(asL) +
                 (asL != asN ? " or " + shapeString(asN) : "") +
                 (packed && mod.isSequence(size_t(idx))
                      ? " (packed, as the input with cu_seqlens)"
                      : ""));
    wanted[size_t(idx)] = &t;
  }
}

void Session::Impl::fillLengths() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  if (int64_t li = mod.lengthsBuffer(); li >= 0) {
    const ManifestBuffer &b = m.buffers[size_t(li)];
    auto *lengths = static_cast<int32_t *>(owned[size_t(li)]);
    if (packed) {
      for (int64_t i = 0; i < batch; ++i)
        lengths[i] = int32_t(packedLength(i));
    } else if (const lf_tensor *t = given[size_t(li)]) {
      std::vector<int64_t> values;
      readLengths(*t, b.name, batch, L, values, lowestLength());
      for (int64_t i = 0; i < batch; ++i)
        lengths[i] = int32_t(values[i]);
    } else if (const lf_tensor *t = maskForLengths) {
      std::vector<int64_t> shape = tensorShape(*t, "input");
      if (shape != std::vector<int64_t>{batch, L})
        shapeError("input 'mask' has shape " + shapeString(shape) +
                   ", expected [" + std::to_string(batch) + ", " +
                   std::to_string(L) + "]");
      if (t->dtype != LF_DTYPE_U8)
        invalid(std::string("input 'mask' is ") + lfDtypeName(t->dtype) +
                ", expected u8");
      const auto *mask = static_cast<const uint8_t *>(t->data);
      for (int64_t i = 0; i < batch; ++i) {
        int64_t len = 0;
        while (len < L && mask[i * L + len])
          ++len;
        for (int64_t j = len; j < L; ++j)
          if (mask[i * L + j])
            invalid("input 'mask': row " + std::to_string(i) +
                    " is not a prefix mask (token " + std::to_string(j) +
                    " is real after padding), and this model takes "
                    "lengths, not a mask");
        if (len == 0 && lowestLength() > 0)
          invalid("input 'mask': row " + std::to_string(i) +
                  " has no real token");
        lengths[i] = int32_t(len);
      }
    } else {
      for (int64_t i = 0; i < batch; ++i)
        lengths[i] = int32_t(L);
    }
    // Sequences the run does not have: length 0, no work.
    for (int64_t i = batch; i < B; ++i)
      lengths[i] = 0;
  }
}

void Session::Impl::fillMask() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  if (int64_t mi = mod.maskBuffer(); mi >= 0) {
    const ManifestBuffer &b = m.buffers[size_t(mi)];
    auto *mask = static_cast<uint8_t *>(owned[size_t(mi)]);
    std::memset(mask, 0, size_t(B * n));
    if (packed) {
      for (int64_t i = 0; i < batch; ++i)
        std::memset(mask + i * n, 1, size_t(packedLength(i)));
    } else if (const lf_tensor *t = given[size_t(mi)]) {
      std::vector<int64_t> shape = tensorShape(*t, "input");
      if (shape != std::vector<int64_t>{batch, L})
        shapeError("input '" + b.name + "' has shape " + shapeString(shape) +
                   ", expected [" + std::to_string(batch) + ", " +
                   std::to_string(L) + "]");
      if (t->dtype != LF_DTYPE_U8)
        invalid("input '" + b.name + "' is " + lfDtypeName(t->dtype) +
                ", expected u8");
      const auto *src = static_cast<const uint8_t *>(t->data);
      for (int64_t i = 0; i < batch; ++i) {
        bool any = false;
        for (int64_t j = 0; j < L; ++j) {
          mask[i * n + j] = src[i * L + j] ? 1 : 0;
          any |= src[i * L + j] != 0;
        }
        if (!any && lowestLength() > 0)
          invalid("input '" + b.name + "': row " + std::to_string(i) +
                  " has no real token");
      }
    } else if (const lf_tensor *t = lengthsForMask ? lengthsForMask
                                    : mod.lengthsBuffer() >= 0
                                        ? given[size_t(mod.lengthsBuffer())]
                                        : nullptr) {
      std::vector<int64_t> values;
      readLengths(*t, "lengths", batch, L, values, lowestLength());
      for (int64_t i = 0; i < batch; ++i)
        std::memset(mask + i * n, 1, size_t(values[i]));
    } else {
      for (int64_t i = 0; i < batch; ++i)
        std::memset(mask + i * n, 1, size_t(L));
    }
  }
}

void Session::Impl::bindInputs() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  // Bind inputs: zero-copy when nothing needs padding, else copy + pad.
  // The CPU kernels of a model with lengths never read a row past its
  // sequence's length (row tiles past it are skipped, token reductions stop
  // at it: the poisoning runs check this), so only the real rows are copied
  // and the padding is not written (NaN bytes when poisoning, which also
  // copies full-length input so that its padded rows are poisoned). Where
  // kernels read padded rows (`kernelsReadPadding`: CUDA, Halide) they are
  // zeros, so that stale values (an Inf of an earlier run) cannot reach a
  // real row as 0 * Inf.
  bound = owned;
  devIo.assign(m.buffers.size(), false);
  // This run's real lengths, for the copies and the kernels' length rules.
  lengths =
      mod.lengthsBuffer() >= 0
          ? static_cast<const int32_t *>(owned[size_t(mod.lengthsBuffer())])
          : nullptr;
  realLengths = kernelsReadPadding ? nullptr : lengths;
  packedKernels = m.packedSequences && lengths;
  if (packedKernels) {
    rowStart.assign(size_t(B) + 1, 0);
    for (int64_t i = 0; i < B; ++i)
      rowStart[size_t(i) + 1] = rowStart[size_t(i)] + lengths[i];
  }
  for (size_t idx : mod.ios(LF_IO_INPUT)) {
    const ManifestBuffer &b = m.buffers[idx];
    const lf_tensor *t = given[idx];
    if (b.role != BufferRole::None)
      continue;
    if (onDevice) {
      if (packedKernels && mod.isSequence(idx) && !packedInPlace(L))
        notPackedOnDevice("input", b.name);
      bound[idx] = t->data;
      devIo[idx] = true;
      continue;
    }
    if (packedKernels && mod.isSequence(idx)) {
      if (isAligned(t->data, b.dtype) && packedInPlace(L)) {
        bound[idx] = t->data;
        continue;
      }
      // Each sequence's real rows, packed (the rest is never read: NaN
      // bytes when poisoning).
      size_t row = rowBytes(idx);
      auto *dst = static_cast<uint8_t *>(owned[idx]);
      auto *src = static_cast<const uint8_t *>(t->data);
      for (int64_t i = 0; i < batch; ++i)
        copyIn(dst + size_t(rowStart[size_t(i)]) * row,
               src + size_t(callerStart(i, L)) * row, size_t(lengths[i]) * row);
      if (poison)
        copyBytes(pool, dst + size_t(rowStart[size_t(batch)]) * row, nullptr,
                  0xff, size_t(B * n - rowStart[size_t(batch)]) * row);
      continue;
    }
    // A packed run with every sequence of length n is the padded layout.
    bool fullRows = packed ? T == B * n && batch == B : L == n && batch == B;
    if ((!mod.isSequence(idx) || (fullRows && !(poison && realLengths))) &&
        isAligned(t->data, b.dtype)) {
      bound[idx] = t->data;
      continue;
    }
    if (!mod.isSequence(idx)) {
      copyIn(static_cast<uint8_t *>(owned[idx]),
             static_cast<const uint8_t *>(t->data), b.byteSize());
      continue;
    }
    size_t row = rowBytes(idx);
    auto *dst = static_cast<uint8_t *>(owned[idx]);
    auto *src = static_cast<const uint8_t *>(t->data);
    for (int64_t i = 0; i < batch; ++i) {
      // Sequence i: `len` rows from row `first` of the caller's tensor.
      int64_t first = callerStart(i, L);
      int64_t len = packed ? packedLength(i) : L;
      if (realLengths)
        len = std::min<int64_t>(len, realLengths[i]);
      copyIn(dst + size_t(i * n) * row, src + size_t(first) * row,
             size_t(len) * row);
      if (poison || !realLengths)
        copyBytes(pool, dst + size_t(i * n + len) * row, nullptr,
                  poison ? 0xff : 0, size_t(n - len) * row);
    }
  }
}

void Session::Impl::bindOutputs() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  direct.assign(m.buffers.size(), false);
  for (size_t idx : mod.ios(LF_IO_OUTPUT)) {
    const lf_tensor *t = wanted[idx];
    if (t && onDevice) {
      if (packedKernels && mod.isSequence(idx) &&
          !packedInPlace(packed ? 0 : t->shape[1]))
        notPackedOnDevice("output", m.buffers[idx].name);
      bound[idx] = t->data;
      direct[idx] = devIo[idx] = true;
      continue;
    }
    if (t && packedKernels && mod.isSequence(idx)) {
      // In place when the caller's layout is the kernels' (the rows past
      // each length are zeroed after the run).
      if (isAligned(t->data, m.buffers[idx].dtype) &&
          packedInPlace(packed ? 0 : t->shape[1])) {
        bound[idx] = t->data;
        direct[idx] = true;
      }
      continue;
    }
    if (!t || !isAligned(t->data, m.buffers[idx].dtype) || packed ||
        std::vector<int64_t>(t->shape, t->shape + t->rank) !=
            m.buffers[idx].shape)
      continue;
    bound[idx] = t->data;
    direct[idx] = true;
  }
}

void Session::Impl::launch() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  if (cuda) {
    // Kernels with a length rule number their blocks along x: launch them
    // up to the last block that holds a real token (the rest would only
    // compute padding).
    gridX.assign(m.kernels.size(), -1);
    // Length variants run for the longest sequence's length (n when every
    // workgroup runs).
    int64_t longest = mod.seqLen();
    if (lengths && !allWorkgroups) {
      longest = 0;
      for (int64_t s = 0; s < m.buffers[size_t(mod.lengthsBuffer())].shape[0];
           ++s)
        longest = std::max<int64_t>(longest, lengths[s]);
    }
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      const ManifestKernel &kernel = m.kernels[k];
      int64_t blocks = kernel.grid[0];
      if (!kernel.maxLength.empty() &&
          !(kernel.maxLength[0] < longest && longest <= kernel.maxLength[1])) {
        blocks = 0;
        gridX[k] = 0;
      } else if (lengths && kernel.hasRows() && !allWorkgroups) {
        activeRanges(kernel, lengths, ranges);
        blocks = ranges.empty() ? 0 : ranges.back().second;
        gridX[k] = blocks;
      }
      if (profiling)
        kernelRan[k] = blocks * kernel.grid[1] * kernel.grid[2];
    }
    // Packed sequence buffers: only their real rows go to and from the
    // device (bound in place, the caller's memory may hold no more).
    std::vector<int64_t> ioBytes;
    if (packedKernels) {
      ioBytes.assign(m.buffers.size(), -1);
      for (lf_io_kind kind : {LF_IO_INPUT, LF_IO_OUTPUT})
        for (size_t idx : mod.ios(kind))
          if (mod.isSequence(idx))
            ioBytes[idx] = rowStart[size_t(batch)] * int64_t(rowBytes(idx));
    }
    // Staged inputs to the device, the launches, the outputs back into
    // `bound` (the caller's memory where direct, else the arena).
    cuda->run(bound, devIo, gridX, profiling ? &kernelMs : nullptr, ioBytes);
    if (profiling)
      for (std::vector<double> &times : kernelMs)
        if (times.size() > kMaxProfiledRuns)
          times.erase(times.begin());
  }
  if (poison)
    for (size_t i = 0; i < m.buffers.size(); ++i)
      if (m.buffers[i].kind == BufferKind::Intermediate)
        std::memset(owned[i], 0xff, size_t(m.buffers[i].byteSize()));
  // Kernels in manifest order; parallelFor returning is the barrier. The
  // initializers ran when the session was created.
  for (size_t k = 0; !cuda && k < m.kernels.size(); ++k)
    if (!m.kernels[k].initializer)
      runKernel(k, lengths);
}

void Session::Impl::copyOutputs() {
  const Module &mod = *module;
  const Manifest &m = mod.manifest();
  for (size_t idx : mod.ios(LF_IO_OUTPUT)) {
    const lf_tensor *t = wanted[idx];
    if (!t)
      continue;
    const ManifestBuffer &b = m.buffers[idx];
    auto *dst = static_cast<uint8_t *>(t->data);
    if (!mod.isSequence(idx)) {
      if (!direct[idx])
        copyOut(dst, static_cast<const uint8_t *>(owned[idx]), b.byteSize());
      continue;
    }
    size_t row = rowBytes(idx);
    if (packedKernels && devIo[idx])
      continue; // the kernels wrote the real rows; the rest stays as it was
    if (packedKernels) {
      // Each sequence's real rows from the packed buffer (unless written in
      // place), then zeros for the rest of a [b, rows] tensor's sequence.
      int64_t rows = packed ? 0 : t->shape[1];
      const auto *src = static_cast<const uint8_t *>(owned[idx]);
      for (int64_t i = 0; i < batch; ++i) {
        int64_t first = callerStart(i, rows), len = lengths[i];
        if (!direct[idx])
          copyOut(dst + size_t(first) * row,
                  src + size_t(rowStart[size_t(i)]) * row, size_t(len) * row);
        if (!packed && len < rows)
          copyBytes(pool, dst + size_t(first + len) * row, nullptr, 0,
                    size_t(rows - len) * row);
      }
      continue;
    }
    if (packed) {
      // Each sequence's real rows, end to end.
      const auto *src = static_cast<const uint8_t *>(owned[idx]);
      for (int64_t i = 0; i < batch; ++i)
        copyOut(dst + size_t(offsets[size_t(i)]) * row,
                src + size_t(i * n) * row, size_t(packedLength(i)) * row);
      continue;
    }
    // Rows per sequence in the caller's tensor: n (all) or L; the real
    // ones are copied (unless written in place), the rest are zeros.
    int64_t rows = t->shape[1];
    auto *src = static_cast<const uint8_t *>(owned[idx]);
    for (int64_t i = 0; i < batch; ++i) {
      int64_t len =
          lengths && !devIo[idx] ? std::min<int64_t>(lengths[i], rows) : rows;
      if (!direct[idx])
        copyOut(dst + size_t(i * rows) * row, src + size_t(i * n) * row,
                size_t(len) * row);
      if (len < rows)
        copyBytes(pool, dst + size_t(i * rows + len) * row, nullptr, 0,
                  size_t(rows - len) * row);
    }
  }
}

/// A sequence-parallel module needs its ranks, a rank and the all-reduce;
/// any other module none of them.
static void checkRanks(const Module &module, const SessionOptions &o) {
  int64_t ranks = module.sequenceParallel();
  if (ranks == 0) {
    if (o.ranks > 1 || o.rank != 0 || o.allReduce)
      throw Error(LF_INVALID_ARGUMENT,
                  "'" + module.path() +
                      "' is not sequence-parallel (it runs whole "
                      "sequences), but the options give rank " +
                      std::to_string(o.rank) + " of " +
                      std::to_string(o.ranks) +
                      (o.allReduce ? " and an all-reduce" : ""));
    return;
  }
  std::string what = "'" + module.path() + "' splits each sequence over " +
                     std::to_string(ranks) + " ranks";
  if (o.ranks != ranks)
    throw Error(LF_INVALID_ARGUMENT,
                what + ", but the options give ranks = " +
                    std::to_string(o.ranks) +
                    " (lf_session_options: rank, ranks, all_reduce)");
  if (o.rank < 0 || o.rank >= ranks)
    throw Error(LF_INVALID_ARGUMENT, what + ": rank " + std::to_string(o.rank) +
                                         " is not in [0, " +
                                         std::to_string(ranks) + ")");
  if (!o.allReduce)
    throw Error(LF_INVALID_ARGUMENT,
                what + ", and the options give no all_reduce to sum each "
                       "layer's projections over them with");
}

Session::Session(std::shared_ptr<const Module> module,
                 std::shared_ptr<const Weights> weights,
                 const SessionOptions &options) {
  int numThreads = options.numThreads, spinUs = options.spinUs;
  void *cudaStream = options.cudaStream;
  weights->check(*module);
  checkRanks(*module, options);
  if (spinUs < -1 || spinUs > 1000000)
    throw Error(LF_INVALID_ARGUMENT,
                "spin_us is " + std::to_string(spinUs) +
                    " (microseconds from 0 to 1000000, or -1 for the "
                    "default)");
  if (cudaStream && !module->cuda())
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_stream is set, and '" + module->path() +
                    "' runs on the cpu (a stream needs a cuda module)");
  if (options.cudaGraphs < -1 || options.cudaGraphs > 1)
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_graphs is " + std::to_string(options.cudaGraphs) +
                    " (0: a launch per kernel, 1: a CUDA graph per run, "
                    "-1: graphs for device runs)");
  if (options.cudaGraphs == 1 && !module->cuda())
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_graphs is set, and '" + module->path() +
                    "' runs on the cpu (graphs need a cuda module)");
  if (options.cudaGraphBranches < 0 || options.cudaGraphBranches > 16)
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_graph_branches is " +
                    std::to_string(options.cudaGraphBranches) +
                    " (0 or 1: one chain of launches; 2 to 16: branches of "
                    "a graph)");
  if (options.cudaGraphBranches > 1 && !module->cuda())
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_graph_branches is set, and '" + module->path() +
                    "' runs on the cpu (branches are a CUDA graph's)");
  if (options.cudaGraphBranches > 1 && options.cudaGraphs == 0)
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_graph_branches is " +
                    std::to_string(options.cudaGraphBranches) +
                    " and cuda_graphs is 0: branches are a CUDA graph's, "
                    "and no run makes one");
  if (numThreads < 0)
    throw Error(LF_INVALID_ARGUMENT,
                "num_threads is " + std::to_string(numThreads) +
                    " (use 0 for one per hardware thread)");
  if (numThreads == 0)
    numThreads = int(std::max(1u, std::thread::hardware_concurrency()));
  numThreads = std::min(numThreads, 1024);
  SessionOptions resolved = options;
  resolved.numThreads = numThreads;
  impl_ = std::make_unique<Impl>(
      std::move(module), std::move(weights), resolved,
      spinUs < 0 ? ThreadPool::kSpin : std::chrono::microseconds(spinUs));
  const char *poison = std::getenv("LINFORMER_DEBUG_POISON");
  impl_->poison = poison && std::strcmp(poison, "1") == 0;
  const char *all = std::getenv("LINFORMER_DEBUG_ALL_WORKGROUPS");
  impl_->allWorkgroups = all && std::strcmp(all, "1") == 0;
  impl_->plan();
}

Session::~Session() = default;

int Session::numThreads() const { return impl_->pool.size(); }

size_t Session::kernelCount() const {
  return impl_->module->manifest().kernels.size();
}

/// The manifest's kernel `index`, or LF_INVALID_ARGUMENT.
static const ManifestKernel &kernelAt(const Module &module, size_t index) {
  const std::vector<ManifestKernel> &kernels = module.manifest().kernels;
  if (index >= kernels.size())
    throw Error(LF_INVALID_ARGUMENT,
                "kernel index " + std::to_string(index) + " is out of range (" +
                    std::to_string(kernels.size()) + " kernels)");
  return kernels[index];
}

bool Session::kernelIsInitializer(size_t index) const {
  return kernelAt(*impl_->module, index).initializer;
}

void Session::profile(size_t index, lf_kernel_profile &out) {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  if (!impl_->profiling)
    throw Error(LF_INVALID_ARGUMENT,
                "the session was created without profiling (set "
                "lf_session_options.profile)");
  const ManifestKernel &kernel = kernelAt(*impl_->module, index);
  std::vector<double> times = impl_->kernelMs[index];
  out.symbol = kernel.symbol.c_str();
  out.key = impl_->kernelKeys[index].c_str();
  out.workgroups = kernel.workgroups;
  out.runs = int64_t(times.size());
  // A kernel whose length rule skipped workgroups did that share of them.
  out.flops = impl_->kernelFlops[index] * double(impl_->kernelRan[index]) /
              double(std::max<int64_t>(1, kernel.workgroups));
  out.min_ms = out.median_ms = out.mean_ms = 0;
  if (times.empty())
    return;
  std::sort(times.begin(), times.end());
  out.min_ms = times.front();
  out.median_ms = times[times.size() / 2];
  double sum = 0;
  for (double t : times)
    sum += t;
  out.mean_ms = sum / double(times.size());
}

void Session::copiedBytes(int64_t &in, int64_t &out) {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  in = impl_->copiedIn;
  out = impl_->copiedOut;
}

void Session::resetProfile() {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  // An initializer's one run (at creation) stays: it has no other.
  const std::vector<ManifestKernel> &kernels =
      impl_->module->manifest().kernels;
  for (size_t k = 0; k < kernels.size(); ++k)
    if (!kernels[k].initializer)
      impl_->kernelMs[k].clear();
}

void Session::run(const lf_tensor *inputs, size_t numInputs,
                  const lf_tensor *outputs, size_t numOutputs, bool onDevice) {
  std::lock_guard<std::mutex> lock(impl_->runMutex);
  impl_->run(inputs, numInputs, outputs, numOutputs, onDevice);
}

} // namespace runtime
} // namespace linformer
