//===- Cuda.cpp - Running cuda artifacts through the driver API -----------===//
//
// See Cuda.h. The driver's types and entry points are declared here, from
// the CUDA driver API's documented ABI (cuda.h is not needed to build the
// runtime); versioned entry points (cuMemAlloc_v2, ...) are looked up by the
// names cuda.h maps the plain names to.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Internal.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <map>
#include <mutex>

namespace linformer {
namespace runtime {

namespace {

using CUresult = int;
using CUdevice = int;
using CUdeviceptr = unsigned long long;
using CUcontext = void *;
using CUmodule = void *;
using CUfunction = void *;
using CUstream = void *;
using CUevent = void *;
using CUgraph = void *;
using CUgraphExec = void *;

constexpr CUresult CUDA_SUCCESS = 0;
constexpr CUresult CUDA_ERROR_NO_DEVICE = 100;
constexpr int CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT = 16;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR = 75;
constexpr int CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR = 76;
constexpr int CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN = 97;
constexpr int CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8;
constexpr int CU_JIT_ERROR_LOG_BUFFER = 5;
constexpr int CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES = 6;
constexpr unsigned CU_STREAM_NON_BLOCKING = 1;
constexpr unsigned CU_EVENT_DEFAULT = 0;
constexpr unsigned CU_EVENT_DISABLE_TIMING = 2;
constexpr int CU_STREAM_CAPTURE_MODE_THREAD_LOCAL = 1;
constexpr int CU_STREAM_CAPTURE_STATUS_NONE = 0;
// cuTensorMapEncodeTiled's enums (CUtensorMapDataType, ...Swizzle, ...).
constexpr int CU_TENSOR_MAP_DATA_TYPE_UINT8 = 0;
constexpr int CU_TENSOR_MAP_DATA_TYPE_INT32 = 3;
constexpr int CU_TENSOR_MAP_DATA_TYPE_INT64 = 5;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT16 = 6;
constexpr int CU_TENSOR_MAP_DATA_TYPE_FLOAT32 = 7;
constexpr int CU_TENSOR_MAP_DATA_TYPE_BFLOAT16 = 9;
constexpr int CU_TENSOR_MAP_INTERLEAVE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_NONE = 0;
constexpr int CU_TENSOR_MAP_SWIZZLE_32B = 1;
constexpr int CU_TENSOR_MAP_SWIZZLE_64B = 2;
constexpr int CU_TENSOR_MAP_SWIZZLE_128B = 3;
constexpr int CU_TENSOR_MAP_L2_PROMOTION_L2_128B = 2;
constexpr int CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE = 0;

/// The driver entry points the runtime uses.
struct Driver {
  CUresult (*cuInit)(unsigned);
  CUresult (*cuDeviceGetCount)(int *);
  CUresult (*cuDeviceGet)(CUdevice *, int);
  CUresult (*cuDeviceGetAttribute)(int *, int, CUdevice);
  CUresult (*cuDeviceGetName)(char *, int, CUdevice);
  CUresult (*cuDevicePrimaryCtxRetain)(CUcontext *, CUdevice);
  CUresult (*cuDevicePrimaryCtxRelease)(CUdevice);
  CUresult (*cuCtxSetCurrent)(CUcontext);
  CUresult (*cuModuleLoadDataEx)(CUmodule *, const void *, unsigned, int *,
                                 void **);
  CUresult (*cuModuleUnload)(CUmodule);
  CUresult (*cuModuleGetFunction)(CUfunction *, CUmodule, const char *);
  CUresult (*cuFuncSetAttribute)(CUfunction, int, int);
  CUresult (*cuMemAlloc)(CUdeviceptr *, size_t);
  CUresult (*cuMemFree)(CUdeviceptr);
  CUresult (*cuMemcpyHtoDAsync)(CUdeviceptr, const void *, size_t, CUstream);
  CUresult (*cuMemcpyDtoHAsync)(void *, CUdeviceptr, size_t, CUstream);
  CUresult (*cuMemsetD8Async)(CUdeviceptr, unsigned char, size_t, CUstream);
  CUresult (*cuStreamCreate)(CUstream *, unsigned);
  CUresult (*cuStreamDestroy)(CUstream);
  CUresult (*cuStreamSynchronize)(CUstream);
  CUresult (*cuLaunchKernel)(CUfunction, unsigned, unsigned, unsigned,
                             unsigned, unsigned, unsigned, unsigned, CUstream,
                             void **, void **);
  CUresult (*cuEventCreate)(CUevent *, unsigned);
  CUresult (*cuEventRecord)(CUevent, CUstream);
  CUresult (*cuEventElapsedTime)(float *, CUevent, CUevent);
  CUresult (*cuEventDestroy)(CUevent);
  CUresult (*cuGetErrorName)(CUresult, const char **);
  CUresult (*cuGetErrorString)(CUresult, const char **);
  // CUDA graphs (lf_session_options.cuda_graphs), looked up apart: a driver
  // without them runs everything else.
  CUresult (*cuStreamBeginCapture)(CUstream, int);
  CUresult (*cuStreamEndCapture)(CUstream, CUgraph *);
  CUresult (*cuStreamIsCapturing)(CUstream, int *);
  CUresult (*cuGraphInstantiateWithFlags)(CUgraphExec *, CUgraph,
                                          unsigned long long);
  CUresult (*cuGraphLaunch)(CUgraphExec, CUstream);
  CUresult (*cuGraphExecDestroy)(CUgraphExec);
  CUresult (*cuGraphDestroy)(CUgraph);
  CUresult (*cuStreamWaitEvent)(CUstream, CUevent, unsigned);
  /// The graph entry points this driver lacks ("": none).
  std::string missingGraphs;
  // Tensor maps (manifests with `tensor_map` buffers), looked up apart: a
  // driver before CUDA 12 runs everything else.
  CUresult (*cuTensorMapEncodeTiled)(void *, int, unsigned, void *,
                                     const uint64_t *, const uint64_t *,
                                     const unsigned *, const unsigned *, int,
                                     int, int, int);

