//===- peak.cpp - Machine-peak microbenchmark (FMA GFLOP/s, triad GB/s) ----===//
//
// Measures the ceiling against which linformer-mlir's benchmark numbers are
// read:
//   (a) f32 FMA throughput, GFLOP/s, on 1 thread and on N threads, from 12
//       independent accumulator chains of 512-bit FMAs (256-bit AVX2 FMAs when
//       the CPU lacks AVX-512F; scalar-array code on other architectures);
//   (a') "fma-tile": f32 FMAs as a GEMM's register tile runs them, each step
//       its broadcasts and vector loads with both operands in L1: what an
//       f32 GEMM can reach on the core, next to (a), which has no loads;
//   (b) bf16 multiply-add throughput with f32 accumulation, GFLOP/s, where
//       the CPU has it: VDPBF16PS (AVX512_BF16: Zen 4/5, Cooper Lake and
//       later Xeons) from 12 chains of 512-bit dot products, and AMX
//       TDPBF16PS (Sapphire Rapids and later) from 4 accumulator tiles of
//       16 x 16 f32 fed by 2 + 2 bf16 tiles, a 2 x 2 register block as a
//       GEMM's inner loop keeps it. A machine without them reports null;
//   (c) STREAM-style triad bandwidth, GB/s, a[i] = b[i] + s * c[i] over three
//       arrays of doubles far larger than the last-level cache (by default
//       together >= 4x the LLC that sysconf reports, >= 64 MiB each), on 1
//       and N threads.
//
// Every measurement is warmed up, then repeated (default 5 runs of >= 0.2 s);
// the best and the median are reported. A flop is counted as 2 per FMA lane.
// Triad bytes follow STREAM's convention: 3 x 8 bytes per element (two reads,
// one write); write-allocate traffic is not counted.
//
// Standalone: C++17 standard library, <immintrin.h>, pthreads (through
// std::thread) and, where present, <unistd.h> for sysconf. The ISA kernels carry target attributes, so the file builds
// with plain `g++ -O2 -pthread peak.cpp`. It does not throw, so it also builds
// under -fno-exceptions.
//
// Usage: linformer-peak [--threads N] [--json] [--runs R] [--min-time S]
//                       [--triad-mib M] [--isa avx512|avx2|generic] [--no-bf16]
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#if __has_include(<unistd.h>)
#include <unistd.h> // sysconf, for the last-level cache size
#endif
#if __has_include(<sys/syscall.h>)
#include <sys/syscall.h> // arch_prctl: Linux hands out AMX state on request
#endif

#if defined(__x86_64__) || defined(__i386__)
#define PEAK_X86 1
#include <cpuid.h>
#include <immintrin.h>
#else
#define PEAK_X86 0
#endif

namespace {

// Results land here so that no kernel's work can be optimized away.
volatile double gSink = 0.0;

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

enum class Isa { Avx512, Avx2, Generic };

const char *isaName(Isa isa) {
  switch (isa) {
  case Isa::Avx512:
    return "avx512";
  case Isa::Avx2:
    return "avx2";
  case Isa::Generic:
    return "generic";
  }
  return "?";
}

bool isaSupported(Isa isa) {
#if PEAK_X86
  __builtin_cpu_init();
  switch (isa) {
  case Isa::Avx512:
    return __builtin_cpu_supports("avx512f");
  case Isa::Avx2:
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  case Isa::Generic:
    return true;
  }
  return false;
#else
  return isa == Isa::Generic;
#endif
}

// Number of f32 lanes in one FMA of the given ISA.
int fmaLanes(Isa isa) {
  switch (isa) {
  case Isa::Avx512:
    return 16;
  case Isa::Avx2:
    return 8;
  case Isa::Generic:
    return 8;
  }
  return 0;
}

constexpr int kChains = 12;

//===----------------------------------------------------------------------===//
// FMA kernels: 12 independent chains acc = acc * m + a. With m just below 1
// each chain converges to a / (1 - m) ~ 1, so values stay normal (no
// denormals, no overflow) however long it runs. Written out by hand so that
// -O2 keeps all twelve accumulators in registers.
//===----------------------------------------------------------------------===//

#if PEAK_X86
// Twelve 512-bit accumulators, chain j starting at seed + 0.01 j, and their
// sum (the AVX-512 kernels' start and end).
struct Chains512 {
  __m512 c0, c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11;
};

__attribute__((target("avx512f"))) inline Chains512 startChains512(float seed) {
  return {_mm512_set1_ps(seed + 0.00f), _mm512_set1_ps(seed + 0.01f),
          _mm512_set1_ps(seed + 0.02f), _mm512_set1_ps(seed + 0.03f),
          _mm512_set1_ps(seed + 0.04f), _mm512_set1_ps(seed + 0.05f),
          _mm512_set1_ps(seed + 0.06f), _mm512_set1_ps(seed + 0.07f),
          _mm512_set1_ps(seed + 0.08f), _mm512_set1_ps(seed + 0.09f),
          _mm512_set1_ps(seed + 0.10f), _mm512_set1_ps(seed + 0.11f)};
}

__attribute__((target("avx512f"))) inline double
sumChains512(const Chains512 &k) {
  __m512 s = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(k.c0, k.c1), k.c2),
                           _mm512_add_ps(_mm512_add_ps(k.c3, k.c4), k.c5));
  __m512 t = _mm512_add_ps(_mm512_add_ps(_mm512_add_ps(k.c6, k.c7), k.c8),
                           _mm512_add_ps(_mm512_add_ps(k.c9, k.c10), k.c11));
  // Not _mm512_reduce_add_ps: GCC 12's header trips -Wuninitialized there.
  alignas(64) float lanes[16];
  _mm512_store_ps(lanes, _mm512_add_ps(s, t));
  double sum = 0.0;
  for (float v : lanes)
    sum += v;
  return sum;
}

