"""Checks what the runtime did on the fake CUDA driver (FakeCudaDriver.c)
against the artifact's manifest.

    check_cuda_log.py ARTIFACT.lfa LOG RUNS [SESSIONS] [--device-io] [--lengths L1,L2,...] [--graphs]

Expected, for SESSIONS sessions of one module and one weights object that
each ran RUNS times: the weights allocated and uploaded once (shared by the
sessions), every other buffer allocated per session, and per run: every
input copied in, every kernel launched in manifest order with its grid,
block and shared memory and with exactly the allocations of the buffers the
manifest binds (from PTX: the driver counts the entry's parameters; from a
cubin it cannot, and only the launch shape is compared)

--device-io (linformer-run --device-io, one session): the caller's input and
output are allocated after the session's buffers and the input copied once;
the runs copy in only the lengths/mask, the kernels take the caller's
allocations in place of the session's data input and output, nothing is
copied out per run, and the output is copied back once at the end., every output copied out. Prints a summary; exits 1 with
the first difference.

--lengths (the run's real lengths, one per sequence; absent sequences are
length 0): a kernel with a length rule ("rows") launches block x only up to
the last block that holds a real token of some sequence. A length variant
("max_length": [lo, hi]) is launched only when lo < the longest length <= hi
(without --lengths every sequence is n long).

Initializers ("initializer": true) launch once per session, right after its
buffers are allocated, in manifest order, and in no run.

Tensor maps (buffers of kind "tensor_map") are encoded from their source's
allocation and copied to their own right after the session's buffers are
allocated (before the initializers), and again in the first run that binds
the source elsewhere (--device-io: the caller's buffer), after its copies
in.

--graphs (linformer-run --cuda-graphs; every run with the same lengths):
each session's first run captures its launches into a graph (as many as
the run launches) and instantiates it; every run, the first too, launches
that one graph, whose launches the log then lists; no run captures again,
and the session destroys the graph when it is freed."""

import json
import struct
import sys

device_io = "--device-io" in sys.argv
graphs = "--graphs" in sys.argv
lengths = None
argv = sys.argv[1:]
if "--lengths" in argv:
    i = argv.index("--lengths")
    lengths = [int(v) for v in argv[i + 1].split(",")]
    del argv[i:i + 2]
args = [a for a in argv if a not in ("--device-io", "--graphs")]
path, log, runs = args[0], args[1], int(args[2])
sessions = int(args[3]) if len(args) > 3 else 1
data = open(path, "rb").read()
count = struct.unpack("<I", data[12:16])[0]
sections = {}
for i in range(count):
    e = data[16 + 48 * i:64 + 48 * i]
    off, size = struct.unpack("<QQ", e[32:48])
    sections[e[:32].rstrip(b"\0").decode()] = data[off:off + size]
m = json.loads(sections["manifest"])
buffers = m["buffers"]


def nbytes(b):
    if b["kind"] == "tensor_map":
        return 128
    if b["kind"] in ("intermediate", "constant"):
        return b["bytes"]
    size = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "u8": 1}[b["dtype"]]
    for d in b["shape"]:
        size *= d
    return size


