#!/usr/bin/env python3
"""64 x 64 warp tiles in a CUDA schedule file (issue 69 item 1).

    wide_warp_tiles.py IN.json OUT.json

IN is what `linformer-compile --target=cuda --print-schedule` wrote. Every
staged mma.sync contraction record (not wgmma) with 4 x 4 mma tiles a warp
(64 x 32) and an even number of warps along n gets 4 x 8 tiles (64 x 64,
128 f32 accumulators a lane) and half the warps along n, so its block tile
stays the same; its chunk is held to 32 k values (a warp's fragments of a
64-deep chunk and 128 accumulators did not fit 255 registers), or 16
where the operands prefetched through registers would take more than 16
words a thread (the compiler's kMaxPrefetchWords, which refuses such a
record). The selection never takes them until a GPU has timed them:
scripts/gpu-bundle builds its -warptiles64 twins from this file with
--schedule. Exits 1, writing nothing, when no record qualifies."""
import json
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
f = json.load(open(src))
changed = 0
pattern = re.compile(r"warp_tiles = \[4, 4\], split = (\d+), warps = \[(\d+), (\d+)\], chunk = (\d+)")
for k in f["kernels"]:
    s = k["schedule"]
    if not s.startswith("#linformer.cuda_schedule<") or "wgmma = true" in s:
        continue
    m = pattern.search(s)
    if not m:
        continue
    split, wm, wn, chunk = (int(g) for g in m.groups())
    if wm == 0 or wn % 2:
        continue
    # The operands prefetched through registers (async false) are at most
    # 16 32-bit words a thread a chunk (two 16-bit values a word): with half
    # the threads, a shorter chunk where needed, else the record stays.
    asyncs = re.search(r"async = \[(\w+), (\w+)\]", s).groups()
    threads, bm, bn = 32 * wm * (wn // 2), 64 * wm, 64 * (wn // 2)
    def fits(c):
        words = [bm * c // 2, c * bn // 2]
        return sum(w for a, w in zip(asyncs, words) if a == "false") <= 16 * threads
    fitting = [c for c in (min(chunk, 32), 16) if c <= chunk and fits(c)]
    if not fitting:
        continue
    k["schedule"] = s.replace(
        m.group(0),
        f"warp_tiles = [4, 8], split = {split}, warps = [{wm}, {wn // 2}], chunk = {fitting[0]}")
    changed += 1
if not changed:
    sys.exit(1)
json.dump(f, open(dst, "w"), indent=2)
print(f"{dst}: {changed} records with 64 x 64 warp tiles")