__attribute__((target("avx512f"))) double fmaKernelAvx512(std::uint64_t iters,
                                                          float seed) {
  const __m512 m = _mm512_set1_ps(0.999999f);
  const __m512 a = _mm512_set1_ps(1.0e-6f);
  Chains512 k = startChains512(seed);
  for (std::uint64_t i = 0; i < iters; ++i) {
    k.c0 = _mm512_fmadd_ps(k.c0, m, a);
    k.c1 = _mm512_fmadd_ps(k.c1, m, a);
    k.c2 = _mm512_fmadd_ps(k.c2, m, a);
    k.c3 = _mm512_fmadd_ps(k.c3, m, a);
    k.c4 = _mm512_fmadd_ps(k.c4, m, a);
    k.c5 = _mm512_fmadd_ps(k.c5, m, a);
    k.c6 = _mm512_fmadd_ps(k.c6, m, a);
    k.c7 = _mm512_fmadd_ps(k.c7, m, a);
    k.c8 = _mm512_fmadd_ps(k.c8, m, a);
    k.c9 = _mm512_fmadd_ps(k.c9, m, a);
    k.c10 = _mm512_fmadd_ps(k.c10, m, a);
    k.c11 = _mm512_fmadd_ps(k.c11, m, a);
  }
  return sumChains512(k);
}

__attribute__((target("avx2,fma"))) double fmaKernelAvx2(std::uint64_t iters,
                                                         float seed) {
  const __m256 m = _mm256_set1_ps(0.999999f);
  const __m256 a = _mm256_set1_ps(1.0e-6f);
  __m256 c0 = _mm256_set1_ps(seed + 0.00f), c1 = _mm256_set1_ps(seed + 0.01f);
  __m256 c2 = _mm256_set1_ps(seed + 0.02f), c3 = _mm256_set1_ps(seed + 0.03f);
  __m256 c4 = _mm256_set1_ps(seed + 0.04f), c5 = _mm256_set1_ps(seed + 0.05f);
  __m256 c6 = _mm256_set1_ps(seed + 0.06f), c7 = _mm256_set1_ps(seed + 0.07f);
  __m256 c8 = _mm256_set1_ps(seed + 0.08f), c9 = _mm256_set1_ps(seed + 0.09f);
  __m256 c10 = _mm256_set1_ps(seed + 0.10f), c11 = _mm256_set1_ps(seed + 0.11f);
  for (std::uint64_t i = 0; i < iters; ++i) {
    c0 = _mm256_fmadd_ps(c0, m, a);
    c1 = _mm256_fmadd_ps(c1, m, a);
    c2 = _mm256_fmadd_ps(c2, m, a);
    c3 = _mm256_fmadd_ps(c3, m, a);
    c4 = _mm256_fmadd_ps(c4, m, a);
    c5 = _mm256_fmadd_ps(c5, m, a);
    c6 = _mm256_fmadd_ps(c6, m, a);
    c7 = _mm256_fmadd_ps(c7, m, a);
    c8 = _mm256_fmadd_ps(c8, m, a);
    c9 = _mm256_fmadd_ps(c9, m, a);
    c10 = _mm256_fmadd_ps(c10, m, a);
    c11 = _mm256_fmadd_ps(c11, m, a);
  }
  __m256 s = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c0, c1), c2),
                           _mm256_add_ps(_mm256_add_ps(c3, c4), c5));
  __m256 t = _mm256_add_ps(_mm256_add_ps(_mm256_add_ps(c6, c7), c8),
                           _mm256_add_ps(_mm256_add_ps(c9, c10), c11));
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, _mm256_add_ps(s, t));
  double sum = 0.0;
  for (float v : lanes)
    sum += v;
  return sum;
}
#endif // PEAK_X86

// Portable fallback: 12 chains of 8 lanes in plain arrays. Whatever the
// compiler makes of it at -O2 is "the generic peak"; it is not a hardware
// ceiling.
double fmaKernelGeneric(std::uint64_t iters, float seed) {
  float c[kChains][8];
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < 8; ++l)
      c[j][l] = seed + 0.01f * static_cast<float>(j);
  const float m = 0.999999f, a = 1.0e-6f;
  for (std::uint64_t i = 0; i < iters; ++i)
    for (int j = 0; j < kChains; ++j)
      for (int l = 0; l < 8; ++l)
        c[j][l] = c[j][l] * m + a;
  double sum = 0.0;
  for (int j = 0; j < kChains; ++j)
    for (int l = 0; l < 8; ++l)
      sum += c[j][l];
  return sum;
}

double fmaKernel(Isa isa, std::uint64_t iters, float seed) {
#if PEAK_X86
  if (isa == Isa::Avx512)
    return fmaKernelAvx512(iters, seed);
  if (isa == Isa::Avx2)
    return fmaKernelAvx2(iters, seed);
#endif
  (void)isa;
  return fmaKernelGeneric(iters, seed);
}

//===----------------------------------------------------------------------===//
// "fma-tile": the FMA rate a GEMM's inner loop reaches at best on this core.
// A register tile of R rows x V vectors of f32 accumulators, each reduction
// step R broadcasts of the broadcast operand's elements from memory, V loads
// of the streamed operand and R x V FMAs (the instruction mix of the tiles
// linformer-mlir generates), both operands in L1 (128 steps: 7 KiB and 16
// KiB with AVX-512's 14 x 2 vectors, 3 KiB and 8 KiB with AVX2's 6 x 2):
// no cache miss, no loop but the step's. What it loses against "fma" (no
// loads) is the core's own price of feeding the FMAs; a whole GEMM's
// fraction of "fma" is bounded by this one's. (It was bench/cpu/fma-tile.c,
// a program of its own, before bench/peers measured it in each run.) On the
// Xeon VM with AMX (LLVM `rocketlake`, 2 cores): 2026-12-05, 86-90% of
// "fma" (R = 14, 12 and 8 alike); 2026-12-06, 0.84 on 2 threads (324.5
// against 387.4 GFLOP/s; hand-written tiles from 8 x 2 to 14 x 2 vectors
// 0.78-0.85), while its AVX2 tile (6 x 2 vectors of 8) ran at 0.97 of the
// AVX2 "fma": on that core the AVX-512 tile's loads cost 10-15% of the FMA
// rate, and the f32 bar of 85% of "fma" (issue 68) is at this ceiling.
//===----------------------------------------------------------------------===//

