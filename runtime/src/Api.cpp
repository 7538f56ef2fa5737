//===- Api.cpp - The C API: handles, statuses, exception barrier ----------===//
//
// Every exported function is a thin shell: check pointer arguments, call the
// C++ implementation inside guard(), which turns any exception into an
// lf_status. Nothing thrown inside the runtime escapes to a C caller.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Internal.h"

#include <cstddef>

#include <new>

using namespace linformer;
using namespace linformer::runtime;

struct lf_status_s {
  lf_status_code code;
  std::string message;
};

namespace {

/// Returned when even allocating a status fails; never freed.
lf_status_s outOfMemoryStatus{LF_INTERNAL, "out of memory"};

lf_status makeStatus(lf_status_code code, const char *message) {
  try {
    return new lf_status_s{code, message};
  } catch (...) {
    return &outOfMemoryStatus;
  }
}

template <typename F> lf_status guard(F &&f) {
  try {
    f();
    return nullptr;
  } catch (const Error &e) {
    return makeStatus(e.code, e.what());
  } catch (const std::bad_alloc &) {
    return makeStatus(LF_INTERNAL, "out of memory");
  } catch (const std::exception &e) {
    return makeStatus(LF_INTERNAL, e.what());
  } catch (...) {
    return makeStatus(LF_INTERNAL, "unknown internal error");
  }
}

void requireArg(const void *p, const char *what) {
  if (!p)
    throw Error(LF_INVALID_ARGUMENT, std::string(what) + " is null");
}

} // namespace

