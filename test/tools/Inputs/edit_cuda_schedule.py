"""Replaces record INDEX's schedule in a CUDA schedule file (as
linformer-compile --target=cuda --print-schedule writes it):
edit_cuda_schedule.py IN OUT INDEX 'SCHEDULE' (the attribute's text)."""
import json
import sys

src, dst, index, schedule = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
f = json.load(open(src))
f["kernels"][index]["schedule"] = schedule
json.dump(f, open(dst, "w"), indent=2)