constexpr int kTileSteps = 128; // a power of two
constexpr int kTileVectors = 2;

#if PEAK_X86
constexpr int kTileRows512 = 14, kTileRows256 = 6;

// The body of both ISAs' kernels (each function carries its ISA's target
// attribute, which a lambda or a template called from it would not).
#define PEAK_FMA_TILE_BODY(Vec, R, Lanes, LOAD, BCAST, FMA, STORE)           \
  constexpr int kColumns = kTileVectors * (Lanes);                           \
  alignas(64) float a[(R) * kTileSteps];                                     \
  alignas(64) float b[kTileSteps * kColumns];                                \
  for (int i = 0; i < (R) * kTileSteps; ++i)                                 \
    a[i] = 1.0e-3f;                                                          \
  for (int i = 0; i < kTileSteps * kColumns; ++i)                            \
    b[i] = 1.0e-3f;                                                          \
  alignas(64) float c[(R) * kColumns];                                       \
  for (int i = 0; i < (R) * kColumns; ++i)                                   \
    c[i] = seed;                                                             \
  Vec acc[R][kTileVectors];                                                  \
  _Pragma("GCC unroll 16") for (int r = 0; r < (R); ++r)                     \
      _Pragma("GCC unroll 4") for (int v = 0; v < kTileVectors; ++v)         \
          acc[r][v] = LOAD(c + r * kColumns + v * (Lanes));                  \
  for (std::uint64_t i = 0; i < iters; ++i) {                                \
    std::uint64_t k = i & (kTileSteps - 1);                                  \
    Vec streamed[kTileVectors];                                              \
    _Pragma("GCC unroll 4") for (int v = 0; v < kTileVectors; ++v)           \
        streamed[v] = LOAD(b + k * kColumns + v * (Lanes));                  \
    _Pragma("GCC unroll 16") for (int r = 0; r < (R); ++r) {                 \
      Vec x = BCAST(a[r * kTileSteps + k]);                                  \
      _Pragma("GCC unroll 4") for (int v = 0; v < kTileVectors; ++v)         \
          acc[r][v] = FMA(x, streamed[v], acc[r][v]);                        \
    }                                                                        \
  }                                                                          \
  _Pragma("GCC unroll 16") for (int r = 0; r < (R); ++r)                     \
      _Pragma("GCC unroll 4") for (int v = 0; v < kTileVectors; ++v)         \
          STORE(c + r * kColumns + v * (Lanes), acc[r][v]);                  \
  double sum = 0.0;                                                          \
  for (float x : c)                                                          \
    sum += x;                                                                \
  return sum;

__attribute__((target("avx512f"))) double
fmaTileKernelAvx512(std::uint64_t iters, float seed) {
  PEAK_FMA_TILE_BODY(__m512, kTileRows512, 16, _mm512_load_ps, _mm512_set1_ps,
                     _mm512_fmadd_ps, _mm512_store_ps)
}

__attribute__((target("avx2,fma"))) double
fmaTileKernelAvx2(std::uint64_t iters, float seed) {
  PEAK_FMA_TILE_BODY(__m256, kTileRows256, 8, _mm256_load_ps,
                     _mm256_set1_ps, _mm256_fmadd_ps, _mm256_store_ps)
}
#undef PEAK_FMA_TILE_BODY
#endif // PEAK_X86

// Rows of the tile per ISA (the generic build has none: "fma-tile" is not
// measured there).
int fmaTileRows(Isa isa) {
#if PEAK_X86
  if (isa == Isa::Avx512)
    return kTileRows512;
  if (isa == Isa::Avx2)
    return kTileRows256;
#endif
  (void)isa;
  return 0;
}

double fmaTileKernel(Isa isa, std::uint64_t iters, float seed) {
#if PEAK_X86
  if (isa == Isa::Avx512)
    return fmaTileKernelAvx512(iters, seed);
  if (isa == Isa::Avx2)
    return fmaTileKernelAvx2(iters, seed);
#endif
  (void)isa;
  (void)iters;
  return seed;
}

//===----------------------------------------------------------------------===//
// bf16 kernels: multiply-adds of bf16 pairs into f32, the instructions a
// bf16 GEMM's inner loop runs. The operands are constant pairs (1, -1) and
// (0.5, 0.5): every pair's two products cancel exactly, so each accumulator
// stays at its start however long it runs (no overflow, no denormals).
// AMX's rate does depend on the values: a GEMM's tiles change every step,
// and on a Xeon with AMX (Granite Rapids, 2 threads) products of operands
// that change ran at about three quarters of the constant ones' rate (2.1
// against 2.7 TFLOP/s a core), the same loads of tiles of zeros at the
// constant rate. "amx-bf16-data" measures that rate: each step loads its
// four operand tiles from eight of random values (8 KiB, in L1), a 2 x 2
// block of products as a GEMM's inner loop runs it.
//===----------------------------------------------------------------------===//

// The bf16 bit patterns of 1.0, -1.0 and 0.5, two to a 32-bit lane.
constexpr std::uint32_t kBF16OneMinusOne = 0xBF803F80u; // (1.0, -1.0)
constexpr std::uint32_t kBF16Halves = 0x3F003F00u;      // (0.5, 0.5)

enum class Bf16Unit { Dot, Amx, AmxData };

