//===- Module.cpp - Loading artifacts: manifest, target, kernels ----------===//
//
// Turns an .lfa file into a runnable Module: validates the container and the
// manifest, checks that this machine can run the target, loads the CPU
// kernels' shared object from the artifact without extracting it next to the
// artifact (memfd, or a private temp file where memfd is missing), and
// resolves every kernel's dispatch function up front so that a bad artifact
// fails at load, not halfway through a run.
//
//===----------------------------------------------------------------------===//

#include "Cuda.h"
#include "Internal.h"
#include "Scratch.h"

#include "lib/Manifest/KernelObject.h"
#include "lib/Support/Features.h"
#include "lib/Support/Sha256.h"

#if defined(__x86_64__)
#include <cpuid.h>
#endif

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <fstream>
#include <optional>
#include <set>
#include <sstream>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

namespace linformer {
namespace runtime {

[[noreturn]] void throwFileError(const FileError &err) {
  switch (err.kind) {
  case ErrorKind::IO:
    throw Error(LF_IO_ERROR, err.message);
  case ErrorKind::Version:
    throw Error(LF_VERSION_MISMATCH, err.message);
  case ErrorKind::Format:
  case ErrorKind::None:
    break;
  }
  throw Error(LF_FORMAT_ERROR, err.message);
}

/// LLVM x86 feature names whose absence means the kernels would die with
/// SIGILL, and the flag /proc/cpuinfo uses for each. Features outside this
/// list (tuning flags, features every x86-64 has) are not checked.
static const char *cpuinfoFlag(const std::string &feature) {
  static const std::pair<const char *, const char *> table[] = {
      {"avx", "avx"},
      {"avx2", "avx2"},
      {"fma", "fma"},
      {"f16c", "f16c"},
      {"bmi", "bmi1"},
      {"bmi2", "bmi2"},
      {"sse4.1", "sse4_1"},
      {"sse4.2", "sse4_2"},
      {"ssse3", "ssse3"},
      {"avx512f", "avx512f"},
      {"avx512bw", "avx512bw"},
      {"avx512cd", "avx512cd"},
      {"avx512dq", "avx512dq"},
      {"avx512vl", "avx512vl"},
      {"avx512ifma", "avx512ifma"},
      {"avx512vbmi", "avx512vbmi"},
      {"avx512vbmi2", "avx512_vbmi2"},
      {"avx512vnni", "avx512_vnni"},
      {"avx512bf16", "avx512_bf16"},
      {"avx512fp16", "avx512_fp16"},
      {"avx512bitalg", "avx512_bitalg"},
      {"avx512vpopcntdq", "avx512_vpopcntdq"},
      {"avxvnni", "avx_vnni"},
      {"avx512vp2intersect", "avx512_vp2intersect"},
      {"amx-tile", "amx_tile"},
      {"amx-bf16", "amx_bf16"},
      {"amx-int8", "amx_int8"},
      // Outside the vector ISAs, what LLVM emits in scalar code for a CPU
      // that has it: SSE4A's insertq for znver4 (an Intel CPU lacks it:
      // a znver4 artifact died with SIGILL on a Xeon), TBM, LZCNT, MOVBE.
      {"sse4a", "sse4a"},
      {"xop", "xop"},
      {"fma4", "fma4"},
      {"tbm", "tbm"},
      {"lzcnt", "abm"},
      {"popcnt", "popcnt"},
      {"movbe", "movbe"},
      {"adx", "adx"},
      {"aes", "aes"},
      {"pclmul", "pclmulqdq"},
      {"vaes", "vaes"},
      {"vpclmulqdq", "vpclmulqdq"},
      {"gfni", "gfni"},
      {"sha", "sha_ni"}};
  for (const auto &[llvm, flag] : table)
    if (feature == llvm)
      return flag;
  return nullptr;
}

#if defined(__x86_64__)
/// Features that kernels older than their CPUs do not list in
/// /proc/cpuinfo, asked of CPUID itself: AMX-FP16 (leaf 7, subleaf 1,
/// EAX bit 21; Linux names it amx_fp16 from 6.3, Debian 12's 6.1 does
/// not, on a Xeon that has it). Null for any other feature.
static std::optional<bool> cpuidFeature(const std::string &feature) {
  if (feature != "amx-fp16")
    return std::nullopt;
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx))
    return false;
  return ((eax >> 21) & 1) != 0;
}
#endif

