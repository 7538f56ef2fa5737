#!/usr/bin/env python3
"""The tensor-core attention core with two query tiles a warp in blocks
of fewer warps, in a CUDA schedule file (issue 69 item 3).

    core_tiles.py IN.json OUT.json [WARPS]

IN is what `linformer-compile --target=cuda --print-schedule` wrote. Every
mma.sync core's record (`#linformer.cuda_core_schedule`, not wgmma) gets
`tiles = 2` and WARPS warps a block (default 4), its groups kept where
they still divide the head's query tiles (else 1): at 176 registers a
thread (the bf16 bench core with two tiles, ptxas 13), an SM holds two
4-warp blocks where it holds one 8-warp block (--cuda-core-tiles=2 keeps
8). scripts/gpu-bundle builds its -coretiles2w4 twins from this file with
--schedule. Exits 1, writing nothing, when no record qualifies."""
import json
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
warps = int(sys.argv[3]) if len(sys.argv) > 3 else 4
f = json.load(open(src))
changed = 0
key = re.compile(r"attention_core/(\d+)x(\d+)x(\d+)x(\d+)x(\d+)/")
for k in f["kernels"]:
    m = key.match(k["key"])
    s = k["schedule"]
    if not m or not s.startswith("#linformer.cuda_core_schedule<") or "wgmma = true" in s:
        continue
    tiles = int(m.group(3)) // 16
    if tiles % (2 * warps):
        continue
    groups = int(re.search(r"groups = (\d+)", s).group(1))
    if (tiles // (2 * warps)) % groups:
        groups = 1
    s = re.sub(r"warps = \d+", f"warps = {warps}", s)
    s = re.sub(r"groups = \d+", f"groups = {groups}", s)
    s = re.sub(r", tiles = \d+", "", s).replace(">", ", tiles = 2>")
    k["schedule"] = s
    changed += 1
if not changed:
    sys.exit(1)
json.dump(f, open(dst, "w"), indent=2)
print(f"{dst}: {changed} cores with two query tiles a warp, {warps} warps a block")
