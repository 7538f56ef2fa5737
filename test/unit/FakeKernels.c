/*===- FakeKernels.c - Hand-written kernels for runtime tests -----*- C -*-===//
 *
 * A stand-in for the compiler's cpu.so: plain C functions that follow the
 * dispatch ABI (`void S_dispatch(void **buffers, int64_t begin, int64_t end)`
 * runs workgroups [begin, end)), so the runtime's loading, buffer binding,
 * padding and threading are tested without MLIR. The model (see
 * FakeModel.h) is two kernels over rows of x [B, N, D]:
 *
 *   fake_add:          tmp[b,t,:] = x[b,t,:] + bias                 (one row
 *                                                          per workgroup)
 *   fake_pool_lengths: y[b,t,:] = scale * (tmp[b,t,:] + mean over real s of
 *                      tmp[b,s,:]) for real t, else 0; real = s < lengths[b]
 *   fake_pool_mask:    the same with real = mask[b,s] != 0
 *   fake_pool_all:     the same with every token real (no padding input)
 *
 * The second kernel reads every row of its sequence, so a missing barrier
 * between kernels or padding that leaks into the result shows up as wrong
 * numbers. Shapes are compile-time constants, as in generated code, and
 * each kernel K states them in a `K_abi` record as the compiler's kernels
 * do (lib/Manifest/KernelObject.h): the runtime refuses a manifest that
 * disagrees. Linked with -nostartfiles, like the compiler's objects, so the
 * object has no initializers (which the runtime refuses too).
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>

#define B FAKE_BATCH
#define N FAKE_SEQ
#define D FAKE_DIM

/* "LFKABI01", workgroups, arity, then each buffer's bytes. */
#define ABI_MAGIC 0x31304942414b464cULL
#define ROWS ((uint64_t)(B * N))
#define ROW_BYTES ((uint64_t)(B * N * D * 4))

const uint64_t fake_add_abi[] = {ABI_MAGIC, ROWS, 3, ROW_BYTES, D * 4,
                                 ROW_BYTES};
const uint64_t fake_pool_lengths_abi[] = {ABI_MAGIC, ROWS, 4, ROW_BYTES, 4,
                                          B * 4, ROW_BYTES};
const uint64_t fake_pool_mask_abi[] = {ABI_MAGIC, ROWS, 4, ROW_BYTES, 4,
                                       B * N, ROW_BYTES};
const uint64_t fake_pool_all_abi[] = {ABI_MAGIC, ROWS, 3, ROW_BYTES, 4,
                                      ROW_BYTES};

/* "LFKABI02": a packed flag per buffer after the bytes (the first buffer
 * packed); and a record one flag short. They do nothing when run. */
#define ABI_MAGIC_PACKED 0x32304942414b464cULL
const uint64_t fake_packed_abi[] = {
    ABI_MAGIC_PACKED, 1, 2, ROW_BYTES, B * 4, 1, 0};
const uint64_t fake_packed_short_abi[] = {ABI_MAGIC_PACKED, 2,     2,
                                          ROW_BYTES,        B * 4, 1};
void fake_packed_dispatch(void **buffers, int64_t begin, int64_t end) {
  (void)buffers;
  (void)begin;
  (void)end;
}
void fake_packed_short_dispatch(void **buffers, int64_t begin, int64_t end) {
  (void)buffers;
  (void)begin;
  (void)end;
}

void fake_add_dispatch(void **buffers, int64_t begin, int64_t end) {
  const float *x = (const float *)buffers[0];
  const float *bias = (const float *)buffers[1];
  float *tmp = (float *)buffers[2];
  for (int64_t r = begin; r < end; ++r)
    for (int c = 0; c < D; ++c)
      tmp[r * D + c] = x[r * D + c] + bias[c];
}

