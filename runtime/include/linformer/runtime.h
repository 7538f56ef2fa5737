/*===- runtime.h - The linformer runtime C API --------------------*- C -*-===//
 *
 * Loads a compiled Linformer model (an .lfa artifact from linformer-compile),
 * binds its weights (a safetensors file, memory-mapped) and runs it on CPU
 * threads. The C API is the stable boundary: plain C types, opaque handles,
 * and a status return from every function that can fail, so any language
 * with a C FFI can embed it. No MLIR or LLVM is linked.
 *
 * Conventions
 *   - Functions that can fail return an lf_status. NULL means success; any
 *     other value carries a code and a message and must be released with
 *     lf_status_free(). No function throws or aborts on bad input.
 *   - Handles (lf_module, lf_weights, lf_session) are created by *_load /
 *     *_create and released by *_free. A session keeps its module and weights
 *     alive internally, so they may be freed in any order.
 *   - Thread safety: lf_module and lf_weights are immutable after load and may
 *     be used from any number of threads. An lf_session runs one call at a
 *     time (concurrent lf_session_run calls on one session are serialised);
 *     create one session per thread to run concurrently.
 *
 * Example
 *
 *   lf_module *m = NULL; lf_weights *w = NULL; lf_session *s = NULL;
 *   lf_status st = lf_module_load("model.lfa", &m);
 *   if (!st) st = lf_weights_load("model.safetensors", &w);
 *   if (!st) st = lf_session_create(m, w, NULL, &s);
 *   int64_t xshape[3] = {1, 1000, 512}, yshape[3] = {1, 1000, 512};
 *   lf_tensor x = {"x", LF_DTYPE_F32, 3, xshape, xdata};
 *   lf_tensor y = {"y", LF_DTYPE_F32, 3, yshape, ydata};
 *   if (!st) st = lf_session_run(s, &x, 1, &y, 1);
 *   if (st) { fprintf(stderr, "%s\n", lf_status_get_message(st));
 *             lf_status_free(st); }
 *   lf_session_free(s); lf_weights_free(w); lf_module_free(m);
 *
 *===----------------------------------------------------------------------===*/

#ifndef LINFORMER_RUNTIME_H
#define LINFORMER_RUNTIME_H

#include <stddef.h>
#include <stdint.h>

#if defined(LF_RUNTIME_BUILDING)
#define LF_API __attribute__((visibility("default")))
#else
#define LF_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define LF_RUNTIME_VERSION_MAJOR 0
#define LF_RUNTIME_VERSION_MINOR 1
#define LF_RUNTIME_VERSION_PATCH 0

/*===--- Status -----------------------------------------------------------===*/

/* Status codes. Stable numbers; new codes are appended. */
typedef enum lf_status_code {
  LF_OK = 0,
  /* A null pointer, unknown tensor name, wrong dtype, out-of-range value. */
  LF_INVALID_ARGUMENT = 1,
  /* A file could not be opened, mapped, read or written. */
  LF_IO_ERROR = 2,
  /* A file is malformed: artifact, manifest, shared object, safetensors. */
  LF_FORMAT_ERROR = 3,
  /* A well-formed file written for a format version this runtime lacks. */
  LF_VERSION_MISMATCH = 4,
  /* The weights file does not match what the module expects. */
  LF_WEIGHTS_MISMATCH = 5,
  /* A tensor's rank or dimensions do not fit the compiled model. */
  LF_SHAPE_MISMATCH = 6,
  /* Needs something this machine or build lacks (CPU feature, CUDA). */
  LF_UNAVAILABLE = 7,
  /* A bug or resource exhaustion inside the runtime. */
  LF_INTERNAL = 8,
  /* A callback the application supplied failed (the all-reduce of a
   * sequence-parallel session returned nonzero). */
  LF_ABORTED = 9,
  /* Not a code: widens the enum to 32 bits so that any int32 value passed
   * through it is representable (the runtime validates, never assumes). */
  LF_STATUS_CODE_FORCE_32BIT = 0x7fffffff
} lf_status_code;

