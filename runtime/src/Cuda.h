//===- Cuda.h - Running cuda artifacts through the driver API ---*- C++ -*-===//
//
// The CUDA half of the runtime, with no link-time CUDA dependency: the
// driver (libcuda.so.1, or the library LF_CUDA_DRIVER names) is opened with
// dlopen the first time a cuda artifact is loaded. Without it, or without a
// device, loading a cuda artifact is LF_UNAVAILABLE and nothing else
// changes.
//
//   CudaModule   one loaded artifact on device 0: the primary context, the
//                kernel module (the cubin when it fits the device, else the
//                PTX, compiled by the driver), one CUfunction per manifest
//                kernel, and the weights uploaded once per Weights object,
//                shared by every session that runs with them.
//   CudaSession  one session's device buffers (inputs, outputs,
//                intermediates) and stream; a run copies the staged inputs
//                in, launches the kernels in manifest order (or, with CUDA
//                graphs, replays them as one graph launch) and copies the
//                outputs out.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_SRC_CUDA_H
#define LINFORMER_RUNTIME_SRC_CUDA_H

#include "lib/Manifest/Manifest.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace linformer {
namespace runtime {

class Weights;
class CudaModule;
struct DeviceWeights;

/// Opens device 0 and loads the artifact's code. Throws Error:
/// LF_UNAVAILABLE without a driver, a device, or a device that can run the
/// code; LF_FORMAT_ERROR when the driver refuses the code or a kernel is
/// missing from it.
std::shared_ptr<CudaModule> openCudaModule(const Manifest &manifest,
                                           std::string_view ptx,
                                           std::string_view cubin,
                                           const std::string &path);

/// "NVIDIA H100 80GB HBM3 (sm_90, 132 SMs)".
std::string describeDevice(const CudaModule &module);

/// Device memory in the module's context (lf_device_*). Throw Error.
uint64_t deviceAlloc(const CudaModule &module, size_t bytes);
void deviceFree(const CudaModule &module, uint64_t address);
void deviceCopy(const CudaModule &module, uint64_t deviceDst,
                const void *hostSrc, size_t bytes);
void deviceCopy(const CudaModule &module, void *hostDst, uint64_t deviceSrc,
                size_t bytes);

class CudaSession {
public:
  /// Allocates the session's device buffers, uploads (or shares) the
  /// weights and runs the initializer kernels, once. `stream`: the caller's,
  /// which the session uses and never destroys; null: one of its own.
  /// `graphs` (lf_session_options.cuda_graphs): 1, runs replay their
  /// launches as CUDA graphs (LF_UNAVAILABLE with a driver that has none,
  /// LF_INVALID_ARGUMENT with `profile`); -1, runs with device I/O do, where
  /// neither stands in the way; 0, none does. `branches` (lf_session_options.
  /// cuda_graph_branches) >= 2: a graph's kernels go on that many
  /// branches (see launchBranches). Throws Error.
  CudaSession(std::shared_ptr<const CudaModule> module,
              const Manifest &manifest, const Weights &weights, bool profile,
              void *stream = nullptr, int graphs = 0, int branches = 0);
  ~CudaSession();
  CudaSession(const CudaSession &) = delete;
  CudaSession &operator=(const CudaSession &) = delete;

  /// One run: `host[i]` is where buffer i's data is on the host (inputs:
  /// read; outputs: written; others ignored), or, where `onDevice[i]`, the
  /// caller's device address, bound to the kernels without a copy. With
  /// profiling, appends each kernel's milliseconds (CUDA events) to
  /// `kernelMs[k]`. On the caller's stream, a run whose outputs all stay
  /// on the device (and that is not profiled) returns without waiting.
  /// `ioBytes[i]` >= 0: copy only that many of buffer i's first bytes
  /// (a packed sequence buffer's real rows, which may be all the caller's
  /// memory holds); -1 or no entry: all of it.
  void run(const std::vector<void *> &host, const std::vector<bool> &onDevice,
           const std::vector<int64_t> &gridX,
           std::vector<std::vector<double>> *kernelMs,
           const std::vector<int64_t> &ioBytes = {});

