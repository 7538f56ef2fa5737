//===- Run.cpp - run an artifact: inputs, timed runs, check ---------------===//
//
// See Run.h. Exit statuses as linformer-run's: 0 ok; 1 a runtime or input
// error (message on `err`); 3 --check found an error above --tolerance.
//
//===----------------------------------------------------------------------===//

#include "runtime/run/Run.h"
#include "runtime/run/RunDetail.h"

#include "lib/Manifest/Artifact.h"
#include "lib/Manifest/Manifest.h"
#include "lib/Model/ModelConfig.h"
#include "lib/Npy/Npy.h"
#include "lib/Support/Half.h"
#include "lib/Reference/Encoder.h"
#include "lib/Safetensors/Safetensors.h"
#include "lib/Support/Random.h"
#include "lib/Support/Sha256.h"
#include "linformer/runtime.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

namespace linformer {
namespace run {

bool parseInteger(const std::string &s, long long lo, long long hi,
                  long long &out) {
  if (s.empty())
    return false;
  char *end = nullptr;
  errno = 0;
  long long v = std::strtoll(s.c_str(), &end, 10);
  if (*end || errno == ERANGE || v < lo || v > hi)
    return false;
  out = v;
  return true;
}

namespace detail {

thread_local std::FILE *tOut = stdout;
thread_local std::FILE *tErr = stderr;

int error(const std::string &msg) {
  std::fprintf(tErr, "linformer-run: error: %s\n", msg.c_str());
  return 1;
}

/// An option's value that only the artifact shows wrong (a length past its
/// n): a usage error, exit status 2.
int usage(const std::string &msg) {
  std::fprintf(tErr, "linformer-run: %s\n", msg.c_str());
  return 2;
}

lf_dtype toLf(linformer::DType t) { return static_cast<lf_dtype>(t); }

/// f32 values as `dtype` (f32, f16 or bf16) bytes, rounded to nearest even.
std::string floatsAs(const std::vector<float> &values, linformer::DType dtype) {
  if (dtype == linformer::DType::F32)
    return std::string(reinterpret_cast<const char *>(values.data()),
                       values.size() * sizeof(float));
  std::vector<uint16_t> half(values.size());
  for (size_t i = 0; i < values.size(); ++i)
    half[i] = dtype == linformer::DType::BF16 ? linformer::floatToBF16(values[i])
                                              : linformer::floatToF16(values[i]);
  return std::string(reinterpret_cast<const char *>(half.data()),
                     half.size() * sizeof(uint16_t));
}

/// `count` values of `dtype` (f32, f16 or bf16) at `data`, as f32.
std::vector<float> asFloats(const void *data, int64_t count,
                            linformer::DType dtype) {
  std::vector<float> out(static_cast<size_t>(count));
  const auto *half = static_cast<const uint16_t *>(data);
  for (int64_t i = 0; i < count; ++i)
    out[size_t(i)] =
        dtype == linformer::DType::F32
            ? static_cast<const float *>(data)[i]
        : dtype == linformer::DType::BF16 ? linformer::bf16ToFloat(half[i])
                                          : linformer::f16ToFloat(half[i]);
  return out;
}

/// --check's tolerance when --tolerance is not given, and what sets it: the
/// coarsest type the artifact stores or computes in. The bounds are
/// normwise (max-norm) relative errors against the f64 reference on the same
/// rounded weights and input:
/// - f32 throughout: 1e-3 (f32 kernels measure ~1e-6; generous on purpose);
/// - f16 storage: the output's one rounding, 2^-11, within that; bf16
///   storage: 2^-8 (8 significant bits), so 3.92e-3 (test/tools/
///   linformer-run.test derives both);
/// - bf16 products (the manifest's "products", linformer-compile
///   --precision=bf16: bf16 factors, f32 sums): 3e-2, as for bf16 tensor
///   cores (the same products); measured 1.8e-3 on the default encoder,
///   at most 1.4e-2 over 147 random models (d_model 12, random weights;
///   test/tools/linformer-compile-precision.test);
/// - 3xTF32 tensor cores (--cuda-mma=tf32x3: each operand a TF32 head and
///   tail, about 21 bits): f32's (measured 3.4e-7 to 8e-7 emulated,
///   test/integration/cuda-host.test);
/// - TF32 or f16 tensor cores (10 explicit mantissa bits, every operand
///   rounded, the attention core's probabilities included): 5e-3; f16
///   products on the CPU (linformer-compile --precision=f16, AMX-FP16:
///   f16 factors, f32 sums, the attention core's too) likewise;
/// - bf16 tensor cores (7 explicit bits): 3e-2: the CPU emulation of the
///   same tiles measures up to 8.5e-3 at n = 4096, plus the output's own
///   rounding (test/integration/cuda-host.test).
std::pair<double, std::string> defaultTolerance(const nlohmann::json &manifest,
                                                const std::string &dtype) {
  // f16 storage's one rounding (2^-11) stays within f32's 1e-3, which then
  // bounds it; the label names the type that sets the bound.
  std::pair<double, std::string> t{
      1e-3, dtype == "f16" ? "f16 storage (within f32's bound)" : "f32"};
  auto atLeast = [&](double v, const std::string &why) {
    if (v > t.first)
      t = {v, why};
  };
  if (dtype == "bf16")
    atLeast(3.92e-3, "bf16 storage");
  if (manifest.contains("products") && manifest["products"] == "bf16")
    atLeast(3e-2, "bf16 products");
  if (manifest.contains("products") && manifest["products"] == "f16")
    atLeast(5e-3, "f16 products");
  if (manifest.contains("kernels") && manifest["kernels"].is_array())
    for (const auto &k : manifest["kernels"]) {
      if (!k.is_object() || !k.contains("schedule") ||
          !k["schedule"].is_object() || !k["schedule"].contains("mma") ||
          !k["schedule"]["mma"].is_string())
        continue;
      std::string mma = k["schedule"]["mma"];
      if (mma == "tf32" || mma == "f16")
        atLeast(5e-3, mma + " tensor cores");
      else if (mma == "bf16")
        atLeast(3e-2, "bf16 tensor cores");
    }
  return t;
}

/// --reference-cache: the reference output saved with a fingerprint of what
/// it was computed from (SHA-256 of the model, every weight's name and
/// bytes, the input and the padding), so twins of one model (the GPU
/// bundle's variants) compute it once. A file whose fingerprint differs, or
/// that is not one of these, is recomputed and overwritten, never trusted.
constexpr char kRefMagic[8] = {'L', 'F', 'R', 'E', 'F', '0', '0', '1'};
using Fingerprint = std::array<uint8_t, 32>;

bool readReference(const std::string &path, const Fingerprint &fingerprint,
                   std::vector<float> &out) {
  std::ifstream in(path, std::ios::binary);
  char magic[8];
  Fingerprint fp;
  uint64_t count = 0;
  if (!in.read(magic, 8) || std::memcmp(magic, kRefMagic, 8) != 0 ||
      !in.read(reinterpret_cast<char *>(fp.data()), fp.size()) ||
      fp != fingerprint ||
      !in.read(reinterpret_cast<char *>(&count), 8) || count != out.size())
    return false;
  std::vector<float> values(out.size());
  if (!in.read(reinterpret_cast<char *>(values.data()),
               std::streamsize(values.size() * sizeof(float))) ||
      in.peek() != std::ifstream::traits_type::eof())
    return false;
  out = std::move(values);
  return true;
}

bool writeReference(const std::string &path, const Fingerprint &fingerprint,
                    const std::vector<float> &values) {
  std::string tmp = path + ".tmp";
  {
    std::ofstream os(tmp, std::ios::binary | std::ios::trunc);
    uint64_t count = values.size();
    os.write(kRefMagic, 8);
    os.write(reinterpret_cast<const char *>(fingerprint.data()),
             fingerprint.size());
    os.write(reinterpret_cast<const char *>(&count), 8);
    os.write(reinterpret_cast<const char *>(values.data()),
             std::streamsize(values.size() * sizeof(float)));
    if (!os)
      return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

/// --packed: a padded [b, L, ...] array's real rows (lengths[i] of sequence
/// i), end to end: [T, ...].
linformer::NpyArray packRows(const linformer::NpyArray &padded,
                             const std::vector<int32_t> &lengths) {
  linformer::NpyArray out;
  out.dtype = padded.dtype;
  int64_t L = padded.shape[1], total = 0;
  size_t row = padded.bytes.size() / size_t(padded.shape[0] * L);
  for (size_t i = 0; i < lengths.size(); ++i) {
    out.bytes.append(padded.bytes, i * size_t(L) * row,
                     size_t(lengths[i]) * row);
    total += lengths[i];
  }
  out.shape.assign(padded.shape.begin() + 1, padded.shape.end());
  out.shape[0] = total;
  return out;
}

/// The inverse: packed rows [T, ...] as [b, L, ...], zeros past each length.
linformer::NpyArray unpackRows(const linformer::NpyArray &packed,
                               const std::vector<int32_t> &lengths,
                               int64_t L) {
  linformer::NpyArray out;
  out.dtype = packed.dtype;
  out.shape = packed.shape;
  out.shape[0] = L;
  out.shape.insert(out.shape.begin(), int64_t(lengths.size()));
  size_t row = packed.shape[0] ? packed.bytes.size() / size_t(packed.shape[0])
                               : 0;
  out.bytes.assign(lengths.size() * size_t(L) * row, '\0');
  size_t from = 0;
  for (size_t i = 0; i < lengths.size(); ++i) {
    out.bytes.replace(i * size_t(L) * row, size_t(lengths[i]) * row, packed.bytes,
                      from, size_t(lengths[i]) * row);
    from += size_t(lengths[i]) * row;
  }
  return out;
}




/// What --check compares: the run's input and output, both [b, L, ...] (a
/// packed output unpacked), and how the run described its padding.
/// The padding the reference takes for `run`, described as the kernels saw
/// it: lengths for a lengths model (a prefix mask given to one: each row's
/// run of leading ones, as the runtime takes it), a [b, n] mask for a mask
/// model (from --mask, else from --lengths, else every given token).
struct ReferencePadding {
  std::vector<int32_t> lengths;
  std::vector<uint8_t> mask;
};
ReferencePadding referencePadding(const linformer::ModelConfig &config,
                                  const CheckedRun &run) {
  int64_t batch = run.batch, n = run.n, L = run.L;
  const linformer::NpyArray &maskArray = run.maskArray;
  ReferencePadding p;
  if (config.padding == linformer::PaddingInput::Lengths) {
    p.lengths = run.lengths.empty() ? std::vector<int32_t>(batch, int32_t(L))
                                    : run.lengths;
    if (!maskArray.bytes.empty())
      for (int64_t b = 0; b < batch; ++b) {
        int32_t len = 0;
        while (len < L && maskArray.as<uint8_t>()[b * L + len] != 0)
          ++len;
        p.lengths[size_t(b)] = len;
      }
  } else if (config.padding == linformer::PaddingInput::Mask) {
    p.mask.assign(batch * n, 0);
    for (int64_t b = 0; b < batch; ++b)
      for (int64_t t = 0; t < L; ++t)
        p.mask[b * n + t] = maskArray.bytes.empty()
                                ? (run.lengths.empty() || t < run.lengths[b])
                                : maskArray.as<uint8_t>()[b * L + t] != 0;
  }
  return p;
}

/// The reference encoder's output [b, n, d] for the run's input, padded
/// with zeros to n as the kernels see it, on the weights of `file` (an f16
/// or bf16 model's as the f32 values the kernels extend them to). With
/// `referenceCache`, read from there when its fingerprint (model, weights,
/// input, padding) matches, else computed and saved there. Returns "" or
/// an error.
std::string referenceOutput(const linformer::ModelConfig &config,
                            const std::string &modelJson,
                            const linformer::SafetensorsFile &file,
                            const CheckedRun &run, const ReferencePadding &pad,
                            const std::string &referenceCache,
                            std::vector<float> &ref) {
  int64_t batch = run.batch, n = run.n, L = run.L, dm = config.dModel;
  std::map<std::string, std::vector<float>> widened;
  auto lookup = [&](const std::string &name) -> const float * {
    const linformer::SafetensorsTensor *t = file.find(name);
    if (!t)
      return nullptr;
    if (t->dtype == linformer::DType::F32)
      return reinterpret_cast<const float *>(t->data);
    auto [it, fresh] = widened.try_emplace(name);
    if (fresh)
      it->second = asFloats(t->data, int64_t(t->size / 2), t->dtype);
    return it->second.data();
  };
  std::vector<float> xf =
      asFloats(run.x.bytes.data(), run.x.numElements(), run.x.dtype);
  std::vector<float> xp(batch * n * dm, 0.0f);
  ref.assign(batch * n * dm, 0.0f);
  for (int64_t b = 0; b < batch; ++b)
    std::memcpy(&xp[b * n * dm], xf.data() + b * L * dm,
                L * dm * sizeof(float));
  Fingerprint fingerprint{};
  bool cached = false;
  if (!referenceCache.empty()) {
    linformer::Sha256 h;
    h.update(modelJson);
    for (const linformer::SafetensorsTensor &t : file.tensors()) {
      h.update(t.name);
      h.update(t.data, t.size);
    }
    h.update(xp.data(), xp.size() * sizeof(float));
    h.update(pad.lengths.data(), pad.lengths.size() * sizeof(int32_t));
    h.update(pad.mask.data(), pad.mask.size());
    fingerprint = h.finish();
    cached = readReference(referenceCache, fingerprint, ref);
  }
  if (!cached) {
    if (std::string e = linformer::ref::encoderForward(
            config, lookup, xp.data(),
            pad.lengths.empty() ? nullptr : pad.lengths.data(),
            pad.mask.empty() ? nullptr : pad.mask.data(), ref.data());
        !e.empty())
      return e;
    if (!referenceCache.empty() &&
        !writeReference(referenceCache, fingerprint, ref))
      return "cannot write the reference to '" + referenceCache + "'";
  }
  if (!referenceCache.empty())
    std::fprintf(tOut, "check: reference %s %s\n",
                cached ? "read from" : "computed and saved to",
                referenceCache.c_str());
  return "";
}

/// The output's real rows against the reference, each sequence's rows past
/// its length (padding, which the runtime returns as zeros) against zero;
/// prints what differs and the normwise relative error. NaN compares
/// false, so a NaN output against a NaN reference (a NaN weight) adds
/// nothing to the error: finiteness of both is a test of its own.
bool compareWithReference(const CheckedRun &run, const ReferencePadding &pad,
                          const std::vector<float> &ref, int64_t dm,
                          double tolerance) {
  int64_t n = run.n, L = run.L;
  double maxErr = 0, maxRef = 0;
  int64_t nonFinite = 0, nonFiniteRef = 0, nonzeroPadding = 0;
  std::vector<float> gotValues =
      asFloats(run.y.bytes.data(), run.y.numElements(), run.y.dtype);
  const float *got = gotValues.data();
  for (int64_t b = 0; b < run.batch; ++b) {
    // A packed output has only each sequence's real rows (for a mask
    // model too, whose padded rows the kernels compute).
    int64_t real = run.packed           ? int64_t(run.lengths[size_t(b)])
                   : pad.lengths.empty() ? L
                                         : int64_t(pad.lengths[size_t(b)]);
    for (int64_t i = 0; i < L * dm; ++i) {
      float g = got[b * L * dm + i], r = ref[b * n * dm + i];
      if (i / dm >= real) {
        nonzeroPadding += g != 0.0f;
        continue;
      }
      nonFinite += !std::isfinite(g);
      nonFiniteRef += !std::isfinite(r);
      maxErr = std::max(maxErr, std::fabs(double(g) - double(r)));
      maxRef = std::max(maxRef, std::fabs(double(r)));
    }
  }
  if (nonzeroPadding)
    std::fprintf(tOut, "check: %lld values of rows past their sequence's length "
                "are not 0\n",
                static_cast<long long>(nonzeroPadding));
  if (nonFinite)
    std::fprintf(tOut, "check: %lld output values are not finite\n",
                static_cast<long long>(nonFinite));
  if (nonFiniteRef)
    std::fprintf(tOut, "check: %lld reference values are not finite (do the "
                "weights or the input hold NaN or Inf?)\n",
                static_cast<long long>(nonFiniteRef));
  double rel = maxErr / std::max(maxRef, 1e-30);
  // An f16 output below 2^-14 is subnormal: its rounding there is absolute
  // (spacing 2^-24), not relative, so a model whose outputs are that small
  // (an attention-only stack shrinks them layer by layer) cannot meet a
  // relative bound. The bound is then tolerance * max|ref| plus one
  // subnormal step: the output's rounding (half a step) and the f32
  // kernels' own error at that size. A wrong output of that size (zeros,
  // a lost term) still errs by about max|ref| and fails.
  double absFloor = run.y.dtype == linformer::DType::F16 ? std::ldexp(1.0, -24)
                                                      : 0.0;
  bool ok = nonFinite == 0 && nonFiniteRef == 0 &&
            maxErr <= tolerance * maxRef + absFloor && nonzeroPadding == 0;
  if (absFloor > 0 && rel > tolerance)
    std::fprintf(tOut, "check: max abs error %.3e, normwise relative error "
                "%.3e (tolerance %.1e, plus %.1e absolute: f16's subnormal "
                "step): %s\n",
                maxErr, rel, tolerance, absFloor, ok ? "PASS" : "FAIL");
  else
    std::fprintf(tOut, "check: max abs error %.3e, normwise relative error "
                "%.3e (tolerance %.1e): %s\n",
                maxErr, rel, tolerance, ok ? "PASS" : "FAIL");
  return ok;
}

/// --check: the reference encoder (lib/Reference, on the model description
/// the manifest carries) on the same weights, input and padding, compared
/// with the output. Returns 0 when the check passes, 3 when it fails, 1
/// after an error.
int checkAgainstReference(const lf::Module &module,
                          const std::string &weightsPath, const CheckedRun &run,
                          const std::string &referenceCache, double tolerance) {
  nlohmann::json manifest = nlohmann::json::parse(module.manifestJson());
  if (!manifest.contains("model"))
    return error("--check needs a model description in the artifact "
                 "(compile from model.json)");
  linformer::ModelConfig config;
  if (std::string e =
          linformer::parseModelConfig(manifest["model"].dump(), config);
      !e.empty())
    return error(e);
  // The run's sequences (fewer than compiled with a dynamic batch).
  config.batch = run.batch;
  linformer::SafetensorsFile file;
  if (linformer::FileError e =
          linformer::SafetensorsFile::open(weightsPath, file))
    return error(e.message);
  ReferencePadding pad = referencePadding(config, run);
  std::vector<float> ref;
  if (std::string e = referenceOutput(config, manifest["model"].dump(), file,
                                      run, pad, referenceCache, ref);
      !e.empty())
    return error(e);
  if (tolerance < 0) {
    auto [t, why] = defaultTolerance(manifest, config.dtype);
    tolerance = t;
    std::fprintf(tOut, "check: tolerance %.2e for %s (--tolerance sets another)\n",
                t, why.c_str());
  }
  return compareWithReference(run, pad, ref, config.dModel, tolerance) ? 0
                                                                        : 3;
}



int parseLengths(const std::string &lengthsArg, int64_t n,
                 std::vector<int32_t> &lengths) {
  if (!lengthsArg.empty()) {
    if (lengthsArg.size() > 4 &&
        lengthsArg.compare(lengthsArg.size() - 4, 4, ".npy") == 0) {
      linformer::NpyArray la;
      if (linformer::FileError e = linformer::readNpy(lengthsArg, la))
        return error(e.message);
      if (la.shape.size() != 1)
        return error("--lengths: expected a 1-D array, got shape " +
                     linformer::shapeString(la.shape));
      if (la.dtype == linformer::DType::I32)
        lengths.assign(la.as<int32_t>(), la.as<int32_t>() + la.numElements());
      else if (la.dtype == linformer::DType::I64)
        for (int64_t k = 0; k < la.numElements(); ++k) {
          int64_t value = la.as<int64_t>()[k];
          if (value < 1 || value > n)
            return error("--lengths: entry " + std::to_string(k) + " is " +
                         std::to_string(value) + ", outside [1, n = " +
                         std::to_string(n) + "]");
          lengths.push_back(int32_t(value));
        }
      else
        return error("--lengths: expected an int32 or int64 array, got " +
                     std::string(linformer::dtypeName(la.dtype)));
    } else {
      size_t pos = 0;
      while (pos <= lengthsArg.size()) {
        size_t comma = lengthsArg.find(',', pos);
        std::string item = lengthsArg.substr(
            pos, comma == std::string::npos ? std::string::npos
                                            : comma - pos);
        long long value = 0;
        if (!parseInteger(item, 1, n, value))
          return usage("--lengths: '" + item +
                       "' is not an integer in [1, n = " +
                       std::to_string(n) + "]");
        lengths.push_back(int32_t(value));
        if (comma == std::string::npos)
          break;
        pos = comma + 1;
      }
    }
  }
  return 0;
}

int64_t artifactRanks(const std::string &path) {
  linformer::Artifact art;
  linformer::Manifest m;
  if (linformer::Artifact::open(path, art) ||
      linformer::parseManifest(art.section("manifest"), m))
    return 0;
  return linformer::sequenceParallelRanks(m);
}

} // namespace detail

namespace {
using namespace detail;

/// A host copy of a tensor placed at --io-offset from 64-byte alignment,
/// with where its bytes came from: an input's must still be there after the
/// runs.
struct HostIo {
  std::unique_ptr<char, decltype(&std::free)> storage{nullptr, &std::free};
  char *at = nullptr;
  const void *from = nullptr;
  size_t bytes = 0;
};

/// One invocation after its options: the artifact loaded, the tensors
/// built, the timed runs, then what the options ask of them. main() takes
/// the steps in the order they are declared.
struct Runner : Options {
  explicit Runner(Options options);
  ~Runner();

  /// The run's lengths (--lengths: a list or a .npy).
  int readLengths();
  /// The data inputs (--input, or --random-input), their tensors, and the
  /// run's batch and length L.
  int readInputs();
  /// --poison-padding: the runtime gets copies of the sequence inputs
  /// whose padded rows (past each --lengths) are NaN bytes; the reference
  /// keeps the originals. Kernels that read the caller's tensor in place
  /// must then give the same bytes as without.
  int poisonPaddedRows();
  /// --packed: every sequence input [T, ...], and cu_seqlens in place of
  /// the lengths.
  int packInputs();
  /// The lengths and mask tensors.
  int addPadding();
  /// The output tensor.
  int prepareOutput();
  /// --io-offset: the data inputs and the output at a chosen distance from
  /// 64-byte alignment, to show what the runtime binds in place.
  /// --device-io: the data input and the output in device memory, copied
  /// there once before the runs and back once after them.
  int placeTensors();
  /// --warmup runs, then --repeat timed ones, and the output back.
  int timeRuns();
  /// --sessions: more sessions on the same module and weights, each of
  /// which must reproduce the first one's output exactly (same kernels,
  /// same order).
  int compareSessions();
  /// The "ran ..." line.
  int report();
  /// --profile and --profile-json.
  int writeProfile();
  /// --output.
  int writeOutput();
  /// --check.
  int checkOutput();

  void runOnce();

  lf::Module module;
  lf::Weights weights;
  lf::Session session;
  /// The compiled batch (then the run's) and sequence length; the run's L.
  int64_t batch = 0, n = 0, L = 0;
  std::vector<int32_t> lengths;
  linformer::NpyArray maskArray;
  std::vector<lf::TensorInfo> modelInputs;
  /// The data inputs as read, and the tensors a run passes (data inputs
  /// first, then cu_seqlens, lengths, mask).
  std::vector<linformer::NpyArray> arrays;
  std::vector<lf::TensorRef> refs;
  linformer::NpyArray x;
  std::vector<linformer::NpyArray> poisonedArrays, packedArrays;
  std::vector<int32_t> cuSeqlens;
  std::vector<lf::TensorInfo> outs;
  std::vector<int64_t> outShape;
  linformer::NpyArray y;
  std::vector<lf::TensorRef> outRefs;
  std::vector<HostIo> hostInputs;
  HostIo hostOutput;
  std::vector<void *> deviceBuffers;
  std::vector<lf::TensorRef> devRefs, devOutRefs;
  /// The timed runs' milliseconds.
  std::vector<double> ms;
};

/// A session of `weights` on `module`, once the weights are checked against
/// the model's.
lf::Session openSession(const Options &o, const lf::Module &module,
                        const lf::Weights &weights) {
  weights.checkAgainst(module);
  lf_session_options options;
  lf_session_options_init(&options);
  options.num_threads = o.threads;
  options.profile = o.profile || !o.profileJson.empty() ? 1 : 0;
  options.spin_us = o.spinUs;
  options.cuda_graphs = o.cudaGraphs;
  options.cuda_graph_branches = o.cudaGraphBranches;
  if (o.rank < 0)
    return lf::Session(module, weights, options);
  // --rank: one rank alone; what its all-reduce would sum stays its own.
  options.rank = o.rank;
  options.ranks = int32_t(module.sequenceParallel());
  options.all_reduce = [](void *, void *, int64_t, lf_dtype) -> int32_t {
    return 0;
  };
  return lf::Session(module, weights, options);
}

Runner::Runner(Options options)
    : Options(std::move(options)), module(lf::Module::load(artifact, device)),
      weights(lf::Weights::load(weightsPath)),
      session(openSession(*this, module, weights)) {
  std::tie(batch, n) = module.sequenceShape();
  // The run's batch: --batch, else one per listed length, else the
  // compiled one (a maximum for models with lengths).
  if (runBatch < 0 && !lengthsArg.empty() &&
      lengthsArg.find(".npy") == std::string::npos)
    runBatch = int64_t(std::count(lengthsArg.begin(), lengthsArg.end(),
                                  ',')) +
               1;
}

Runner::~Runner() {
  for (void *p : deviceBuffers)
    lf_status_free(lf_device_free(module.get(), p));
}

void Runner::runOnce() {
  if (deviceIo)
    session.runDevice(devRefs, devOutRefs);
  else
    session.run(refs, outRefs);
}

int Runner::readLengths() { return parseLengths(lengthsArg, n, lengths); }

int Runner::readInputs() {
  modelInputs = module.inputs();
  for (const lf::TensorInfo &info : modelInputs) {
    if (info.role != LF_ROLE_NONE)
      continue;
    linformer::NpyArray a;
    if (inputs.count(info.name)) {
      if (linformer::FileError e = linformer::readNpy(inputs[info.name], a))
        return error(e.message);
      // numpy has no bf16: an f32 array feeds an f16 or bf16 input,
      // rounded to nearest even.
      linformer::DType want = linformer::DType(info.dtype);
      if (a.dtype == linformer::DType::F32 &&
          (want == linformer::DType::BF16 || want == linformer::DType::F16)) {
        a.bytes = floatsAs(asFloats(a.bytes.data(), a.numElements(),
                                    a.dtype),
                           want);
        a.dtype = want;
      }
      if (packed) {
        // [T, ...]: back to [b, L, ...] for the check; packed again below.
        std::vector<int64_t> want(info.shape.begin() + 1, info.shape.end());
        want[0] = 0;
        for (int32_t len : lengths)
          want[0] += len;
        if (a.shape != want)
          return error("--packed: input '" + info.name + "' has shape " +
                       linformer::shapeString(a.shape) + ", expected " +
                       linformer::shapeString(want) +
                       " (the --lengths' tokens, end to end)");
        a = unpackRows(a, lengths,
                       *std::max_element(lengths.begin(), lengths.end()));
      }
    } else if (randomInput) {
      if (seqLen > n)
        return error("--seq-len " + std::to_string(seqLen) +
                     " exceeds the compiled n = " + std::to_string(n));
      int64_t L = seqLen < 0 ? n : seqLen;
      a.dtype = linformer::DType(info.dtype);
      a.shape = info.shape;
      if (a.shape.size() >= 2) {
        a.shape[1] = L;
        if (runBatch > 0)
          a.shape[0] = runBatch;
      }
      std::vector<float> values = linformer::uniformVector(
          linformer::shapeNumElements(a.shape), seed, -1, 1);
      a.bytes = floatsAs(values, a.dtype);
    } else {
      return error("the model needs input '" + info.name +
                   "': pass --input " + info.name + "=FILE.npy");
    }
    for (const auto &[name, path] : inputs)
      if (name != info.name && !std::any_of(
                                   modelInputs.begin(), modelInputs.end(),
                                   [&](const lf::TensorInfo &t) {
                                     return t.name == name;
                                   }))
        return error("the model has no input named '" + name + "'");
    arrays.push_back(std::move(a));
    if (info.name == "x")
      x = arrays.back();
  }
  for (size_t i = 0, j = 0; i < modelInputs.size(); ++i) {
    const lf::TensorInfo &info = modelInputs[i];
    if (info.role != LF_ROLE_NONE)
      continue;
    linformer::NpyArray &a = arrays[j++];
    refs.emplace_back(info.name, toLf(a.dtype), a.shape, a.bytes.data());
  }
  L = x.shape.size() >= 2 ? x.shape[1] : n;
  if (x.shape.size() >= 2)
    batch = x.shape[0];
  return 0;
}

int Runner::poisonPaddedRows() {
  if (poisonPadding && !lengths.empty() && !packed) {
    poisonedArrays.reserve(arrays.size());
    for (size_t j = 0; j < arrays.size(); ++j) {
      const linformer::NpyArray &a = arrays[j];
      if (a.shape.size() < 2 || a.shape[0] != int64_t(lengths.size()))
        continue;
      poisonedArrays.push_back(a);
      linformer::NpyArray &pa = poisonedArrays.back();
      size_t row = pa.bytes.size() / size_t(a.shape[0] * a.shape[1]);
      for (size_t i = 0; i < lengths.size(); ++i)
        if (lengths[i] < a.shape[1])
          std::memset(
              &pa.bytes[(i * size_t(a.shape[1]) + size_t(lengths[i])) * row],
              0xff, size_t(a.shape[1] - lengths[i]) * row);
      refs[j] = lf::TensorRef(refs[j].name(), toLf(pa.dtype), pa.shape,
                              pa.bytes.data());
    }
  }
  return 0;
}

int Runner::packInputs() {
  if (packed) {
    if (lengths.empty())
      lengths.assign(size_t(batch), int32_t(L));
    if (int64_t(lengths.size()) != batch)
      return error("--packed: --lengths lists " +
                   std::to_string(lengths.size()) +
                   " sequences, the input has " + std::to_string(batch));
    cuSeqlens.push_back(0);
    for (int32_t len : lengths) {
      if (len > L)
        return error("--packed: a length of " + std::to_string(len) +
                     " exceeds the input's " + std::to_string(L) +
                     " tokens");
      cuSeqlens.push_back(cuSeqlens.back() + len);
    }
    packedArrays.reserve(arrays.size());
    for (size_t j = 0; j < arrays.size(); ++j) {
      if (arrays[j].shape.size() < 2)
        continue;
      packedArrays.push_back(packRows(arrays[j], lengths));
      const linformer::NpyArray &pa = packedArrays.back();
      refs[j] = lf::TensorRef(refs[j].name(), toLf(pa.dtype), pa.shape,
                              pa.bytes.data());
    }
    refs.emplace_back("cu_seqlens", LF_DTYPE_I32,
                      std::vector<int64_t>{int64_t(cuSeqlens.size())},
                      cuSeqlens.data());
  }
  return 0;
}

int Runner::addPadding() {
  if (!lengthsArg.empty() && !packed)
    refs.emplace_back("lengths", LF_DTYPE_I32,
                      std::vector<int64_t>{int64_t(lengths.size())},
                      lengths.data());
  if (!maskPath.empty()) {
    if (linformer::FileError e = linformer::readNpy(maskPath, maskArray))
      return error(e.message);
    // bool and uint8 masks are used as they are; integer masks (numpy's
    // default dtype) become nonzero -> 1. Reading an int array's bytes as
    // u8 would silently turn one token into four or eight.
    if (maskArray.dtype == linformer::DType::I32 ||
        maskArray.dtype == linformer::DType::I64) {
      int64_t count = maskArray.numElements();
      std::string bytes(size_t(count), '\0');
      for (int64_t k = 0; k < count; ++k)
        bytes[size_t(k)] =
            maskArray.dtype == linformer::DType::I32
                ? char(maskArray.as<int32_t>()[k] != 0)
                : char(maskArray.as<int64_t>()[k] != 0);
      maskArray.bytes = std::move(bytes);
      maskArray.dtype = linformer::DType::U8;
    } else if (maskArray.dtype != linformer::DType::U8) {
      return error("--mask: expected a bool, uint8 or integer array, got " +
                   std::string(linformer::dtypeName(maskArray.dtype)));
    }
    refs.emplace_back("mask", LF_DTYPE_U8, maskArray.shape,
                      maskArray.bytes.data());
  }
  return 0;
}

int Runner::prepareOutput() {
  outs = module.outputs();
  if (outs.size() != 1)
    return error("linformer-run handles models with one output");
  outShape = outs[0].shape;
  if (outShape.size() >= 2 && packed) {
    outShape.erase(outShape.begin());
    outShape[0] = cuSeqlens.back();
  } else if (outShape.size() >= 2) {
    outShape[0] = batch;
    outShape[1] = L;
  }
  y.dtype = linformer::DType(outs[0].dtype);
  y.shape = outShape;
  y.bytes.assign(linformer::shapeNumElements(outShape) *
                     linformer::dtypeSize(y.dtype),
                 0);
  outRefs = {
      lf::TensorRef(outs[0].name, outs[0].dtype, outShape, y.bytes.data())};
  return 0;
}

int Runner::placeTensors() {
  // The bytes of the data a run passes as `t`.
  auto tensorBytes = [](const lf::TensorRef &t) {
    return size_t(linformer::shapeNumElements(t.shape())) *
           lf_dtype_size(t.view().dtype);
  };
  auto placeAtOffset = [&](lf::TensorRef &t, HostIo &h) {
    lf_tensor v = t.view();
    h.from = v.data;
    h.bytes = tensorBytes(t);
    h.storage.reset(static_cast<char *>(
        std::aligned_alloc(64, (h.bytes + size_t(ioOffset) + 64) / 64 * 64)));
    if (!h.storage)
      return false;
    h.at = h.storage.get() + ioOffset;
    std::memcpy(h.at, v.data, h.bytes);
    t = lf::TensorRef(t.name(), v.dtype, t.shape(), h.at);
    return true;
  };
  if (ioOffset >= 0 && !deviceIo) {
    hostInputs.resize(arrays.size());
    for (size_t j = 0; j < arrays.size(); ++j)
      if (!placeAtOffset(refs[j], hostInputs[j]))
        return error("--io-offset: out of memory");
    if (!placeAtOffset(outRefs[0], hostOutput))
      return error("--io-offset: out of memory");
  }

  // --device-io: the data input and the output in device memory, copied
  // there once before the runs and back once after them.
  auto onDevice = [&](const lf::TensorRef &t, const void *host,
                      size_t bytes, int64_t offset = 0) {
    void *p = nullptr;
    lf::check(lf_device_alloc(module.get(), bytes + size_t(offset), &p));
    deviceBuffers.push_back(p);
    p = static_cast<char *>(p) + offset;
    if (host)
      lf::check(lf_device_copy_to(module.get(), p, host, bytes));
    lf_tensor v = t.view();
    return lf::TensorRef(t.name(), v.dtype, t.shape(), p);
  };
  if (deviceIo) {
    size_t j = 0;
    for (const lf::TensorInfo &info : modelInputs) {
      if (info.role != LF_ROLE_NONE) {
        continue;
      }
      // What the host run would pass (packed with --packed).
      devRefs.push_back(onDevice(refs[j], refs[j].view().data,
                                 tensorBytes(refs[j]), deviceIoOffset));
      ++j;
    }
    // Lengths and mask stay host tensors.
    for (size_t k = j; k < refs.size(); ++k)
      devRefs.push_back(refs[k]);
    devOutRefs.push_back(onDevice(outRefs[0], nullptr, y.bytes.size()));
  }
  return 0;
}

int Runner::timeRuns() {
  for (int r = 0; r < warmup; ++r)
    runOnce();
  if (profile || !profileJson.empty())
    session.resetProfile();
  for (int r = 0; r < repeat; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    runOnce();
    ms.push_back(std::chrono::duration<double, std::milli>(
                     std::chrono::steady_clock::now() - t0)
                     .count());
  }
  if (deviceIo)
    lf::check(lf_device_copy_from(module.get(), y.bytes.data(),
                                  devOutRefs[0].view().data,
                                  y.bytes.size()));
  else if (hostOutput.storage) {
    std::memcpy(y.bytes.data(), hostOutput.at, y.bytes.size());
    // A buffer bound in place must come back as it was given.
    for (size_t j = 0; j < hostInputs.size(); ++j)
      if (std::memcmp(hostInputs[j].at, hostInputs[j].from,
                      hostInputs[j].bytes) != 0)
        return error("--io-offset: the runs changed input '" +
                     refs[j].name() + "'");
  }
  return 0;
}

int Runner::compareSessions() {
  for (int k = 1; k < sessions; ++k) {
    lf::Session other(module, weights, threads, false);
    std::string bytes(y.bytes.size(), '\0');
    std::vector<lf::TensorRef> otherOut = {
        lf::TensorRef(outs[0].name, outs[0].dtype, outShape, bytes.data())};
    other.run(refs, otherOut);
    if (bytes != y.bytes)
      return error("session " + std::to_string(k + 1) + " of " +
                   std::to_string(sessions) +
                   " gave a different output than the first");
  }
  if (sessions > 1)
    std::fprintf(tOut, "sessions: %d on one module and weights, outputs "
                "identical\n",
                sessions);
  return 0;
}

int Runner::report() {
  std::sort(ms.begin(), ms.end());
  // L is the input's sequence dimension; --lengths cut sequences shorter
  // still, and say how many tokens each really had.
  std::string real;
  for (size_t k = 0; k < lengths.size(); ++k)
    real += (k ? "," : packed ? "; packed, real lengths " : "; real lengths ") +
            std::to_string(lengths[k]);
  std::fprintf(tOut, "ran %s: batch %lld, %lld of %lld tokens, %d thread(s): "
              "median %.3f ms over %d run(s) (min %.3f) on %s%s\n",
              artifact.c_str(), (long long)batch, (long long)L,
              (long long)n, session.numThreads(), ms[ms.size() / 2], repeat,
              ms.front(), module.device().c_str(), real.c_str());
  return 0;
}

int Runner::writeProfile() {
  if (profile || !profileJson.empty()) {
    std::vector<lf_kernel_profile> kernels = session.kernelProfiles();
    // Initializers ran once, when the session was created: not part of
    // a run's time.
    std::vector<bool> once(kernels.size());
    double total = 0;
    for (size_t i = 0; i < kernels.size(); ++i) {
      once[i] = session.kernelIsInitializer(i);
      if (!once[i])
        total += kernels[i].median_ms;
    }
    if (profile) {
      std::fprintf(tOut, "%-22s %10s %10s %10s %6s %9s\n", "kernel", "workgroups",
                  "median_ms", "min_ms", "%time", "GFLOP/s");
      // A kernel whose record counts no FLOPs (the CUDA path's records
      // carry none yet) gets "-", not a rate of zero.
      for (size_t i = 0; i < kernels.size(); ++i) {
        const lf_kernel_profile &k = kernels[i];
        if (once[i])
          continue;
        char rate[32] = "-";
        if (k.flops > 0 && k.median_ms > 0)
          std::snprintf(rate, sizeof rate, "%.1f",
                        k.flops / (k.median_ms * 1e6));
        std::fprintf(tOut, "%-22s %10lld %10.3f %10.3f %5.1f%% %9s\n", k.symbol,
                    (long long)k.workgroups, k.median_ms, k.min_ms,
                    total > 0 ? 100 * k.median_ms / total : 0.0, rate);
      }
      for (size_t i = 0; i < kernels.size(); ++i)
        if (once[i])
          std::fprintf(tOut, "%-22s %10lld %10.3f  (initializer: once, at session "
                      "creation)\n",
                      kernels[i].symbol, (long long)kernels[i].workgroups,
                      kernels[i].median_ms);
      // What the last run copied between our tensors and the session's.
      auto [copiedIn, copiedOut] = session.copiedBytes();
      std::fprintf(tOut, "host copies: %lld bytes in, %lld bytes out\n",
                  (long long)copiedIn, (long long)copiedOut);
    }
    if (!profileJson.empty()) {
      nlohmann::ordered_json j;
      j["artifact"] = artifact;
      j["threads"] = session.numThreads();
      j["runs"] = repeat;
      j["median_ms"] = ms[ms.size() / 2];
      j["kernels"] = nlohmann::ordered_json::array();
      for (size_t i = 0; i < kernels.size(); ++i) {
        const lf_kernel_profile &k = kernels[i];
        j["kernels"].push_back({{"symbol", k.symbol},
                                {"key", k.key},
                                {"workgroups", k.workgroups},
                                {"runs", k.runs},
                                {"median_ms", k.median_ms},
                                {"min_ms", k.min_ms},
                                {"mean_ms", k.mean_ms},
                                {"flops", k.flops}});
        if (once[i])
          j["kernels"].back()["initializer"] = true;
      }
      std::ofstream out(profileJson);
      out << j.dump(2) << "\n";
      if (!out)
        return error("cannot write '" + profileJson + "'");
    }
  }
  return 0;
}

int Runner::writeOutput() {
  if (!output.empty()) {
    // numpy has no bf16: a bf16 output is written as f32 (exact).
    linformer::NpyArray out = y;
    if (y.dtype == linformer::DType::BF16) {
      std::vector<float> f = asFloats(y.bytes.data(), y.numElements(), y.dtype);
      out.dtype = linformer::DType::F32;
      out.bytes = floatsAs(f, out.dtype);
    }
    if (std::string e = linformer::writeNpy(output, out); !e.empty())
      return error(e);
    std::fprintf(tOut, "wrote %s\n", output.c_str());
  }
  return 0;
}

int Runner::checkOutput() {
  // The check compares sequence by sequence, as [b, L, ...].
  if (packed)
    y = unpackRows(y, lengths, L);

  if (check)
    if (int rc = checkAgainstReference(
            module, weightsPath,
            CheckedRun{x, y, batch, n, L, lengths, maskArray, packed},
            referenceCache, tolerance))
      return rc;
  return 0;
}


/// The steps of a run in order; each returns 0 to go on, or the exit code.
/// `timed`: only what timing needs (no report, profile table, output file
/// or other sessions).
int runSteps(Runner &run, bool timed) {
  using Step = int (Runner::*)();
  std::vector<Step> steps = {
      &Runner::readLengths,  &Runner::readInputs,   &Runner::poisonPaddedRows,
      &Runner::packInputs,   &Runner::addPadding,   &Runner::prepareOutput,
      &Runner::placeTensors, &Runner::timeRuns};
  if (!timed)
    steps.insert(steps.end(), {&Runner::compareSessions, &Runner::report,
                               &Runner::writeProfile, &Runner::writeOutput});
  steps.push_back(&Runner::checkOutput);
  for (Step step : steps)
    if (int rc = (run.*step)())
      return rc;
  return 0;
}

/// Points tOut and tErr at a run's streams while it lasts.
struct Streams {
  Streams(std::FILE *out, std::FILE *err) : oldOut(tOut), oldErr(tErr) {
    tOut = out;
    tErr = err;
  }
  ~Streams() {
    tOut = oldOut;
    tErr = oldErr;
  }
  std::FILE *oldOut, *oldErr;
};

} // namespace

int Options::writeWeights() const {
  // From the manifest alone: no code is loaded (and no device needed).
  linformer::Artifact art;
  if (linformer::FileError err = linformer::Artifact::open(artifact, art))
    return error(err.message);
  linformer::Manifest m;
  if (linformer::FileError err =
          linformer::parseManifest(art.section("manifest"), m))
    return error(artifact + ": " + err.message);
  linformer::ModelConfig config;
  if (m.modelJson.empty())
    return error("--make-weights needs an artifact compiled from a "
                 "model.json; " + artifact + " has no model description");
  if (std::string err = linformer::parseModelConfig(m.modelJson, config);
      !err.empty())
    return error(artifact + ": model: " + err);
  size_t count = 0;
  if (std::string err =
          linformer::writeRandomWeights(config, seed, weightsPath, &count);
      !err.empty())
    return error(err);
  std::fprintf(tOut, "wrote %zu weights to %s\n", count, weightsPath.c_str());
  return 0;
}

int run(Options options, std::FILE *out, std::FILE *err) {
  Streams streams(out, err);
  if (options.makeWeights)
    if (int rc = options.writeWeights())
      return rc;
  int64_t ranks = artifactRanks(options.artifact);
  if (options.rank >= 0 && ranks == 0)
    return error("--rank runs one rank of a sequence-parallel artifact, and " +
                 options.artifact + " runs whole sequences");
  if (options.rank >= 0 && options.sessions != 1)
    return error("--sessions opens sessions of the whole artifact, and "
                 "--rank runs one rank alone");
  if (options.rank >= 0 && options.check)
    return error("--check compares the whole sequence, and --rank runs one "
                 "rank alone (its all-reduce sums nothing): run without "
                 "--rank to check");
  if (options.rank >= 0 && options.rank < ranks)
    std::fprintf(tOut,
                 "rank %d of %lld alone: its all-reduce sums nothing (one "
                 "rank's time and memory, not the sequence's values)\n",
                 options.rank, static_cast<long long>(ranks));
  try {
    if (ranks > 0 && options.rank < 0)
      return runRanks(options);
    Runner run(std::move(options));
    return runSteps(run, /*timed=*/false);
  } catch (const lf::Error &e) {
    return error(std::string(lf_status_code_name(e.code())) + ": " + e.what());
  } catch (const std::exception &e) {
    return error(e.what());
  }
}

std::string timeArtifact(Options options, std::FILE *log,
                         std::vector<KernelTime> &kernels) {
  Streams streams(log, log);
  kernels.clear();
  options.profile = true;
  // A sequence-parallel artifact: rank 0 alone, whose kernels do the
  // work of every rank's (the sums change values, not work).
  if (artifactRanks(options.artifact) > 0) {
    options.rank = 0;
    options.check = false;
  }
  try {
    Runner run(std::move(options));
    if (int rc = runSteps(run, /*timed=*/true))
      return rc == 3 ? "the check failed" : "the run failed";
    std::vector<lf_kernel_profile> profiles = run.session.kernelProfiles();
    for (size_t i = 0; i < profiles.size(); ++i) {
      KernelTime k;
      k.symbol = profiles[i].symbol;
      k.key = profiles[i].key;
      k.medianMs = profiles[i].median_ms;
      k.initializer = run.session.kernelIsInitializer(i);
      kernels.push_back(std::move(k));
    }
    return "";
  } catch (const lf::Error &e) {
    return std::string(lf_status_code_name(e.code())) + ": " + e.what();
  } catch (const std::exception &e) {
    return e.what();
  }
}

} // namespace run
} // namespace linformer