/* NULL is success. Otherwise owned by the caller: release with
 * lf_status_free. */
typedef struct lf_status_s *lf_status;

/* The code of `status` (LF_OK for NULL). */
LF_API lf_status_code lf_status_get_code(lf_status status);
/* The message ("" for NULL); valid until lf_status_free(status). */
LF_API const char *lf_status_get_message(lf_status status);
/* Releases `status`; NULL is ignored. */
LF_API void lf_status_free(lf_status status);
/* "LF_OK", "LF_SHAPE_MISMATCH", ...; "LF_UNKNOWN" for other values. */
LF_API const char *lf_status_code_name(lf_status_code code);

/* "0.1.0": the runtime library's version. */
LF_API const char *lf_runtime_version(void);

/*===--- Tensors ----------------------------------------------------------===*/

/* Element types. The numbers match the manifest's dtype order. */
typedef enum lf_dtype {
  LF_DTYPE_F32 = 0,
  LF_DTYPE_F16 = 1,
  LF_DTYPE_BF16 = 2,
  LF_DTYPE_I32 = 3,
  LF_DTYPE_I64 = 4,
  LF_DTYPE_U8 = 5,
  LF_DTYPE_FORCE_32BIT = 0x7fffffff /* not a dtype; see lf_status_code */
} lf_dtype;

/* Bytes per element; 0 for an unknown value. */
LF_API size_t lf_dtype_size(lf_dtype dtype);
/* "f32", "i32", ...; "?" for an unknown value. */
LF_API const char *lf_dtype_name(lf_dtype dtype);

/* A caller's tensor: dense, row-major, little-endian. The runtime never
 * keeps the pointers past the call that receives them; input data is only
 * read. */
typedef struct lf_tensor {
  const char *name;
  lf_dtype dtype;
  int32_t rank;
  const int64_t *shape; /* rank entries */
  void *data;
} lf_tensor;

/*===--- Modules ----------------------------------------------------------===*/

typedef struct lf_module_s lf_module;

/* Which of a module's buffers lf_module_count / lf_module_describe list. */
typedef enum lf_io_kind {
  LF_IO_INPUT = 0,
  LF_IO_OUTPUT = 1,
  LF_IO_WEIGHT = 2,
  LF_IO_KIND_FORCE_32BIT = 0x7fffffff /* not a kind; see lf_status_code */
} lf_io_kind;

/* What the runtime fills an input with when the caller does not pass it. */
typedef enum lf_input_role {
  LF_ROLE_NONE = 0,                /* a data input the caller must pass */
  LF_ROLE_LENGTHS = 1,             /* i32 [b]: real tokens per sequence */
  LF_ROLE_MASK = 2,                /* u8 [b, n]: nonzero = real token */
  LF_ROLE_FORCE_32BIT = 0x7fffffff /* not a role; see lf_status_code */
} lf_input_role;

/* A module buffer's signature; pointers stay valid while the module lives. */
typedef struct lf_tensor_desc {
  const char *name;
  lf_dtype dtype;
  int32_t rank;
  const int64_t *shape;
  lf_input_role role;
} lf_tensor_desc;

/* Loads and validates the artifact at `path`: the container, the manifest,
 * the target (CPU features the kernels need must be present: else
 * LF_UNAVAILABLE), and the kernels (every `<symbol>_dispatch` must be
 * exported: else LF_FORMAT_ERROR naming the symbol).
 * A cuda artifact runs on CUDA device 0 through the driver API, which is
 * opened here (libcuda.so.1, or the library the environment variable
 * LF_CUDA_DRIVER names): without a driver, a device, or a device that can
 * run the artifact's code, the status is LF_UNAVAILABLE saying which. Its
 * sessions keep inputs, outputs and intermediates on the device and copy
 * the caller's host tensors in and out; weights are uploaded once per
 * module and weights object, shared by its sessions. */
