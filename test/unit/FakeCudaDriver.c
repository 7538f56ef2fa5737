/*===- FakeCudaDriver.c - A stand-in libcuda.so.1 for tests without a GPU -===*
 *
 * The runtime opens the CUDA driver with dlopen (LF_CUDA_DRIVER names it).
 * This library implements the entry points the runtime uses, with no GPU:
 * "device memory" is host memory, launches run nothing. It shows what the
 * runtime does on a device (which code it loads, what it allocates, copies
 * and launches with which buffers) and lets tests play the machines the
 * runtime must refuse. FAKE_CUDA selects the machine:
 *
 *   nodevice   cuInit fails with CUDA_ERROR_NO_DEVICE (a driver, no GPU)
 *   sm80       one device of compute capability 8.0 (an A100)
 *   sm90       one device of compute capability 9.0 (an H100); the default
 *
 * FAKE_CUDA_LOG names a file that gets one line per event:
 *   module cubin|ptx            the code handed to cuModuleLoadDataEx
 *   alloc ID BYTES              cuMemAlloc
 *   free ID
 *   htod ID BYTES               host -> device copy into allocation ID
 *   dtoh ID BYTES               device -> host copy out of allocation ID
 *   tensormap ID OFFSET TYPE RANK DIMS STRIDES BOX SWIZZLE
 *                               cuTensorMapEncodeTiled of allocation ID at
 *                               OFFSET bytes: the driver's data type and
 *                               swizzle enums, the lists comma-separated
 *                               (innermost first; STRIDES "-" at rank 1);
 *                               it refuses (CUDA_ERROR_INVALID_VALUE) what
 *                               the driver documents it refuses
 *   launch NAME GX GY GZ BX BY BZ SHARED : ID ID ...
 *                               a kernel and the allocation each of its
 *                               pointer parameters points to (-1: none);
 *                               the parameter count comes from the PTX
 *                               .entry (from a cubin: "?", none listed)
 * With FAKE_CUDA_STREAMS set, streams too (numbered from 1 as created; 0 is
 * the default stream):
 *   stream ID                   cuStreamCreate
 *   destroy ID                  cuStreamDestroy
 *   sync ID                     cuStreamSynchronize
 *   on ID                       the stream of the launch or copy just above
 * CUDA graphs (stream capture), whose launches run nothing either:
 *   capture                     cuStreamBeginCapture_v2; the launches up to
 *                               the capture's end are kept, not logged
 *   captured G N                cuStreamEndCapture: graph G of N launches
 *   instantiate G E             cuGraphInstantiateWithFlags
 *   graph E                     cuGraphLaunch, then a launch line for each
 *                               launch E holds, as they were captured
 *   graph-free E                cuGraphExecDestroy
 * FAKE_CUDA_CAPTURE_FAILS set: cuStreamBeginCapture_v2 fails.
 * A capture follows the streams that join it (cuStreamWaitEvent on an event
 * recorded in it) as the real driver does: each captured launch depends on
 * the launches its stream had reached, and cuStreamEndCapture fails with
 * CUDA_ERROR_STREAM_CAPTURE_UNJOINED (904) unless every launch that no
 * other follows is one the capturing stream reached (every fork joined).
 * With FAKE_CUDA_DEPS set, the captured line is followed by one line per
 * launch of the graph, in capture order (numbered from 0):
 *   node I after J K ...        the launches it depends on directly
 *
 *===----------------------------------------------------------------------===*/

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

enum { kMaxAllocs = 1 << 16 };
static struct {
  char *base;
  size_t size;
} allocs[kMaxAllocs];
static int nallocs;
static int sm = 90;
static const char *code; /* the loaded image, for cuModuleGetFunction */
static size_t codeSize;
struct Function {
  char name[256];
  int params; /* -1: unknown (cubin) */
  int maxShared; /* dynamic shared bytes a launch may ask for */
};

/* Shared memory a block may opt in to (cuFuncSetAttribute), per SM. */
static int sharedOptin(void) { return sm == 90 ? 232448 : 166912; }