  std::string errorText(CUresult r) const {
    const char *name = nullptr, *text = nullptr;
    if (cuGetErrorName(r, &name) != CUDA_SUCCESS || !name)
      name = "unknown CUDA error";
    if (cuGetErrorString(r, &text) != CUDA_SUCCESS || !text)
      text = "";
    return std::string(name) + " (" + std::to_string(r) + ")" +
           (*text ? std::string(": ") + text : "");
  }
  /// Throws `code` naming the call when `r` is not CUDA_SUCCESS.
  void check(CUresult r, const std::string &what,
             lf_status_code code = LF_INTERNAL) const {
    if (r != CUDA_SUCCESS)
      throw Error(code, "CUDA: " + what + " failed: " + errorText(r));
  }
};

/// The driver, opened and initialised once per process. Throws
/// LF_UNAVAILABLE with the reason it cannot be used (remembered: a retry
/// gives the same answer without reopening).
const Driver &driver() {
  static std::once_flag once;
  static Driver d;
  static std::string failure;
  std::call_once(once, [] {
    const char *override = std::getenv("LF_CUDA_DRIVER");
    std::string lib = override && *override ? override : "libcuda.so.1";
    void *h = ::dlopen(lib.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!h) {
      const char *why = ::dlerror();
      failure = "cannot load the CUDA driver " + lib + " (" +
                (why ? why : "dlopen failed") +
                "): this machine has no NVIDIA driver";
      return;
    }
    std::string missing;
    auto sym = [&](auto &fn, const char *name) {
      fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(
          ::dlsym(h, name));
      if (!fn)
        missing += (missing.empty() ? "" : ", ") + std::string(name);
    };
    sym(d.cuInit, "cuInit");
    sym(d.cuDeviceGetCount, "cuDeviceGetCount");
    sym(d.cuDeviceGet, "cuDeviceGet");
    sym(d.cuDeviceGetAttribute, "cuDeviceGetAttribute");
    sym(d.cuDeviceGetName, "cuDeviceGetName");
    sym(d.cuDevicePrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
    sym(d.cuDevicePrimaryCtxRelease, "cuDevicePrimaryCtxRelease_v2");
    sym(d.cuCtxSetCurrent, "cuCtxSetCurrent");
    sym(d.cuModuleLoadDataEx, "cuModuleLoadDataEx");
    sym(d.cuModuleUnload, "cuModuleUnload");
    sym(d.cuModuleGetFunction, "cuModuleGetFunction");
    sym(d.cuFuncSetAttribute, "cuFuncSetAttribute");
    sym(d.cuMemAlloc, "cuMemAlloc_v2");
    sym(d.cuMemFree, "cuMemFree_v2");
    sym(d.cuMemcpyHtoDAsync, "cuMemcpyHtoDAsync_v2");
    sym(d.cuMemcpyDtoHAsync, "cuMemcpyDtoHAsync_v2");
    sym(d.cuMemsetD8Async, "cuMemsetD8Async");
    sym(d.cuStreamCreate, "cuStreamCreate");
    sym(d.cuStreamDestroy, "cuStreamDestroy_v2");
    sym(d.cuStreamSynchronize, "cuStreamSynchronize");
    sym(d.cuLaunchKernel, "cuLaunchKernel");
    sym(d.cuEventCreate, "cuEventCreate");
    sym(d.cuEventRecord, "cuEventRecord");
    sym(d.cuEventElapsedTime, "cuEventElapsedTime");
    sym(d.cuEventDestroy, "cuEventDestroy_v2");
    sym(d.cuGetErrorName, "cuGetErrorName");
    sym(d.cuGetErrorString, "cuGetErrorString");
    {
      // Versioned names as cuda.h maps the plain ones (CUDA 11.4 and up).
      std::string required;
      required.swap(missing);
      sym(d.cuStreamBeginCapture, "cuStreamBeginCapture_v2");
      sym(d.cuStreamEndCapture, "cuStreamEndCapture");
      sym(d.cuStreamIsCapturing, "cuStreamIsCapturing");
      sym(d.cuGraphInstantiateWithFlags, "cuGraphInstantiateWithFlags");
      sym(d.cuGraphLaunch, "cuGraphLaunch");
      sym(d.cuGraphExecDestroy, "cuGraphExecDestroy");
      sym(d.cuGraphDestroy, "cuGraphDestroy");
      sym(d.cuStreamWaitEvent, "cuStreamWaitEvent");
      d.missingGraphs.swap(missing);
      missing.swap(required);
    }
    d.cuTensorMapEncodeTiled =
        reinterpret_cast<decltype(d.cuTensorMapEncodeTiled)>(
            ::dlsym(h, "cuTensorMapEncodeTiled"));
    if (!missing.empty()) {
      failure = "the CUDA driver " + lib + " lacks " + missing +
                " (a driver older than CUDA 11?)";
      return;
    }
    if (CUresult r = d.cuInit(0); r != CUDA_SUCCESS) {
      failure = "the CUDA driver found no usable device (cuInit: " +
                d.errorText(r) + ")";
      return;
    }
    int count = 0;
    if (CUresult r = d.cuDeviceGetCount(&count);
        r != CUDA_SUCCESS || count < 1) {
      failure = "the CUDA driver reports no device" +
                (r != CUDA_SUCCESS ? " (" + d.errorText(r) + ")"
                                   : std::string());
      return;
    }
  });
  if (!failure.empty())
    throw Error(LF_UNAVAILABLE, failure);
  return d;
}

} // namespace

/// Weights on the device, one allocation per weight buffer.
struct DeviceWeights {
  std::shared_ptr<const CudaModule> module;
  std::vector<uint64_t> address; ///< per manifest buffer (0: not a weight)
  ~DeviceWeights();
};

class CudaModule : public std::enable_shared_from_this<CudaModule> {
public:
  ~CudaModule() {
    // Only ever built after driver() succeeded: it does not throw here.
    const Driver &d = driver();
    if (context)
      d.cuCtxSetCurrent(context);
    if (module)
      d.cuModuleUnload(module);
    if (context)
      d.cuDevicePrimaryCtxRelease(device);
  }
  void makeCurrent() const {
    driver().check(driver().cuCtxSetCurrent(context), "cuCtxSetCurrent");
  }
  std::shared_ptr<DeviceWeights> weightsFor(const Manifest &m,
                                            const Weights &w) const;

