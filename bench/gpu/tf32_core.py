#!/usr/bin/env python3
"""The f32 attention core on TF32 tensor cores in a CUDA schedule file
(issue 69 item 3).

    tf32_core.py IN.json OUT.json

IN is what `linformer-compile --target=cuda --cuda-mma=tf32 --print-schedule`
wrote. Every f32 core's record (`#linformer.cuda_f32_core_schedule`, key
`attention_core/BxHxNxDxK/f32,f32,f32,f32`) whose shape the TF32 core takes
(n and k multiples of 16, the head width of 8) becomes an unstaged
`#linformer.cuda_core_schedule`: one warp a tile of 16 query rows, m16n8k8
.tf32 mma.sync on fragments read from global memory, 32 slots a step (16
where k is no multiple of 32). The selection keeps the f32 core until a GPU
has timed the two: scripts/gpu-bundle builds its -mmatf32core twins from
this file with --cuda-mma=tf32 --schedule. Exits 1, writing nothing, when
no record qualifies."""
import json
import re
import sys

src, dst = sys.argv[1], sys.argv[2]
f = json.load(open(src))
changed = 0
key = re.compile(r"attention_core/(\d+)x(\d+)x(\d+)x(\d+)x(\d+)/f32,f32,f32,f32$")
for k in f["kernels"]:
    m = key.match(k["key"])
    if not m or not k["schedule"].startswith("#linformer.cuda_f32_core_schedule<"):
        continue
    _, _, n, d, slots = (int(g) for g in m.groups())
    if n % 16 or slots % 16 or d % 8:
        continue
    # warps: the query tiles (one warp each) of a block, all of one
    # (b, h): any divisor of n / 16.
    warps = 4 if (n // 16) % 4 == 0 else 1
    step = 32 if slots % 32 == 0 else 16
    k["schedule"] = (f"#linformer.cuda_core_schedule<warps = {warps}, slots = {step}, "
                     "staged = false, groups = 1, ldmatrix = false, wgmma = false>")
    changed += 1
if not changed:
    sys.exit(1)
json.dump(f, open(dst, "w"), indent=2)
print(f"{dst}: {changed} f32 cores on TF32 tensor cores")