/* The functions of the loaded module, owned by it (as in the real driver:
 * cuModuleUnload releases them). */
enum { kMaxFunctions = 1 << 14 };
static struct Function *functions[kMaxFunctions];
static int nfunctions;

static void logf_(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
#include <stdarg.h>
static void logf_(const char *fmt, ...) {
  const char *path = getenv("FAKE_CUDA_LOG");
  if (!path || !*path)
    return;
  FILE *f = fopen(path, "a");
  if (!f)
    return;
  va_list ap;
  va_start(ap, fmt);
  vfprintf(f, fmt, ap);
  va_end(ap);
  fclose(f);
}

/* The allocation `p` points into, or -1. */
enum { kMaxNodes = 4096, kMaxTail = 64 };
struct Graph {
  int id, launches;
  char *text; /* the launch lines, '\n'-separated */
  size_t size;
  char *deps; /* capture only: the node lines */
  size_t depsSize;
  unsigned char followed[kMaxNodes]; /* capture only: a node depends on it */
};
/* The launches of a capture a stream or an event has reached. */
struct Tail {
  int nodes[kMaxTail];
  int n;
};
struct Stream {
  int id;
  struct Graph *capture; /* the graph being captured, or NULL */
  struct Tail tail;
};
struct Event {
  struct Graph *capture; /* recorded in a capture, or NULL */
  struct Tail tail;
};
enum { kMaxStreams = 256 };
static struct Stream *liveStreams[kMaxStreams];
static int ngraphs, nexecs;
static int nstreams;
static int streamId(void *s) { return s ? ((struct Stream *)s)->id : 0; }
static void logStream(const char *event, void *s) {
  if (getenv("FAKE_CUDA_STREAMS"))
    logf_("%s %d\n", event, streamId(s));
}

static int allocOf(CUdeviceptr p) {
  for (int i = 0; i < nallocs; ++i)
    if (allocs[i].base && (char *)(uintptr_t)p >= allocs[i].base &&
        (char *)(uintptr_t)p < allocs[i].base + allocs[i].size)
      return i;
  return -1;
}

CUresult cuInit(unsigned flags) {
  (void)flags;
  const char *mode = getenv("FAKE_CUDA");
  if (mode && strcmp(mode, "nodevice") == 0)
    return 100; /* CUDA_ERROR_NO_DEVICE */
  sm = mode && strcmp(mode, "sm80") == 0 ? 80 : 90;
  return 0;
}
CUresult cuDeviceGetCount(int *n) { *n = 1; return 0; }
CUresult cuDeviceGet(int *d, int ordinal) { *d = ordinal; return ordinal ? 101 : 0; }
CUresult cuDeviceGetAttribute(int *v, int attr, int dev) {
  (void)dev;
  switch (attr) {
  case 16: *v = sm == 90 ? 132 : 108; return 0;      /* SM count */
  case 75: *v = sm / 10; return 0;                    /* major */
  case 76: *v = sm % 10; return 0;                    /* minor */
  case 97: *v = sharedOptin(); return 0; /* shared opt-in */
  default: *v = 0; return 0;
  }
}
CUresult cuDeviceGetName(char *name, int len, int dev) {
  (void)dev;
  snprintf(name, (size_t)len, "Fake CUDA device sm_%d", sm);
  return 0;
}
CUresult cuDevicePrimaryCtxRetain(void **ctx, int dev) {
  (void)dev;
  *ctx = (void *)&nallocs;
  return 0;
}
CUresult cuDevicePrimaryCtxRelease_v2(int dev) { (void)dev; return 0; }
CUresult cuCtxSetCurrent(void *ctx) { (void)ctx; return 0; }
CUresult cuModuleLoadDataEx(void **mod, const void *image, unsigned n,
                            int *options, void **values) {
  (void)n; (void)options; (void)values;
  const char *p = (const char *)image;
  int elf = memcmp(p, "\x7f" "ELF", 4) == 0;
  if (!elf && !strstr(p, ".version"))
    return 218; /* CUDA_ERROR_INVALID_PTX */
  /* The cubin's size is in its ELF header; for this fake it is enough to
   * search the section-header-free prefix up to a generous bound. */
  code = p;
  /* A cubin's size: the ELF64 section header table ends it. */
  if (elf) {
    uint64_t shoff;
    uint16_t shentsize, shnum;
    memcpy(&shoff, p + 0x28, 8);
    memcpy(&shentsize, p + 0x3a, 2);
    memcpy(&shnum, p + 0x3c, 2);
    codeSize = (size_t)(shoff + (uint64_t)shentsize * shnum);
  } else {
    codeSize = strlen(p);
  }
  logf_("module %s\n", elf ? "cubin" : "ptx");
  *mod = (void *)(uintptr_t)p;
  return 0;
}
CUresult cuModuleUnload(void *mod) {
  (void)mod;
  for (int i = 0; i < nfunctions; ++i)
    free(functions[i]);
  nfunctions = 0;
  return 0;
}

CUresult cuModuleGetFunction(void **fn, void *mod, const char *name) {
  (void)mod;
  size_t len = strlen(name);
  if (len >= 256)
    return 1;
  if (nfunctions == kMaxFunctions)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  struct Function *f = calloc(1, sizeof *f);
  memcpy(f->name, name, len);
  f->params = -1;
  f->maxShared = 48 * 1024;
  if (code[0] != '\x7f') {
    /* PTX: ".entry NAME(" then one ".param" per parameter up to ")". */
    char entry[300];
    snprintf(entry, sizeof entry, ".entry %s(", name);
    const char *at = strstr(code, entry);
    if (!at) {
      free(f);
      return 500; /* CUDA_ERROR_NOT_FOUND */
    }
    const char *end = strchr(at, ')');
    f->params = 0;
    for (const char *p = strstr(at, ".param"); p && p < end;
         p = strstr(p + 1, ".param"))
      ++f->params;
  } else {
    /* A cubin: the name is in its string table, NUL-terminated. */
    int found = 0;
    for (size_t i = 1; !found && i + len + 1 < codeSize; ++i)
      found = code[i - 1] == '\0' && memcmp(code + i, name, len + 1) == 0;
    if (!found) {
      free(f);
      return 500;
    }
  }
  functions[nfunctions++] = f;
  *fn = f;
  return 0;
}
/* As the real driver: a launch may use more than 48 KiB of dynamic shared
 * memory only after opting in (attribute 8), up to the device's limit. */
CUresult cuFuncSetAttribute(void *fn, int attr, int value) {
  struct Function *f = fn;
  if (attr != 8 || value < 0 || value > sharedOptin())
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  f->maxShared = value;
  logf_("funcattr %s %d %d\n", f->name, attr, value);
  return 0;
}
CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes) {
  if (nallocs == kMaxAllocs)
    return 2; /* CUDA_ERROR_OUT_OF_MEMORY */
  allocs[nallocs].base = calloc(1, bytes);
  allocs[nallocs].size = bytes;
  *p = (CUdeviceptr)(uintptr_t)allocs[nallocs].base;
  logf_("alloc %d %zu\n", nallocs, bytes);
  ++nallocs;
  return 0;
}
CUresult cuMemFree_v2(CUdeviceptr p) {
  int id = allocOf(p);
  if (id < 0)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  free(allocs[id].base);
  allocs[id].base = NULL;
  logf_("free %d\n", id);
  return 0;
}
CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr dst, const void *src, size_t n,
                              void *stream) {
  int id = allocOf(dst);
  if (id < 0 || (char *)(uintptr_t)dst + n > allocs[id].base + allocs[id].size)
    return 1;
  memcpy((void *)(uintptr_t)dst, src, n);
  logf_("htod %d %zu\n", id, n);
  logStream("on", stream);
  return 0;
}
CUresult cuMemcpyDtoHAsync_v2(void *dst, CUdeviceptr src, size_t n,
                              void *stream) {
  int id = allocOf(src);
  if (id < 0 || (char *)(uintptr_t)src + n > allocs[id].base + allocs[id].size)
    return 1;
  memcpy(dst, (void *)(uintptr_t)src, n);
  logf_("dtoh %d %zu\n", id, n);
  logStream("on", stream);
  return 0;
}
/* Element bytes of the tensor-map data types up to TFLOAT32_FTZ (0 past). */
static unsigned tensorMapElement(int type) {
  static const unsigned bytes[] = {1, 2, 4, 4, 8, 8, 2, 4, 8, 2, 4, 4, 4};
  return type >= 0 && type < 13 ? bytes[type] : 0;
}
CUresult cuTensorMapEncodeTiled(void *map, int type, unsigned rank,
                                void *address, const uint64_t *dims,
                                const uint64_t *strides, const unsigned *box,
                                const unsigned *elementStrides, int interleave,
                                int swizzle, int l2Promotion, int oobFill) {
  unsigned size = tensorMapElement(type);
  CUdeviceptr at = (CUdeviceptr)(uintptr_t)address;
  int id = allocOf(at);
  if (sm < 90 || ((uintptr_t)map & 63) || !size || rank < 1 || rank > 5 ||
      (at & 15) || id < 0 || interleave != 0 || swizzle < 0 || swizzle > 3 ||
      l2Promotion < 0 || l2Promotion > 3 || oobFill < 0 || oobFill > 1)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  uint64_t end = dims[0] * size;
  for (unsigned i = 0; i < rank; ++i) {
    if (dims[i] < 1 || dims[i] > (1ull << 32) || box[i] < 1 || box[i] > 256 ||
        elementStrides[i] < 1 || elementStrides[i] > 8)
      return 1;
    if (i && (strides[i - 1] % 16 || strides[i - 1] >= (1ull << 40)))
      return 1;
    if (i)
      end += (dims[i] - 1) * strides[i - 1];
  }
  unsigned inner = box[0] * size;
  if (inner % 16 || (swizzle && inner > (16u << swizzle)))
    return 1;
  /* What it views lies in its allocation (the real driver cannot tell; a
   * map past it faults the kernel that copies through it). */
  if ((char *)(uintptr_t)at + end > allocs[id].base + allocs[id].size)
    return 1;
  memset(map, 0, 128);
  memcpy(map, &at, sizeof at);
  char line[512];
  int n = snprintf(
      line, sizeof line, "tensormap %d %llu %d %u ", id,
      (unsigned long long)(at - (CUdeviceptr)(uintptr_t)allocs[id].base), type,
      rank);
  for (unsigned i = 0; i < rank; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%llu", i ? "," : "",
                  (unsigned long long)dims[i]);
  n += snprintf(line + n, sizeof line - (size_t)n, rank > 1 ? " " : " -");
  for (unsigned i = 0; i + 1 < rank; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%llu", i ? "," : "",
                  (unsigned long long)strides[i]);
  n += snprintf(line + n, sizeof line - (size_t)n, " ");
  for (unsigned i = 0; i < rank; ++i)
    n += snprintf(line + n, sizeof line - (size_t)n, "%s%u", i ? "," : "",
                  box[i]);
  logf_("%s %d\n", line, swizzle);
  return 0;
}
CUresult cuMemsetD8Async(CUdeviceptr p, unsigned char v, size_t n,
                         void *stream) {
  (void)stream;
  memset((void *)(uintptr_t)p, v, n);
  return 0;
}
CUresult cuStreamCreate(void **s, unsigned flags) {
  (void)flags;
  struct Stream *stream = calloc(1, sizeof *stream);
  stream->id = ++nstreams;
  for (int i = 0; i < kMaxStreams; ++i)
    if (!liveStreams[i]) {
      liveStreams[i] = stream;
      break;
    }
  *s = stream;
  logStream("stream", stream);
  return 0;
}
CUresult cuStreamDestroy_v2(void *s) {
  logStream("destroy", s);
  for (int i = 0; i < kMaxStreams; ++i)
    if (liveStreams[i] == s)
      liveStreams[i] = NULL;
  free(s);
  return 0;
}
CUresult cuStreamSynchronize(void *s) {
  logStream("sync", s);
  return 0;
}
CUresult cuLaunchKernel(void *fn, unsigned gx, unsigned gy, unsigned gz,
                        unsigned bx, unsigned by, unsigned bz, unsigned shared,
                        void *stream, void **params, void **extra) {
  (void)extra;
  const struct Function *f = fn;
  if ((int)shared > f->maxShared)
    return 1; /* CUDA_ERROR_INVALID_VALUE */
  char line[8192];
  int at = snprintf(line, sizeof line, "launch %s %u %u %u %u %u %u %u :",
                    f->name, gx, gy, gz, bx, by, bz, shared);
  if (f->params < 0)
    at += snprintf(line + at, sizeof line - (size_t)at, " ?");
  for (int i = 0; i < f->params && at < (int)sizeof line - 16; ++i)
    at += snprintf(line + at, sizeof line - (size_t)at, " %d",
                   allocOf(*(CUdeviceptr *)params[i]));
  struct Graph *g = stream ? ((struct Stream *)stream)->capture : NULL;
  if (g) {
    /* Captured: kept, with its parameters' allocations as they were, after
     * the launches its stream had reached. */
    struct Stream *st = stream;
    if (g->launches >= kMaxNodes)
      return 2;
    char deps[8192];
    int dn = snprintf(deps, sizeof deps, "node %d after", g->launches);
    for (int i = 0; i < st->tail.n && dn < (int)sizeof deps - 16; ++i) {
      dn += snprintf(deps + dn, sizeof deps - (size_t)dn, " %d",
                     st->tail.nodes[i]);
      g->followed[st->tail.nodes[i]] = 1;
    }
    char *dtext = realloc(g->deps, g->depsSize + (size_t)dn + 2);
    if (!dtext)
      return 2;
    memcpy(dtext + g->depsSize, deps, (size_t)dn);
    dtext[g->depsSize + (size_t)dn] = '\n';
    dtext[g->depsSize + (size_t)dn + 1] = '\0';
    g->deps = dtext;
    g->depsSize += (size_t)dn + 1;
    st->tail.nodes[0] = g->launches;
    st->tail.n = 1;
    size_t len = strlen(line);
    char *text = realloc(g->text, g->size + len + 2);
    if (!text)
      return 2;
    memcpy(text + g->size, line, len);
    text[g->size + len] = '\n';
    text[g->size + len + 1] = '\0';
    g->text = text;
    g->size += len + 1;
    ++g->launches;
    return 0;
  }
  logf_("%s\n", line);
  logStream("on", stream);
  return 0;
}
CUresult cuEventCreate(void **e, unsigned flags) {
  (void)flags;
  *e = calloc(1, sizeof(struct Event));
  return 0;
}
CUresult cuEventRecord(void *e, void *s) {
  struct Event *event = e;
  struct Stream *stream = s;
  event->capture = stream ? stream->capture : NULL;
  event->tail =
      stream && stream->capture ? stream->tail : (struct Tail){{0}, 0};
  return 0;
}
/* A stream waiting on an event recorded in a capture joins the capture,
 * after the launches the event had reached. */