/// Refuses an artifact whose kernels use instructions this CPU lacks.
static void checkCpuFeatures(const Manifest &m, const std::string &path) {
#if defined(__x86_64__)
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line, flags;
  while (std::getline(cpuinfo, line))
    if (line.rfind("flags", 0) == 0) {
      flags = " " + line.substr(line.find(':') + 1) + " ";
      break;
    }
  if (flags.empty())
    return; // cannot tell; let it run
  std::stringstream features(m.target.features);
  std::string f;
  std::vector<std::string> missing;
  while (std::getline(features, f, ',')) {
    if (f.size() < 2 || f[0] != '+')
      continue;
    if (std::optional<bool> has = cpuidFeature(f.substr(1))) {
      if (!*has)
        missing.push_back(f.substr(1));
      continue;
    }
    const char *flag = cpuinfoFlag(f.substr(1));
    if (flag && flags.find(std::string(" ") + flag + " ") == std::string::npos)
      missing.push_back(f.substr(1));
  }
  if (!missing.empty()) {
    std::string list;
    for (const std::string &s : missing)
      list += (list.empty() ? "" : ", ") + s;
    throw Error(LF_UNAVAILABLE, "artifact '" + path +
                                    "' was compiled for cpu '" + m.target.cpu +
                                    "' and needs " + list +
                                    ", which this CPU lacks");
  }
#else
  (void)m;
  (void)path;
#endif
}

/// Code for a CPU with AMX may execute tile instructions, which Linux
/// refuses (SIGILL) until the process has asked for the tile data state
/// once: ask now, before any kernel runs, and report a kernel that says no
/// as a status rather than a signal. The permission is the process's, for
/// every thread; each kernel that uses tiles configures them itself
/// (ldtilecfg, emitted by LLVM).
static void requestAmxState(const Manifest &m, const std::string &path) {
#if defined(__x86_64__) && defined(__linux__)
  if (!featureOn(m.target.features, "amx-tile"))
    return;
  constexpr long kArchReqXcompPerm = 0x1023, kXfeatureXtiledata = 18;
  if (syscall(SYS_arch_prctl, kArchReqXcompPerm, kXfeatureXtiledata) != 0)
    throw Error(LF_UNAVAILABLE,
                "artifact '" + path +
                    "' was compiled for a CPU with AMX, and this Linux "
                    "kernel refused the AMX tile state "
                    "(arch_prctl(ARCH_REQ_XCOMP_PERM): " +
                    std::strerror(errno) + ")");
#else
  (void)m;
  (void)path;
#endif
}

