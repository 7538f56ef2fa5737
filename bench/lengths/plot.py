"""Plots bench/results/lengths.csv (bench/lengths/run.py): time against the
real length L, per block, for ours (one artifact compiled for n = 4096),
the artifact compiled for n = L, and the peers given L tokens.

    plot.py RESULTS_DIR
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

SERIES = [("ours_ms", "ours, n = 4096 artifact", "k", "o"),
          ("static_ms", "ours, artifact compiled for n = L", "tab:gray", "x"),
          ("torch_eager_ms", "torch eager (E sliced to L)", "tab:blue", "s"),
          ("torch_compile_ms", "torch.compile (E sliced to L)", "tab:orange", "^"),
          ("jax_ms", "JAX jit (E sliced to L)", "tab:green", "v"),
          ("iree_ms", "IREE llvm-cpu (E sliced to L)", "tab:red", "D")]


def main():
    out = sys.argv[1]
    rows = defaultdict(list)
    with open(os.path.join(out, "lengths.csv")) as f:
        for r in csv.DictReader(f):
            if r["L"].isdigit():
                rows[r["block"]].append(r)
    blocks = sorted(rows)
    fig, axes = plt.subplots(1, len(blocks), figsize=(6 * len(blocks), 4.5), squeeze=False)
    for ax, block in zip(axes[0], blocks):
        data = sorted(rows[block], key=lambda r: int(r["L"]))
        ls = [int(r["L"]) for r in data]
        for key, label, color, marker in SERIES:
            ys = [float(r[key]) if r.get(key) else None for r in data]
            if any(y is not None for y in ys):
                ax.plot([x for x, y in zip(ls, ys) if y is not None],
                        [y for y in ys if y is not None], color=color, marker=marker, label=label)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("real tokens L")
        ax.set_ylabel("ms")
        ax.set_title(f"{block}: time against real length")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "lengths.png"), dpi=110)


if __name__ == "__main__":
    main()
