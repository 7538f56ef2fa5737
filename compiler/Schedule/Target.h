//===- Target.h - What the schedules are chosen for -------------*- C++ -*-===//
//
// Target descriptions: the facts about a machine that a schedule depends on.
// A CPU target is the vector ISA and width, the number of vector registers,
// the FMA units and their latency, the cache sizes and the cores; a CUDA
// target (filled by the CUDA code generator) is the SM version, the SM count,
// shared memory and registers. They are plain data with no MLIR or LLVM
// dependency, so that the cost model, the schedule files and their unit
// tests can use them anywhere; the compiler fills them from the host (LLVM's
// host detection and /sys) or from --cpu / --cpu-features.
//
//===----------------------------------------------------------------------===//
#ifndef LINFORMER_COMPILER_SCHEDULE_TARGET_H
#define LINFORMER_COMPILER_SCHEDULE_TARGET_H

#include <cstdint>
#include <string>
#include <utility>

namespace linformer::schedule {

/// A CPU as the schedule sees it.
struct CPUTarget {
  /// LLVM CPU name and feature string ("+avx2,+fma,..."): what code
  /// generation is asked to target.
  std::string cpu;
  std::string features;
  /// "avx512", "avx2", "sse" or "generic", derived from the features.
  std::string isa = "generic";
  /// Width of the vector registers used for f32 (512, 256, 128).
  int64_t vectorBits = 128;
  /// Architectural vector registers (32 with AVX-512, else 16).
  int64_t vectorRegisters = 16;
  /// FMA pipes per core and their latency in cycles: latency x units
  /// independent accumulators keep them busy.
  int64_t fmaUnits = 2;
  int64_t fmaLatency = 4;
  /// Width of the FMA (and load) datapath in bits; 0 = vectorBits. A wider
  /// vector issues in vectorBits / fmaBits passes (Zen 4 runs its 512-bit
  /// FMAs and loads as two 256-bit halves: 256).
  int64_t fmaBits = 0;
  /// Bytes a core's L1 is refilled with from L2 per cycle, sustained: what
  /// a streamed operand that does not stay in L1 is read at.
  int64_t l2BytesPerCycle = 32;
  /// Data cache sizes in bytes: L1 and L2 per core, L3 shared.
  int64_t l1Bytes = 32 * 1024;
  int64_t l2Bytes = 1024 * 1024;
  int64_t l3Bytes = 16 * 1024 * 1024;
  /// Cores the runtime will run workgroups on.
  int64_t cores = 1;

