/*===- CudaStreamProbe.c - a session on the caller's own CUDA stream -------===*
 *
 * linformer-cuda-stream-probe ARTIFACT WEIGHTS device|host|capture
 *
 * Plays an application with CUDA code of its own, through the C API only:
 * it opens the driver itself (LF_CUDA_DRIVER, else libcuda.so.1), creates a
 * stream in device 0's primary context and hands it to a session
 * (lf_session_options.cuda_stream). "device": one lf_session_run_device on
 * buffers from lf_device_alloc, which must be enqueued on that stream
 * without the runtime waiting; "host": one lf_session_run, which waits.
 * With the stand-in driver (test/unit/FakeCudaDriver.c, FAKE_CUDA_STREAMS)
 * the log shows which stream each launch went on and who synchronized.
 * "capture": a session with cuda_graphs; the caller captures its stream
 * into a graph of its own around one lf_session_run_device (whose launches
 * must go into that graph: captures do not nest), then runs outside it:
 * once (the session's own graph), once into another output buffer (a
 * second graph, its bindings differ) and once into the first again (the
 * first graph, replayed).
 * Prints the runtime's status on failure; exit 1 then, 2 for bad usage.
 *
 *===----------------------------------------------------------------------===*/

#include "linformer/runtime.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int (*InitFn)(unsigned);
typedef int (*CtxRetainFn)(void **, int);
typedef int (*CtxSetFn)(void *);
typedef int (*StreamCreateFn)(void **, unsigned);
typedef int (*StreamFn)(void *);
typedef int (*BeginCaptureFn)(void *, int);
typedef int (*EndCaptureFn)(void *, void **);
typedef int (*GraphFn)(void *);

static int failed(lf_status st) {
  if (!st)
    return 0;
  printf("%s: %s\n", lf_status_code_name(lf_status_get_code(st)),
         lf_status_get_message(st));
  lf_status_free(st);
  return 1;
}

static void *sym(void *lib, const char *name) {
  void *p = dlsym(lib, name);
  if (!p) {
    printf("the driver has no %s\n", name);
    exit(1);
  }
  return p;
}

int main(int argc, char **argv) {
  if (argc != 4 || (strcmp(argv[3], "device") && strcmp(argv[3], "host") &&
                    strcmp(argv[3], "capture"))) {
    fprintf(stderr, "usage: %s ARTIFACT WEIGHTS device|host|capture\n",
            argv[0]);
    return 2;
  }
  int capture = strcmp(argv[3], "capture") == 0;
  int onDevice = capture || strcmp(argv[3], "device") == 0;
  const char *path = getenv("LF_CUDA_DRIVER");
  void *lib = dlopen(path && *path ? path : "libcuda.so.1", RTLD_NOW);
  if (!lib) {
    printf("no CUDA driver: %s\n", dlerror());
    return 1;
  }
  void *ctx = NULL, *stream = NULL;
  if (((InitFn)sym(lib, "cuInit"))(0) ||
      ((CtxRetainFn)sym(lib, "cuDevicePrimaryCtxRetain"))(&ctx, 0) ||
      ((CtxSetFn)sym(lib, "cuCtxSetCurrent"))(ctx) ||
      ((StreamCreateFn)sym(lib, "cuStreamCreate"))(&stream, 0)) {
    printf("the driver refused to make a stream\n");
    return 1;
  }

  lf_module *m = NULL;
  lf_weights *w = NULL;
  lf_session *s = NULL;
  lf_session_options options;
  lf_session_options_init(&options);
  options.cuda_stream = stream;
  options.cuda_graphs = capture;
  if (failed(lf_module_load(argv[1], &m)) ||
      failed(lf_weights_load(argv[2], &w)) ||
      failed(lf_session_create(m, w, &options, &s)))
    return 1;

  /* The data input and the output, whole ([b, n, d_model]). */
  lf_tensor_desc in, out;
  size_t ins = 0;
  if (failed(lf_module_count(m, LF_IO_INPUT, &ins)))
    return 1;
  in.name = NULL;
  for (size_t i = 0; i < ins; ++i) {
    lf_tensor_desc d;
    if (failed(lf_module_describe(m, LF_IO_INPUT, i, &d)))
      return 1;
    if (d.role == LF_ROLE_NONE)
      in = d;
  }
  if (!in.name || failed(lf_module_describe(m, LF_IO_OUTPUT, 0, &out)))
    return 1;
  size_t inBytes = lf_dtype_size(in.dtype), outBytes = lf_dtype_size(out.dtype);
  for (int32_t r = 0; r < in.rank; ++r)
    inBytes *= (size_t)in.shape[r];
  for (int32_t r = 0; r < out.rank; ++r)
    outBytes *= (size_t)out.shape[r];
  void *x = calloc(1, inBytes), *y = calloc(1, outBytes);
  lf_tensor xt = {in.name, in.dtype, in.rank, in.shape, x};
  lf_tensor yt = {out.name, out.dtype, out.rank, out.shape, y};
  if (onDevice) {
    void *dx = NULL, *dy = NULL;
    if (failed(lf_device_alloc(m, inBytes, &dx)) ||
        failed(lf_device_alloc(m, outBytes, &dy)) ||
        failed(lf_device_copy_to(m, dx, x, inBytes)))
      return 1;
    xt.data = dx;
    yt.data = dy;
    if (capture) {
      /* Relaxed mode (2): the runtime's own calls while the caller
       * captures are none of the capture's business. */
      void *graph = NULL;
      printf("caller captures its stream\n");
      fflush(stdout);
      if (((BeginCaptureFn)sym(lib, "cuStreamBeginCapture_v2"))(stream, 2) ||
          failed(lf_session_run_device(s, &xt, 1, &yt, 1)) ||
          ((EndCaptureFn)sym(lib, "cuStreamEndCapture"))(stream, &graph) ||
          ((GraphFn)sym(lib, "cuGraphDestroy"))(graph))
        return 1;
    }
    printf("run on the caller's stream\n");
    fflush(stdout);
    if (failed(lf_session_run_device(s, &xt, 1, &yt, 1)))
      return 1;
    if (capture) {
      void *dy2 = NULL;
      lf_tensor yt2 = yt;
      if (failed(lf_device_alloc(m, outBytes, &dy2)))
        return 1;
      yt2.data = dy2;
      if (failed(lf_session_run_device(s, &xt, 1, &yt2, 1)) ||
          failed(lf_session_run_device(s, &xt, 1, &yt, 1)) ||
          ((StreamFn)sym(lib, "cuStreamSynchronize"))(stream) ||
          failed(lf_device_free(m, dy2)))
        return 1;
    }
    /* The run was enqueued: the caller waits before it reads. */
    printf("caller synchronizes\n");
    fflush(stdout);
    if (((StreamFn)sym(lib, "cuStreamSynchronize"))(stream) ||
        failed(lf_device_copy_from(m, y, dy, outBytes)) ||
        failed(lf_device_free(m, dx)) || failed(lf_device_free(m, dy)))
      return 1;
  } else {
    printf("run on the caller's stream\n");
    fflush(stdout);
    if (failed(lf_session_run(s, &xt, 1, &yt, 1)))
      return 1;
  }
  lf_session_free(s);
  ((StreamFn)sym(lib, "cuStreamDestroy_v2"))(stream);
  lf_weights_free(w);
  lf_module_free(m);
  free(x);
  free(y);
  printf("done\n");
  return 0;
}