LF_API lf_status lf_module_load(const char *path, lf_module **out_module);
/* lf_module_load for one device: "cpu" or "cuda", or NULL/"" for the best:
 * an artifact with both targets (linformer-compile --target=cpu,cuda)
 * loads its cuda code where the machine can run it and its cpu code
 * otherwise (lf_module_device then says why cuda was not used);
 * lf_module_load is the same with NULL. Asking for a device the artifact
 * has no code for is LF_INVALID_ARGUMENT. */
LF_API lf_status lf_module_load_on(const char *path, const char *device,
                                   lf_module **out_module);
/* Releases the caller's reference; NULL is ignored. */
LF_API void lf_module_free(lf_module *module);

/* Number of inputs, outputs or weights. */
LF_API lf_status lf_module_count(const lf_module *module, lf_io_kind kind,
                                 size_t *out_count);
/* Signature of the `index`-th input, output or weight (manifest order). */
LF_API lf_status lf_module_describe(const lf_module *module, lf_io_kind kind,
                                    size_t index, lf_tensor_desc *out_desc);
/* The compiled batch size b and sequence length n of the sequence inputs
 * ([b, n, ...]); both 0 when the model has none. Both are maxima for a
 * model with a lengths input: a run may pass 1..b sequences of 1..n tokens
 * and pays for the real tokens (docs/Runtime.md); other models take
 * exactly b sequences. */
LF_API lf_status lf_module_sequence_shape(const lf_module *module,
                                          int64_t *out_batch,
                                          int64_t *out_seq_len);
/* The ranks a sequence-parallel module splits a sequence over (an artifact
 * compiled from a model with "sequence_parallel": P; docs/Runtime.md,
 * "Sequence parallelism"), or 0 for any other module. Such a module runs
 * one rank's n tokens of a sequence of n * P; its sessions need a rank and
 * an all-reduce (lf_session_options). */
LF_API lf_status lf_module_sequence_parallel(const lf_module *module,
                                             int64_t *out_ranks);
/* The manifest JSON text; valid while the module lives. */
LF_API lf_status lf_module_manifest(const lf_module *module,
                                    const char **out_json);
/* Where the module's kernels run, in words: "cpu (znver4)", or the CUDA
 * device ("NVIDIA H100 80GB HBM3 (sm_90, 132 SMs, cubin)"); valid while the
 * module lives. */
LF_API lf_status lf_module_device(const lf_module *module,
                                  const char **out_device);

/*===--- Weights ----------------------------------------------------------===*/

typedef struct lf_weights_s lf_weights;

/* Maps and validates a safetensors file (read-only, zero-copy). */
LF_API lf_status lf_weights_load(const char *path, lf_weights **out_weights);
/* Releases the caller's reference; NULL is ignored. */
LF_API void lf_weights_free(lf_weights *weights);
/* Checks that `weights` holds every weight `module` expects with the same
 * dtype and shape (extra tensors are ignored; a sequence-parallel module's
 * split weight, E or F, may be the whole tensor or one rank's columns).
 * LF_WEIGHTS_MISMATCH names each weight that is missing or differs.
 * lf_session_create runs it too. */
LF_API lf_status lf_weights_check(const lf_module *module,
                                  const lf_weights *weights);

/*===--- Sessions ---------------------------------------------------------===*/

typedef struct lf_session_s lf_session;

/* The all-reduce a sequence-parallel session calls: sums `count` elements
 * of `dtype` at `data` (the session's buffer, host memory) over every rank,
 * in place, so that each rank ends with the sum; returns 0 on success and
 * anything else on failure. Each rank's session calls it the same number of
 * times in the same order (once or twice per layer, from the thread that
 * runs lf_session_run), so collectives of any transport match up
 * (torch.distributed's all_reduce, MPI_Allreduce, NCCL through a host
 * copy). A transport that can fail or wait forever should bound its wait:
 * the run cannot interrupt the call. */
