"""Plots of bench/results/peers.csv: time and peak memory against n (log-log),
ours against every peer, per block and k; and the full-attention / Linformer
ratios of this run beside the paper's Table 3 (inference, layerwise sharing,
V100: time saved 1.5x, 3.4x, 5.5x, 20x and memory saved 1.7x, 14x, 28x, 60x
at n = 512, 4096, 8192, 65536 with k = 128 at 512 and 256 beyond).

    plot.py RESULTS_DIR
"""

import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PAPER_N = [512, 4096, 8192, 65536]
PAPER_TIME = [1.5, 3.4, 5.5, 20]
PAPER_MEMORY = [1.7, 14, 28, 60]
STYLE = {"ours": ("k", "o", 2.5), "torch_eager": ("tab:blue", "s", 1.2),
         "torch_compile": ("tab:orange", "^", 1.2), "lucidrains": ("tab:purple", "v", 1.2),
         "iree": ("tab:green", "D", 1.2), "jax": ("tab:red", "P", 1.2),
         "sdpa": ("tab:gray", "x", 1.2)}


def load(path):
    rows = []
    with open(path) as f:
        for r in csv.DictReader(f):
            if r["median_ms"]:
                r["n"], r["k"] = int(r["n"]), int(r["k"])
                r["median_ms"], r["rss_mib"] = float(r["median_ms"]), float(r["rss_mib"])
                rows.append(r)
    return rows


def main():
    out = sys.argv[1]
    rows = load(os.path.join(out, "peers.csv"))
    for block in ("layer", "encoder"):
        sel = [r for r in rows if r["block"] == block]
        if not sel:
            continue
        fig, axes = plt.subplots(1, 2, figsize=(13, 5))
        for metric, ax, label in (("median_ms", axes[0], "time per run (ms)"),
                                  ("rss_mib", axes[1], "peak RSS (MiB)")):
            series = defaultdict(list)
            for r in sel:
                series[(r["peer"], r["k"])].append((r["n"], r[metric]))
            for (peer, k), pts in sorted(series.items()):
                pts.sort()
                color, marker, width = STYLE.get(peer, ("k", ".", 1))
                ax.plot([p[0] for p in pts], [p[1] for p in pts], color=color, marker=marker, linewidth=width,
                        linestyle="-" if k == 256 else "--",
                        label=f"{peer}" + ("" if peer == "sdpa" else f" k={k}"))
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("sequence length n")
            ax.set_ylabel(label)
            ax.grid(True, which="both", alpha=0.3)
        axes[0].legend(fontsize=7, ncol=2)
        fig.suptitle(f"Linformer {block}: ours vs peers (solid k=256, dashed k=128)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"{block}-time-memory.png"), dpi=110)
        plt.close(fig)

        # Full attention over Linformer, this run vs the paper's Table 3.
        fig, ax = plt.subplots(figsize=(7, 5))
        for k in sorted({r["k"] for r in sel}):
            ours = {r["n"]: r for r in sel if r["peer"] == "ours" and r["k"] == k}
            full = {r["n"]: r for r in sel if r["peer"] == "sdpa" and r["k"] == k}
            ns = sorted(set(ours) & set(full))
            if not ns:
                continue
            ax.plot(ns, [full[n]["median_ms"] / ours[n]["median_ms"] for n in ns], "o-",
                    label=f"time: SDPA / ours, k={k}")
            ax.plot(ns, [full[n]["rss_mib"] / ours[n]["rss_mib"] for n in ns], "s--",
                    label=f"peak RSS: SDPA / ours, k={k}")
        ax.plot(PAPER_N, PAPER_TIME, "k*-", label="paper Table 3: time saved")
        ax.plot(PAPER_N, PAPER_MEMORY, "kx:", label="paper Table 3: memory saved")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("sequence length n")
        ax.set_ylabel("full attention / Linformer")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
        ax.set_title(f"{block}: what Linformer saves (this run vs the paper, V100)")
        fig.tight_layout()
        fig.savefig(os.path.join(out, f"{block}-vs-full-attention.png"), dpi=110)
        plt.close(fig)
    print(f"wrote the plots to {out}")


if __name__ == "__main__":
    main()
