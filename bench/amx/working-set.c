//===- bench/amx/working-set.c - AMX tile loop against its operands' home -===//
//
// The 2 x 2 block of tiles that linformer-cpu-lower-vectors makes of a 32 x
// 32 register tile (four accumulators, per step two tiles of A and two of
// B, 16 pairs each), on one core, with its operands where a GEMM's loop
// nest puts them: A streamed through `a_kib` KiB (a row tile's rows `a_stride`
// bytes apart: 1024 for a [n, 512] bf16 activation read in place, 64 for
// tiles packed contiguously), B cycling through `b_steps` steps of 2 KiB (a
// panel of pairs: 16 steps are K = 512's 32 KiB). Random bf16 operands (AMX
// runs about a quarter slower on them than on constants). Needs AMX-BF16 and
// Linux:
//
//   gcc -O2 -march=sapphirerapids -pthread bench/amx/working-set.c -o /tmp/amx-ws
//   /tmp/amx-ws A_KIB A_STRIDE B_STEPS [THREADS]
//
// On the slower Xeon VM of 2026-12-05 (bench/peak's `amx-bf16-data` 2.1-2.2
// TFLOP/s a core), one thread: both operands in L1 (A 16 KiB packed, B 8
// steps) 2.21 TFLOP/s; A streamed through 512 KiB of L2 packed 1.74-1.98,
// row-major (stride 1024) 1.29-1.46, software prefetch of A a few steps
// ahead no better (1.68-1.88 packed); A through 128 KiB with B over 16 steps
// (FFN up's row tiles against one K = 512 panel) 1.51-1.56 packed, 1.27
// row-major; with B over 8 steps (K blocks of 256) 1.95 and 1.41. Two
// threads: 2.91 packed, 2.47 row-major. Later, the VM faster (`amx-bf16-data`
// 2.9-3.0 a core): 3.03 in L1; through 512 KiB 2.75 packed, 2.01 row-major;
// 128 KiB against 16 steps 2.19 and 1.79, against 8 steps 2.76 and 1.37;
// two threads 3.07 and 2.48. In the whole FFN-up loop nest (bias
// tiles, 64 panels swept from L3, the GELU epilogue) neither packing A nor
// K blocks moved its time past the VM's noise: see the results README of
// bench/results/xeon-amx-2026-12-05g-core-block.
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

// Every tile 16 rows of 64 bytes. GCC may drop stores to a configuration it
// sees no reader of: volatile, and a barrier before the load.
static void configure(void) {
  static _Alignas(64) volatile uint8_t c[64];
  for (int i = 0; i < 64; ++i)
    c[i] = 0;
  c[0] = 1;
  for (int i = 0; i < 8; ++i) {
    c[16 + 2 * i] = 64;
    c[48 + i] = 16;
  }
  _tile_loadconfig((const void *)c);
  __asm__ volatile("" ::: "memory");
}

static const char *A, *B;
static size_t aBytes, aStride, bSteps;
enum { kSteps = 1 << 16 };

// The two 16-row tiles of A at step `i` of its stream.
static void aTiles(size_t i, const char **a0, const char **a1) {
  if (aStride == 64) {
    *a0 = A + i * 2048;
    *a1 = *a0 + 1024;
    return;
  }
  size_t per = aStride / 64, block = i / per, column = i % per;
  *a0 = A + block * 32 * aStride + column * 64;
  *a1 = *a0 + 16 * aStride;
}

static void run(void) {
  _tile_zero(0);
  _tile_zero(1);
  _tile_zero(2);
  _tile_zero(3);
  size_t aSteps = aBytes / 2048;
  for (long s = 0; s < kSteps; ++s) {
    const char *a0, *a1;
    aTiles((size_t)s % aSteps, &a0, &a1);
    const char *b0 = B + ((size_t)s % bSteps) * 2048;
    _tile_loadd(4, a0, aStride);
    _tile_loadd(5, a1, aStride);
    _tile_loadd(6, b0, 64);
    _tile_dpbf16ps(0, 4, 6);
    _tile_dpbf16ps(2, 5, 6);
    _tile_loadd(7, b0 + 1024, 64);
    _tile_dpbf16ps(1, 4, 7);
    _tile_dpbf16ps(3, 5, 7);
  }
  static _Alignas(64) float sink[256];
  _tile_stored(0, sink, 64);
}

static double best[64];
static void *thread(void *arg) {
  long id = (long)arg;
  configure();
  for (int r = 0; r < 5; ++r) {
    double t = now();
    run();
    double d = now() - t;
    if (best[id] == 0 || d < best[id])
      best[id] = d;
  }
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: %s A_KIB A_STRIDE B_STEPS [THREADS]\n", argv[0]);
    return 2;
  }
  aBytes = (size_t)atol(argv[1]) * 1024;
  aStride = (size_t)atol(argv[2]);
  bSteps = (size_t)atol(argv[3]);
  long threads = argc > 4 ? atol(argv[4]) : 1;
  if (aBytes < 2048 || aStride < 64 || aStride % 64 || bSteps < 1 ||
      threads < 1 || threads > 64 ||
      (aStride > 64 && aBytes % (32 * aStride))) {
    fprintf(stderr, "A_KIB >= 2, A_STRIDE a multiple of 64 (A_KIB a "
                    "multiple of 32 rows of it), B_STEPS >= 1, 1-64 "
                    "threads\n");
    return 2;
  }
  // ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA.
  if (syscall(SYS_arch_prctl, 0x1023, 18)) {
    perror("arch_prctl(ARCH_REQ_XCOMP_PERM)");
    return 1;
  }
  uint16_t *a = aligned_alloc(4096, aBytes), *b = aligned_alloc(4096, bSteps * 2048);
  srand(1);
  for (size_t i = 0; i < aBytes / 2; ++i)
    a[i] = 0x3f00 | (rand() & 0xff);
  for (size_t i = 0; i < bSteps * 1024; ++i)
    b[i] = 0x3c00 | (rand() & 0xff);
  A = (const char *)a;
  B = (const char *)b;
  pthread_t t[64];
  for (long i = 0; i < threads; ++i)
    pthread_create(&t[i], 0, thread, (void *)i);
  double slowest = 0;
  for (long i = 0; i < threads; ++i) {
    pthread_join(t[i], 0);
    if (best[i] > slowest)
      slowest = best[i];
  }
  double flops = 2.0 * 32 * 32 * 32 * (double)kSteps * (double)threads;
  printf("A %zu KiB stride %zu, B %zu steps, %ld thread(s): %.0f GFLOP/s\n",
         aBytes / 1024, aStride, bSteps, threads, flops / slowest * 1e-9);
  free(a);
  free(b);
  return 0;
}