  CUdevice device = 0;
  CUcontext context = nullptr;
  CUmodule module = nullptr;
  std::vector<CUfunction> functions;
  std::string name;
  int sm = 0, smCount = 0;
  bool fromCubin = false;
  mutable std::mutex weightsMutex;
  mutable std::map<const Weights *, std::weak_ptr<DeviceWeights>> weights;
};

DeviceWeights::~DeviceWeights() {
  const Driver &d = driver();
  d.cuCtxSetCurrent(module->context);
  for (uint64_t a : address)
    if (a)
      d.cuMemFree(a);
}

std::shared_ptr<DeviceWeights>
CudaModule::weightsFor(const Manifest &m, const Weights &w) const {
  std::lock_guard<std::mutex> lock(weightsMutex);
  if (auto it = weights.find(&w); it != weights.end())
    if (std::shared_ptr<DeviceWeights> shared = it->second.lock())
      return shared;
  const Driver &d = driver();
  makeCurrent();
  auto dw = std::make_shared<DeviceWeights>();
  dw->module = shared_from_this();
  dw->address.assign(m.buffers.size(), 0);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.kind != BufferKind::Weight)
      continue;
    const SafetensorsTensor *t = w.file().find(b.name);
    CUdeviceptr p = 0;
    d.check(d.cuMemAlloc(&p, std::max<size_t>(t->size, 1)),
            "cuMemAlloc of weight '" + b.name + "' (" +
                std::to_string(t->size) + " bytes)");
    dw->address[i] = p;
    d.check(d.cuMemcpyHtoDAsync(p, t->data, t->size, nullptr),
            "uploading weight '" + b.name + "'");
  }
  d.check(d.cuStreamSynchronize(nullptr), "uploading the weights");
  weights[&w] = dw;
  return dw;
}

std::shared_ptr<CudaModule> openCudaModule(const Manifest &m,
                                           std::string_view ptx,
                                           std::string_view cubin,
                                           const std::string &path) {
  const Driver &d = driver();
  auto mod = std::make_shared<CudaModule>();
  d.check(d.cuDeviceGet(&mod->device, 0), "cuDeviceGet(0)", LF_UNAVAILABLE);
  int major = 0, minor = 0, optin = 0;
  d.check(d.cuDeviceGetAttribute(
              &major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR,
              mod->device),
          "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(
              &minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR,
              mod->device),
          "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(&mod->smCount,
                                 CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                                 mod->device),
          "cuDeviceGetAttribute");
  d.check(d.cuDeviceGetAttribute(
              &optin, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
              mod->device),
          "cuDeviceGetAttribute");
  char name[256] = {0};
  if (d.cuDeviceGetName(name, sizeof(name) - 1, mod->device) == CUDA_SUCCESS)
    mod->name = name;
  mod->sm = major * 10 + minor;

  // The code: the cubin runs on the SM it was built for and later minor
  // versions of the same major; PTX is compiled by the driver for any SM at
  // least the one it targets.
  int target = cudaTargetSm(m.target);
  std::string device = "sm_" + std::to_string(mod->sm) +
                       (mod->name.empty() ? "" : " (" + mod->name + ")");
  // An arch-specific target (sm_90a: wgmma) runs on that SM alone.
  bool specific = !m.target.cpu.empty() && m.target.cpu.back() == 'a';
  if (target <= 0 || mod->sm < target || (specific && mod->sm != target))
    throw Error(LF_UNAVAILABLE, "artifact '" + path + "' was compiled for " +
                                    m.target.cpu + ", and device 0 is " +
                                    device + ", which cannot run it");
  for (size_t i = 0; i < m.kernels.size(); ++i)
    if (m.kernels[i].sharedBytes > optin)
      throw Error(LF_UNAVAILABLE,
                  "artifact '" + path + "': kernel '" + m.kernels[i].symbol +
                      "' needs " + std::to_string(m.kernels[i].sharedBytes) +
                      " bytes of shared memory, and device 0 (" + device +
                      ") has " + std::to_string(optin) + " per block");
  d.check(d.cuDevicePrimaryCtxRetain(&mod->context, mod->device),
          "cuDevicePrimaryCtxRetain", LF_UNAVAILABLE);
  mod->makeCurrent();
  mod->fromCubin = !cubin.empty() && mod->sm / 10 == target / 10;
  // PTX must end with a NUL for the driver.
  std::string code = mod->fromCubin ? std::string(cubin) : std::string(ptx);
  if (!mod->fromCubin)
    code.push_back('\0');
  std::vector<char> log(8192, '\0');
  int options[] = {CU_JIT_ERROR_LOG_BUFFER,
                   CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *values[] = {log.data(),
                    reinterpret_cast<void *>(uintptr_t(log.size() - 1))};
  if (CUresult r = d.cuModuleLoadDataEx(&mod->module, code.data(), 2,
                                        options, values);
      r != CUDA_SUCCESS)
    throw Error(LF_FORMAT_ERROR,
                "artifact '" + path + "': the CUDA driver refused its " +
                    (mod->fromCubin ? "cubin" : "PTX") + ": " +
                    d.errorText(r) + (log[0] ? "; " + std::string(log.data())
                                             : std::string()));
  for (const ManifestKernel &k : m.kernels) {
    CUfunction f = nullptr;
    if (CUresult r = d.cuModuleGetFunction(&f, mod->module, k.symbol.c_str());
        r != CUDA_SUCCESS)
      throw Error(LF_FORMAT_ERROR, "artifact '" + path + "': kernel '" +
                                       k.symbol + "' is not in its code (" +
                                       d.errorText(r) + ")");
    if (k.sharedBytes > 48 * 1024)
      d.check(d.cuFuncSetAttribute(
                  f, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                  int(k.sharedBytes)),
              "cuFuncSetAttribute(" + k.symbol + ")");
    mod->functions.push_back(f);
  }
  return mod;
}

