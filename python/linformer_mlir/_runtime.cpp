//===- _runtime.cpp - Python binding of the runtime's C API -----------------===//
//
// A thin nanobind layer over runtime/include/linformer/runtime.h: modules,
// weights and sessions, tensors passed as nb::ndarray (NumPy arrays, or any
// CPU object with DLPack or the buffer protocol: torch tensors, JAX arrays)
// without copies. Shapes, names and defaults are decided in Python
// (linformer_mlir/__init__.py); this file owns the handles and turns every
// lf_status into linformer_mlir.Error carrying the runtime's code and message.
//
//===----------------------------------------------------------------------===//

#include "linformer/runtime.h"

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace nb = nanobind;

namespace {

/// An lf_status as a C++ exception; translated to linformer_mlir.Error.
struct RuntimeError : std::runtime_error {
  explicit RuntimeError(const std::string &what) : std::runtime_error(what) {}
};

void check(lf_status status) {
  if (!status)
    return;
  std::string what = std::string(lf_status_code_name(lf_status_get_code(
                         status))) +
                     ": " + lf_status_get_message(status);
  lf_status_free(status);
  throw RuntimeError(what);
}

struct ModuleDeleter {
  void operator()(lf_module *m) const { lf_module_free(m); }
};
struct WeightsDeleter {
  void operator()(lf_weights *w) const { lf_weights_free(w); }
};
struct SessionDeleter {
  void operator()(lf_session *s) const { lf_session_free(s); }
};

struct Module {
  std::unique_ptr<lf_module, ModuleDeleter> handle;
};
struct Weights {
  std::unique_ptr<lf_weights, WeightsDeleter> handle;
};

/// Opens `path` with `load` (lf_module_load, lf_weights_load) without the
/// GIL and wraps the handle.
template <typename Wrapper, typename Raw>
Wrapper loadHandle(lf_status (*load)(const char *, Raw **),
                   const std::string &path) {
  Raw *raw = nullptr;
  lf_status status;
  {
    nb::gil_scoped_release release;
    status = load(path.c_str(), &raw);
  }
  check(status);
  Wrapper w;
  w.handle.reset(raw);
  return w;
}
/// A sequence-parallel session's all-reduce in Python: a callable that sums
/// a float32 NumPy array (a view of the session's buffer) over the ranks in
/// place. The runtime calls it from the run, which holds no GIL; an
/// exception fails the run (LF_ABORTED), and its text joins the message.
struct PyAllReduce {
  nb::object fn;
  std::string error;