CUresult cuStreamWaitEvent(void *s, void *e, unsigned flags) {
  (void)flags;
  struct Stream *stream = s;
  const struct Event *event = e;
  if (!event->capture)
    return 0;
  if (!stream)
    return 900; /* the legacy stream cannot join a capture */
  if (stream->capture && stream->capture != event->capture)
    return 901;
  stream->capture = event->capture;
  for (int i = 0; i < event->tail.n; ++i) {
    int have = 0;
    for (int j = 0; j < stream->tail.n; ++j)
      have |= stream->tail.nodes[j] == event->tail.nodes[i];
    if (!have) {
      if (stream->tail.n == kMaxTail)
        return 2;
      stream->tail.nodes[stream->tail.n++] = event->tail.nodes[i];
    }
  }
  return 0;
}
CUresult cuEventElapsedTime(float *ms, void *a, void *b) {
  (void)a; (void)b;
  *ms = 0.001f;
  return 0;
}
CUresult cuEventDestroy_v2(void *e) { free(e); return 0; }
CUresult cuGetErrorName(CUresult r, const char **s) {
  *s = r == 100   ? "CUDA_ERROR_NO_DEVICE"
       : r == 218 ? "CUDA_ERROR_INVALID_PTX"
       : r == 500 ? "CUDA_ERROR_NOT_FOUND"
       : r == 904 ? "CUDA_ERROR_STREAM_CAPTURE_UNJOINED"
                  : "CUDA_ERROR_FAKE";
  return 0;
}
CUresult cuGetErrorString(CUresult r, const char **s) {
  *s = r == 100 ? "no CUDA-capable device is detected" : "fake driver error";
  return 0;
}

