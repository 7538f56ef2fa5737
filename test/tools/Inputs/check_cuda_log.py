"""Checks what the runtime did on the fake CUDA driver (FakeCudaDriver.c)
against the artifact's manifest.

    check_cuda_log.py ARTIFACT.lfa LOG RUNS [SESSIONS]

Expected, for SESSIONS sessions of one module and one weights object that
each ran RUNS times: the weights allocated and uploaded once (shared by the
sessions), every other buffer allocated per session, and per run: every
input copied in, every kernel launched in manifest order with its grid,
block and shared memory and with exactly the allocations of the buffers the
manifest binds (from PTX: the driver counts the entry's parameters; from a
cubin it cannot, and only the launch shape is compared), every output copied out. Prints a summary; exits 1 with
the first difference."""

import json
import struct
import sys

path, log, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
sessions = int(sys.argv[4]) if len(sys.argv) > 4 else 1
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
    if b["kind"] == "intermediate":
        return b["bytes"]
    size = {"f32": 4, "f16": 2, "bf16": 2, "i32": 4, "i64": 8, "u8": 1}[b["dtype"]]
    for d in b["shape"]:
        size *= d
    return size


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
for s in range(sessions):
    for i in others:
        e = expect(f"alloc of {buffers[i]['kind']} {buffers[i]['name']}",
                   lambda e: e[0] == "alloc" and int(e[2]) == max(nbytes(buffers[i]), 1))
        alloc[i] = int(e[1])
    for r in range(runs):
        for i in others:
            if buffers[i]["kind"] == "input":
                expect(f"copy-in of {buffers[i]['name']}",
                       lambda e: e[:3] == ["htod", str(alloc[i]), str(nbytes(buffers[i]))])
        for k in m["kernels"]:
            want = (["launch", k["symbol"]] + [str(v) for v in k["grid"] + k["block"]] +
                    [str(k["shared_bytes"]), ":"] + [str(alloc[b]) for b in k["buffers"]])
            # From a cubin the stand-in driver cannot count parameters ("?").
            expect("launch " + " ".join(want[1:]),
                   lambda e: e == want or (code == "cubin" and e == want[:10] + ["?"]))
            launches += 1
        for i in others:
            if buffers[i]["kind"] == "output":
                expect(f"copy-out of {buffers[i]['name']}",
                       lambda e: e[:3] == ["dtoh", str(alloc[i]), str(nbytes(buffers[i]))])
    # The session's buffers are freed when it is; the weights stay while
    # another session uses them.
    while pos < len(events) and events[pos][0] == "free":
        pos += 1
if pos != len(events):
    sys.exit(f"event {pos}: unexpected {' '.join(events[pos])}")
print(f"OK: {code}, {len(weights)} weights uploaded once, {sessions} session(s) x {runs} "
      f"run(s), {launches} launches of {len(m['kernels'])} kernels bound as the manifest says")