std::shared_ptr<Module> Module::load(const std::string &path,
                                     const std::string &device) {
  if (!device.empty() && device != "cpu" && device != "cuda")
    throw Error(LF_INVALID_ARGUMENT,
                "device '" + device + "' is not cpu or cuda");
  Artifact artifact;
  if (FileError err = Artifact::open(path, artifact))
    throwFileError(err);
  // The targets the artifact has, the GPU first: "manifest" holds one
  // target, "manifest.cuda" the cuda one beside a cpu one (--target=cpu,cuda).
  std::vector<std::pair<const char *, std::string>> targets;
  for (const char *section : {kCudaManifestSection, kManifestSection}) {
    if (!artifact.find(section))
      continue;
    Manifest m;
    if (FileError err = parseManifest(artifact.section(section), m)) {
      err.message = "artifact '" + path + "': " + err.message;
      throwFileError(err);
    }
    if (device.empty() || m.target.kind == device)
      targets.push_back({section, m.target.kind});
    else if (!artifact.find(kCudaManifestSection))
      throw Error(LF_INVALID_ARGUMENT,
                  "artifact '" + path + "' has " + m.target.kind +
                      " code only, not " + device +
                      " (linformer-compile --target=" + device +
                      ", or --target=cpu,cuda for both)");
  }
  if (targets.empty())
    throw Error(LF_FORMAT_ERROR, "artifact '" + path + "' has no manifest");
  std::string skipped;
  for (size_t i = 0; i < targets.size(); ++i) {
    try {
      std::shared_ptr<Module> module =
          validate(artifact, path, targets[i].first);
      const Manifest &m = module->manifest_;
      if (m.target.kind == "cuda") {
        module->cuda_ = openCudaModule(
            m, artifact.section(kCudaPtxSection),
            artifact.section(cudaCubinSection(m.target.cpu)), path);
        module->device_ = describeDevice(*module->cuda_);
        return module;
      }
      module->openKernels(artifact.section(kCpuObjectSection));
      module->device_ = "cpu (" + m.target.cpu + ")" +
                        (skipped.empty() ? "" : "; cuda not used: " + skipped);
      return module;
    } catch (const Error &e) {
      // A GPU the machine lacks is a reason to take the CPU code instead.
      if (e.code != LF_UNAVAILABLE || i + 1 == targets.size())
        throw;
      skipped = e.what();
    }
  }
  throw Error(LF_INTERNAL, "artifact '" + path + "': no target loaded");
}

std::shared_ptr<Module> Module::validate(const Artifact &artifact,
                                         const std::string &path,
                                         const char *manifestSection) {
  std::shared_ptr<Module> module(new Module());
  module->path_ = path;
  module->manifestText_ = std::string(artifact.section(manifestSection));
  if (FileError err = parseManifest(module->manifestText_, module->manifest_)) {
    err.message = "artifact '" + path + "': " + err.message;
    throwFileError(err);
  }
  const Manifest &m = module->manifest_;
  auto checkHash = [&](const std::string &section) {
    std::string recorded = m.sha256Of(section);
    std::string actual = sha256Hex(artifact.section(section));
    if (actual != recorded)
      throw Error(LF_FORMAT_ERROR,
                  "artifact '" + path + "': the '" + section +
                      "' section's SHA-256 is " + actual +
                      " but the manifest records " + recorded +
                      " (the artifact is corrupt or was edited)");
  };
  if (m.target.kind == "cuda") {
    // Device code is handed to the driver only after its hash matches; a
    // cubin the manifest does not record is not used.
    module->checkGeometry();
    if (!artifact.find(kCudaPtxSection))
      throw Error(LF_FORMAT_ERROR, "artifact '" + path +
                                       "' targets cuda but has no '" +
                                       kCudaPtxSection + "' section");
    checkHash(kCudaPtxSection);
    std::string cubin = cudaCubinSection(m.target.cpu);
    if (!m.sha256Of(cubin).empty()) {
      if (!artifact.find(cubin))
        throw Error(LF_FORMAT_ERROR, "artifact '" + path +
                                         "': the manifest records section '" +
                                         cubin + "', which is missing");
      checkHash(cubin);
    } else if (artifact.find(cubin)) {
      throw Error(LF_FORMAT_ERROR, "artifact '" + path + "': section '" +
                                       cubin +
                                       "' has no hash in the manifest");
    }
    return module;
  }
  checkCpuFeatures(m, path);
  requestAmxState(m, path);
  module->checkGeometry();
  if (!artifact.find(kCpuObjectSection))
    throw Error(LF_FORMAT_ERROR, "artifact '" + path +
                                     "' targets cpu but has no 'cpu.so' "
                                     "section");
  // Nothing of the object runs before all of it is checked: its hash, its
  // structure (no code that runs at load) and what its kernels state about
  // themselves against the manifest. Only then does the loader see it.
  std::string_view object = artifact.section(kCpuObjectSection);
  checkHash(kCpuObjectSection);
  // The collective steps of a sequence-parallel plan have no code.
  std::vector<std::string> symbols;
  for (const ManifestKernel &k : m.kernels)
    if (!k.isCollective())
      symbols.push_back(k.symbol);
  std::vector<KernelAbi> abis;
  if (FileError err = inspectKernelObject(object, symbols, abis,
                                          "artifact '" + path + "': cpu.so"))
    throwFileError(err);
  for (size_t i = 0, next = 0; i < m.kernels.size(); ++i)
    module->abis_.push_back(m.kernels[i].isCollective() ? KernelAbi()
                                                        : abis[next++]);
  module->checkKernels();
  return module;
}