  static int32_t call(void *self, void *data, int64_t count, lf_dtype dtype) {
    auto *p = static_cast<PyAllReduce *>(self);
    nb::gil_scoped_acquire gil;
    if (!p->fn.is_valid()) {
      p->error = "the all-reduce was released (its session is being freed)";
      return 3;
    }
    if (dtype != LF_DTYPE_F32) {
      p->error = std::string("the all-reduce sums float32, not ") +
                 lf_dtype_name(dtype);
      return 2;
    }
    try {
      // A view, not a copy: nanobind copies an array without an owner, so
      // the owner is a capsule that frees nothing (the buffer is the
      // session's, valid for the call).
      size_t shape[1] = {size_t(count)};
      nb::capsule owner(data, [](void *) noexcept {});
      p->fn(nb::ndarray<nb::numpy, float, nb::ndim<1>>(data, 1, shape, owner));
      p->error.clear();
      return 0;
    } catch (nb::python_error &e) {
      p->error = e.what();
      return 1;
    }
  }
};

struct Session {
  std::unique_ptr<lf_session, SessionDeleter> handle;
  // Keep the module and weights alive as long as the session.
  nb::object module, weights;
  std::unique_ptr<PyAllReduce> allReduce;
};

/// The Python objects a session holds, for the cycle collector: an
/// all-reduce closure that reaches the session's own wrapper (a lambda
/// defined where the session is stored) would otherwise be a cycle it
/// cannot see, never freed (nanobind's leak report at exit).
int sessionTraverse(PyObject *self, visitproc visit, void *arg) {
  Py_VISIT(Py_TYPE(self));
  if (!nb::inst_ready(self))
    return 0;
  Session *s = nb::inst_ptr<Session>(self);
  Py_VISIT(s->module.ptr());
  Py_VISIT(s->weights.ptr());
  if (s->allReduce)
    Py_VISIT(s->allReduce->fn.ptr());
  return 0;
}

int sessionClear(PyObject *self) {
  Session *s = nb::inst_ptr<Session>(self);
  // The C session keeps its module and weights alive itself.
  s->module = nb::object();
  s->weights = nb::object();
  if (s->allReduce)
    s->allReduce->fn = nb::object();
  return 0;
}

PyType_Slot sessionSlots[] = {{Py_tp_traverse, (void *)sessionTraverse},
                              {Py_tp_clear, (void *)sessionClear},
                              {0, nullptr}};

/// (name, dtype name, shape, role) of a module's inputs/outputs/weights.
nb::list describe(const Module &m, lf_io_kind kind) {
  size_t count = 0;
  check(lf_module_count(m.handle.get(), kind, &count));
  nb::list out;
  for (size_t i = 0; i < count; ++i) {
    lf_tensor_desc d;
    check(lf_module_describe(m.handle.get(), kind, i, &d));
    std::vector<int64_t> shape(d.shape, d.shape + d.rank);
    const char *role = d.role == LF_ROLE_LENGTHS ? "lengths"
                       : d.role == LF_ROLE_MASK  ? "mask"
                                                 : "";
    out.append(nb::make_tuple(std::string(d.name), lf_dtype_name(d.dtype),
                              nb::tuple(nb::cast(shape)), role));
  }
  return out;
}

bool toLfDtype(nb::dlpack::dtype t, lf_dtype &out) {
  using nb::dlpack::dtype_code;
  auto code = static_cast<dtype_code>(t.code);
  if (t.lanes != 1)
    return false;
  if (code == dtype_code::Float && t.bits == 32) out = LF_DTYPE_F32;
  else if (code == dtype_code::Float && t.bits == 16) out = LF_DTYPE_F16;
  else if (code == dtype_code::Bfloat && t.bits == 16) out = LF_DTYPE_BF16;
  else if (code == dtype_code::Int && t.bits == 32) out = LF_DTYPE_I32;
  else if (code == dtype_code::Int && t.bits == 64) out = LF_DTYPE_I64;
  else if ((code == dtype_code::UInt || code == dtype_code::Bool) &&
           t.bits == 8) out = LF_DTYPE_U8;
  else return false;
  return true;
}

// Inputs may be read-only (a DLPack view of a torch tensor is); outputs
// must be writable.
using InArray = nb::ndarray<nb::ro, nb::c_contig, nb::device::cpu>;
using OutArray = nb::ndarray<nb::c_contig, nb::device::cpu>;

/// Runs `s` on caller arrays, bound in place (the runtime copies only where
/// it pads a short sequence). The GIL is released while kernels run.
void run(Session &s,
         const std::vector<std::pair<std::string, InArray>> &inputs,
         const std::vector<std::pair<std::string, OutArray>> &outputs) {
  std::vector<std::vector<int64_t>> shapes;
  shapes.reserve(inputs.size() + outputs.size());
  auto convert = [&](const auto &in, std::vector<lf_tensor> &out) {
    for (const auto &[name, a] : in) {
      lf_tensor t;
      t.name = name.c_str();
      if (!toLfDtype(a.dtype(), t.dtype))
        throw nb::type_error(("tensor '" + name +
                              "': unsupported element type (the runtime "
                              "takes f32, f16, bf16, i32, i64, u8 or bool)")
                                 .c_str());
      shapes.emplace_back(a.shape_ptr(), a.shape_ptr() + a.ndim());
      t.rank = static_cast<int32_t>(a.ndim());
      t.shape = shapes.back().data();
      t.data = const_cast<void *>(static_cast<const void *>(a.data()));
      out.push_back(t);
    }
  };
  std::vector<lf_tensor> in, out;
  convert(inputs, in);
  convert(outputs, out);
  lf_status status;
  {
    nb::gil_scoped_release release;
    status = lf_session_run(s.handle.get(), in.data(), in.size(), out.data(),
                            out.size());
  }
  // The Python all-reduce's exception says why the transport failed.
  if (status && lf_status_get_code(status) == LF_ABORTED && s.allReduce &&
      !s.allReduce->error.empty()) {
    std::string what = std::string("LF_ABORTED: ") +
                       lf_status_get_message(status) + ": " +
                       s.allReduce->error;
    lf_status_free(status);
    throw RuntimeError(what);
  }
  check(status);
}

} // namespace

