#!/usr/bin/env python3
"""Deeper split-K for small GEMMs in a CUDA schedule file (issue 69).

    deep_split.py IN.json OUT.json

IN is what `linformer-compile --target=cuda --print-schedule` wrote. Every
staged mma.sync contraction record (not wgmma, without length splits) with
at most 256 x 512 outputs and a reduction of at most 1024 gets the split
that gives each part one chunk of k (at most 8): the K and V projections of
the default encoder (256 slots x 512, k = 512) go from split 2, 16 blocks
each, to split 8, 64 blocks each (one launch of 128 when merged), where
the selection keeps parts of at least 16 k steps of 16 (the bound that
keeps a part's pipeline full). Which is faster is the GPU's to say:
scripts/gpu-bundle builds its -deepsplit twins from this file with
--schedule. Exits 1, writing nothing, when no record qualifies."""
import json
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
f = json.load(open(src))
changed = 0
for k in f["kernels"]:
    s = k["schedule"]
    if (not s.startswith("#linformer.cuda_schedule<") or "wgmma = true" in s
            or k.get("length_splits")):
        continue
    m = re.match(r"contraction/([pR]+)/([0-9x]+)/", k["key"])
    if not m:
        continue
    kinds, extents = m.group(1), [int(e) for e in m.group(2).split("x")]
    outputs = reduction = 1
    for kind, e in zip(kinds, extents):
        if kind == "p":
            outputs *= e
        else:
            reduction *= e
    split = re.search(r"split = (\d+)", s)
    chunk = re.search(r"chunk = (\d+)", s)
    if not split or not chunk or outputs > 256 * 512 or reduction > 1024:
        continue
    # The innermost reduction is what split-K cuts: parts of one chunk.
    inner = extents[len(kinds) - 1 - kinds[::-1].index("R")]
    deep = min(8, inner // int(chunk.group(1)))
    if deep <= int(split.group(1)) or inner % (deep * int(chunk.group(1))):
        continue
    k["schedule"] = s.replace(split.group(0), f"split = {deep}")
    changed += 1
if not changed:
    sys.exit(1)
json.dump(f, open(dst, "w"), indent=2)
print(f"{dst}: {changed} records split deeper")
