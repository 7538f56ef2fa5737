"""Checks the order a captured CUDA graph puts its launches in against
what the artifact's kernels read and write (FakeCudaDriver.c with
FAKE_CUDA_DEPS set, linformer-run --cuda-graphs).

    check_cuda_deps.py ARTIFACT.lfa LOG

The log's first capture: its "node I after J K" lines (the launches each
depends on directly) and the launch lines of the first replay of that graph
(the same launches, in capture order, with the allocation each pointer
parameter points to). Two launches conflict when some allocation is bound
by both and one of them may write it there (the manifest's "writes"; a
kernel without them may write every buffer it binds). Every conflicting
pair must be ordered: the later launch reaches the earlier one through the
"after" edges. Prints the launches, the edges, the pairs of launches left
unordered (free to run at once) and the longest chain; exits 1 naming the
first conflicting pair left unordered."""

import json
import sys

from edit_manifest import read_sections

path, log = sys.argv[1], sys.argv[2]
m = json.loads(dict(read_sections(open(path, "rb").read()))["manifest"])
kernels = {k["symbol"]: k for k in m["kernels"]}

lines = open(log).read().splitlines()
start = next((i for i, l in enumerate(lines) if l.startswith("captured ")), None)
if start is None:
    sys.exit("no capture in the log")
deps = []
i = start + 1
while i < len(lines) and lines[i].startswith("node "):
    words = lines[i].split()
    if int(words[1]) != len(deps) or words[2] != "after":
        sys.exit("unexpected node line: " + lines[i])
    deps.append([int(w) for w in words[3:]])
    i += 1
if not deps:
    sys.exit("no node lines after the capture (FAKE_CUDA_DEPS unset?)")
while i < len(lines) and not lines[i].startswith("graph "):
    i += 1
launches = []
i += 1
while i < len(lines) and len(launches) < len(deps):
    if lines[i].startswith("launch "):
        head, _, tail = lines[i].partition(" : ")
        launches.append((head.split()[1], [int(w) for w in tail.split()]))
    i += 1
if len(launches) != len(deps):
    sys.exit("the graph's replay lists %d launches, its capture %d" %
             (len(launches), len(deps)))


def accesses(n):
    """(allocation, written) for each pointer parameter of launch n."""
    name, allocs = launches[n]
    k = kernels[name]
    writes = k.get("writes")
    out = []
    for buf, alloc in zip(k["buffers"], allocs):
        out.append((alloc, writes is None or buf in writes))
    return out


reach = []
for n, after in enumerate(deps):
    r = set()
    for d in after:
        if d >= n:
            sys.exit("launch %d depends on a later launch %d" % (n, d))
        r.add(d)
        r |= reach[d]
    reach.append(r)

free = 0
for b in range(len(launches)):
    mine = accesses(b)
    for a in range(b):
        conflict = any(x == y and (wx or wy) for x, wx in accesses(a)
                       for y, wy in mine)
        if a in reach[b]:
            continue
        if conflict:
            sys.exit("launch %d (%s) does not wait for launch %d (%s), and "
                     "they bind an allocation one of them writes" %
                     (b, launches[b][0], a, launches[a][0]))
        free += 1
chain = [1] * len(deps)
for n, after in enumerate(deps):
    for d in after:
        chain[n] = max(chain[n], chain[d] + 1)
print("OK: %d launches, %d edges, %d pairs free to run at once, longest "
      "chain %d" % (len(deps), sum(len(d) for d in deps), free, max(chain)))
