"""Edits one kernel of a schedule file (as --print-schedule writes it):

    edit_schedule.py IN OUT ROWS COLUMNS REDUCTION [--workgroup-rows R]
                     [--key-prefix P] [--split S]

The kernel is the first one, or the first whose key starts with P; the
output file holds that kernel only.
"""
import json
import sys

src, dst, rows, cols, red = sys.argv[1:6]
opts = sys.argv[6:]
data = json.load(open(src))
kernels = data["kernels"]
if "--key-prefix" in opts:
    prefix = opts[opts.index("--key-prefix") + 1]
    kernels = [k for k in kernels if k["key"].startswith(prefix)]
kernel = kernels[0]
kernel["schedule"]["register"] = [int(rows), int(cols)]
kernel["schedule"]["reduction"] = int(red)
if "--workgroup-rows" in opts:
    # The second innermost output loop of a contraction [b, h, i, m, c]: i.
    kernel["schedule"]["workgroup"][2] = int(opts[opts.index("--workgroup-rows") + 1])
if "--split" in opts:
    kernel["schedule"]["split"] = int(opts[opts.index("--split") + 1])
data["kernels"] = [kernel]
json.dump(data, open(dst, "w"), indent=1)
