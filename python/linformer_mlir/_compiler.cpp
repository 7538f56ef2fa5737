//===- _compiler.cpp - linformer_mlir._compiler: the compiler in process --===//
//
// The Python package's compile() without a subprocess: the options become a
// CompileOptions and a CompilerSession (compiler/Driver/Driver.h) compiles
// them in this process, with the GIL released (other Python threads run
// meanwhile) and the diagnostics collected, not printed, so that a failure
// comes back as its text. Python raises linformer_mlir.Error with it
// (__init__.py). One session per call: a session's MLIR context is not
// shared between threads.
//
//===----------------------------------------------------------------------===//

#include "compiler/Driver/Driver.h"

#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

namespace nb = nanobind;
namespace driver = mlir::linformer::driver;

namespace {

/// Compiles `model` to the artifact `output`; returns (ok, message, log):
/// the collected diagnostics or the error when not ok, and what the
/// compiler logged (--autotune's progress) either way.
std::tuple<bool, std::string, std::string>
compile(const std::string &model, const std::string &output,
        const std::string &target, const std::string &cpu,
        const std::string &cpuFeatures, int64_t sm,
        const std::string &randomWeights, unsigned seed, bool autotune,
        const std::vector<int64_t> &lengthsHint,
        const std::string &tuningCache, const std::string &schedule,
        const std::string &precision) {
  driver::CompileOptions options;
  // The words Python passes, parsed as linformer-compile parses its flags.
  if (llvm::Error err = driver::setOption(options.target, target))
    return {false, llvm::toString(std::move(err)), ""};
  if (llvm::Error err = driver::setOption(options.precision, precision))
    return {false, llvm::toString(std::move(err)), ""};
  options.inputPath = model;
  options.outputPath = output;
  options.cpu = cpu;
  options.cpuFeatures = cpuFeatures;
  options.sm = sm;
  options.randomWeights = randomWeights;
  options.seed = seed;
  options.autotune = autotune;
  options.lengthsHint = lengthsHint;
  options.tuningCache = tuningCache;
  options.scheduleFile = schedule;
  std::string out, log, message;
  bool ok;
  {
    nb::gil_scoped_release release;
    driver::SessionOptions sessionOptions;
    sessionOptions.collectDiagnostics = true;
    driver::CompilerSession session(sessionOptions);
    llvm::raw_string_ostream outStream(out), logStream(log);
    llvm::Error err = session.compile(options, outStream, logStream);
    ok = !err;
    if (err)
      message = llvm::toString(std::move(err));
  }
  return {ok, ok ? out : message, log};
}

} // namespace

NB_MODULE(_compiler, m) {
  m.doc() = "The Linformer compiler (compiler/Driver) in this process.";
  // Everything after the model and the output by keyword only, as
  // linformer_mlir.compile() passes them.
  m.def("compile", &compile, nb::arg("model"), nb::arg("output"),
        nb::kw_only(), nb::arg("target") = "cpu", nb::arg("cpu") = "",
        nb::arg("cpu_features") = "", nb::arg("sm") = 90,
        nb::arg("random_weights") = "", nb::arg("seed") = 1u,
        nb::arg("autotune") = false,
        nb::arg("lengths_hint") = std::vector<int64_t>(),
        nb::arg("tuning_cache") = "", nb::arg("schedule") = "",
        nb::arg("precision") = "auto",
        "Compiles `model` (a model.json path) into `output`; returns (ok, "
        "message, log): what was written, or the diagnostics.");
}