std::string describeDevice(const CudaModule &module) {
  return (module.name.empty() ? std::string("CUDA device 0") : module.name) +
         " (sm_" + std::to_string(module.sm) + ", " +
         std::to_string(module.smCount) + " SMs, " +
         (module.fromCubin ? "cubin" : "PTX compiled by the driver") + ")";
}

CudaSession::CudaSession(std::shared_ptr<const CudaModule> module,
                         const Manifest &manifest, const Weights &weights,
                         bool profile, void *stream, int graphs, int branches)
    : module_(std::move(module)), manifest_(manifest), stream_(stream),
      ownsStream_(stream == nullptr), graphs_(graphs) {
  const Driver &d = driver();
  // Chosen, not asked for: launches where graphs cannot serve.
  if (graphs == -1 && (profile || !d.missingGraphs.empty()))
    graphs_ = 0;
  if (graphs == 1 && profile)
    throw Error(LF_INVALID_ARGUMENT,
                "cuda_graphs and profile are both set: a profiled run times "
                "each kernel between events of its own, so it launches them "
                "one by one; choose one");
  if (graphs == 1 && !d.missingGraphs.empty())
    throw Error(LF_UNAVAILABLE, "cuda_graphs is set, and the CUDA driver "
                                "lacks " +
                                    d.missingGraphs +
                                    " (a driver older than CUDA 11.4?)");
  weights_ = module_->weightsFor(manifest, weights);
  module_->makeCurrent();
  device_ = weights_->address;
  try {
    for (size_t i = 0; i < manifest.buffers.size(); ++i) {
      const ManifestBuffer &b = manifest.buffers[i];
      if (b.kind == BufferKind::Weight)
        continue;
      CUdeviceptr p = 0;
      d.check(d.cuMemAlloc(&p, std::max<size_t>(b.byteSize(), 1)),
              "cuMemAlloc of " + std::string(bufferKindName(b.kind)) + " '" +
                  b.name + "' (" + std::to_string(b.byteSize()) + " bytes)");
      owned_.push_back(p);
      device_[i] = p;
    }
    if (ownsStream_)
      d.check(d.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING),
              "cuStreamCreate");
    // Intermediates start zeroed, as the CPU's arena: blocks a length rule
    // skips leave padded rows as an earlier run wrote them, and the kernels
    // that read them through zero weights (E's padded columns) need them
    // finite. Constants too, as the CPU's, for the initializers that add
    // into what they write. On the session's stream, so before any of its
    // launches.
    for (size_t i = 0; i < manifest.buffers.size(); ++i)
      if (manifest.buffers[i].kind == BufferKind::Intermediate ||
          manifest.buffers[i].kind == BufferKind::Constant)
        d.check(
            d.cuMemsetD8Async(
                device_[i], 0,
                std::max<size_t>(manifest.buffers[i].byteSize(), 1), stream_),
            "zeroing " + std::string(bufferKindName(manifest.buffers[i].kind)) +
                " '" + manifest.buffers[i].name + "'");
    // Branch streams and events, where runs may capture graphs.
    if (branches > 1 && graphs_ != 0) {
      for (int i = 1; i < branches; ++i) {
        CUstream s = nullptr;
        d.check(d.cuStreamCreate(&s, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
        branchStreams_.push_back(s);
      }
      d.check(d.cuEventCreate(&forkEvent_, CU_EVENT_DISABLE_TIMING),
              "cuEventCreate");
      for (size_t k = 0; k < manifest.kernels.size(); ++k) {
        CUevent e = nullptr;
        d.check(d.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate");
        kernelEvents_.push_back(e);
      }
    }
    if (profile)
      for (size_t k = 0; k < 2 * manifest.kernels.size(); ++k) {
        CUevent e = nullptr;
        d.check(d.cuEventCreate(&e, CU_EVENT_DEFAULT), "cuEventCreate");
        events_.push_back(e);
      }
    encodeTensorMaps(device_);
    initialize();
  } catch (...) {
    release();
    throw;
  }
}

namespace {

int tensorMapDataType(DType dtype) {
  switch (dtype) {
  case DType::F32:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
  case DType::F16:
    return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  case DType::BF16:
    return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
  case DType::I32:
    return CU_TENSOR_MAP_DATA_TYPE_INT32;
  case DType::I64:
    return CU_TENSOR_MAP_DATA_TYPE_INT64;
  case DType::U8:
    return CU_TENSOR_MAP_DATA_TYPE_UINT8;
  }
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

int tensorMapSwizzle(int64_t bytes) {
  switch (bytes) {
  case 32:
    return CU_TENSOR_MAP_SWIZZLE_32B;
  case 64:
    return CU_TENSOR_MAP_SWIZZLE_64B;
  case 128:
    return CU_TENSOR_MAP_SWIZZLE_128B;
  default:
    return CU_TENSOR_MAP_SWIZZLE_NONE;
  }
}

} // namespace

void CudaSession::encodeTensorMaps(const std::vector<uint64_t> &address) {
  const Driver &d = driver();
  const Manifest &m = manifest_;
  mapSource_.resize(m.buffers.size(), 0);
  mapHost_.resize(m.buffers.size());
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.kind != BufferKind::TensorMap)
      continue;
    const ManifestTensorMap &t = b.tensorMap;
    const ManifestBuffer &src = m.buffers[size_t(t.source)];
    uint64_t at = address[size_t(t.source)] + t.offset;
    if (mapSource_[i] == at)
      continue;
    if (!d.cuTensorMapEncodeTiled)
      throw Error(LF_UNAVAILABLE,
                  "the kernels read tensor map '" + b.name +
                      "', and the CUDA driver lacks cuTensorMapEncodeTiled "
                      "(a driver older than CUDA 12?)");
    // The driver's rule for a map's address (the session's own
    // allocations meet it; a caller's device buffer may not).
    if (at % 16 != 0)
      throw Error(LF_INVALID_ARGUMENT,
                  std::string(bufferKindName(src.kind)) + " '" + src.name +
                      "' is bound at device address " + std::to_string(at) +
                      " (after its tensor map's offset), which is not "
                      "16-byte aligned: its kernels read it by TMA copies, "
                      "which need that");
    // A map rewritten while the caller captures its stream would be a copy
    // from host memory inside the caller's graph.
    int capture = CU_STREAM_CAPTURE_STATUS_NONE;
    if (mapSource_[i] != 0 && d.cuStreamIsCapturing)
      d.check(d.cuStreamIsCapturing(stream_, &capture), "cuStreamIsCapturing");
    if (capture != CU_STREAM_CAPTURE_STATUS_NONE)
      throw Error(LF_INVALID_ARGUMENT,
                  std::string(bufferKindName(src.kind)) + " '" + src.name +
                      "' is bound at another device address than in the "
                      "session's last run while its stream is being "
                      "captured: its tensor map must be rewritten, which a "
                      "capture cannot hold; run once uncaptured with this "
                      "binding first");
    std::vector<uint64_t> dims(t.dims.begin(), t.dims.end());
    std::vector<uint64_t> strides(t.strides.begin(), t.strides.end());
    std::vector<unsigned> box(t.box.begin(), t.box.end());
    std::vector<unsigned> elementStrides(t.dims.size(), 1);
    d.check(d.cuTensorMapEncodeTiled(
                mapHost_[i].bytes, tensorMapDataType(t.dtype),
                unsigned(t.dims.size()), reinterpret_cast<void *>(at),
                dims.data(), strides.data(), box.data(), elementStrides.data(),
                CU_TENSOR_MAP_INTERLEAVE_NONE, tensorMapSwizzle(t.swizzle),
                CU_TENSOR_MAP_L2_PROMOTION_L2_128B,
                CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
            "encoding tensor map '" + b.name + "' of " +
                bufferKindName(src.kind) + " '" + src.name + "'",
            LF_INVALID_ARGUMENT);
    // On the session's stream: after every launch that read the map
    // before, before every launch that reads it now. From pageable memory
    // the copy has read mapHost_ when it returns.
    d.check(d.cuMemcpyHtoDAsync(device_[i], mapHost_[i].bytes,
                                sizeof mapHost_[i].bytes, stream_),
            "copying tensor map '" + b.name + "' to the device");
    mapSource_[i] = at;
  }
}

void CudaSession::initialize() {
  const Manifest &m = manifest_;
  initializerMs_.assign(m.kernels.size(), -1.0);
  if (std::none_of(m.kernels.begin(), m.kernels.end(),
                   [](const ManifestKernel &k) { return k.initializer; }))
    return;
  launchKernels(device_, {}, /*initializers=*/true);
  // A fault in an initializer is the error of the session's creation.
  driver().check(driver().cuStreamSynchronize(stream_),
                 "running the initializer kernels");
  for (size_t k = 0; k < m.kernels.size() && !events_.empty(); ++k)
    if (m.kernels[k].initializer)
      initializerMs_[k] = eventMs(k);
}

double CudaSession::eventMs(size_t k) const {
  float ms = 0;
  driver().check(
      driver().cuEventElapsedTime(&ms, events_[2 * k], events_[2 * k + 1]),
      "cuEventElapsedTime");
  return double(ms);
}

CudaSession::~CudaSession() { release(); }

void CudaSession::release() noexcept {
  // The driver is open: this session's module was loaded through it.
  const Driver &d = driver();
  d.cuCtxSetCurrent(module_->context);
  for (Graph &g : graphCache_)
    d.cuGraphExecDestroy(g.exec);
  graphCache_.clear();
  for (void *e : events_)
    d.cuEventDestroy(e);
  events_.clear();
  for (void *e : kernelEvents_)
    d.cuEventDestroy(e);
  kernelEvents_.clear();
  if (forkEvent_)
    d.cuEventDestroy(forkEvent_);
  forkEvent_ = nullptr;
  for (void *s : branchStreams_)
    d.cuStreamDestroy(s);
  branchStreams_.clear();
  if (stream_ && ownsStream_)
    d.cuStreamDestroy(stream_);
  stream_ = nullptr;
  for (uint64_t p : owned_)
    d.cuMemFree(p);
  owned_.clear();
}

uint64_t deviceAlloc(const CudaModule &module, size_t bytes) {
  const Driver &d = driver();
  module.makeCurrent();
  CUdeviceptr p = 0;
  d.check(d.cuMemAlloc(&p, std::max<size_t>(bytes, 1)),
          "cuMemAlloc of " + std::to_string(bytes) + " bytes");
  return p;
}

void deviceFree(const CudaModule &module, uint64_t address) {
  const Driver &d = driver();
  module.makeCurrent();
  d.check(d.cuMemFree(address), "cuMemFree", LF_INVALID_ARGUMENT);
}

void deviceCopy(const CudaModule &module, uint64_t deviceDst,
                const void *hostSrc, size_t bytes) {
  const Driver &d = driver();
  module.makeCurrent();
  d.check(d.cuMemcpyHtoDAsync(deviceDst, hostSrc, bytes, nullptr),
          "copying to the device", LF_INVALID_ARGUMENT);
  d.check(d.cuStreamSynchronize(nullptr), "copying to the device");
}

void deviceCopy(const CudaModule &module, void *hostDst, uint64_t deviceSrc,
                size_t bytes) {
  const Driver &d = driver();
  module.makeCurrent();
  d.check(d.cuMemcpyDtoHAsync(hostDst, deviceSrc, bytes, nullptr),
          "copying from the device", LF_INVALID_ARGUMENT);
  d.check(d.cuStreamSynchronize(nullptr), "copying from the device");
}

void CudaSession::run(const std::vector<void *> &host,
                      const std::vector<bool> &onDevice,
                      const std::vector<int64_t> &gridX,
                      std::vector<std::vector<double>> *kernelMs,
                      const std::vector<int64_t> &ioBytes) {
  const Driver &d = driver();
  const Manifest &m = manifest_;
  auto bytesOf = [&](size_t i) {
    return i < ioBytes.size() && ioBytes[i] >= 0
               ? size_t(ioBytes[i])
               : size_t(m.buffers[i].byteSize());
  };
  module_->makeCurrent();
  // The caller's device buffers stand in for the session's own this run.
  std::vector<uint64_t> address(device_);
  for (size_t i = 0; i < m.buffers.size(); ++i)
    if (onDevice[i])
      address[i] = uint64_t(reinterpret_cast<uintptr_t>(host[i]));
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.kind == BufferKind::Input && !onDevice[i] && bytesOf(i) > 0)
      d.check(d.cuMemcpyHtoDAsync(device_[i], host[i], bytesOf(i), stream_),
              "copying input '" + b.name + "' to the device");
  }
  // The maps of buffers bound elsewhere than last run (the caller's).
  encodeTensorMaps(address);
  // With graphs, the launches are one graph launch; not where the caller
  // is capturing its stream into a graph of its own (captures do not
  // nest: the launches go into the caller's graph as they are). Chosen
  // (-1): for a run with device I/O only (a run through the session's own
  // buffers copies the caller's host tensors, which the H200 runs found
  // to gain nothing from a graph).
  bool deviceRun =
      std::find(onDevice.begin(), onDevice.end(), true) != onDevice.end();
  bool graphs = graphs_ == 1 || (graphs_ == -1 && deviceRun);
  int capture = CU_STREAM_CAPTURE_STATUS_NONE;
  if (graphs)
    d.check(d.cuStreamIsCapturing(stream_, &capture), "cuStreamIsCapturing");
  if (graphs && capture == CU_STREAM_CAPTURE_STATUS_NONE)
    d.check(d.cuGraphLaunch(graphFor(address, gridX), stream_),
            "launching the run's CUDA graph");
  else
    launchKernels(address, gridX);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    if (b.kind == BufferKind::Output && host[i] && !onDevice[i] &&
        bytesOf(i) > 0)
      d.check(d.cuMemcpyDtoHAsync(host[i], device_[i], bytesOf(i), stream_),
              "copying output '" + b.name + "' from the device");
  }
  // A kernel fault surfaces here, as the error of the run. On the caller's
  // stream with every output on the device, the caller waits when it needs
  // to (it may be capturing the stream into a graph).
  bool hostOutputs = false;
  for (size_t i = 0; i < m.buffers.size(); ++i)
    hostOutputs |= m.buffers[i].kind == BufferKind::Output && host[i] &&
                   !onDevice[i];
  if (ownsStream_ || hostOutputs || !deviceRun || !events_.empty())
    d.check(d.cuStreamSynchronize(stream_), "running the kernels");
  if (kernelMs && !events_.empty())
    for (size_t k = 0; k < m.kernels.size(); ++k) {
      if (!m.kernels[k].initializer)
        (*kernelMs)[k].push_back(eventMs(k));
    }
}