static void poolRow(const float *tmp, float scale, const uint8_t *real,
                    float *y, int64_t r) {
  int64_t b = r / N, t = r % N;
  float *out = y + r * D;
  if (!real[t]) {
    for (int c = 0; c < D; ++c)
      out[c] = 0.0f;
    return;
  }
  for (int c = 0; c < D; ++c) {
    float sum = 0.0f;
    int count = 0;
    for (int s = 0; s < N; ++s)
      if (real[s]) {
        sum += tmp[(b * N + s) * D + c];
        ++count;
      }
    out[c] = scale * (tmp[r * D + c] + sum / (float)count);
  }
}

void fake_pool_lengths_dispatch(void **buffers, int64_t begin, int64_t end) {
  const float *tmp = (const float *)buffers[0];
  const float *scale = (const float *)buffers[1];
  const int32_t *lengths = (const int32_t *)buffers[2];
  float *y = (float *)buffers[3];
  for (int64_t r = begin; r < end; ++r) {
    uint8_t real[N];
    for (int s = 0; s < N; ++s)
      real[s] = s < lengths[r / N];
    poolRow(tmp, scale[0], real, y, r);
  }
}

void fake_pool_mask_dispatch(void **buffers, int64_t begin, int64_t end) {
  const float *tmp = (const float *)buffers[0];
  const float *scale = (const float *)buffers[1];
  const uint8_t *mask = (const uint8_t *)buffers[2];
  float *y = (float *)buffers[3];
  for (int64_t r = begin; r < end; ++r) {
    uint8_t real[N];
    for (int s = 0; s < N; ++s)
      real[s] = mask[(r / N) * N + s] != 0;
    poolRow(tmp, scale[0], real, y, r);
  }
}

void fake_pool_all_dispatch(void **buffers, int64_t begin, int64_t end) {
  const float *tmp = (const float *)buffers[0];
  const float *scale = (const float *)buffers[1];
  float *y = (float *)buffers[2];
  uint8_t real[N];
  for (int s = 0; s < N; ++s)
    real[s] = 1;
  for (int64_t r = begin; r < end; ++r)
    poolRow(tmp, scale[0], real, y, r);
}

/* Barrier probes: fake_clear zeroes marks, fake_mark sets them slowly (so
 * workgroups are still running when a runtime without a barrier would
 * start the next kernel), fake_check records whether every mark was set
 * when it ran. Run in that order, `ok` must be all ones. */
#define MARKS 64

const uint64_t fake_clear_abi[] = {ABI_MAGIC, MARKS, 1, MARKS * 4};
const uint64_t fake_mark_abi[] = {ABI_MAGIC, MARKS, 1, MARKS * 4};
const uint64_t fake_check_abi[] = {ABI_MAGIC, MARKS, 2, MARKS * 4, MARKS * 4};

void fake_clear_dispatch(void **buffers, int64_t begin, int64_t end) {
  volatile int32_t *marks = (volatile int32_t *)buffers[0];
  for (int64_t r = begin; r < end; ++r)
    marks[r] = 0;
}

void fake_mark_dispatch(void **buffers, int64_t begin, int64_t end) {
  volatile int32_t *marks = (volatile int32_t *)buffers[0];
  for (int64_t r = begin; r < end; ++r) {
    volatile uint64_t spin = 0;
    for (int i = 0; i < 200000; ++i)
      spin += (uint64_t)i;
    marks[r] = 1;
  }
}

void fake_check_dispatch(void **buffers, int64_t begin, int64_t end) {
  volatile const int32_t *marks = (volatile const int32_t *)buffers[0];
  int32_t *ok = (int32_t *)buffers[1];
  for (int64_t r = begin; r < end; ++r) {
    int32_t all = 1;
    for (int i = 0; i < MARKS; ++i)
      all &= marks[i] == 1;
    ok[r] = all;
  }
}

/* The hooks the compiler's objects export for their heap buffers
 * (linformer-cpu-scratch-hooks): the runtime points them at its per-thread
 * cache after loading (ScratchTest checks it on this object). */
void *linformer_scratch_alloc;
void *linformer_scratch_free;
