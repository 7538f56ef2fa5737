//===- Target.cpp - What the schedules are chosen for ----------*- C++ -*-===//
//
// See Target.h.
//
//===----------------------------------------------------------------------===//

#include "compiler/Schedule/Target.h"
#include "lib/Support/Features.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include <fstream>
#include <map>
#include <thread>
#include <vector>

namespace linformer::schedule {

bool hasFeature(const CPUTarget &t, const std::string &feature) {
  return linformer::featureOn(t.features, feature);
}

MatrixEngines matrixEngines(const CPUTarget &t) {
  MatrixEngines e;
  e.amxTile = hasFeature(t, "amx-tile");
  // A tile product needs the tiles.
  e.amxBF16 = e.amxTile && hasFeature(t, "amx-bf16");
  e.amxFP16 = e.amxTile && hasFeature(t, "amx-fp16");
  e.amxInt8 = e.amxTile && hasFeature(t, "amx-int8");
  e.avx512BF16 = hasFeature(t, "avx512bf16");
  e.avx512FP16 = hasFeature(t, "avx512fp16");
  e.avxVNNI = hasFeature(t, "avxvnni");
  return e;
}

/// The FMA datapath's f32 lanes: a vector split in passes counts at the
/// datapath's width.
static double datapathLanes(const CPUTarget &t) {
  int64_t width = t.fmaBits > 0 ? std::min(t.fmaBits, t.vectorBits)
                                : t.vectorBits;
  return double(width) / 32.0;
}

double peakF32FlopsPerCycle(const CPUTarget &t) {
  return double(t.fmaUnits) * datapathLanes(t) * 2.0;
}

double peakBF16FlopsPerCycle(const CPUTarget &t) {
  MatrixEngines e = matrixEngines(t);
  if (e.amxBF16)
    return 16.0 * 16.0 * 32.0 * 2.0 / 16.0;
  if (e.avx512BF16)
    return 2.0 * peakF32FlopsPerCycle(t);
  return peakF32FlopsPerCycle(t);
}

/// The matrix engines' LLVM feature names, in a fixed order.
static std::vector<std::string> engineNames(const MatrixEngines &e) {
  std::vector<std::string> names;
  for (auto [on, name] :
       {std::pair{e.amxBF16, "amx-bf16"}, {e.amxFP16, "amx-fp16"},
        {e.amxInt8, "amx-int8"}, {e.avx512BF16, "avx512bf16"},
        {e.avx512FP16, "avx512fp16"}, {e.avxVNNI, "avxvnni"}})
    if (on)
      names.push_back(name);
  if (e.amxTile && names.empty())
    names.push_back("amx-tile");
  return names;
}

bool convertsBF16Natively(const CPUTarget &t) {
  return hasFeature(t, "avx512bf16") || hasFeature(t, "avxneconvert");
}

void deriveISA(CPUTarget &t) {
  auto has = [&](const char *f) { return hasFeature(t, f); };
  if (has("avx512f")) {
    t.isa = "avx512";
    t.vectorBits = 512;
    t.vectorRegisters = 32;
  } else if (has("avx2") && has("fma")) {
    t.isa = "avx2";
    t.vectorBits = 256;
    t.vectorRegisters = 16;
  } else if (has("sse2") || has("avx")) {
    t.isa = "sse";
    t.vectorBits = 128;
    t.vectorRegisters = 16;
  } else {
    t.isa = "generic";
    t.vectorBits = 128;
    t.vectorRegisters = 16;
  }
}

void deriveMicroarchitecture(CPUTarget &t) {
  // Zen 4 executes a 512-bit FMA or load as two 256-bit halves; Zen 5 and
  // the AVX-512 Intel cores (and every AVX2 core) at full width.
  t.fmaBits = t.cpu == "znver4" && t.vectorBits == 512 ? 256 : 0;
}

/// "32K", "1024K", "32M" -> bytes; 0 if unreadable.
static int64_t parseSize(const std::string &text) {
  size_t pos = 0;
  int64_t value = 0;
  while (pos < text.size() && text[pos] >= '0' && text[pos] <= '9')
    value = value * 10 + (text[pos++] - '0');
  if (pos == 0)
    return 0;
  char unit = pos < text.size() ? text[pos] : ' ';
  if (unit == 'K')
    value *= 1024;
  else if (unit == 'M')
    value *= 1024 * 1024;
  else if (unit == 'G')
    value *= 1024LL * 1024 * 1024;
  return value;
}

static bool readLine(const std::string &path, std::string &out) {
  std::ifstream in(path);
  return static_cast<bool>(std::getline(in, out));
}

void readHostCaches(CPUTarget &t) {
  for (int i = 0; i < 8; ++i) {
    std::string dir =
        "/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/";
    std::string level, type, size;
    if (!readLine(dir + "level", level) || !readLine(dir + "type", type) ||
        !readLine(dir + "size", size))
      break;
    int64_t bytes = parseSize(size);
    if (bytes <= 0 || type == "Instruction")
      continue;
    if (level == "1")
      t.l1Bytes = bytes;
    else if (level == "2")
      t.l2Bytes = bytes;
    else if (level == "3")
      t.l3Bytes = bytes;
  }
  unsigned n = std::thread::hardware_concurrency();
  if (n > 0)
    t.cores = n;
}

bool knownCPUCaches(const std::string &cpu, CPUTarget &t) {
  // From the vendors' optimization manuals and data sheets. A server part's
  // L3 grows with its core count: the table takes a mid-range part's (a
  // skylake-avx512 of 12 cores: 16.5 MiB, rounded down), which matters only
  // to whether a streamed operand is swept from L3.
  struct Known {
    const char *cpu;
    int64_t l1KiB, l2KiB, l3MiB;
  };
  static const Known known[] = {
      {"haswell", 32, 256, 8},         {"broadwell", 32, 256, 8},
      {"skylake", 32, 256, 8},         {"skylake-avx512", 32, 1024, 16},
      {"cascadelake", 32, 1024, 16},   {"cooperlake", 32, 1024, 16},
      {"icelake-client", 48, 512, 8},  {"icelake-server", 48, 1280, 32},
      {"tigerlake", 48, 1280, 12},     {"alderlake", 48, 1280, 24},
      {"raptorlake", 48, 2048, 32},    {"sapphirerapids", 48, 2048, 60},
      {"emeraldrapids", 48, 2048, 96}, {"graniterapids", 48, 2048, 96},
      {"znver1", 32, 512, 8},          {"znver2", 32, 512, 16},
      {"znver3", 32, 512, 32},         {"znver4", 32, 1024, 32},
      {"znver5", 48, 1024, 32},        {"x86-64-v3", 32, 256, 8},
      {"x86-64-v4", 32, 1024, 16}};
  for (const Known &k : known) {
    if (cpu != k.cpu)
      continue;
    t.l1Bytes = k.l1KiB * 1024;
    t.l2Bytes = k.l2KiB * 1024;
    t.l3Bytes = k.l3MiB * 1024 * 1024;
    return true;
  }
  return false;
}

CPUTarget presetCPUTarget(const std::string &isa, int64_t cores) {
  CPUTarget t;
  t.cores = cores;
  if (isa == "avx512") {
    t.features = "+avx512f,+avx2,+fma";
    t.l1Bytes = 32 * 1024;
    t.l2Bytes = 1024 * 1024;
  } else if (isa == "avx2") {
    t.features = "+avx2,+fma";
    t.l1Bytes = 32 * 1024;
    t.l2Bytes = 512 * 1024;
  } else if (isa == "sse") {
    t.features = "+sse2";
  }
  deriveISA(t);
  t.features.clear();
  return t;
}

static std::string kib(int64_t bytes) {
  if (bytes % (1024 * 1024) == 0)
    return std::to_string(bytes / (1024 * 1024)) + " MiB";
  return std::to_string(bytes / 1024) + " KiB";
}

std::string describe(const CPUTarget &t) {
  std::string width = std::to_string(t.vectorBits) + "-bit";
  if (int64_t passes = t.vectorPasses(); passes == 2)
    width += " in " + std::to_string(t.fmaBits) + "-bit halves";
  else if (passes > 2)
    width += " in " + std::to_string(passes) + " " + std::to_string(t.fmaBits) +
             "-bit passes";
  std::string s = t.isa + " (" + width + ", " +
                  std::to_string(t.vectorRegisters) + " registers), L1 " +
                  kib(t.l1Bytes) + ", L2 " + kib(t.l2Bytes) + ", L3 " +
                  kib(t.l3Bytes) + ", " + std::to_string(t.cores) +
                  (t.cores == 1 ? " core" : " cores");
  if (!t.cpu.empty())
    s += ", cpu " + t.cpu;
  std::vector<std::string> engines = engineNames(matrixEngines(t));
  for (size_t i = 0; i < engines.size(); ++i)
    s += (i == 0 ? ", matrix engines " : " ") + engines[i];
  return s;
}

namespace {
/// The fields of a CPU target as its JSON names them, in the order toJson
/// writes them, with the ranges fromJson accepts: one table both ways.
struct StringField {
  const char *key;
  std::string CPUTarget::*member;
};
struct IntField {
  const char *key;
  int64_t CPUTarget::*member;
  int64_t lo, hi;
};
const StringField kStringFields[] = {{"cpu", &CPUTarget::cpu},
                                     {"features", &CPUTarget::features},
                                     {"isa", &CPUTarget::isa}};
const IntField kIntFields[] = {
    {"vector_bits", &CPUTarget::vectorBits, 64, 2048},
    {"vector_registers", &CPUTarget::vectorRegisters, 4, 256},
    {"fma_units", &CPUTarget::fmaUnits, 1, 8},
    {"fma_latency", &CPUTarget::fmaLatency, 1, 32},
    {"fma_bits", &CPUTarget::fmaBits, 0, 2048},
    {"l2_bytes_per_cycle", &CPUTarget::l2BytesPerCycle, 1, 1024},
    {"l1_bytes", &CPUTarget::l1Bytes, 1024, int64_t(1) << 30},
    {"l2_bytes", &CPUTarget::l2Bytes, 1024, int64_t(1) << 36},
    {"l3_bytes", &CPUTarget::l3Bytes, 0, int64_t(1) << 40},
    {"cores", &CPUTarget::cores, 1, 4096}};
} // namespace

std::string toJson(const CPUTarget &t) {
  nlohmann::ordered_json j;
  j["kind"] = "cpu";
  for (const StringField &f : kStringFields)
    j[f.key] = t.*f.member;
  for (const IntField &f : kIntFields)
    j[f.key] = t.*f.member;
  j["engines"] = engineNames(matrixEngines(t));
  j["peak_flops_per_cycle"] = {{"f32", peakF32FlopsPerCycle(t)},
                               {"bf16", peakBF16FlopsPerCycle(t)}};
  return j.dump();
}

std::string fromJson(const std::string &text, CPUTarget &out) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object())
    return "target: not a JSON object";
  CPUTarget t = out;
  for (const StringField &f : kStringFields) {
    if (!j.contains(f.key))
      continue;
    if (!j[f.key].is_string())
      return std::string("target: '") + f.key + "' must be a string";
    t.*f.member = j[f.key].get<std::string>();
  }
  for (const IntField &f : kIntFields) {
    if (!j.contains(f.key))
      continue;
    if (!j[f.key].is_number_integer())
      return std::string("target: '") + f.key + "' must be an integer";
    int64_t v = j[f.key].get<int64_t>();
    if (v < f.lo || v > f.hi)
      return std::string("target: '") + f.key + "' is " + std::to_string(v) +
             ", outside [" + std::to_string(f.lo) + ", " +
             std::to_string(f.hi) + "]";
    t.*f.member = v;
  }
  if (t.vectorBits % 32 != 0)
    return "target: 'vector_bits' must be a multiple of 32";
  if (t.fmaBits % 32 != 0)
    return "target: 'fma_bits' must be 0 or a multiple of 32";
  out = t;
  return "";
}

