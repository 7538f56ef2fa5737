"""Edits the first kernel of a schedule file (as --print-schedule writes it):
edit_schedule.py IN OUT ROWS COLUMNS REDUCTION [--workgroup-rows R]."""
import json
import sys

src, dst, rows, cols, red = sys.argv[1:6]
data = json.load(open(src))
kernel = data["kernels"][0]
kernel["schedule"]["register"] = [int(rows), int(cols)]
kernel["schedule"]["reduction"] = int(red)
if "--workgroup-rows" in sys.argv:
    # The second innermost output loop of a contraction [b, h, i, m, c]: i.
    kernel["schedule"]["workgroup"][2] = int(sys.argv[sys.argv.index("--workgroup-rows") + 1])
data["kernels"] = [kernel]
json.dump(data, open(dst, "w"), indent=1)