def blocks_x(k):
    """Block x's extent for a kernel with a length rule and `lengths`: one
    past the last block whose sequence has a real token in its row tile
    (the rule's grid is row-major over block x)."""
    r = k["rows"]
    g, bd, rd, tile = r["grid"], r["batch"], r["row"], r["tile"]
    inner = 1
    for d in g[rd + 1:]:
        inner *= d
    outer = 1
    for d in g[:rd]:
        outer *= d
    stride = 1
    for d in g[bd + 1:rd]:
        stride *= d
    end = 0
    for o in range(outer):
        seq = (o // stride) % g[bd]
        n = lengths[seq] if seq < len(lengths) else 0
        tiles = min(g[rd], (n + tile - 1) // tile)
        if tiles:
            end = o * g[rd] * inner + tiles * inner
    return end


shortened = 0
skipped = 0
variants = [k["max_length"] for k in m["kernels"] if "max_length" in k]
# The run's longest sequence: every sequence is n long (the main variant's
# hi) without --lengths.
longest = max(lengths) if lengths is not None else max(
    [hi for _, hi in variants], default=0)
events = [line.split() for line in open(log) if line.strip()]
pos = 0


def expect(what, pred):
    global pos
    if pos >= len(events) or not pred(events[pos]):
        got = " ".join(events[pos]) if pos < len(events) else "the end of the log"
        sys.exit(f"event {pos}: expected {what}, got {got}")
    pos += 1
    return events[pos - 1]


code = expect("the module", lambda e: e[0] == "module")[1]
# Kernels with more than 48 KiB of dynamic shared memory opt in once, when
# the module loads.
for k in m["kernels"]:
    if k["shared_bytes"] > 48 * 1024:
        expect(f"the shared-memory opt-in of {k['symbol']}",
               lambda e: e == ["funcattr", k["symbol"], "8", str(k["shared_bytes"])])
weights = [i for i, b in enumerate(buffers) if b["kind"] == "weight"]
others = [i for i, b in enumerate(buffers) if b["kind"] != "weight"]
alloc = {}
for i in weights:
    e = expect(f"alloc of weight {buffers[i]['name']}",
               lambda e: e[0] == "alloc" and int(e[2]) == max(nbytes(buffers[i]), 1))
    alloc[i] = int(e[1])
    expect(f"upload of weight {buffers[i]['name']}",
           lambda e: e[:3] == ["htod", str(alloc[i]), str(nbytes(buffers[i]))])
launches = 0
initialized = 0
encoded = 0
maps = [i for i, b in enumerate(buffers) if b["kind"] == "tensor_map"]


def expect_maps(at, only=None):
    """The maps (of sources in `only`, or all) encoded for the sources'
    allocations in `at`, each copied to its own allocation."""
    global encoded
    for i in maps:
        t = buffers[i]["tensor_map"]
        if only is not None and t["source"] not in only:
            continue
        dtype = {"u8": 0, "i32": 3, "i64": 5, "f16": 6, "f32": 7, "bf16": 9}[t["dtype"]]
        want = ["tensormap", str(at[t["source"]]), str(t.get("offset", 0)),
                str(dtype), str(len(t["dims"])),
                ",".join(map(str, t["dims"])),
                ",".join(map(str, t["strides"])) or "-",
                ",".join(map(str, t["box"])),
                str({0: 0, 32: 1, 64: 2, 128: 3}[t.get("swizzle", 0)])]
        expect(" ".join(want), lambda e: e == want)
        expect(f"the copy of tensor map {buffers[i]['name']}",
               lambda e: e[:3] == ["htod", str(alloc[i]), "128"])
        encoded += 1


def expect_launch(k, grid, bound):
    want = (["launch", k["symbol"]] + [str(v) for v in grid + k["block"]] +
            [str(k["shared_bytes"]), ":"] + [str(bound[b]) for b in k["buffers"]])
    # Tensor maps bound past the parameters the code declares
    # (edit_manifest.py tensor-map-extra=): the driver passes them, the
    # stand-in driver lists the declared ones only.
    trailing = 0
    while (trailing < len(k["buffers"]) and
           buffers[k["buffers"][-1 - trailing]]["kind"] == "tensor_map"):
        trailing += 1
    # From a cubin the stand-in driver cannot count parameters ("?").
    expect("launch " + " ".join(want[1:]),
           lambda e: e == want or (code == "cubin" and e == want[:10] + ["?"])
           or (trailing and e == want[:len(want) - trailing]))


for s in range(sessions):
    for i in others:
        e = expect(f"alloc of {buffers[i]['kind']} {buffers[i]['name']}",
                   lambda e: e[0] == "alloc" and int(e[2]) == max(nbytes(buffers[i]), 1))
        alloc[i] = int(e[1])
    expect_maps(alloc)
    for k in m["kernels"]:
        if k.get("initializer"):
            expect_launch(k, list(k["grid"]), alloc)
            initialized += 1
    bound = dict(alloc)
    if device_io:
        for i in others:
            b = buffers[i]
            if b["kind"] == "input" and "role" not in b:
                e = expect(f"the caller's device input {b['name']}",
                           lambda e: e[0] == "alloc" and int(e[2]) == nbytes(b))
                bound[i] = int(e[1])
                expect(f"its one copy in", lambda e: e[:3] == ["htod", e[1], str(nbytes(b))]
                       and int(e[1]) == bound[i])
        for i in others:
            b = buffers[i]
            if b["kind"] == "output":
                e = expect(f"the caller's device output {b['name']}",
                           lambda e: e[0] == "alloc" and int(e[2]) == nbytes(b))
                bound[i] = int(e[1])
    for r in range(runs):
        for i in others:
            if buffers[i]["kind"] == "input" and not (device_io and "role" not in buffers[i]):
                expect(f"copy-in of {buffers[i]['name']}",
                       lambda e: e[:3] == ["htod", str(alloc[i]), str(nbytes(buffers[i]))])
        if r == 0:
            expect_maps(bound, {i for i in others if bound[i] != alloc[i]})
        if graphs:
            if r == 0:
                expect("the capture of the run's launches", lambda e: e == ["capture"])
                g = expect("the capture's end", lambda e: e[0] == "captured")
                captured = int(g[2])
                inst = expect(f"graph {g[1]} instantiated",
                              lambda e: e[:2] == ["instantiate", g[1]])
                exe = inst[2]
            expect(f"the launch of graph {exe}", lambda e: e == ["graph", exe])
            first = launches
        for k in m["kernels"]:
            grid = list(k["grid"])
            if k.get("initializer"):
                continue
            if "max_length" in k:
                lo, hi = k["max_length"]
                if not lo < longest <= hi:
                    skipped += 1
                    continue
            if lengths is not None and "rows" in k:
                grid[0] = blocks_x(k)
                if grid[0] < k["grid"][0]:
                    shortened += 1
                if grid[0] == 0:
                    continue
            expect_launch(k, grid, bound)
            launches += 1
        if graphs and launches - first != captured:
            sys.exit(f"run {r}: graph {exe} holds {captured} launches, the run "
                     f"expects {launches - first}")
        for i in others:
            if buffers[i]["kind"] == "output" and not device_io:
                expect(f"copy-out of {buffers[i]['name']}",
                       lambda e: e[:3] == ["dtoh", str(alloc[i]), str(nbytes(buffers[i]))])
    if device_io:
        for i in others:
            if buffers[i]["kind"] == "output":
                expect(f"the one copy out of {buffers[i]['name']}",
                       lambda e: e[:3] == ["dtoh", str(bound[i]), str(nbytes(buffers[i]))])
    # The session's buffers are freed when it is; the weights stay while
    # another session uses them. linformer-run frees the caller's device
    # buffers first.
    if graphs:
        caller = {str(bound[i]) for i in others if bound[i] != alloc[i]}
        while pos < len(events) and events[pos][0] == "free" and events[pos][1] in caller:
            pos += 1
        expect(f"graph {exe} destroyed", lambda e: e == ["graph-free", exe])
    while pos < len(events) and events[pos][0] == "free":
        pos += 1
if pos != len(events):
    sys.exit(f"event {pos}: unexpected {' '.join(events[pos])}")
print(f"OK: {code}, {len(weights)} weights uploaded once, {sessions} session(s) x {runs} "
      f"run(s){' with device I/O' if device_io else ''}"
      f"{', its launches captured once as a CUDA graph and replayed' if graphs else ''}, "
      f"{launches} launches of {len(m['kernels'])} kernels bound as the manifest says"
      + (f", {shortened} shortened by their length rules" if lengths is not None else "")
      + (f", {skipped} length variants skipped" if variants else "")
      + (f", {initialized} initializer launches (once a session)" if initialized else "")
      + (f", {encoded} tensor maps encoded and copied" if maps else ""))
