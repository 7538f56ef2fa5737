#!/usr/bin/env python3
"""Writes a copy of a safetensors file with one value of one f32 tensor
replaced by NaN (or another float): a weight that makes every output
non-finite, and the reference's too.

  poison_weight.py IN.safetensors OUT.safetensors NAME [INDEX [VALUE]]
"""
import json
import struct
import sys

src, dst, name = sys.argv[1:4]
index = int(sys.argv[4]) if len(sys.argv) > 4 else 0
value = float(sys.argv[5]) if len(sys.argv) > 5 else float("nan")
data = bytearray(open(src, "rb").read())
size = struct.unpack_from("<Q", data, 0)[0]
header = json.loads(data[8:8 + size])
if name not in header:
    sys.exit(f"poison_weight: no tensor '{name}' (has: {', '.join(k for k in header if k != '__metadata__')})")
t = header[name]
if t["dtype"] != "F32":
    sys.exit(f"poison_weight: '{name}' is {t['dtype']}, not F32")
start = 8 + size + t["data_offsets"][0] + 4 * index
struct.pack_into("<f", data, start, value)
open(dst, "wb").write(data)