  /// f32 lanes per vector register.
  int64_t lanes() const { return vectorBits / 32; }
  /// Accumulators needed to hide the FMA latency.
  int64_t minAccumulators() const { return fmaUnits * fmaLatency; }
  /// Datapath passes one vector FMA or load takes (1 or more).
  int64_t vectorPasses() const {
    int64_t width = fmaBits > 0 ? fmaBits : vectorBits;
    return width >= vectorBits ? 1 : (vectorBits + width - 1) / width;
  }
};

/// Whether t.features turns `feature` on ("avx2" for "+avx2"); the last
/// mention wins, an absent feature is off.
bool hasFeature(const CPUTarget &t, const std::string &feature);

/// The matrix engines of a CPU, each read from its LLVM feature, never from
/// the CPU's name (a virtual machine may report an AMX Xeon as rocketlake):
/// AMX tiles and their bf16, fp16 and int8 products, AVX512_BF16 dot
/// products (vdpbf16ps), AVX512_FP16 arithmetic and AVX-VNNI int8 dot
/// products. What the schedules may use for 16-bit products (issue 68).
struct MatrixEngines {
  bool amxTile = false, amxBF16 = false, amxFP16 = false, amxInt8 = false;
  bool avx512BF16 = false, avx512FP16 = false, avxVNNI = false;
  bool any() const {
    return amxTile || avx512BF16 || avx512FP16 || avxVNNI;
  }
};
MatrixEngines matrixEngines(const CPUTarget &t);

/// What linformer-compile's --bf16-dot and the passes' bf16-dot / dot
/// options ask of the engines (mlir::linformer::bf16EngineFor), spelled by
/// one table that the driver's flag and the passes both read.
enum class BF16Dot { Auto, Emulate, AMX, Off };
inline constexpr std::pair<BF16Dot, const char *> kBF16DotSpellings[] = {
    {BF16Dot::Auto, "auto"},
    {BF16Dot::Emulate, "emulate"},
    {BF16Dot::AMX, "amx"},
    {BF16Dot::Off, "off"}};

/// One core's peak multiply-add rate in FLOPs per cycle (a product and its
/// sum count two), as the cost model estimates it from the target: f32 on
/// the FMA pipes (units x lanes x 2, a split datapath at its width); bf16
/// products accumulated in f32 on AMX tiles (TDPBF16PS: 16 x 16 x 32
/// products in 16 cycles, 1024), else with AVX512_BF16 (VDPBF16PS: two
/// products a lane on the FMA pipes, twice the f32 rate), else the f32
/// rate (today's path: bf16 extended, f32 products). bench/peak measures
/// the real figures.
double peakF32FlopsPerCycle(const CPUTarget &t);
double peakBF16FlopsPerCycle(const CPUTarget &t);

/// Whether the target converts f32 to bf16 in hardware (AVX512_BF16 or
/// AVX-NE-CONVERT). Without it LLVM calls a compiler runtime helper
/// (`__truncsfbf2`) that not every libgcc has, so the compiler expands the
/// conversion in the IR instead (linformer-cpu-expand-bf16).
bool convertsBF16Natively(const CPUTarget &t);

/// Fills isa, vectorBits and vectorRegisters of `t` from t.features: a
/// feature string with +avx512f is AVX-512 (512-bit, 32 registers), with
/// +avx2 and +fma AVX2 (256-bit, 16), with +sse2 SSE (128-bit, 16). A
/// feature turned off ("-avx512f") counts as absent; the last mention wins.
void deriveISA(CPUTarget &t);

/// Fills what `t.cpu` names about its core beyond the ISA: the FMA datapath
/// width of CPUs that split their widest vectors (znver4: 256 bits).
void deriveMicroarchitecture(CPUTarget &t);

/// Reads L1d/L2/L3 sizes from /sys/devices/system/cpu/cpu0/cache and the
/// number of online CPUs; keeps t's values where nothing can be read.
void readHostCaches(CPUTarget &t);

/// Sets t's L1d, L2 (per core) and L3 (one core's share domain: a Zen CCX
/// or CCD, an Intel client die) to those of the LLVM CPU `cpu` when it is
/// one this table knows; false, t unchanged, for any other name. For
/// compiling for a CPU other than the host's, whose caches /sys cannot tell.
bool knownCPUCaches(const std::string &cpu, CPUTarget &t);

/// A CPU target described by an ISA name alone ("avx512", "avx2", "sse"),
/// with typical cache sizes; for tests and for --cpu-features without a host.
/// Empty `cpu` and `features`.
CPUTarget presetCPUTarget(const std::string &isa, int64_t cores = 2);

/// One line: "avx2 (256-bit, 16 registers), L1 32 KiB, L2 1 MiB, L3 32 MiB,
/// 2 cores, cpu znver3"; a narrower FMA datapath shows as "512-bit in
/// 256-bit halves".
std::string describe(const CPUTarget &t);

/// JSON object text of every field (the manifest's "target" and the schedule
/// file's "target"), and what follows from the features: "engines" (the
/// matrix engines' LLVM feature names) and "peak_flops_per_cycle" (one
/// core's f32 and bf16 rates), which fromJson derives again rather than
/// reads.
std::string toJson(const CPUTarget &t);

/// Parses what toJson writes; unknown keys are ignored, missing keys keep
/// their defaults. Returns "" or an error naming the field.
std::string fromJson(const std::string &text, CPUTarget &out);

/// A stable short fingerprint of what schedules depend on (ISA, registers,
/// caches, cores, CPU name): tuning caches are keyed by it.
std::string fingerprint(const CPUTarget &t);

/// An NVIDIA GPU as the schedule sees it (filled by the CUDA code
/// generator; defined here so that both targets share one vocabulary).
struct CUDATarget {
  int64_t sm = 90;                    ///< compute capability x 10
  int64_t smCount = 132;              ///< streaming multiprocessors
  int64_t sharedBytesPerBlock = 227 * 1024;
  int64_t sharedBytesPerSM = 228 * 1024;
  int64_t registersPerSM = 65536;
  int64_t maxRegistersPerThread = 255;
  int64_t registersPerBlock = 65536;
  int64_t maxThreadsPerBlock = 1024;
  int64_t maxThreadsPerSM = 2048;
  /// Static shared memory a kernel may declare without opting in.
  int64_t staticSharedBytesPerBlock = 48 * 1024;
  int64_t warpSize = 32;

  /// What ptxas may use for a kernel launched with `threads` threads per
  /// block, `blocks` of them resident on an SM at once: registers per
  /// thread (the block's registers, or the SM's shared by its blocks,
  /// spread over their threads; at most the per-thread limit).
  int64_t registerBudget(int64_t threads, int64_t blocks = 1) const;

  /// How many blocks of `threads` threads and `sharedBytes` of dynamic
  /// shared memory (plus the 1 KiB the driver reserves per block) fit on
  /// one SM at once, at most `wanted`; at least 1.
  int64_t residentBlocks(int64_t threads, int64_t sharedBytes,
                         int64_t wanted) const;
};

/// H100 (sm_90) and A100 (sm_80) presets.
CUDATarget presetCUDATarget(int64_t sm);

/// The targets the CUDA back end knows (Volta to Blackwell: 70, 75, 80, 86,
/// 89, 90, 100, 120), with their limits; false for any other `sm`.
bool knownCUDATarget(int64_t sm, CUDATarget &out);

/// One line: "sm_90: 132 SMs, 65536 registers per block (255 per thread),
/// 48 KiB static shared memory per block, warp 32".
std::string describe(const CUDATarget &t);

/// The target as a JSON object text (the manifest's target description).
std::string toJson(const CUDATarget &t);

} // namespace linformer::schedule

#endif // LINFORMER_COMPILER_SCHEDULE_TARGET_H
