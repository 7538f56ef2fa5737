"""Ours as a PyTorch op inside a PyTorch model, against the PyTorch Linformer
it replaces (issue 33): a classifier (token embedding, the lucidrains
`Linformer` encoder, mean pool, linear head) run as is, under torch.compile,
and with its encoder swapped for `linformer_mlir.torch.compile_module(...)`
(eager and torch.compile(fullgraph=True)). The same weights, input and
threads; the swapped output is checked against the original first. Median of
--runs after a warm-up, wall clock. Not a test: a benchmark.

  ~/.cache/linformer-mlir/torch-venv-2.15.0/bin/python bench/torch_op/run.py \
      [--dim 512 --seq 4096 --depth 4 --heads 8 --k 256 --batch 1 --threads 2]
(PYTHONPATH=build/python LINFORMER_BIN_DIR=build/bin)
"""
import argparse
import os
import sys
import time

import torch
from linformer import Linformer

import linformer_mlir.torch as lft

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "peers"))
from peer import timed  # noqa: E402  (the peer benchmark's median of runs)


class Classifier(torch.nn.Module):
    def __init__(self, encoder, dim):
        super().__init__()
        self.emb = torch.nn.Embedding(30000, dim)
        self.encoder = encoder
        self.head = torch.nn.Linear(dim, 2)

    def forward(self, ids):
        return self.head(self.encoder(self.emb(ids)).mean(1))


def median_ms(fn, runs):
    return timed(fn, runs, warmup=1)[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dim", type=int, default=512)
    ap.add_argument("--seq", type=int, default=4096)
    ap.add_argument("--depth", type=int, default=4)
    ap.add_argument("--heads", type=int, default=8)
    ap.add_argument("--k", type=int, default=256)
    ap.add_argument("--batch", type=int, default=1)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=10)
    ap.add_argument("--workdir", default="build/bench-torch-op")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    lin = Linformer(dim=args.dim, seq_len=args.seq, depth=args.depth, heads=args.heads, k=args.k,
                    one_kv_head=False, share_kv=False).eval()
    ids = torch.randint(0, 30000, (args.batch, args.seq))
    t = time.perf_counter()
    ours = lft.compile_module(lin, torch.zeros(args.batch, args.seq, args.dim), workdir=args.workdir,
                              threads=args.threads)
    compile_s = time.perf_counter() - t
    ref = Classifier(lin, args.dim).eval()
    swapped = Classifier(ours, args.dim).eval()
    swapped.emb, swapped.head = ref.emb, ref.head
    with torch.inference_mode():
        want, got = ref(ids), swapped(ids)
        err = float(torch.linalg.norm(got - want) / torch.linalg.norm(want))
        h = ref.emb(ids)
        enc_err = float(torch.linalg.norm(ours(h) - lin(h)) / torch.linalg.norm(lin(h)))
        rows = [("pytorch eager", median_ms(lambda: ref(ids), args.runs))]
        comp = torch.compile(ref)
        rows.append(("pytorch torch.compile", median_ms(lambda: comp(ids), args.runs)))
        rows.append(("ours (op) eager", median_ms(lambda: swapped(ids), args.runs)))
        comp2 = torch.compile(swapped, fullgraph=True)
        rows.append(("ours (op) torch.compile", median_ms(lambda: comp2(ids), args.runs)))
    print(f"# torch {torch.__version__}, {args.threads} threads, batch {args.batch}, n {args.seq}, "
          f"dim {args.dim}, depth {args.depth}, heads {args.heads}, k {args.k}")
    print(f"# ours compiled in {compile_s:.1f} s; classifier rel err {err:.2e}, encoder rel err {enc_err:.2e}")
    base = rows[0][1]
    print(f"{'model':26} {'ms':>9} {'speedup vs eager':>17}")
    for name, ms in rows:
        print(f"{name:26} {ms:9.2f} {base / ms:17.2f}")


if __name__ == "__main__":
    main()