/// The manifest must say what the compiled kernels were built for: the same
/// workgroup count, the same number of buffers, and each bound buffer exactly
/// the size the code indexes. Any difference would let a kernel read or
/// write outside a buffer.
void Module::checkKernels() const {
  const Manifest &m = manifest_;
  const std::vector<KernelAbi> &abis = abis_;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const ManifestKernel &k = m.kernels[i];
    if (k.isCollective())
      continue;
    const KernelAbi &abi = abis[i];
    std::string where = "artifact '" + path_ + "': kernel " +
                        std::to_string(i) + " ('" + k.symbol + "') ";
    if (k.workgroups != abi.workgroups)
      throw Error(LF_FORMAT_ERROR,
                  where + "has " + std::to_string(k.workgroups) +
                      " workgroups in the manifest, but its code was "
                      "compiled for " +
                      std::to_string(abi.workgroups));
    if (k.buffers.size() != abi.bufferBytes.size())
      throw Error(LF_FORMAT_ERROR,
                  where + "binds " + std::to_string(k.buffers.size()) +
                      " buffers in the manifest, but its code takes " +
                      std::to_string(abi.bufferBytes.size()));
    for (size_t j = 0; j < k.buffers.size(); ++j) {
      const ManifestBuffer &b = m.buffers[size_t(k.buffers[j])];
      if (b.byteSize() != abi.bufferBytes[j])
        throw Error(LF_FORMAT_ERROR,
                    where + "binds " + bufferKindName(b.kind) + " '" + b.name +
                        "' (" + std::to_string(b.byteSize()) +
                        " bytes in the manifest) as buffer " +
                        std::to_string(j) + ", but its code uses " +
                        std::to_string(abi.bufferBytes[j]) + " bytes there");
    }
    // The layout: a sequence buffer is packed where the manifest says so,
    // for every kernel that binds it, and nothing else is.
    for (size_t j = 0; j < k.buffers.size(); ++j) {
      size_t idx = size_t(k.buffers[j]);
      bool packed = m.packedSequences && isSequence_[idx];
      if (abi.packedBuffers[j] != packed)
        throw Error(LF_FORMAT_ERROR,
                    where + "binds " + bufferKindName(m.buffers[idx].kind) +
                        " '" + m.buffers[idx].name + "' as buffer " +
                        std::to_string(j) + ", which its code indexes " +
                        (abi.packedBuffers[j] ? "packed" : "padded") +
                        ", but the manifest (sequence_layout) says " +
                        (packed ? "packed" : "padded"));
    }
    // The length rule: the workgroups the runtime skips must be the ones
    // the code numbers that way.
    auto rule = [](const std::vector<int64_t> &grid, int64_t batch,
                   int64_t row, int64_t tile) {
      if (grid.empty())
        return std::string("none");
      return "grid " + shapeString(grid) + ", batch " + std::to_string(batch) +
             ", row " + std::to_string(row) + ", tile " + std::to_string(tile);
    };
    if (k.rowsGrid != abi.rowsGrid ||
        (k.hasRows() && (k.rowsBatch != abi.rowsBatch ||
                         k.rowsRow != abi.rowsRow ||
                         k.rowsTile != abi.rowsTile)))
      throw Error(LF_FORMAT_ERROR,
                  where + "has the length rule " +
                      rule(k.rowsGrid, k.rowsBatch, k.rowsRow, k.rowsTile) +
                      " in the manifest, but its code was compiled for " +
                      rule(abi.rowsGrid, abi.rowsBatch, abi.rowsRow,
                           abi.rowsTile));
  }
}