extern "C" {

lf_status_code lf_status_get_code(lf_status status) {
  return status ? status->code : LF_OK;
}

const char *lf_status_get_message(lf_status status) {
  return status ? status->message.c_str() : "";
}

void lf_status_free(lf_status status) {
  if (status && status != &outOfMemoryStatus)
    delete status;
}

const char *lf_status_code_name(lf_status_code code) {
  switch (code) {
  case LF_OK:
    return "LF_OK";
  case LF_INVALID_ARGUMENT:
    return "LF_INVALID_ARGUMENT";
  case LF_IO_ERROR:
    return "LF_IO_ERROR";
  case LF_FORMAT_ERROR:
    return "LF_FORMAT_ERROR";
  case LF_VERSION_MISMATCH:
    return "LF_VERSION_MISMATCH";
  case LF_WEIGHTS_MISMATCH:
    return "LF_WEIGHTS_MISMATCH";
  case LF_SHAPE_MISMATCH:
    return "LF_SHAPE_MISMATCH";
  case LF_UNAVAILABLE:
    return "LF_UNAVAILABLE";
  case LF_INTERNAL:
    return "LF_INTERNAL";
  case LF_ABORTED:
    return "LF_ABORTED";
  case LF_STATUS_CODE_FORCE_32BIT:
    break;
  }
  return "LF_UNKNOWN";
}

const char *lf_runtime_version(void) { return LINFORMER_RUNTIME_VERSION; }

size_t lf_dtype_size(lf_dtype dtype) {
  if (int(dtype) < 0 || int(dtype) > int(LF_DTYPE_U8))
    return 0;
  return dtypeSize(DType(int(dtype)));
}

const char *lf_dtype_name(lf_dtype dtype) {
  if (int(dtype) < 0 || int(dtype) > int(LF_DTYPE_U8))
    return "?";
  return dtypeName(DType(int(dtype)));
}

lf_status lf_module_load(const char *path, lf_module **out_module) {
  return guard([&] {
    requireArg(out_module, "out_module");
    *out_module = nullptr;
    requireArg(path, "path");
    auto handle = std::make_unique<lf_module_s>();
    handle->impl = Module::load(path);
    *out_module = handle.release();
  });
}

lf_status lf_module_load_on(const char *path, const char *device,
                            lf_module **out_module) {
  return guard([&] {
    requireArg(out_module, "out_module");
    *out_module = nullptr;
    requireArg(path, "path");
    auto handle = std::make_unique<lf_module_s>();
    handle->impl = Module::load(path, device ? device : "");
    *out_module = handle.release();
  });
}

void lf_module_free(lf_module *module) { delete module; }

lf_status lf_module_count(const lf_module *module, lf_io_kind kind,
                          size_t *out_count) {
  return guard([&] {
    requireArg(module, "module");
    requireArg(out_count, "out_count");
    if (int(kind) < 0 || int(kind) > int(LF_IO_WEIGHT))
      throw Error(LF_INVALID_ARGUMENT,
                  "unknown lf_io_kind " + std::to_string(int(kind)));
    *out_count = module->impl->ios(kind).size();
  });
}

lf_status lf_module_describe(const lf_module *module, lf_io_kind kind,
                             size_t index, lf_tensor_desc *out_desc) {
  return guard([&] {
    requireArg(module, "module");
    requireArg(out_desc, "out_desc");
    if (int(kind) < 0 || int(kind) > int(LF_IO_WEIGHT))
      throw Error(LF_INVALID_ARGUMENT,
                  "unknown lf_io_kind " + std::to_string(int(kind)));
    const std::vector<size_t> &ids = module->impl->ios(kind);
    if (index >= ids.size())
      throw Error(LF_INVALID_ARGUMENT,
                  "index " + std::to_string(index) + " is out of range (" +
                      std::to_string(ids.size()) + " entries)");
    const ManifestBuffer &b = module->impl->manifest().buffers[ids[index]];
    out_desc->name = b.name.c_str();
    out_desc->dtype = lf_dtype(int(b.dtype));
    out_desc->rank = int32_t(b.shape.size());
    out_desc->shape = b.shape.data();
    out_desc->role = b.role == BufferRole::Lengths ? LF_ROLE_LENGTHS
                     : b.role == BufferRole::Mask  ? LF_ROLE_MASK
                                                   : LF_ROLE_NONE;
  });
}

lf_status lf_module_sequence_shape(const lf_module *module, int64_t *out_batch,
                                   int64_t *out_seq_len) {
  return guard([&] {
    requireArg(module, "module");
    if (out_batch)
      *out_batch = module->impl->batch();
    if (out_seq_len)
      *out_seq_len = module->impl->seqLen();
  });
}

lf_status lf_module_sequence_parallel(const lf_module *module,
                                      int64_t *out_ranks) {
  return guard([&] {
    requireArg(module, "module");
    requireArg(out_ranks, "out_ranks");
    *out_ranks = module->impl->sequenceParallel();
  });
}

lf_status lf_module_manifest(const lf_module *module, const char **out_json) {
  return guard([&] {
    requireArg(module, "module");
    requireArg(out_json, "out_json");
    *out_json = module->impl->manifestText().c_str();
  });
}

lf_status lf_module_device(const lf_module *module, const char **out_device) {
  return guard([&] {
    requireArg(module, "module");
    requireArg(out_device, "out_device");
    *out_device = module->impl->device().c_str();
  });
}

lf_status lf_weights_load(const char *path, lf_weights **out_weights) {
  return guard([&] {
    requireArg(out_weights, "out_weights");
    *out_weights = nullptr;
    requireArg(path, "path");
    auto handle = std::make_unique<lf_weights_s>();
    handle->impl = Weights::load(path);
    *out_weights = handle.release();
  });
}

void lf_weights_free(lf_weights *weights) { delete weights; }

lf_status lf_weights_check(const lf_module *module, const lf_weights *weights) {
  return guard([&] {
    requireArg(module, "module");
    requireArg(weights, "weights");
    weights->impl->check(*module->impl);
  });
}

void lf_session_options_init(lf_session_options *options) {
  if (!options)
    return;
  options->struct_size = sizeof(lf_session_options);
  options->num_threads = 0;
  options->profile = 0;
  options->cuda_stream = nullptr;
  options->spin_us = -1;
  options->rank = 0;
  options->ranks = 0;
  options->all_reduce = nullptr;
  options->all_reduce_user_data = nullptr;
  options->cuda_graphs = -1;
  options->cuda_graph_branches = 0;
}

lf_status lf_session_create(const lf_module *module, const lf_weights *weights,
                            const lf_session_options *options,
                            lf_session **out_session) {
  return guard([&] {
    requireArg(out_session, "out_session");
    *out_session = nullptr;
    requireArg(module, "module");
    requireArg(weights, "weights");
    SessionOptions opts;
    if (options) {
      if (options->struct_size < sizeof(uint32_t) + sizeof(int32_t))
        throw Error(LF_INVALID_ARGUMENT,
                    "options->struct_size is " +
                        std::to_string(options->struct_size) +
                        "; call lf_session_options_init first");
      opts.numThreads = options->num_threads;
      // Fields added later are read only from callers that have them.
      auto has = [&](size_t offset, size_t size) {
        return options->struct_size >= offset + size;
      };
      if (has(offsetof(lf_session_options, profile),
              sizeof(options->profile)))
        opts.profile = options->profile != 0;
      if (has(offsetof(lf_session_options, cuda_stream),
              sizeof(options->cuda_stream)))
        opts.cudaStream = options->cuda_stream;
      if (has(offsetof(lf_session_options, spin_us),
              sizeof(options->spin_us)))
        opts.spinUs = options->spin_us;
      if (has(offsetof(lf_session_options, all_reduce_user_data),
              sizeof(options->all_reduce_user_data))) {
        opts.rank = options->rank;
        opts.ranks = options->ranks;
        opts.allReduce = options->all_reduce;
        opts.allReduceUserData = options->all_reduce_user_data;
      }
      if (has(offsetof(lf_session_options, cuda_graphs),
              sizeof(options->cuda_graphs)))
        opts.cudaGraphs = options->cuda_graphs;
      if (has(offsetof(lf_session_options, cuda_graph_branches),
              sizeof(options->cuda_graph_branches)))
        opts.cudaGraphBranches = options->cuda_graph_branches;
    }
    auto handle = std::make_unique<lf_session_s>();
    handle->impl =
        std::make_unique<Session>(module->impl, weights->impl, opts);
    *out_session = handle.release();
  });
}

void lf_session_free(lf_session *session) { delete session; }

lf_status lf_session_num_threads(const lf_session *session,
                                 int32_t *out_threads) {
  return guard([&] {
    requireArg(session, "session");
    requireArg(out_threads, "out_threads");
    *out_threads = session->impl->numThreads();
  });
}

lf_status lf_session_kernel_count(const lf_session *session,
                                  size_t *out_count) {
  return guard([&] {
    requireArg(session, "session");
    requireArg(out_count, "out_count");
    *out_count = session->impl->kernelCount();
  });
}

lf_status lf_session_kernel_initializer(const lf_session *session, size_t index,
                                        int *out_initializer) {
  return guard([&] {
    requireArg(session, "session");
    requireArg(out_initializer, "out_initializer");
    *out_initializer = session->impl->kernelIsInitializer(index) ? 1 : 0;
  });
}

lf_status lf_session_profile(lf_session *session, size_t index,
                             lf_kernel_profile *out_profile) {
  return guard([&] {
    requireArg(session, "session");
    requireArg(out_profile, "out_profile");
    session->impl->profile(index, *out_profile);
  });
}

lf_status lf_session_copied_bytes(lf_session *session, int64_t *in_bytes,
                                  int64_t *out_bytes) {
  return guard([&] {
    requireArg(session, "session");
    requireArg(in_bytes, "in_bytes");
    requireArg(out_bytes, "out_bytes");
    session->impl->copiedBytes(*in_bytes, *out_bytes);
  });
}

lf_status lf_session_profile_reset(lf_session *session) {
  return guard([&] {
    requireArg(session, "session");
    session->impl->resetProfile();
  });
}

lf_status lf_session_run(lf_session *session, const lf_tensor *inputs,
                         size_t num_inputs, const lf_tensor *outputs,
                         size_t num_outputs) {
  return guard([&] {
    requireArg(session, "session");
    session->impl->run(inputs, num_inputs, outputs, num_outputs);
  });
}

lf_status lf_session_run_device(lf_session *session, const lf_tensor *inputs,
                                size_t num_inputs, const lf_tensor *outputs,
                                size_t num_outputs) {
  return guard([&] {
    requireArg(session, "session");
    session->impl->run(inputs, num_inputs, outputs, num_outputs,
                       /*onDevice=*/true);
  });
}

/// The module's CUDA state, or LF_INVALID_ARGUMENT for a cpu module.
static const CudaModule &cudaOf(const lf_module *module) {
  requireArg(module, "module");
  if (!module->impl->cuda())
    throw Error(LF_INVALID_ARGUMENT,
                "device memory needs a cuda module; '" + module->impl->path() +
                    "' runs on the cpu");
  return *module->impl->cuda();
}

static uint64_t deviceAddress(const void *p) {
  return uint64_t(reinterpret_cast<uintptr_t>(p));
}

lf_status lf_device_alloc(const lf_module *module, size_t bytes,
                          void **out_device_ptr) {
  return guard([&] {
    requireArg(out_device_ptr, "out_device_ptr");
    *out_device_ptr = nullptr;
    *out_device_ptr = reinterpret_cast<void *>(
        uintptr_t(deviceAlloc(cudaOf(module), bytes)));
  });
}

lf_status lf_device_free(const lf_module *module, void *device_ptr) {
  return guard([&] {
    const CudaModule &m = cudaOf(module);
    if (device_ptr)
      deviceFree(m, deviceAddress(device_ptr));
  });
}

lf_status lf_device_copy_to(const lf_module *module, void *device_dst,
                            const void *host_src, size_t bytes) {
  return guard([&] {
    const CudaModule &m = cudaOf(module);
    requireArg(device_dst, "device_dst");
    requireArg(host_src, "host_src");
    deviceCopy(m, deviceAddress(device_dst), host_src, bytes);
  });
}

lf_status lf_device_copy_from(const lf_module *module, void *host_dst,
                              const void *device_src, size_t bytes) {
  return guard([&] {
    const CudaModule &m = cudaOf(module);
    requireArg(host_dst, "host_dst");
    requireArg(device_src, "device_src");
    deviceCopy(m, host_dst, deviceAddress(device_src), bytes);
  });
}

} // extern "C"
