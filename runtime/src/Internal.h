//===- Internal.h - Runtime internals behind the C API ----------*- C++ -*-===//
//
// The C++ objects the opaque C handles point to (Module, Weights, Session),
// and the exception the implementation throws internally. Every C entry
// point catches it (and everything else) and turns it into an lf_status, so
// exceptions never cross the C boundary.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_SRC_INTERNAL_H
#define LINFORMER_RUNTIME_SRC_INTERNAL_H

#include "linformer/runtime.h"

#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/KernelObject.h"
#include "lib/Manifest/Manifest.h"
#include "lib/Safetensors/Safetensors.h"

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace linformer {
namespace runtime {

/// The internal error: a status code and a message. Thrown anywhere below
/// the C API, caught at its boundary.
struct Error : std::runtime_error {
  Error(lf_status_code code, const std::string &message)
      : std::runtime_error(message), code(code) {}
  lf_status_code code;
};

/// Maps a lib/ FileError onto the runtime's codes and throws it.
[[noreturn]] void throwFileError(const FileError &err);

/// `void S_dispatch(void **buffers, int64_t begin, int64_t end)`: runs
/// workgroups [begin, end) of kernel S over its bound buffers.
using DispatchFn = void (*)(void **, int64_t, int64_t);

class CudaModule;

/// A loaded, validated artifact. Immutable after load.
class Module {
public:
  /// Throws Error.
  /// `device`: "" (the best the artifact and machine allow: cuda when it
  /// can run, else cpu), "cpu" or "cuda".
  static std::shared_ptr<Module> load(const std::string &path,
                                      const std::string &device = "");
  /// Everything load() checks before the kernels' object is handed to the
  /// dynamic loader, on an opened artifact; the result has no kernels. For
  /// tests and fuzzing of the validation. Throws Error.
  static std::shared_ptr<Module> validate(
      const Artifact &artifact, const std::string &path,
      const char *manifestSection = kManifestSection);
  ~Module();

  const std::string &path() const { return path_; }
  const Manifest &manifest() const { return manifest_; }
  const std::string &manifestText() const { return manifestText_; }
  const std::vector<DispatchFn> &dispatch() const { return dispatch_; }
  /// The device state of a cuda artifact; null for cpu.
  const std::shared_ptr<CudaModule> &cuda() const { return cuda_; }
  /// Where the kernels run: "cpu (<cpu name>)" or the CUDA device.
  const std::string &device() const { return device_; }

  /// Buffer indices of inputs, outputs and weights, in manifest order.
  const std::vector<size_t> &ios(lf_io_kind kind) const {
    return ios_[size_t(kind)];
  }
  /// Compiled [b, n] of the sequence inputs; 0 when there are none.
  int64_t batch() const { return batch_; }
  int64_t seqLen() const { return seqLen_; }
  /// Whether buffer `i` has its dim 1 padded to n (sequence input/output).
  bool isSequence(size_t i) const { return isSequence_[i]; }
  /// The ranks a sequence-parallel module splits a sequence over, or 0.
  int64_t sequenceParallel() const { return ranks_; }
  /// Index of the buffer with that role, or -1.
  int64_t lengthsBuffer() const { return lengthsBuffer_; }
  int64_t maskBuffer() const { return maskBuffer_; }

private:
  Module() = default;
  void checkGeometry();
  void checkKernels() const;
  void openKernels(std::string_view object);

  std::string path_;
  Manifest manifest_;
  std::string manifestText_;
  std::vector<DispatchFn> dispatch_;
  /// What each kernel's object states about itself (KernelObject.h).
  std::vector<KernelAbi> abis_;
  std::vector<size_t> ios_[3];
  std::vector<bool> isSequence_;
  int64_t batch_ = 0, seqLen_ = 0;
  int64_t lengthsBuffer_ = -1, maskBuffer_ = -1;
  int64_t ranks_ = 0;
  std::shared_ptr<CudaModule> cuda_;
  std::string device_;
  void *dlHandle_ = nullptr;
  int objectFd_ = -1;      ///< the memfd (or temp file) dlopen mapped
  std::string objectPath_; ///< temp file fallback, unlinked on unload
};

/// A weight's shape in a file that holds it whole: a sequence-split weight
/// (ManifestBuffer::sequenceSplit) has its last axis times the ranks.
std::vector<int64_t> wholeShape(const ManifestBuffer &weight);

/// A mapped safetensors file. Immutable after load.
class Weights {
public:
  /// Throws Error.
  static std::shared_ptr<Weights> load(const std::string &path);

  const std::string &path() const { return path_; }
  const SafetensorsFile &file() const { return file_; }
  /// Throws LF_WEIGHTS_MISMATCH listing every weight `module` expects that
  /// is missing or differs.
  void check(const Module &module) const;

private:
  std::string path_;
  SafetensorsFile file_;
};

class ThreadPool;

/// What a session is created with: lf_session_options, read.
struct SessionOptions {
  /// 0: one per hardware thread.
  int numThreads = 0;
  bool profile = false;
  /// The caller's CUstream (cuda modules only), or null.
  void *cudaStream = nullptr;
  /// lf_session_options::spin_us (-1: the pool's default).
  int spinUs = -1;
  /// A sequence-parallel module's rank of `ranks`, and the application's
  /// all-reduce.
  int rank = 0, ranks = 0;
  lf_all_reduce_fn allReduce = nullptr;
  void *allReduceUserData = nullptr;
  /// lf_session_options::cuda_graphs (-1: for device runs, 0 or 1).
  int cudaGraphs = -1;
  /// lf_session_options::cuda_graph_branches (0 or 1: one chain).
  int cudaGraphBranches = 0;
};

/// Runs one module with one set of weights; owns its threads and buffers.
class Session {
public:
  Session(std::shared_ptr<const Module> module,
          std::shared_ptr<const Weights> weights,
          const SessionOptions &options);
  ~Session();

  int numThreads() const;
  size_t kernelCount() const;
  /// Whether kernel `index` is an initializer (LF_INVALID_ARGUMENT when out
  /// of range).
  bool kernelIsInitializer(size_t index) const;
  /// Throws LF_INVALID_ARGUMENT without profiling or for a bad index.
  void profile(size_t index, lf_kernel_profile &out);
  void resetProfile();
  /// The last run's copies (lf_session_copied_bytes).
  void copiedBytes(int64_t &in, int64_t &out);
  /// `onDevice`: data inputs and outputs are device pointers (cuda only).
  void run(const lf_tensor *inputs, size_t numInputs, const lf_tensor *outputs,
           size_t numOutputs, bool onDevice = false);

private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

} // namespace runtime
} // namespace linformer

struct lf_module_s {
  std::shared_ptr<const linformer::runtime::Module> impl;
};
struct lf_weights_s {
  std::shared_ptr<const linformer::runtime::Weights> impl;
};
struct lf_session_s {
  std::unique_ptr<linformer::runtime::Session> impl;
};

#endif // LINFORMER_RUNTIME_SRC_INTERNAL_H