/// Works out which buffers are padded along the sequence and checks that
/// the role buffers fit the sequence inputs. The rule: inputs without a
/// role of rank >= 2 are sequence inputs and must all be [b, n, ...];
/// outputs of rank >= 2 with dims [b, n, ...] are sequence outputs.
void Module::checkGeometry() {
  const Manifest &m = manifest_;
  auto bad = [&](const std::string &msg) {
    throw Error(LF_FORMAT_ERROR, "artifact '" + path_ + "': " + msg);
  };
  ranks_ = sequenceParallelRanks(m);
  isSequence_.assign(m.buffers.size(), false);
  for (size_t i = 0; i < m.buffers.size(); ++i) {
    const ManifestBuffer &b = m.buffers[i];
    switch (b.kind) {
    case BufferKind::Input:
      ios_[LF_IO_INPUT].push_back(i);
      break;
    case BufferKind::Output:
      ios_[LF_IO_OUTPUT].push_back(i);
      break;
    case BufferKind::Weight:
      ios_[LF_IO_WEIGHT].push_back(i);
      break;
    case BufferKind::Intermediate:
    case BufferKind::Constant:
    case BufferKind::TensorMap:
      break;
    }
    if (b.role == BufferRole::Lengths)
      lengthsBuffer_ = int64_t(i);
    if (b.role == BufferRole::Mask)
      maskBuffer_ = int64_t(i);
    if (b.kind != BufferKind::Input || b.role != BufferRole::None ||
        b.shape.size() < 2)
      continue;
    if (seqLen_ == 0) {
      batch_ = b.shape[0];
      seqLen_ = b.shape[1];
    } else if (b.shape[0] != batch_ || b.shape[1] != seqLen_) {
      bad("sequence input '" + b.name + "' has shape " + shapeString(b.shape) +
          " but the first sequence input is [" + std::to_string(batch_) + ", " +
          std::to_string(seqLen_) + ", ...]");
    }
    isSequence_[i] = true;
  }
  // An output is a sequence when the compiler says so (its token analysis:
  // E X with k = n has the inputs' [b, n] and is none); a manifest from
  // before the mark says nothing, and its shape decides.
  if (seqLen_ > 0)
    for (size_t i : ios_[LF_IO_OUTPUT]) {
      const ManifestBuffer &b = m.buffers[i];
      bool shaped =
          b.shape.size() >= 2 && b.shape[0] == batch_ && b.shape[1] == seqLen_;
      if (b.sequence.value_or(false) && !shaped)
        bad("output '" + b.name + "' is a sequence but has shape " +
            shapeString(b.shape) + ", not the sequence inputs' [" +
            std::to_string(batch_) + ", " + std::to_string(seqLen_) +
            ", ...]");
      isSequence_[i] = b.sequence.value_or(shaped);
    }
  if (lengthsBuffer_ >= 0) {
    const ManifestBuffer &b = m.buffers[size_t(lengthsBuffer_)];
    if (seqLen_ == 0 || b.shape[0] != batch_)
      bad("lengths buffer '" + b.name + "' has shape " + shapeString(b.shape) +
          ", expected [b] for sequence inputs [" + std::to_string(batch_) +
          ", " + std::to_string(seqLen_) + ", ...]");
  }
  if (maskBuffer_ >= 0) {
    const ManifestBuffer &b = m.buffers[size_t(maskBuffer_)];
    if (seqLen_ == 0 || b.shape[0] != batch_ || b.shape[1] != seqLen_)
      bad("mask buffer '" + b.name + "' has shape " + shapeString(b.shape) +
          ", expected [" + std::to_string(batch_) + ", " +
          std::to_string(seqLen_) + "]");
  }
  // Length rules: one sequence per batch coordinate, row tiles that cover
  // the n tokens exactly (the last one may be partial), and the lengths
  // they are evaluated with.
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    const ManifestKernel &k = m.kernels[i];
    // A length variant runs for some longest lengths: the run's lengths
    // decide, and they are at most n.
    if (!k.maxLength.empty() &&
        (lengthsBuffer_ < 0 || k.maxLength[1] > seqLen_))
      bad("kernel " + std::to_string(i) + " ('" + k.symbol +
          "'): max_length [" + std::to_string(k.maxLength[0]) + ", " +
          std::to_string(k.maxLength[1]) + "]: " +
          (lengthsBuffer_ < 0 ? std::string("a length variant needs the "
                                            "model's lengths input, and it "
                                            "has none")
                              : "beyond n = " + std::to_string(seqLen_)));
    if (!k.hasRows())
      continue;
    std::string where = "kernel " + std::to_string(i) + " ('" + k.symbol +
                        "'): rows: ";
    if (lengthsBuffer_ < 0)
      bad(where + "a length rule needs the model's lengths input, and it "
                  "has none");
    int64_t rowTiles = k.rowsGrid[size_t(k.rowsRow)];
    if (k.rowsGrid[size_t(k.rowsBatch)] != batch_)
      bad(where + "the batch dimension has " +
          std::to_string(k.rowsGrid[size_t(k.rowsBatch)]) +
          " workgroups for " + std::to_string(batch_) + " sequences");
    if (rowTiles * k.rowsTile < seqLen_ ||
        (rowTiles - 1) * k.rowsTile >= seqLen_)
      bad(where + std::to_string(rowTiles) + " tiles of " +
          std::to_string(k.rowsTile) + " tokens do not cover n = " +
          std::to_string(seqLen_) + " exactly");
  }
}

