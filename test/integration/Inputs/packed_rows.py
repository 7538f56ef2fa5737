#!/usr/bin/env python3
"""packed_rows.py PADDED.npy PACKED.npy L1,L2,...: exits 0 when the packed
output [T, ...] is, bit for bit, the real rows of the padded one [b, L, ...]
(the first Li rows of sequence i, end to end), else prints where they
differ and exits 1."""
import sys

import numpy as np

padded, packed = np.load(sys.argv[1]), np.load(sys.argv[2])
lengths = [int(v) for v in sys.argv[3].split(",")]
if padded.shape[0] < len(lengths):
    sys.exit(f"padded output has {padded.shape[0]} sequences, {len(lengths)} lengths given")
want = np.concatenate([padded[i, :n] for i, n in enumerate(lengths)])
if want.shape != packed.shape:
    sys.exit(f"packed output has shape {packed.shape}, expected {want.shape}")
bad = np.argwhere(want.view(np.uint32) != packed.view(np.uint32))
if len(bad):
    sys.exit(f"{len(bad)} values differ, first at row {bad[0][0]}")
print(f"packed rows: {packed.shape[0]} rows identical")