std::string fingerprint(const CPUTarget &t) {
  return t.isa + "-" + std::to_string(t.vectorBits) + "x" +
         std::to_string(t.vectorRegisters) + "-l1_" +
         std::to_string(t.l1Bytes / 1024) + "k-l2_" +
         std::to_string(t.l2Bytes / 1024) + "k-c" + std::to_string(t.cores) +
         (t.cpu.empty() ? "" : "-" + t.cpu);
}

CUDATarget presetCUDATarget(int64_t sm) {
  CUDATarget t;
  t.sm = sm;
  if (sm < 90) { // A100
    t.smCount = 108;
    t.sharedBytesPerBlock = 163 * 1024;
    t.sharedBytesPerSM = 164 * 1024;
  }
  return t;
}

int64_t CUDATarget::registerBudget(int64_t threads, int64_t blocks) const {
  threads = std::max<int64_t>(threads, 1);
  blocks = std::max<int64_t>(blocks, 1);
  return std::min({maxRegistersPerThread, registersPerBlock / threads,
                   registersPerSM / (threads * blocks)});
}

int64_t CUDATarget::residentBlocks(int64_t threads, int64_t sharedBytes,
                                   int64_t wanted) const {
  int64_t n = std::min(wanted, maxThreadsPerSM / std::max<int64_t>(threads, 1));
  if (sharedBytes > 0)
    n = std::min(n, sharedBytesPerSM / (sharedBytes + 1024));
  return std::max<int64_t>(n, 1);
}