/// dlopen needs a path. A memfd keeps the object off the file system and is
/// reached as /proc/self/fd/N. glibc recognises an already-loaded object by
/// its path name, so the name must not be one a loaded object has: the fd
/// stays open while the module lives (no live module shares N), and objects
/// linked with -z nodelete (LLVM's default for modules) stay loaded under
/// their old name after dlclose, which RTLD_NOLOAD detects and a "./"
/// respelling of the same path avoids.
void Module::openKernels(std::string_view object) {
  const std::vector<KernelAbi> &abis = abis_;
  auto fail = [&](const std::string &what) {
    throw Error(LF_IO_ERROR, "artifact '" + path_ + "': cannot stage cpu.so (" +
                                 what + ": " + std::strerror(errno) + ")");
  };
  std::string dlPath;
  objectFd_ = ::memfd_create("linformer-kernels", MFD_CLOEXEC);
  if (objectFd_ >= 0) {
    std::string dots;
    for (int attempt = 0; attempt < 256; ++attempt, dots += "./") {
      dlPath = "/proc/self/fd/" + dots + std::to_string(objectFd_);
      void *stale = ::dlopen(dlPath.c_str(), RTLD_LAZY | RTLD_NOLOAD);
      if (!stale)
        break;
      ::dlclose(stale);
    }
  } else {
    const char *tmp = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(tmp && *tmp ? tmp : "/tmp") + "/linformer-kernels-XXXXXX";
    std::vector<char> buf(tmpl.begin(), tmpl.end());
    buf.push_back('\0');
    objectFd_ = ::mkstemp(buf.data());
    if (objectFd_ < 0)
      fail("mkstemp");
    objectPath_ = dlPath = buf.data();
  }
  const char *p = object.data();
  size_t left = object.size();
  while (left > 0) {
    ssize_t n = ::write(objectFd_, p, left);
    if (n < 0 && errno == EINTR)
      continue;
    if (n <= 0)
      fail("write");
    p += n;
    left -= size_t(n);
  }
  dlHandle_ = ::dlopen(dlPath.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!dlHandle_) {
    const char *why = ::dlerror();
    throw Error(LF_FORMAT_ERROR, "artifact '" + path_ +
                                     "': cannot load the cpu.so section: " +
                                     (why ? why : "unknown dlopen error"));
  }
  // Heap buffers of the kernels from the per-thread cache (Scratch.h).
  setScratchHooks(dlHandle_);
  // The loader resolved the same symbols the inspection read, with the
  // same contents (relocations cannot have rewritten a record).
  const Manifest &m = manifest_;
  for (size_t i = 0; i < m.kernels.size(); ++i) {
    if (m.kernels[i].isCollective()) {
      dispatch_.push_back(nullptr); // the session's all-reduce, no code
      continue;
    }
    auto missing = [&](const std::string &symbol) {
      return Error(LF_FORMAT_ERROR,
                   "artifact '" + path_ + "': kernel " + std::to_string(i) +
                       " needs symbol '" + symbol +
                       "', which the loaded cpu.so does not export");
    };
    std::string symbol = m.kernels[i].symbol + kDispatchSuffix;
    std::string abiSymbol = m.kernels[i].symbol + kAbiSuffix;
    ::dlerror();
    void *fn = ::dlsym(dlHandle_, symbol.c_str());
    if (!fn)
      throw missing(symbol);
    const void *abi = ::dlsym(dlHandle_, abiSymbol.c_str());
    if (!abi)
      throw missing(abiSymbol);
    if (std::memcmp(abi, abis[i].raw.data(), abis[i].raw.size()) != 0)
      throw Error(LF_FORMAT_ERROR, "artifact '" + path_ + "': '" + abiSymbol +
                                       "' changed when the object was loaded");
    dispatch_.push_back(reinterpret_cast<DispatchFn>(fn));
  }
}