  /// The milliseconds initializer kernel k took when the session was
  /// created (CUDA events, with profiling), else -1.
  double initializerMs(size_t k) const {
    return k < initializerMs_.size() ? initializerMs_[k] : -1.0;
  }

  /// The most graphs a session keeps (one per distinct launch shape and
  /// binding); past it, the least recently replayed is dropped.
  static constexpr size_t kMaxGraphs = 64;

private:
  void release() noexcept;
  /// Runs the initializer kernels once, in manifest order, on the
  /// session's buffers (the constants they write stay for every run), and
  /// waits for them.
  void initialize();
  /// The kernels in manifest order, bound to `address`, block x up to
  /// `gridX` (see run), on the session's stream: a run's, or with
  /// `initializers` the initializers. With profiling, each between its
  /// two events.
  void launchKernels(const std::vector<uint64_t> &address,
                     const std::vector<int64_t> &gridX,
                     bool initializers = false);
  /// Encodes the tensor maps whose source is bound at another address in
  /// `address` than they were last encoded for (all of them, the first
  /// time) and copies them to their device buffers on the stream. Throws
  /// Error: LF_UNAVAILABLE without the driver's entry point,
  /// LF_INVALID_ARGUMENT for a source the driver refuses (misaligned) or a
  /// rewrite while the caller captures the stream.
  void encodeTensorMaps(const std::vector<uint64_t> &address);
  /// Kernel k's milliseconds between its two events (profiling).
  double eventMs(size_t k) const;
  /// Kernel k's blocks along x this run (gridX[k], or its grid's).
  int64_t launchBlocksX(size_t k, const std::vector<int64_t> &gridX) const;
  /// Launches kernel k bound to `address` with `blocksX` blocks along x
  /// on `stream`.
  void launchKernel(size_t k, const std::vector<uint64_t> &address,
                    int64_t blocksX, void *stream);
  /// The same launches while the session's stream is being captured, on
  /// the stream and the session's branch streams: each kernel waits only
  /// for the earlier ones it conflicts with (one writes a buffer the
  /// other binds: ManifestKernel::mayWrite, the bound addresses' byte
  /// ranges overlapping), by an event recorded after each launch; the
  /// branches fork from the stream first and join it at the end, as a
  /// capture requires.
  void launchBranches(const std::vector<uint64_t> &address,
                      const std::vector<int64_t> &gridX);
  /// The executable graph of those launches: captured from the stream on
  /// first use of this (address, gridX), replayed after.
  void *graphFor(const std::vector<uint64_t> &address,
                 const std::vector<int64_t> &gridX);

  std::shared_ptr<const CudaModule> module_;
  const Manifest &manifest_;
  std::shared_ptr<DeviceWeights> weights_;
  std::vector<uint64_t> device_; ///< per buffer: its device address
  std::vector<uint64_t> owned_;  ///< allocations this session frees
  void *stream_ = nullptr;
  bool ownsStream_ = true;
  std::vector<void *> events_; ///< 2 per kernel when profiling
  std::vector<double> initializerMs_;
  /// Per buffer, for tensor maps: the device address the map was encoded
  /// for (0: not yet) and its bytes on the host.
  struct alignas(64) TensorMapBytes {
    unsigned char bytes[kTensorMapBytes];
  };
  std::vector<uint64_t> mapSource_;
  std::vector<TensorMapBytes> mapHost_;
  /// With branches: the streams besides stream_, an event per kernel
  /// (recorded after its launch) and the capture's fork event.
  std::vector<void *> branchStreams_, kernelEvents_;
  void *forkEvent_ = nullptr;
  /// launchKernel's parameter values and pointers to them, reused.
  std::vector<unsigned long long> launchParams_; ///< CUdeviceptr
  std::vector<void *> launchArgs_;
  /// 1: every run replays graphs; -1: runs with device I/O; 0: none.
  int graphs_ = 0;
  struct Graph {
    std::vector<uint64_t> address;
    std::vector<int64_t> gridX;
    void *exec = nullptr; ///< CUgraphExec
    uint64_t lastUse = 0;
  };
  std::vector<Graph> graphCache_;
  uint64_t graphUses_ = 0;
};

} // namespace runtime
} // namespace linformer

#endif // LINFORMER_RUNTIME_SRC_CUDA_H