typedef int32_t (*lf_all_reduce_fn)(void *user_data, void *data,
                                     int64_t count, lf_dtype dtype);

typedef struct lf_session_options {
  /* sizeof(lf_session_options), set by lf_session_options_init: lets a
   * newer runtime read options from code built against an older header. */
  uint32_t struct_size;
  /* Threads that run kernels, the calling thread included; 0 = one per
   * hardware thread. */
  int32_t num_threads;
  /* Nonzero: time every kernel of every run (see lf_session_profile); two
   * clock reads per kernel. 0 by default. */
  int32_t profile;
  /* A cuda module only: the CUstream (carried in a void *) of device 0's
   * primary context that the session's copies and launches go on, so that
   * they are ordered with the caller's own work on it (and a stream capture
   * records them into a CUDA graph). The caller keeps it alive for the
   * session's lifetime and destroys it after. NULL (the default): the
   * session creates a stream of its own. A non-NULL stream for a cpu
   * module is LF_INVALID_ARGUMENT. */
  void *cuda_stream;
  /* Microseconds the workers wait for the next kernel, and the caller for
   * the workers at a kernel's end, spinning before they sleep: kernels then
   * start without a wake-up through the OS each (tens of microseconds on a
   * VM). -1 (the default): 200. 0: sleep at once, burning no CPU between
   * kernels (for sessions that share their cores with other busy threads).
   * At most 1000000; anything else below -1 or above is
   * LF_INVALID_ARGUMENT. */
  int32_t spin_us;
  /* A sequence-parallel module only (lf_module_sequence_parallel > 0):
   * this session's rank, 0 <= rank < ranks, and the ranks, which must be
   * the module's. The rank holds tokens [rank * n, (rank + 1) * n) of each
   * sequence, and takes those columns of a split weight (E, F) that the
   * weights file holds whole. 0 and 0 by default; other modules take
   * ranks 0 or 1 (and rank 0) only. */
  int32_t rank;
  int32_t ranks;
  /* A sequence-parallel module only, required there: the all-reduce, and
   * the pointer it gets as `user_data`. Its failure fails the run with
   * LF_ABORTED. */
  lf_all_reduce_fn all_reduce;
  void *all_reduce_user_data;
  /* A cuda module only: 1, each run's kernel launches are one CUDA
   * graph launch. The launches are captured from the session's stream
   * into a graph the first time a run has that graph's launch shapes
   * (which kernels run, and with how many blocks: they follow the
   * longest sequence's length) and device bindings (device I/O's
   * addresses), and replayed by later runs that have them; a session
   * keeps up to 64 graphs, dropping the least recently replayed. A run
   * on a caller's stream that the caller is capturing launches the
   * kernels into the caller's graph instead. Not with profile (a profiled
   * run times each kernel on its own): LF_INVALID_ARGUMENT, as for a cpu
   * module; LF_UNAVAILABLE with a driver older than CUDA 11.4. 0: one
   * cuLaunchKernel per kernel. -1 (the default): graphs for the runs whose
   * inputs and outputs are the caller's device memory, unless profile is
   * set or the driver lacks graphs (then launches, silently); runs with
   * host tensors launch each kernel (on an H200, 2026-12-04, graphs made
   * device runs of the bf16 encoder 1.12x faster and of a batch of mixed
   * lengths 2.9x, while runs copying pageable host tensors gained
   * nothing). */
  int32_t cuda_graphs;
  /* A cuda module's graphs only: 2 or more, a graph's kernels go on up to
   * this many branches (streams forked from the session's and joined back
   * within the capture), a kernel waiting only for the earlier kernels it
   * conflicts with: one writes a buffer the other binds, by the
   * artifact's record of what each kernel writes (a kernel without the
   * record conflicts with every kernel it shares a buffer with). Kernels
   * with nothing between them may then run at once (a Linformer layer's
   * Q projection beside E X, its K beside its V). 0 or 1 (the default):
   * one chain in launch order. LF_INVALID_ARGUMENT above 16, with a cpu
   * module, or with cuda_graphs 0. Not yet timed on a GPU (2026-12-07),
   * so not the default. */
  int32_t cuda_graph_branches;
} lf_session_options;

