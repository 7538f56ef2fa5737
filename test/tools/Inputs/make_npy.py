#!/usr/bin/env python3
"""Writes a .npy of the given shape without numpy:
make_npy.py OUT SHAPE(comma-separated) [f4|u1|i4|i8] [value]."""
import struct, sys

out, shape = sys.argv[1], [int(d) for d in sys.argv[2].split(",")]
kind = sys.argv[3] if len(sys.argv) > 3 else "f4"
value = float(sys.argv[4]) if len(sys.argv) > 4 else 0.25
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
    else:
        f.write(bytes([1 if value else 0] * count))
