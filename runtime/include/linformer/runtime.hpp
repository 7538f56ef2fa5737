//===- runtime.hpp - Header-only C++ wrapper of the runtime -----*- C++ -*-===//
//
// RAII and exceptions over the C API in runtime.h, for C++ embedders. It adds
// no behaviour: every method calls one C function and, when that returns a
// status, throws lf::Error carrying its code and message. Exceptions were
// chosen over a Result type because every failure here is exceptional for a
// caller (a bad file, a wrong shape) and the C API remains available to code
// that wants status values.
//
//   lf::Module module = lf::Module::load("model.lfa");
//   lf::Weights weights = lf::Weights::load("model.safetensors");
//   lf::Session session(module, weights, /*numThreads=*/0);
//   lf::TensorRef x("x", LF_DTYPE_F32, {1, 1000, 512}, xdata);
//   lf::TensorRef y("y", LF_DTYPE_F32, {1, 1000, 512}, ydata);
//   session.run({x}, {y});
//
// Handles are move-only; a Session keeps its Module and Weights alive
// internally, so the wrappers may be destroyed in any order.
//
//===----------------------------------------------------------------------===//

#ifndef LINFORMER_RUNTIME_HPP
#define LINFORMER_RUNTIME_HPP

#include "linformer/runtime.h"

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace lf {

/// A failed runtime call: the status code and its message.
class Error : public std::runtime_error {
public:
  Error(lf_status_code code, const std::string &message)
      : std::runtime_error(message), code_(code) {}
  lf_status_code code() const { return code_; }

private:
  lf_status_code code_;
};

/// Throws lf::Error for a non-null status, releasing it.
inline void check(lf_status status) {
  if (!status)
    return;
  Error error(lf_status_get_code(status), lf_status_get_message(status));
  lf_status_free(status);
  throw error;
}

/// A named view of caller memory, convertible to lf_tensor. Owns its shape
/// (lf_tensor only points at one), never its data.
class TensorRef {
public:
  TensorRef(std::string name, lf_dtype dtype, std::vector<int64_t> shape,
            void *data)
      : name_(std::move(name)), dtype_(dtype), shape_(std::move(shape)),
        data_(data) {}
  TensorRef(std::string name, lf_dtype dtype, std::vector<int64_t> shape,
            const void *data)
      : TensorRef(std::move(name), dtype, std::move(shape),
                  const_cast<void *>(data)) {}

  lf_tensor view() const {
    return lf_tensor{name_.c_str(), dtype_, int32_t(shape_.size()),
                     shape_.data(), data_};
  }
  const std::string &name() const { return name_; }
  const std::vector<int64_t> &shape() const { return shape_; }

private:
  std::string name_;
  lf_dtype dtype_;
  std::vector<int64_t> shape_;
  void *data_;
};

/// A module buffer's signature (copied out of the module).
struct TensorInfo {
  std::string name;
  lf_dtype dtype;
  std::vector<int64_t> shape;
  lf_input_role role;
};

class Module {
public:
  /// `device`: "" (the best available), "cpu" or "cuda".
  static Module load(const std::string &path, const std::string &device = "") {
    lf_module *m = nullptr;
    check(lf_module_load_on(path.c_str(), device.c_str(), &m));
    return Module(m);
  }

  const lf_module *get() const { return handle_.get(); }

  std::vector<TensorInfo> list(lf_io_kind kind) const {
    size_t count = 0;
    check(lf_module_count(get(), kind, &count));
    std::vector<TensorInfo> out;
    for (size_t i = 0; i < count; ++i) {
      lf_tensor_desc d;
      check(lf_module_describe(get(), kind, i, &d));
      out.push_back({d.name, d.dtype,
                     std::vector<int64_t>(d.shape, d.shape + d.rank), d.role});
    }
    return out;
  }
  std::vector<TensorInfo> inputs() const { return list(LF_IO_INPUT); }
  std::vector<TensorInfo> outputs() const { return list(LF_IO_OUTPUT); }
  std::vector<TensorInfo> weights() const { return list(LF_IO_WEIGHT); }

  /// Compiled batch size and sequence length (0, 0 without sequence inputs).
  std::pair<int64_t, int64_t> sequenceShape() const {
    int64_t b = 0, n = 0;
    check(lf_module_sequence_shape(get(), &b, &n));
    return {b, n};
  }

  /// The ranks a sequence-parallel module splits a sequence over, or 0
  /// (lf_module_sequence_parallel).
  int64_t sequenceParallel() const {
    int64_t ranks = 0;
    check(lf_module_sequence_parallel(get(), &ranks));
    return ranks;
  }

  std::string manifestJson() const {
    const char *json = nullptr;
    check(lf_module_manifest(get(), &json));
    return json;
  }
  /// Where the kernels run, in words (lf_module_device).
  std::string device() const {
    const char *d = nullptr;
    check(lf_module_device(get(), &d));
    return d;
  }

private:
  explicit Module(lf_module *m) : handle_(m, &lf_module_free) {}
  std::unique_ptr<lf_module, void (*)(lf_module *)> handle_;
};

class Weights {
public:
  static Weights load(const std::string &path) {
    lf_weights *w = nullptr;
    check(lf_weights_load(path.c_str(), &w));
    return Weights(w);
  }

  const lf_weights *get() const { return handle_.get(); }
  /// Throws LF_WEIGHTS_MISMATCH when `module` expects other weights.
  void checkAgainst(const Module &module) const {
    check(lf_weights_check(module.get(), get()));
  }

private:
  explicit Weights(lf_weights *w) : handle_(w, &lf_weights_free) {}
  std::unique_ptr<lf_weights, void (*)(lf_weights *)> handle_;
};

class Session {
public:
  /// numThreads = 0: one per hardware thread. `profile`: time each kernel
  /// (see kernelProfiles). `cudaStream`: a cuda module's copies and
  /// launches go on this CUstream of the caller's (see
  /// lf_session_options::cuda_stream). `spinUs`: how long threads spin
  /// between kernels before sleeping (lf_session_options::spin_us).
  Session(const Module &module, const Weights &weights, int numThreads = 0,
          bool profile = false, void *cudaStream = nullptr, int spinUs = -1)
      : handle_(nullptr, &lf_session_free) {
    lf_session_options options;
    lf_session_options_init(&options);
    options.num_threads = numThreads;
    options.profile = profile ? 1 : 0;
    options.cuda_stream = cudaStream;
    options.spin_us = spinUs;
    lf_session *s = nullptr;
    check(lf_session_create(module.get(), weights.get(), &options, &s));
    handle_.reset(s);
  }

  /// With every option (lf_session_options_init first): a
  /// sequence-parallel session's rank and all-reduce.
  Session(const Module &module, const Weights &weights,
          const lf_session_options &options)
      : handle_(nullptr, &lf_session_free) {
    lf_session *s = nullptr;
    check(lf_session_create(module.get(), weights.get(), &options, &s));
    handle_.reset(s);
  }

  lf_session *get() const { return handle_.get(); }

  int numThreads() const {
    int32_t n = 0;
    check(lf_session_num_threads(get(), &n));
    return n;
  }

  /// See lf_session_run for the padding rules.
  void run(const std::vector<TensorRef> &inputs,
           const std::vector<TensorRef> &outputs) {
    call(&lf_session_run, inputs, outputs);
  }

  /// lf_session_run_device: data inputs and outputs are CUDA device
  /// pointers (a cuda module only).
  void runDevice(const std::vector<TensorRef> &inputs,
                 const std::vector<TensorRef> &outputs) {
    call(&lf_session_run_device, inputs, outputs);
  }

  /// Per kernel, in launch order: its times in the runs so far (a
  /// profiling session only; see lf_session_profile).
  std::vector<lf_kernel_profile> kernelProfiles() const {
    size_t n = 0;
    check(lf_session_kernel_count(get(), &n));
    std::vector<lf_kernel_profile> out(n);
    for (size_t i = 0; i < n; ++i)
      check(lf_session_profile(get(), i, &out[i]));
    return out;
  }
  void resetProfile() { check(lf_session_profile_reset(get())); }
  /// Whether kernel `index` ran once at the session's creation and in no
  /// run (see lf_session_kernel_initializer).
  bool kernelIsInitializer(size_t index) const {
    int out = 0;
    check(lf_session_kernel_initializer(get(), index, &out));
    return out != 0;
  }

  /// The last run's host copies between the caller's tensors and the
  /// session's buffers, in bytes (lf_session_copied_bytes).
  std::pair<int64_t, int64_t> copiedBytes() const {
    int64_t in = 0, out = 0;
    check(lf_session_copied_bytes(get(), &in, &out));
    return {in, out};
  }

private:
  using RunFn = lf_status (*)(lf_session *, const lf_tensor *, size_t,
                              const lf_tensor *, size_t);
  void call(RunFn fn, const std::vector<TensorRef> &inputs,
            const std::vector<TensorRef> &outputs) {
    std::vector<lf_tensor> in, out;
    for (const TensorRef &t : inputs)
      in.push_back(t.view());
    for (const TensorRef &t : outputs)
      out.push_back(t.view());
    check(fn(get(), in.data(), in.size(), out.data(), out.size()));
  }

  std::unique_ptr<lf_session, void (*)(lf_session *)> handle_;
};

} // namespace lf

#endif // LINFORMER_RUNTIME_HPP
