#!/usr/bin/env python3
"""Writes a .npy of the given shape without numpy:
make_npy.py OUT SHAPE(comma-separated) [f4|u1|i4|i8] [value].
For u1, value prefix=L1,L2,... gives row r (of the last dimension) Lr
leading ones and zeros after them: a prefix mask."""
import struct, sys

out, shape = sys.argv[1], [int(d) for d in sys.argv[2].split(",")]
kind = sys.argv[3] if len(sys.argv) > 3 else "f4"
arg = sys.argv[4] if len(sys.argv) > 4 else "0.25"
prefix = [int(v) for v in arg[len("prefix="):].split(",")] if arg.startswith("prefix=") else None
value = 0.0 if prefix else float(arg)
count = 1
for d in shape:
    count *= d
descr = {"f4": "<f4", "u1": "|u1", "i4": "<i4", "i8": "<i8"}[kind]
shape_txt = "(" + ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "") + ")"
header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
header += " " * (63 - (10 + len(header)) % 64) + "\n"
with open(out, "wb") as f:
    f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
    if kind == "f4":
        f.write(struct.pack("<%df" % count, *([value] * count)))
    elif kind in ("i4", "i8"):
        f.write(struct.pack("<%d%s" % (count, "i" if kind == "i4" else "q"),
                            *([int(value)] * count)))
    elif prefix:
        f.write(bytes([1 if t < length else 0 for length in prefix for t in range(shape[-1])]))
    else:
        f.write(bytes([1 if value else 0] * count))