Module::~Module() {
  if (dlHandle_)
    ::dlclose(dlHandle_);
  if (objectFd_ >= 0)
    ::close(objectFd_);
  if (!objectPath_.empty())
    ::unlink(objectPath_.c_str());
}

std::shared_ptr<Weights> Weights::load(const std::string &path) {
  std::shared_ptr<Weights> w(new Weights());
  w->path_ = path;
  if (FileError err = SafetensorsFile::open(path, w->file_))
    throwFileError(err);
  return w;
}

std::vector<int64_t> wholeShape(const ManifestBuffer &weight) {
  std::vector<int64_t> shape = weight.shape;
  if (weight.sequenceSplit && !shape.empty())
    shape.back() *= weight.sequenceSplit;
  return shape;
}

void Weights::check(const Module &module) const {
  const Manifest &m = module.manifest();
  std::vector<std::string> problems;
  for (size_t i : module.ios(LF_IO_WEIGHT)) {
    const ManifestBuffer &b = m.buffers[i];
    const SafetensorsTensor *t = file_.find(b.name);
    if (!t) {
      problems.push_back("weight '" + b.name + "' is missing");
      continue;
    }
    if (t->dtype != b.dtype)
      problems.push_back("weight '" + b.name + "' is " + dtypeName(t->dtype) +
                         " in the file, the module expects " +
                         dtypeName(b.dtype));
    if (t->shape != b.shape && t->shape != wholeShape(b))
      problems.push_back(
          "weight '" + b.name + "' has shape " + shapeString(t->shape) +
          " in the file, the module expects " + shapeString(b.shape) +
          (b.sequenceSplit ? " (a rank's share) or " +
                                 shapeString(wholeShape(b)) + " (all ranks')"
                           : std::string()));
    else if (t->dtype == b.dtype &&
             t->size != uint64_t(shapeByteSize(t->shape, t->dtype)))
      problems.push_back("weight '" + b.name + "' holds " +
                         std::to_string(t->size) + " bytes, expected " +
                         std::to_string(shapeByteSize(t->shape, t->dtype)));
  }
  if (problems.empty())
    return;
  // All of them at once: a renamed layer usually breaks many weights, and
  // one message per attempt would make fixing the file a loop.
  std::string msg =
      "weights '" + path_ + "' do not match artifact '" + module.path() + "': ";
  const size_t shown = 8;
  for (size_t i = 0; i < problems.size() && i < shown; ++i)
    msg += (i ? "; " : "") + problems[i];
  if (problems.size() > shown)
    msg += "; and " + std::to_string(problems.size() - shown) + " more";
  throw Error(LF_WEIGHTS_MISMATCH, msg);
}

} // namespace runtime
} // namespace linformer