NB_MODULE(_runtime, m) {
  m.doc() = "linformer runtime (C API binding); use the linformer_mlir package";
  nb::exception<RuntimeError>(m, "Error", PyExc_RuntimeError);
  m.def("version", [] { return std::string(lf_runtime_version()); });

  nb::class_<Module>(m, "_Module")
      .def_static("load",
                  [](const std::string &path) {
                    return loadHandle<Module>(lf_module_load, path);
                  })
      .def("inputs", [](const Module &m) { return describe(m, LF_IO_INPUT); })
      .def("outputs", [](const Module &m) { return describe(m, LF_IO_OUTPUT); })
      .def("weights", [](const Module &m) { return describe(m, LF_IO_WEIGHT); })
      .def("sequence_parallel",
           [](const Module &m) {
             int64_t ranks = 0;
             check(lf_module_sequence_parallel(m.handle.get(), &ranks));
             return ranks;
           })
      .def("sequence_shape",
           [](const Module &m) {
             int64_t b = 0, n = 0;
             check(lf_module_sequence_shape(m.handle.get(), &b, &n));
             return nb::make_tuple(b, n);
           })
      .def("manifest", [](const Module &m) {
        const char *json = nullptr;
        check(lf_module_manifest(m.handle.get(), &json));
        return std::string(json);
      });

  nb::class_<Weights>(m, "_Weights")
      .def_static("load",
                  [](const std::string &path) {
                    return loadHandle<Weights>(lf_weights_load, path);
                  })
      .def("check", [](const Weights &w, const Module &m) {
        check(lf_weights_check(m.handle.get(), w.handle.get()));
      });

  nb::class_<Session>(m, "_Session", nb::type_slots(sessionSlots))
      .def_static(
          "create",
          [](nb::object module, nb::object weights, int threads, bool profile,
             int spinUs, int rank, int ranks, nb::object allReduce,
             int cudaGraphs, int cudaGraphBranches) {
            const Module &mod = nb::cast<const Module &>(module);
            const Weights &w = nb::cast<const Weights &>(weights);
            Session s;
            lf_session_options options;
            lf_session_options_init(&options);
            options.num_threads = threads;
            options.profile = profile ? 1 : 0;
            options.spin_us = spinUs;
            options.rank = rank;
            options.ranks = ranks;
            options.cuda_graphs = cudaGraphs;
            options.cuda_graph_branches = cudaGraphBranches;
            if (!allReduce.is_none()) {
              s.allReduce = std::make_unique<PyAllReduce>();
              s.allReduce->fn = allReduce;
              options.all_reduce = &PyAllReduce::call;
              options.all_reduce_user_data = s.allReduce.get();
            }
            lf_session *raw = nullptr;
            {
              nb::gil_scoped_release release;
              check(lf_session_create(mod.handle.get(), w.handle.get(),
                                      &options, &raw));
            }
            s.handle.reset(raw);
            s.module = module;
            s.weights = weights;
            return s;
          },
          nb::arg("module"), nb::arg("weights"), nb::arg("threads") = 0,
          nb::arg("profile") = false, nb::arg("spin_us") = -1,
          nb::arg("rank") = 0, nb::arg("ranks") = 0,
          nb::arg("all_reduce") = nb::none(), nb::arg("cuda_graphs") = -1,
          nb::arg("cuda_graph_branches") = 0)
      .def("num_threads",
           [](const Session &s) {
             int32_t n = 0;
             check(lf_session_num_threads(s.handle.get(), &n));
             return n;
           })
      .def("run", &run)
      .def("copied_bytes",
           [](const Session &s) {
             int64_t in = 0, out = 0;
             check(lf_session_copied_bytes(s.handle.get(), &in, &out));
             return nb::make_tuple(in, out);
           })
      .def("profile", [](Session &s) {
        size_t count = 0;
        check(lf_session_kernel_count(s.handle.get(), &count));
        nb::list out;
        for (size_t i = 0; i < count; ++i) {
          lf_kernel_profile p;
          check(lf_session_profile(s.handle.get(), i, &p));
          nb::dict d;
          d["symbol"] = std::string(p.symbol);
          d["key"] = std::string(p.key);
          d["workgroups"] = p.workgroups;
          d["runs"] = p.runs;
          d["min_ms"] = p.min_ms;
          d["median_ms"] = p.median_ms;
          d["mean_ms"] = p.mean_ms;
          d["flops"] = p.flops;
          int initializer = 0;
          check(lf_session_kernel_initializer(s.handle.get(), i, &initializer));
          d["initializer"] = initializer != 0;
          out.append(d);
        }
        return out;
      });
}