int64_t CudaSession::launchBlocksX(size_t k,
                                   const std::vector<int64_t> &gridX) const {
  // A length rule's blocks: up to the last one with a real token (none:
  // no launch).
  return k < gridX.size() && gridX[k] >= 0 ? gridX[k]
                                           : manifest_.kernels[k].grid[0];
}

void CudaSession::launchKernel(size_t k, const std::vector<uint64_t> &address,
                               int64_t blocksX, void *stream) {
  const Driver &d = driver();
  const ManifestKernel &kernel = manifest_.kernels[k];
  std::vector<CUdeviceptr> &params = launchParams_;
  std::vector<void *> &argv = launchArgs_;
  params.resize(kernel.buffers.size());
  argv.resize(kernel.buffers.size());
  for (size_t j = 0; j < kernel.buffers.size(); ++j) {
    params[j] = address[size_t(kernel.buffers[j])];
    argv[j] = &params[j];
  }
  d.check(d.cuLaunchKernel(module_->functions[k], unsigned(blocksX),
                           unsigned(kernel.grid[1]), unsigned(kernel.grid[2]),
                           unsigned(kernel.block[0]), unsigned(kernel.block[1]),
                           unsigned(kernel.block[2]),
                           unsigned(kernel.sharedBytes), stream, argv.data(),
                           nullptr),
          "launching kernel '" + kernel.symbol + "'");
}