/* Fills `options` with defaults. */
LF_API void lf_session_options_init(lf_session_options *options);

/* Creates a session: checks the weights, plans and allocates the padded
 * input, output and intermediate buffers (64-byte aligned, reused by every
 * run) and starts num_threads - 1 worker threads. `options` may be NULL. */
LF_API lf_status lf_session_create(const lf_module *module,
                                   const lf_weights *weights,
                                   const lf_session_options *options,
                                   lf_session **out_session);
/* Stops the workers and releases the buffers; NULL is ignored. */
LF_API void lf_session_free(lf_session *session);
/* The number of threads that run kernels (calling thread included). */
LF_API lf_status lf_session_num_threads(const lf_session *session,
                                        int32_t *out_threads);

/* Runs the model.
 *
 * Inputs are matched by name. Sequence inputs (rank >= 2, compiled shape
 * [b, n, ...]) may be passed with L <= n tokens ([b, L, ...]); all must agree
 * on L. They are copied into zero-padded buffers. When L < n the model must
 * have a lengths or mask input; the runtime fills it:
 *   - lengths (i32 [b]): from the caller's tensor of that name (i32 or i64
 *     [b], each value in [1, L]; [0, L] on a rank of a sequence-parallel
 *     module), else L for every sequence; a caller "mask"
 *     tensor [b, L] that is a prefix mask is converted to lengths;
 *   - mask (u8 [b, n]): from the caller's tensor of that name (u8 [b, L],
 *     each row with at least one nonzero), else ones for the first L
 *     tokens; a caller "lengths" tensor is converted to a prefix mask.
 * Outputs are matched by name; omitted outputs are computed and dropped.
 * A sequence output is passed as [b, L, ...] (the first L rows are copied
 * out) or [b, n, ...] (all rows). Other tensors must match exactly.
 *
 * When L == n and a caller buffer is aligned to its element size, it is
 * bound directly (no copy): input and output buffers must not overlap.
 *
 * Packed (varlen) input, as FlashAttention's: with an input named
 * "cu_seqlens" (i32 or i64 [b + 1]: 0, then where each sequence ends, each
 * sequence 1..n tokens; 0..n on a rank of a sequence-parallel module,
 * which may hold none of a sequence), every sequence input is passed as
 * [T, ...] (its
 * batch and token axes merged, T = cu_seqlens[b] real tokens, no padding)
 * and every sequence output as [T, ...] too: sequence i is rows
 * [cu_seqlens[i], cu_seqlens[i + 1]) of each. The model needs a lengths or
 * mask input, which the runtime fills from the offsets (so neither may be
 * given too); b follows the batch rules above. The runtime copies each
 * sequence into its padded buffers and the real rows back out.
 *
 * Errors: LF_INVALID_ARGUMENT (unknown or repeated name, missing input,
 * wrong dtype, null data, lengths out of range, cu_seqlens with lengths or
 * mask), LF_SHAPE_MISMATCH (rank, batch, L > n, L < n without a
 * lengths/mask input, other dimensions, cu_seqlens not starting at 0 or a
 * sequence outside 1..n tokens, a packed tensor not [T, ...]). Nothing is
 * written to the outputs when a call fails its checks. */
LF_API lf_status lf_session_run(lf_session *session, const lf_tensor *inputs,
                                size_t num_inputs, const lf_tensor *outputs,
                                size_t num_outputs);

/*===--- Device memory (cuda modules) -------------------------------------===*/

/* Device memory in the context a cuda module runs in (device 0's primary
 * context), for callers without their own CUDA code; a caller with its own
 * CUDA code may pass its device pointers in that context instead. Addresses
 * are CUDA device pointers (CUdeviceptr) carried in a void *. For a cpu
 * module these are LF_INVALID_ARGUMENT. */
