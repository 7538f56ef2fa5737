#!/usr/bin/env python3
"""Checks that --backend=best kept what its own timings say is fastest.

Reads the log linformer-compile --backend=best writes to stderr: the
per-kernel table (mlir ms, halide ms, faster), the kernels the per-kernel
mix took from Halide, and the sums with the variant kept. Which generator
wins is the machine's business; that the choice follows the times is not:
  - each row's "faster" is the generator with the smaller time;
  - the mix takes from Halide exactly the kernels Halide ran faster;
  - the kept variant has the smallest sum (the mix's included).
Times are printed to 1 us: rows and sums equal at that precision decide
nothing and are skipped. Exits 1 with the reason on a wrong choice.

  check_best_log.py best.log
"""

import re
import sys


def main():
    text = open(sys.argv[1]).read()
    errors = []
    rows = re.findall(r"^(\w+) +([0-9.]+) +([0-9.]+)  (mlir|halide)$", text, re.M)
    if not rows:
        errors.append("no per-kernel table in the log")
    faster = set()
    for name, m, h, said in rows:
        m, h = float(m), float(h)
        if m == h:
            continue
        want = "halide" if h < m else "mlir"
        if said != want:
            errors.append(f"{name}: {m} ms with mlir, {h} ms with halide, but the table says {said}")
        if want == "halide":
            faster.add(name)
    ties = {name for name, m, h, _ in rows if float(m) == float(h)}
    mix = re.search(r"^best: the mix takes (\d+) kernels? from Halide:(.*)$", text, re.M)
    if mix:
        took = set(mix.group(2).split())
        if int(mix.group(1)) != len(took):
            errors.append(f"the mix says {mix.group(1)} kernels but lists {len(took)}")
        if took - ties != faster - ties:
            errors.append(f"the mix takes {sorted(took)} from Halide, but Halide ran "
                          f"{sorted(faster)} faster")
    elif faster and "no per-kernel mix" not in text:
        errors.append(f"Halide ran {sorted(faster)} faster, but the log shows no mix and no reason")
    sums = re.search(r"^best: kernels sum to ([0-9.]+) ms with mlir, ([0-9.]+) ms with mlir as "
                     r"Halide's plan, ([0-9.]+) ms with halide(?:, ([0-9.]+) ms mixed)?: "
                     r"keeping (.*)$", text, re.M)
    if not sums:
        errors.append("no sums line in the log")
    else:
        total = {"mlir": float(sums.group(1)), "mlir as Halide's plan": float(sums.group(2)),
                 "halide": float(sums.group(3))}
        if sums.group(4):
            total["mixed"] = float(sums.group(4))
        kept = sums.group(5)
        kept_key = "mixed" if kept.startswith("mixed") else kept
        if kept_key not in total:
            errors.append(f"keeping '{kept}', which has no sum")
        else:
            best = min(total.values())
            if total[kept_key] != best:
                errors.append(f"keeping {kept} at {total[kept_key]} ms, but the sums are {total}")
    for e in errors:
        print("check_best_log: " + e)
    if not errors:
        print(f"check_best_log: {len(rows)} kernels, the choice follows the times")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