void CudaSession::launchKernels(const std::vector<uint64_t> &address,
                                const std::vector<int64_t> &gridX,
                                bool initializers) {
  const Driver &d = driver();
  const Manifest &m = manifest_;
  for (size_t k = 0; k < m.kernels.size(); ++k) {
    // A run's kernels, or the initializers (once, as the session is made).
    if (m.kernels[k].initializer != initializers)
      continue;
    int64_t blocksX = launchBlocksX(k, gridX);
    if (!events_.empty())
      d.check(d.cuEventRecord(events_[2 * k], stream_), "cuEventRecord");
    if (blocksX > 0)
      launchKernel(k, address, blocksX, stream_);
    if (!events_.empty())
      d.check(d.cuEventRecord(events_[2 * k + 1], stream_), "cuEventRecord");
  }
}

void CudaSession::launchBranches(const std::vector<uint64_t> &address,
                                 const std::vector<int64_t> &gridX) {
  const Driver &d = driver();
  const Manifest &m = manifest_;
  size_t count = m.kernels.size();
  auto bytes = [&](int64_t id) {
    return uint64_t(std::max<size_t>(m.buffers[size_t(id)].byteSize(), 1));
  };
  auto overlap = [&](int64_t a, int64_t b) {
    uint64_t pa = address[size_t(a)], pb = address[size_t(b)];
    return pa < pb + bytes(b) && pb < pa + bytes(a);
  };
  // Whether kernel j (earlier) and kernel k must run in order (what a
  // tensor map views counts as bound).
  auto conflict = [&](size_t j, size_t k) {
    const ManifestKernel &x = m.kernels[j], &y = m.kernels[k];
    for (int64_t a : x.buffers)
      for (int64_t b : y.buffers)
        if ((x.mayWrite(a) || y.mayWrite(b)) &&
            overlap(m.viewedBuffer(a), m.viewedBuffer(b)))
          return true;
    return false;
  };
  std::vector<CUstream> streams{stream_};
  streams.insert(streams.end(), branchStreams_.begin(), branchStreams_.end());
  size_t S = streams.size();
  // Per stream: its last kernel (-1: none yet), and the last kernel of
  // each stream it is known to follow (its own: its last).
  std::vector<long> last(S, -1);
  std::vector<std::vector<long>> follows(S, std::vector<long>(S, -1));
  std::vector<long> streamOf(count, -1);
  d.check(d.cuEventRecord(forkEvent_, stream_), "cuEventRecord");
  auto wait = [&](size_t s, CUevent e) {
    d.check(d.cuStreamWaitEvent(streams[s], e, 0), "cuStreamWaitEvent");
  };
  for (size_t k = 0; k < count; ++k) {
    int64_t blocksX = launchBlocksX(k, gridX);
    if (blocksX <= 0 || m.kernels[k].initializer)
      continue;
    std::vector<size_t> deps;
    for (size_t j = 0; j < k; ++j)
      if (streamOf[j] >= 0 && conflict(j, k))
        deps.push_back(j);
    // The stream whose last kernel is the latest it waits for (that
    // chain goes on), else the one idle longest.
    size_t s = S;
    for (size_t t = 0; t < S; ++t)
      if (last[t] >= 0 &&
          std::find(deps.begin(), deps.end(), size_t(last[t])) != deps.end() &&
          (s == S || last[t] > last[s]))
        s = t;
    if (s == S) {
      s = 0;
      for (size_t t = 1; t < S; ++t)
        if (last[t] < last[s])
          s = t;
    }
    // A branch's first kernel: the branch forks from the stream.
    if (s != 0 && last[s] < 0)
      wait(s, forkEvent_);
    for (size_t j : deps) {
      size_t t = size_t(streamOf[j]);
      if (follows[s][t] >= long(j))
        continue;
      wait(s, kernelEvents_[j]);
      follows[s][t] = long(j);
    }
    launchKernel(k, address, blocksX, streams[s]);
    d.check(d.cuEventRecord(kernelEvents_[k], streams[s]), "cuEventRecord");
    streamOf[k] = long(s);
    last[s] = long(k);
    follows[s][s] = long(k);
  }
  // The branches join the stream: the capture ends there.
  for (size_t t = 1; t < S; ++t)
    if (last[t] >= 0 && follows[0][t] < last[t])
      wait(0, kernelEvents_[size_t(last[t])]);
}