bool knownCUDATarget(int64_t sm, CUDATarget &out) {
  // SM counts of the usual parts (V100, T4, A100, A10, L4, H100, B200,
  // RTX 5090); limits from the CUDA programming guide's table of compute
  // capabilities.
  struct Known {
    int64_t sm, smCount, sharedPerSMKiB, sharedPerBlockKiB, threadsPerSM;
  };
  static const Known known[] = {
      {70, 80, 96, 96, 2048},     {75, 40, 64, 64, 1024},
      {80, 108, 164, 163, 2048},  {86, 72, 100, 99, 1536},
      {89, 58, 100, 99, 1536},    {90, 132, 228, 227, 2048},
      {100, 148, 228, 227, 2048}, {120, 170, 128, 99, 1536}};
  for (const Known &k : known) {
    if (k.sm != sm)
      continue;
    out = CUDATarget();
    out.sm = k.sm;
    out.smCount = k.smCount;
    out.sharedBytesPerSM = k.sharedPerSMKiB * 1024;
    out.sharedBytesPerBlock = k.sharedPerBlockKiB * 1024;
    out.maxThreadsPerSM = k.threadsPerSM;
    return true;
  }
  return false;
}

std::string describe(const CUDATarget &t) {
  return "sm_" + std::to_string(t.sm) + ": " + std::to_string(t.smCount) +
         " SMs, " + std::to_string(t.registersPerBlock) +
         " registers per block (" + std::to_string(t.maxRegistersPerThread) +
         " per thread), " + std::to_string(t.staticSharedBytesPerBlock / 1024) +
         " KiB static shared memory per block, warp " +
         std::to_string(t.warpSize);
}

std::string toJson(const CUDATarget &t) {
  nlohmann::ordered_json j;
  j["kind"] = "cuda";
  j["sm"] = t.sm;
  j["sm_count"] = t.smCount;
  j["shared_bytes_per_block"] = t.sharedBytesPerBlock;
  j["shared_bytes_per_sm"] = t.sharedBytesPerSM;
  j["static_shared_bytes_per_block"] = t.staticSharedBytesPerBlock;
  j["registers_per_sm"] = t.registersPerSM;
  j["registers_per_block"] = t.registersPerBlock;
  j["max_registers_per_thread"] = t.maxRegistersPerThread;
  j["max_threads_per_block"] = t.maxThreadsPerBlock;
  j["max_threads_per_sm"] = t.maxThreadsPerSM;
  j["warp_size"] = t.warpSize;
  return j.dump();
}

} // namespace linformer::schedule