/* Stream capture and graphs. The legacy default stream cannot be captured
 * (CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED); an executable graph is the
 * captured graph's copy. */
CUresult cuStreamBeginCapture_v2(void *s, int mode) {
  (void)mode;
  if (getenv("FAKE_CUDA_CAPTURE_FAILS"))
    return 1;
  struct Stream *stream = s;
  if (!stream)
    return 900;
  if (stream->capture)
    return 901; /* CUDA_ERROR_STREAM_CAPTURE_INVALIDATED */
  stream->capture = calloc(1, sizeof(struct Graph));
  stream->capture->id = ++ngraphs;
  stream->tail.n = 0;
  logf_("capture\n");
  return 0;
}
CUresult cuStreamEndCapture(void *s, void **graph) {
  struct Stream *stream = s;
  if (!stream || !stream->capture)
    return 1;
  struct Graph *g = stream->capture;
  stream->capture = NULL;
  /* The streams the capture forked leave it with it. */
  for (int i = 0; i < kMaxStreams; ++i)
    if (liveStreams[i] && liveStreams[i]->capture == g)
      liveStreams[i]->capture = NULL;
  /* Every launch nothing follows must be one this stream reached. */
  for (int node = 0; node < g->launches; ++node) {
    int reached = 0;
    for (int j = 0; j < stream->tail.n; ++j)
      reached |= stream->tail.nodes[j] == node;
    if (!g->followed[node] && !reached) {
      free(g->text);
      free(g->deps);
      free(g);
      *graph = NULL;
      return 904; /* CUDA_ERROR_STREAM_CAPTURE_UNJOINED */
    }
  }
  logf_("captured %d %d\n", g->id, g->launches);
  if (getenv("FAKE_CUDA_DEPS") && g->deps)
    logf_("%s", g->deps);
  free(g->deps);
  g->deps = NULL;
  *graph = g;
  return 0;
}
CUresult cuStreamIsCapturing(void *s, int *status) {
  struct Stream *stream = s;
  *status = stream && stream->capture ? 1 : 0;
  return 0;
}
CUresult cuGraphInstantiateWithFlags(void **exec, void *graph,
                                     unsigned long long flags) {
  (void)flags;
  const struct Graph *g = graph;
  struct Graph *e = calloc(1, sizeof *e);
  e->id = ++nexecs;
  e->launches = g->launches;
  e->size = g->size;
  if (g->text) {
    e->text = malloc(g->size + 1);
    memcpy(e->text, g->text, g->size + 1);
  }
  logf_("instantiate %d %d\n", g->id, e->id);
  *exec = e;
  return 0;
}
CUresult cuGraphLaunch(void *exec, void *stream) {
  const struct Graph *e = exec;
  logf_("graph %d\n", e->id);
  for (const char *line = e->text; line && *line;) {
    const char *end = strchr(line, '\n');
    logf_("%.*s\n", (int)(end - line), line);
    logStream("on", stream);
    line = end + 1;
  }
  return 0;
}
CUresult cuGraphExecDestroy(void *exec) {
  struct Graph *e = exec;
  logf_("graph-free %d\n", e->id);
  free(e->text);
  free(e);
  return 0;
}
CUresult cuGraphDestroy(void *graph) {
  struct Graph *g = graph;
  free(g->text);
  free(g);
  return 0;
}