void *CudaSession::graphFor(const std::vector<uint64_t> &address,
                            const std::vector<int64_t> &gridX) {
  for (Graph &g : graphCache_)
    if (g.gridX == gridX && g.address == address) {
      g.lastUse = ++graphUses_;
      return g.exec;
    }
  // First use of these launch shapes and bindings: capture the launches
  // from the stream (nothing runs while capturing), keep the executable
  // graph. Kernel parameters are copied into it, so `address` need not
  // outlive the capture.
  const Driver &d = driver();
  d.check(d.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL),
          "cuStreamBeginCapture");
  try {
    if (branchStreams_.empty())
      launchKernels(address, gridX);
    else
      launchBranches(address, gridX);
  } catch (...) {
    CUgraph partial = nullptr;
    d.cuStreamEndCapture(stream_, &partial); // the stream leaves capture
    if (partial)
      d.cuGraphDestroy(partial);
    throw;
  }
  CUgraph graph = nullptr;
  d.check(d.cuStreamEndCapture(stream_, &graph),
          "capturing the run's launches into a CUDA graph");
  CUgraphExec exec = nullptr;
  CUresult r = d.cuGraphInstantiateWithFlags(&exec, graph, 0);
  // The executable graph is independent of the one it was made from.
  d.cuGraphDestroy(graph);
  d.check(r, "cuGraphInstantiateWithFlags");
  if (graphCache_.size() == kMaxGraphs) {
    auto oldest = std::min_element(
        graphCache_.begin(), graphCache_.end(),
        [](const Graph &a, const Graph &b) { return a.lastUse < b.lastUse; });
    d.cuGraphExecDestroy(oldest->exec);
    graphCache_.erase(oldest);
  }
  graphCache_.push_back({address, gridX, exec, ++graphUses_});
  return exec;
}

} // namespace runtime
} // namespace linformer