// Each unit's name in the text and key in the JSON, by Bf16Unit.
struct Bf16UnitNames {
  const char *name, *key;
};
constexpr Bf16UnitNames kBf16UnitNames[] = {{"bf16-dot", "bf16_dot"},
                                            {"amx-bf16", "amx_bf16"},
                                            {"amx-bf16-data", "amx_bf16_data"}};

const char *bf16UnitName(Bf16Unit unit) {
  return kBf16UnitNames[static_cast<int>(unit)].name;
}

// The JSON key of `unit`'s figures.
const char *bf16UnitKey(Bf16Unit unit) {
  return kBf16UnitNames[static_cast<int>(unit)].key;
}

// FLOPs of one kernel iteration: VDPBF16PS, 16 lanes x 2 products x 2, on 12
// chains; AMX, 4 x TDPBF16PS of 16 x 16 outputs x 32 products x 2.
double bf16FlopsPerIteration(Bf16Unit unit) {
  return unit == Bf16Unit::Dot ? 16.0 * 2 * 2 * kChains
                               : 4.0 * 16 * 16 * 32 * 2;
}

#if PEAK_X86
// Why `unit` cannot run here, or "" when it can: the CPU's CPUID bits
// (AVX512_BF16: leaf 7 subleaf 1 EAX bit 5; AMX-BF16 and AMX-TILE: leaf 7
// EDX bits 22 and 24), the OS's AVX-512 state, and for AMX Linux's
// permission, asked for once (arch_prctl(ARCH_REQ_XCOMP_PERM,
// XFEATURE_XTILEDATA)) as every process must before its first tile
// instruction.
std::string bf16Unavailable(Bf16Unit unit) {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (unit == Bf16Unit::Dot) {
    __builtin_cpu_init();
    if (!__builtin_cpu_supports("avx512f"))
      return "no AVX-512 on this CPU";
    if (!__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) || !(eax & (1u << 5)))
      return "no AVX512_BF16 on this CPU";
    return "";
  }
  if (!__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) ||
      !(edx & (1u << 24)) || !(edx & (1u << 22)))
    return "no AMX-BF16 on this CPU";
#if defined(SYS_arch_prctl)
  static const long granted =
      syscall(SYS_arch_prctl, 0x1023 /*ARCH_REQ_XCOMP_PERM*/,
              18 /*XFEATURE_XTILEDATA*/);
  if (granted != 0)
    return "Linux refused the AMX tile state (arch_prctl)";
  return "";
#else
  return "no arch_prctl to ask Linux for the AMX tile state";
#endif
}

__attribute__((target("avx512f,avx512bf16"))) double
bf16DotKernel(std::uint64_t iters, float seed) {
  const __m512bh a =
      reinterpret_cast<__m512bh>(_mm512_set1_epi32(int(kBF16OneMinusOne)));
  const __m512bh b =
      reinterpret_cast<__m512bh>(_mm512_set1_epi32(int(kBF16Halves)));
  Chains512 k = startChains512(seed);
  for (std::uint64_t i = 0; i < iters; ++i) {
    k.c0 = _mm512_dpbf16_ps(k.c0, a, b);
    k.c1 = _mm512_dpbf16_ps(k.c1, a, b);
    k.c2 = _mm512_dpbf16_ps(k.c2, a, b);
    k.c3 = _mm512_dpbf16_ps(k.c3, a, b);
    k.c4 = _mm512_dpbf16_ps(k.c4, a, b);
    k.c5 = _mm512_dpbf16_ps(k.c5, a, b);
    k.c6 = _mm512_dpbf16_ps(k.c6, a, b);
    k.c7 = _mm512_dpbf16_ps(k.c7, a, b);
    k.c8 = _mm512_dpbf16_ps(k.c8, a, b);
    k.c9 = _mm512_dpbf16_ps(k.c9, a, b);
    k.c10 = _mm512_dpbf16_ps(k.c10, a, b);
    k.c11 = _mm512_dpbf16_ps(k.c11, a, b);
  }
  return sumChains512(k);
}

// The AMX tile configuration (palette 1): 8 tiles of 16 rows x 64 bytes.
struct alignas(64) TileConfig {
  std::uint8_t palette = 1;
  std::uint8_t startRow = 0;
  std::uint8_t reserved[14] = {};
  std::uint16_t colsb[16] = {};
  std::uint8_t rows[16] = {};
};

// Configures this thread's 8 tiles as 16 rows x 64 bytes.
__attribute__((target("amx-tile"))) void configureTiles() {
  TileConfig config;
  for (int t = 0; t < 8; ++t) {
    config.colsb[t] = 64;
    config.rows[t] = 16;
  }
  _tile_loadconfig(&config);
}

// The sum of the accumulator tiles tmm0-3 (and `seed`), the tiles released.
__attribute__((target("amx-tile"))) double accumulatorSum(float seed) {
  alignas(64) float c[4][16 * 16];
  _tile_stored(0, c[0], 64);
  _tile_stored(1, c[1], 64);
  _tile_stored(2, c[2], 64);
  _tile_stored(3, c[3], 64);
  _tile_release();
  double sum = seed;
  for (const auto &tile : c)
    for (float v : tile)
      sum += v;
  return sum;
}

