"""Counts instructions in the kernels of `linformer-compile --emit=ptx`
output, one line per kernel that contains every `--with` instruction:

    ptx_counts.py FILE.ptx --with I1 [--with I2 ...] --count C1 [--count C2 ...]

prints `<kernel>: C1 <n> C2 <m> ...`, each count the lines of the kernel's
body that hold that text (e.g. `ldmatrix`, `mma.sync`), so that a test can
compare two compilations of one model (FileCheck numeric variables)."""

import argparse
import re

parser = argparse.ArgumentParser()
parser.add_argument("path")
parser.add_argument("--with", dest="needs", action="append", default=[])
parser.add_argument("--count", dest="counts", action="append", default=[])
args = parser.parse_args()
text = open(args.path).read()
# Each kernel from its .entry line to the next one (or the end).
for m in re.finditer(r"^\.visible \.entry (\w+)\((.*?)(?=^\.visible \.entry |\Z)",
                     text, re.M | re.S):
    name, body = m.group(1), m.group(2)
    lines = body.splitlines()
    if not all(any(n in l for l in lines) for n in args.needs):
        continue
    counts = " ".join(f"{c} {sum(c in l for l in lines)}" for c in args.counts)
    print(f"{name}: {counts}")
