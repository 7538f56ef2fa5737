//===- bench/cpu/fma-tile.c - an f32 register tile with its operands in L1 -===//
//
// The AVX-512 register tile of an f32 GEMM's inner loop, R rows x 32
// columns (2 R accumulators; per step one broadcast of A a row and two
// vectors of B), over K steps of one A block (R x K) and one B panel
// (K x 32) that every repetition reads again, so both stay in L1 (K = 256:
// 14 KiB and 32 KiB): the most a GEMM built on this tile can reach on the
// machine, to set next to linformer-peak's FMA peak (12 chains in registers,
// no loads) and to a GEMM's own rate. Each thread has its own operands.
// Needs AVX-512F:
//
//   gcc -O3 -march=native -DR=14 -pthread bench/cpu/fma-tile.c -o /tmp/fma-tile
//   /tmp/fma-tile K THREADS
//
// On the Xeon VM of 2026-12-05 (Granite Rapids class, 2 cores; LLVM
// `rocketlake`), with linformer-peak's FMA peak at 235 GFLOP/s on 1 thread
// and 470 on 2 in the same minutes: R = 14 (the cost model's AVX-512 tile)
// 212 GFLOP/s on 1 thread (90%), 405 on 2 (86%), 399 at K = 512; R = 12
// and R = 8 alike (198-206 on 1 thread, 403 on 2). An hour later, the VM
// faster (peak 247 and 492): 222 and 445 (90% on both). Against it, the same
// machine's f32 GEMMs: the default encoder's FFN GEMMs in
// `linformer-run --profile` 320-341 GFLOP/s (68-73% of the FMA peak), and
// torch's f32 matmul (oneDNN) of the same shapes 299-375 (64-80%): the
// 85% that issue 68 asks of the whole f32 encoder is about what this tile
// reaches with nothing but its own loads.
//
//===----------------------------------------------------------------------===//
#include <immintrin.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#ifndef R
#define R 14
#endif

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static int K;
static long reps;
static float *A[64], *B[64];
static double elapsed[64];

static void *run(void *arg) {
  long id = (long)arg;
  const float *a = A[id], *b = B[id];
  static __thread _Alignas(64) float out[R * 32];
  double best = 1e9;
  for (int round = 0; round < 5; ++round) {
    double t = now();
    for (long r = 0; r < reps; ++r) {
      __m512 c[R][2];
      for (int i = 0; i < R; ++i)
        c[i][0] = c[i][1] = _mm512_setzero_ps();
      for (int k = 0; k < K; ++k) {
        __m512 b0 = _mm512_load_ps(b + k * 32), b1 = _mm512_load_ps(b + k * 32 + 16);
        for (int i = 0; i < R; ++i) {
          __m512 ai = _mm512_set1_ps(a[i * K + k]);
          c[i][0] = _mm512_fmadd_ps(ai, b0, c[i][0]);
          c[i][1] = _mm512_fmadd_ps(ai, b1, c[i][1]);
        }
      }
      for (int i = 0; i < R; ++i) {
        _mm512_store_ps(out + i * 32, c[i][0]);
        _mm512_store_ps(out + i * 32 + 16, c[i][1]);
      }
      __asm__ volatile("" ::"r"(out) : "memory");
    }
    t = now() - t;
    if (t < best)
      best = t;
  }
  elapsed[id] = best;
  return 0;
}

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s K THREADS\n", argv[0]);
    return 2;
  }
  K = atoi(argv[1]);
  long threads = atol(argv[2]);
  if (K < 1 || threads < 1 || threads > 64) {
    fprintf(stderr, "K >= 1, 1-64 threads\n");
    return 2;
  }
  reps = (long)(2e9 / (2.0 * R * 32 * K)) + 1;
  for (long t = 0; t < threads; ++t) {
    A[t] = aligned_alloc(64, ((size_t)R * K * 4 + 63) / 64 * 64);
    B[t] = aligned_alloc(64, (size_t)K * 32 * 4);
    for (int i = 0; i < R * K; ++i)
      A[t][i] = 1e-3f * (i % 7);
    for (int i = 0; i < K * 32; ++i)
      B[t][i] = 1e-3f * (i % 5);
  }
  pthread_t th[64];
  for (long t = 0; t < threads; ++t)
    pthread_create(&th[t], 0, run, (void *)t);
  double slowest = 0;
  for (long t = 0; t < threads; ++t) {
    pthread_join(th[t], 0);
    if (elapsed[t] > slowest)
      slowest = elapsed[t];
  }
  printf("R = %d, K = %d, %ld thread(s): %.0f GFLOP/s\n", R, K, threads,
         2.0 * R * 32 * K * reps * threads / slowest * 1e-9);
  return 0;
}