// tmm0-3: C, 16 x 16 f32; tmm4-5: A, 16 rows x 32 bf16; tmm6-7: B, 16 rows
// of 16 pair-interleaved columns. Each thread configures its own tiles.
__attribute__((target("amx-tile,amx-bf16"))) double
amxKernel(std::uint64_t iters, float seed) {
  configureTiles();
  alignas(64) std::uint32_t a[16 * 16], b[16 * 16];
  for (int i = 0; i < 16 * 16; ++i) {
    a[i] = kBF16OneMinusOne;
    b[i] = kBF16Halves;
  }
  _tile_loadd(4, a, 64);
  _tile_loadd(5, a, 64);
  _tile_loadd(6, b, 64);
  _tile_loadd(7, b, 64);
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (std::uint64_t i = 0; i < iters; ++i) {
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  return accumulatorSum(seed);
}

// amxKernel's 2 x 2 block of products with its four operand tiles loaded
// every step from eight tiles of random bf16 values in (-1, 1) (8 KiB, in
// L1), in turn: operands that change as a GEMM's do. The sums random-walk
// (about 200 per element after 10^8 steps), far from f32's range.
__attribute__((target("amx-tile,amx-bf16"))) double
amxDataKernel(std::uint64_t iters, float seed) {
  configureTiles();
  alignas(64) std::uint16_t tiles[8][16 * 32];
  std::uint32_t state = 0x9E3779B9u ^ std::uint32_t(seed * 1000.0f);
  for (auto &tile : tiles)
    for (std::uint16_t &v : tile) {
      state = state * 1664525u + 1013904223u;
      // A random sign, magnitude in [1/16, 1) (biased exponent 123 to
      // 126), 7 random mantissa bits.
      v = std::uint16_t(((state >> 16) & 0x8000u) |
                        ((0x7Eu - ((state >> 8) & 3u)) << 7) |
                        ((state >> 20) & 0x7Fu));
    }
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  for (std::uint64_t i = 0; i < iters; ++i) {
    const std::uint16_t(*t)[16 * 32] = tiles + (i & 1) * 4;
    _tile_loadd(4, t[0], 64);
    _tile_loadd(5, t[1], 64);
    _tile_loadd(6, t[2], 64);
    _tile_loadd(7, t[3], 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(2, 5, 6);
    _tile_dpbf16ps(3, 5, 7);
  }
  return accumulatorSum(seed);
}

double bf16Kernel(Bf16Unit unit, std::uint64_t iters, float seed) {
  switch (unit) {
  case Bf16Unit::Dot:
    return bf16DotKernel(iters, seed);
  case Bf16Unit::Amx:
    return amxKernel(iters, seed);
  case Bf16Unit::AmxData:
    return amxDataKernel(iters, seed);
  }
  return seed;
}
#else
std::string bf16Unavailable(Bf16Unit) { return "not an x86 CPU"; }
double bf16Kernel(Bf16Unit, std::uint64_t, float seed) { return seed; }
#endif // PEAK_X86

//===----------------------------------------------------------------------===//
// Triad kernels over [lo, hi) of double arrays; lo is a multiple of 8 and the
// arrays are 64-byte aligned, so the vector loads/stores are aligned.
// Ordinary (temporal) stores, as in STREAM.
//===----------------------------------------------------------------------===//

#if PEAK_X86
__attribute__((target("avx512f"))) void
triadAvx512(double *__restrict a, const double *__restrict b,
            const double *__restrict c, double s, std::size_t lo,
            std::size_t hi) {
  const __m512d vs = _mm512_set1_pd(s);
  std::size_t i = lo;
  for (; i + 8 <= hi; i += 8)
    _mm512_store_pd(a + i, _mm512_fmadd_pd(vs, _mm512_load_pd(c + i),
                                           _mm512_load_pd(b + i)));
  for (; i < hi; ++i)
    a[i] = b[i] + s * c[i];
}

__attribute__((target("avx2,fma"))) void
triadAvx2(double *__restrict a, const double *__restrict b,
          const double *__restrict c, double s, std::size_t lo,
          std::size_t hi) {
  const __m256d vs = _mm256_set1_pd(s);
  std::size_t i = lo;
  for (; i + 4 <= hi; i += 4)
    _mm256_store_pd(a + i, _mm256_fmadd_pd(vs, _mm256_load_pd(c + i),
                                           _mm256_load_pd(b + i)));
  for (; i < hi; ++i)
    a[i] = b[i] + s * c[i];
}
#endif // PEAK_X86

void triadGeneric(double *__restrict a, const double *__restrict b,
                  const double *__restrict c, double s, std::size_t lo,
                  std::size_t hi) {
  for (std::size_t i = lo; i < hi; ++i)
    a[i] = b[i] + s * c[i];
}

void triad(Isa isa, double *a, const double *b, const double *c, double s,
           std::size_t lo, std::size_t hi) {
#if PEAK_X86
  if (isa == Isa::Avx512)
    return triadAvx512(a, b, c, s, lo, hi);
  if (isa == Isa::Avx2)
    return triadAvx2(a, b, c, s, lo, hi);
#endif
  (void)isa;
  triadGeneric(a, b, c, s, lo, hi);
}

//===----------------------------------------------------------------------===//
// Thread harness: runs work(tid) on nthreads threads (the calling thread is
// thread 0) and returns the wall time from a common start to the last finish.
// Thread creation is outside the timed region: workers spin until released.
//===----------------------------------------------------------------------===//

double runParallel(int nthreads, const std::function<void(int)> &work) {
  std::atomic<int> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> workers;
  workers.reserve(static_cast<std::size_t>(nthreads - 1));
  for (int t = 1; t < nthreads; ++t)
    workers.emplace_back([&, t] {
      ready.fetch_add(1, std::memory_order_acq_rel);
      while (!go.load(std::memory_order_acquire))
        std::this_thread::yield();
      work(t);
    });
  while (ready.load(std::memory_order_acquire) != nthreads - 1)
    std::this_thread::yield();
  Clock::time_point t0 = Clock::now();
  go.store(true, std::memory_order_release);
  work(0);
  for (std::thread &w : workers)
    w.join();
  return secondsSince(t0);
}

struct Stats {
  double best = 0.0;   // highest rate
  double median = 0.0; // median rate
  double worst = 0.0;  // lowest rate
};

Stats summarize(std::vector<double> rates) {
  Stats s;
  if (rates.empty())
    return s;
  std::sort(rates.begin(), rates.end());
  std::size_t n = rates.size();
  s.worst = rates.front();
  s.best = rates.back();
  s.median = n % 2 ? rates[n / 2] : 0.5 * (rates[n / 2 - 1] + rates[n / 2]);
  return s;
}

struct Options {
  int threads = 0; // 0: all hardware threads
  bool json = false;
  int runs = 5;
  double minTime = 0.2;
  std::size_t triadMiB = 0;  // per array; 0: sized from the LLC
  const char *isa = nullptr; // forced ISA, or nullptr for the best available
  bool bf16 = true;          // measure the bf16 units the CPU has
};

// Picks a repeat count so that runOnce(count) takes at least minTime seconds.
// The calibration runs double as the warm-up.
std::uint64_t calibrate(const std::function<double(std::uint64_t)> &runOnce,
                        std::uint64_t start, double minTime) {
  std::uint64_t count = start;
  for (;;) {
    double t = runOnce(count);
    if (t >= 0.25 * minTime) {
      double scale = 1.15 * minTime / std::max(t, 1e-9);
      return std::max<std::uint64_t>(
          1, static_cast<std::uint64_t>(static_cast<double>(count) * scale) +
                 1);
    }
    count *= 2;
  }
}

// GFLOP/s of `kernel(iters, seed)` on `nthreads` threads, each running
// `flopsPerIteration` a loop iteration: a warm-up of `warmIters` (which also
// brings the core to its wide-vector frequency), a calibration from
// `startIters`, then opt.runs timed runs.
Stats measureKernel(const std::function<double(std::uint64_t, float)> &kernel,
                    double flopsPerIteration, std::uint64_t warmIters,
                    std::uint64_t startIters, int nthreads,
                    const Options &opt) {
  std::vector<double> partial(static_cast<std::size_t>(nthreads), 0.0);
  auto runOnce = [&](std::uint64_t iters) {
    double t = runParallel(nthreads, [&](int tid) {
      partial[static_cast<std::size_t>(tid)] =
          kernel(iters, 0.5f + 0.001f * static_cast<float>(tid));
    });
    double sum = 0.0;
    for (double p : partial)
      sum += p;
    gSink = gSink + sum;
    return t;
  };
  runOnce(warmIters);
  std::uint64_t iters = calibrate(runOnce, startIters, opt.minTime);
  double flopsPerRun =
      flopsPerIteration * static_cast<double>(iters) * nthreads;
  std::vector<double> rates;
  for (int r = 0; r < opt.runs; ++r)
    rates.push_back(flopsPerRun / runOnce(iters) * 1e-9);
  return summarize(rates);
}

Stats measureFma(Isa isa, int nthreads, const Options &opt) {
  return measureKernel(
      [isa](std::uint64_t iters, float seed) {
        return fmaKernel(isa, iters, seed);
      },
      2.0 * fmaLanes(isa) * kChains, 1u << 20, 1u << 16, nthreads, opt);
}

// An iteration is one reduction step of the tile: rows x vectors FMAs.
Stats measureFmaTile(Isa isa, int nthreads, const Options &opt) {
  return measureKernel(
      [isa](std::uint64_t iters, float seed) {
        return fmaTileKernel(isa, iters, seed);
      },
      2.0 * fmaLanes(isa) * fmaTileRows(isa) * kTileVectors, 1u << 20,
      1u << 16, nthreads, opt);
}

// An AMX iteration is 256 times a VDPBF16PS chain step's work: fewer
// iterations warm it up and start its calibration.
Stats measureBf16(Bf16Unit unit, int nthreads, const Options &opt) {
  return measureKernel(
      [unit](std::uint64_t iters, float seed) {
        return bf16Kernel(unit, iters, seed);
      },
      bf16FlopsPerIteration(unit), 1u << 16, 1u << 12, nthreads, opt);
}

struct TriadArrays {
  double *a = nullptr, *b = nullptr, *c = nullptr;
  std::size_t n = 0;
  ~TriadArrays() {
    std::free(a);
    std::free(b);
    std::free(c);
  }
};

// Splits [0, n) into nthreads slices whose bounds are multiples of 8.
void slice(std::size_t n, int nthreads, int tid, std::size_t &lo,
           std::size_t &hi) {
  std::size_t blocks = (n + 7) / 8;
  std::size_t per = blocks / static_cast<std::size_t>(nthreads);
  std::size_t extra = blocks % static_cast<std::size_t>(nthreads);
  std::size_t t = static_cast<std::size_t>(tid);
  std::size_t b0 = t * per + std::min(t, extra);
  std::size_t b1 = b0 + per + (t < extra ? 1 : 0);
  lo = std::min(n, b0 * 8);
  hi = std::min(n, b1 * 8);
}

Stats measureTriad(Isa isa, int nthreads, TriadArrays &arr,
                   const Options &opt) {
  const double s = 3.0;
  // Initialize (first touch) with the same slicing the measurement uses.
  runParallel(nthreads, [&](int tid) {
    std::size_t lo, hi;
    slice(arr.n, nthreads, tid, lo, hi);
    for (std::size_t i = lo; i < hi; ++i) {
      arr.a[i] = 0.0;
      arr.b[i] = 1.0;
      arr.c[i] = 2.0;
    }
  });
  auto runOnce = [&](std::uint64_t passes) {
    double t = runParallel(nthreads, [&](int tid) {
      std::size_t lo, hi;
      slice(arr.n, nthreads, tid, lo, hi);
      for (std::uint64_t p = 0; p < passes; ++p)
        triad(isa, arr.a, arr.b, arr.c, s, lo, hi);
    });
    gSink = gSink + arr.a[arr.n / 2] + arr.a[arr.n - 1];
    return t;
  };
  runOnce(2); // warm-up
  std::uint64_t passes = calibrate(runOnce, 1, opt.minTime);
  double bytesPerRun =
      3.0 * sizeof(double) * static_cast<double>(arr.n) *
      static_cast<double>(passes);
  std::vector<double> rates;
  for (int r = 0; r < opt.runs; ++r)
    rates.push_back(bytesPerRun / runOnce(passes) * 1e-9);
  return summarize(rates);
}

// Last-level cache size in bytes as the C library reports it, or 0.
std::size_t llcBytes() {
  long best = 0;
#ifdef _SC_LEVEL3_CACHE_SIZE
  best = std::max(best, sysconf(_SC_LEVEL3_CACHE_SIZE));
#endif
#ifdef _SC_LEVEL2_CACHE_SIZE
  best = std::max(best, sysconf(_SC_LEVEL2_CACHE_SIZE));
#endif
  return best > 0 ? static_cast<std::size_t>(best) : 0;
}

// Default triad array size: the three arrays together span at least four
// times the LLC (server parts have L3s of hundreds of MiB; with 3 x 64 MiB
// such a cache serves part of the traffic and inflates the figure), never
// less than 64 MiB each, rounded up to 32 MiB.
std::size_t defaultTriadMiB() {
  const std::size_t mib = std::size_t(1) << 20;
  std::size_t perArray = (4 * llcBytes() + 3 * mib - 1) / (3 * mib);
  perArray = std::max<std::size_t>(64, (perArray + 31) / 32 * 32);
  return perArray;
}

void usage(const char *argv0) {
  std::fprintf(
      stderr,
      "usage: %s [--threads N] [--json] [--runs R] [--min-time S]\n"
      "          [--triad-mib M] [--isa avx512|avx2|generic] [--no-bf16]\n"
      "  --threads N    threads for the multi-thread figures (default: all\n"
      "                 hardware threads)\n"
      "  --json         print one JSON object on stdout (text goes to stderr)\n"
      "  --runs R       timed runs per measurement (default 5)\n"
      "  --min-time S   minimum seconds per timed run (default 0.2)\n"
      "  --triad-mib M  MiB per triad array, 3 arrays (default: the three\n"
      "                 together >= 4x the last-level cache, at least 64)\n"
      "  --isa I        force an ISA (default: best the CPU supports)\n"
      "  --no-bf16      skip the bf16 units (VDPBF16PS, AMX TDPBF16PS)\n",
      argv0);
}

bool parseArgs(int argc, char **argv, Options &opt) {
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    auto value = [&](const char *&out) {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "error: %s needs a value\n", arg.c_str());
        return false;
      }
      out = argv[++i];
      return true;
    };
    const char *v = nullptr;
    char *end = nullptr;
    if (arg == "--json") {
      opt.json = true;
    } else if (arg == "--no-bf16") {
      opt.bf16 = false;
    } else if (arg == "--help" || arg == "-h") {
      usage(argv[0]);
      std::exit(0);
    } else if (arg == "--threads") {
      if (!value(v))
        return false;
      long n = std::strtol(v, &end, 10);
      if (*end || n < 1 || n > 4096) {
        std::fprintf(stderr, "error: bad --threads '%s'\n", v);
        return false;
      }
      opt.threads = static_cast<int>(n);
    } else if (arg == "--runs") {
      if (!value(v))
        return false;
      long n = std::strtol(v, &end, 10);
      if (*end || n < 1 || n > 1000) {
        std::fprintf(stderr, "error: bad --runs '%s'\n", v);
        return false;
      }
      opt.runs = static_cast<int>(n);
    } else if (arg == "--min-time") {
      if (!value(v))
        return false;
      double t = std::strtod(v, &end);
      if (*end || !(t > 0.0) || t > 60.0) {
        std::fprintf(stderr, "error: bad --min-time '%s'\n", v);
        return false;
      }
      opt.minTime = t;
    } else if (arg == "--triad-mib") {
      if (!value(v))
        return false;
      long n = std::strtol(v, &end, 10);
      if (*end || n < 1 || n > (1L << 20)) {
        std::fprintf(stderr, "error: bad --triad-mib '%s'\n", v);
        return false;
      }
      opt.triadMiB = static_cast<std::size_t>(n);
    } else if (arg == "--isa") {
      if (!value(v))
        return false;
      opt.isa = v;
    } else {
      std::fprintf(stderr, "error: unknown argument '%s'\n", arg.c_str());
      usage(argv[0]);
      return false;
    }
  }
  return true;
}

} // namespace