LF_API lf_status lf_device_alloc(const lf_module *module, size_t bytes,
                                 void **out_device_ptr);
LF_API lf_status lf_device_free(const lf_module *module, void *device_ptr);
LF_API lf_status lf_device_copy_to(const lf_module *module, void *device_dst,
                                   const void *host_src, size_t bytes);
LF_API lf_status lf_device_copy_from(const lf_module *module, void *host_dst,
                                     const void *device_src, size_t bytes);

/* lf_session_run with the data inputs and the outputs in device memory (a
 * cuda module only): their `data` are device pointers, bound as they are
 * (no copy) for the run, so they must hold the compiled shape exactly
 * ([b, n, ...]: no padding on the device) and not overlap. The lengths or
 * mask input, when given, stays a host tensor, as in lf_session_run. The
 * runtime cannot see a device allocation's size: a smaller one is the
 * caller's error, like a short host buffer.
 * On a session with the caller's cuda_stream (and without profiling) the
 * run is enqueued on that stream and returns without waiting: the outputs
 * are ready once the stream reaches that point, and a kernel fault shows at
 * the caller's next synchronization. Otherwise the run waits for its
 * kernels and reports a fault as its own error. */
LF_API lf_status lf_session_run_device(lf_session *session,
                                       const lf_tensor *inputs,
                                       size_t num_inputs,
                                       const lf_tensor *outputs,
                                       size_t num_outputs);

/*===--- Profiling --------------------------------------------------------===*/

/* The times one kernel took in the runs of a profiling session. */
typedef struct lf_kernel_profile {
  const char *symbol; /* the kernel's name; valid while the session lives */
  const char *key;    /* its schedule's shape key, "" if the manifest has none */
  int64_t workgroups;
  int64_t runs;       /* timed runs since creation or the last reset */
  double min_ms;
  double median_ms;
  double mean_ms;
  double flops;       /* multiply-add FLOPs of one run (2 per multiply-add),
                         from the manifest, times the share of workgroups
                         the last run ran (length rules); a reduction that
                         stops at the lengths is still counted at n; 0 when
                         unknown */
} lf_kernel_profile;

/* Number of kernels a run launches (the manifest's kernels). */
LF_API lf_status lf_session_kernel_count(const lf_session *session,
                                         size_t *out_count);
/* The `index`-th kernel's times (launch order). LF_INVALID_ARGUMENT when the
 * session was created without `profile` or `index` is out of range. Safe to
 * call while another thread runs the session (it waits for the run). */
LF_API lf_status lf_session_profile(lf_session *session, size_t index,
                                    lf_kernel_profile *out_profile);
/* Whether the `index`-th kernel is an initializer (1) or not (0): a kernel
 * that the session ran once, when it was created, to make constants from
 * the weights (a weight's packed panels, linformer-compile
 * --prepack-weights), and that no run launches. Its profile keeps that one
 * run (lf_session_profile_reset leaves it). Works without `profile`. */
LF_API lf_status lf_session_kernel_initializer(const lf_session *session,
                                               size_t index,
                                               int *out_initializer);
/* Forgets the times recorded so far (e.g. after warm-up runs); an
 * initializer keeps its one run. */
LF_API lf_status lf_session_profile_reset(lf_session *session);

/* Bytes the session's last run copied on the host between the caller's
 * tensors and its own buffers: `in_bytes` from the inputs, `out_bytes` into
 * the outputs (zeroed padding rows are not counted). The CPU kernels of a
 * model with a lengths input index the caller's tensors in place where they
 * can (docs/Runtime.md, "Copies"): a packed input and output, one
 * sequence, or sequences that fill the caller's rows, aligned to their
 * element size, copy 0 bytes. */
LF_API lf_status lf_session_copied_bytes(lf_session *session, int64_t *in_bytes,
                                         int64_t *out_bytes);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* LINFORMER_RUNTIME_H */