int main(int argc, char **argv) {
  Options opt;
  if (!parseArgs(argc, argv, opt))
    return 2;

  Isa isa;
  if (opt.isa) {
    std::string name = opt.isa;
    if (name == "avx512")
      isa = Isa::Avx512;
    else if (name == "avx2")
      isa = Isa::Avx2;
    else if (name == "generic")
      isa = Isa::Generic;
    else {
      std::fprintf(stderr, "error: unknown --isa '%s'\n", opt.isa);
      return 2;
    }
    if (!isaSupported(isa)) {
      std::fprintf(stderr, "error: this CPU does not support %s\n", opt.isa);
      return 2;
    }
  } else {
    isa = isaSupported(Isa::Avx512) ? Isa::Avx512
          : isaSupported(Isa::Avx2) ? Isa::Avx2
                                    : Isa::Generic;
  }

  int nthreads = opt.threads;
  if (nthreads == 0)
    nthreads = std::max(1u, std::thread::hardware_concurrency());

  // With --json, stdout carries only the JSON object.
  std::FILE *text = opt.json ? stderr : stdout;
  std::fprintf(text,
               "linformer-peak: isa=%s, %d FMA chains x %d f32 lanes, "
               "threads 1 and %d, %d runs of >= %.2f s each\n",
               isaName(isa), kChains, fmaLanes(isa), nthreads, opt.runs,
               opt.minTime);

  auto report = [&](const char *what, int t, const Stats &s,
                    const char *unit) {
    std::fprintf(text,
                 "%-13s %2d thread%s: best %8.1f %s  median %8.1f  worst "
                 "%8.1f\n",
                 what, t, t == 1 ? " " : "s", s.best, unit, s.median, s.worst);
    std::fflush(text);
  };

  Stats fma1 = measureFma(isa, 1, opt);
  report("fma", 1, fma1, "GFLOP/s");
  Stats fmaN = nthreads == 1 ? fma1 : measureFma(isa, nthreads, opt);
  if (nthreads != 1)
    report("fma", nthreads, fmaN, "GFLOP/s");
  // The best a GEMM's register tile does with its operands in L1.
  bool tile = fmaTileRows(isa) > 0;
  Stats tile1, tileN;
  if (tile) {
    tile1 = measureFmaTile(isa, 1, opt);
    report("fma-tile", 1, tile1, "GFLOP/s");
    tileN = nthreads == 1 ? tile1 : measureFmaTile(isa, nthreads, opt);
    if (nthreads != 1)
      report("fma-tile", nthreads, tileN, "GFLOP/s");
    std::fprintf(text,
                 "fma-tile: %d x %d f32 accumulators, operands in L1: %.2f "
                 "of fma (best, %d thread%s)\n",
                 fmaTileRows(isa), kTileVectors * fmaLanes(isa),
                 fmaN.best > 0 ? tileN.best / fmaN.best : 0.0, nthreads,
                 nthreads == 1 ? "" : "s");
  } else {
    std::fprintf(text, "fma-tile      not measured: no vector ISA\n");
  }

  // The bf16 units: measured where the CPU has them, else null with why.
  struct Bf16Result {
    Bf16Unit unit;
    std::string unavailable;
    Stats one, many;
  };
  std::vector<Bf16Result> bf16;
  for (Bf16Unit unit : {Bf16Unit::Dot, Bf16Unit::Amx, Bf16Unit::AmxData}) {
    Bf16Result r{unit, opt.bf16 ? bf16Unavailable(unit) : "not measured (--no-bf16)", {}, {}};
    if (r.unavailable.empty()) {
      r.one = measureBf16(unit, 1, opt);
      report(bf16UnitName(unit), 1, r.one, "GFLOP/s");
      r.many = nthreads == 1 ? r.one : measureBf16(unit, nthreads, opt);
      if (nthreads != 1)
        report(bf16UnitName(unit), nthreads, r.many, "GFLOP/s");
    } else {
      std::fprintf(text, "%-13s not measured: %s\n", bf16UnitName(unit),
                   r.unavailable.c_str());
    }
    bf16.push_back(r);
  }

  if (opt.triadMiB == 0)
    opt.triadMiB = defaultTriadMiB();
  TriadArrays arr;
  arr.n = opt.triadMiB * (std::size_t(1) << 20) / sizeof(double);
  std::size_t bytes = (arr.n * sizeof(double) + 63) / 64 * 64;
  arr.a = static_cast<double *>(std::aligned_alloc(64, bytes));
  arr.b = static_cast<double *>(std::aligned_alloc(64, bytes));
  arr.c = static_cast<double *>(std::aligned_alloc(64, bytes));
  if (!arr.a || !arr.b || !arr.c) {
    std::fprintf(stderr, "error: cannot allocate 3 x %zu MiB\n", opt.triadMiB);
    return 1;
  }
  std::fprintf(text,
               "triad: 3 arrays x %zu MiB of f64 (LLC %zu MiB), "
               "a[i] = b[i] + s*c[i], 24 bytes/element counted\n",
               opt.triadMiB, llcBytes() >> 20);
  Stats triad1 = measureTriad(isa, 1, arr, opt);
  report("triad", 1, triad1, "GB/s   ");
  Stats triadN =
      nthreads == 1 ? triad1 : measureTriad(isa, nthreads, arr, opt);
  if (nthreads != 1)
    report("triad", nthreads, triadN, "GB/s   ");

  if (opt.json) {
    std::printf("{\"fma_gflops_1t\": %.1f, \"fma_gflops_nt\": %.1f, "
                "\"threads\": %d, \"triad_gbs_1t\": %.2f, "
                "\"triad_gbs_nt\": %.2f, \"isa\": \"%s\", "
                "\"fma_gflops_1t_median\": %.1f, "
                "\"fma_gflops_nt_median\": %.1f, "
                "\"triad_gbs_1t_median\": %.2f, "
                "\"triad_gbs_nt_median\": %.2f, "
                "\"runs\": %d, \"min_time_s\": %.3f, \"triad_mib\": %zu",
                fma1.best, fmaN.best, nthreads, triad1.best, triadN.best,
                isaName(isa), fma1.median, fmaN.median, triad1.median,
                triadN.median, opt.runs, opt.minTime, opt.triadMiB);
    // "fma_tile_gflops_1t" / "_nt": the register tile's rate (null on the
    // generic ISA).
    if (tile)
      std::printf(", \"fma_tile_gflops_1t\": %.1f, \"fma_tile_gflops_nt\": "
                  "%.1f, \"fma_tile_rows\": %d",
                  tile1.best, tileN.best, fmaTileRows(isa));
    else
      std::printf(", \"fma_tile_gflops_1t\": null, "
                  "\"fma_tile_gflops_nt\": null");
    // "bf16_dot_gflops_1t" / "_nt" (VDPBF16PS), "amx_bf16_gflops_1t" /
    // "_nt" (TDPBF16PS) and "amx_bf16_data_gflops_1t" / "_nt" (TDPBF16PS on
    // operands that change): null where not measured, with the reason
    // under "..._unavailable".
    for (const Bf16Result &r : bf16) {
      const char *key = bf16UnitKey(r.unit);
      if (r.unavailable.empty())
        std::printf(", \"%s_gflops_1t\": %.1f, \"%s_gflops_nt\": %.1f", key,
                    r.one.best, key, r.many.best);
      else
        std::printf(", \"%s_gflops_1t\": null, \"%s_gflops_nt\": null, "
                    "\"%s_unavailable\": \"%s\"",
                    key, key, key, r.unavailable.c_str());
    }
    std::printf("}\n");
  }
  return 0;
}
