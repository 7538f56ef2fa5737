"""One long sequence over the processes of a torch.distributed group.

An artifact compiled with "sequence_parallel": P (docs/Model.md, "Sequence
parallelism") runs one rank's n / P tokens; each layer sums its projected
keys and values over the ranks with one all-reduce (gloo), whatever n is.

One machine, two processes (one thread each):

    linformer-compile sp.json --random-weights w.safetensors -o sp.lfa
    torchrun --standalone --nproc-per-node 2 examples/sequence_parallel/encoder.py \\
        sp.lfa w.safetensors --threads 1 --out y.npy

Two hosts, one process each (the same command on both, NODE 0 and 1; the
artifact and weights at the same path on each):

    torchrun --nnodes 2 --node-rank NODE --nproc-per-node 1 \\
        --rdzv-backend c10d --rdzv-endpoint HOST0:29500 \\
        examples/sequence_parallel/encoder.py sp.lfa w.safetensors

Each rank makes its own tokens (seeded by --seed and its rank: only its
share is ever in its memory) and runs them; rank 0 gathers the output
(--out) and prints the median time of a run, and with --memory each rank
prints its peak resident memory. A real job reads each rank's tokens.
"""

import argparse
import datetime
import resource
import time

import numpy as np
import torch
import torch.distributed as dist

from linformer_mlir.torch import SequenceParallelEncoder


def peak_mib():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rank_tokens(seed, rank, tokens, length, d_model):
    """The rank's tokens of a random sequence of `length` tokens in [-1, 1):
    [1, min(stop, length) - start, d_model], drawn from a generator seeded
    by `seed` and the rank (what test_torch.py rebuilds the whole input
    from)."""
    start, stop = tokens
    g = torch.Generator().manual_seed(seed * 1000 + rank)
    return torch.rand(1, max(0, min(stop, length) - start), d_model, generator=g) * 2 - 1


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("artifact")
    p.add_argument("weights")
    p.add_argument("--threads", type=int, default=0, help="threads a rank (0: the machine's)")
    p.add_argument("--length", type=int, default=0,
                   help="tokens of the sequence (0: all the ranks hold)")
    p.add_argument("--repeat", type=int, default=1, help="timed runs")
    p.add_argument("--warmup", type=int, default=0, help="runs before the timed ones")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--timeout", type=float, default=60, help="seconds a collective may wait")
    p.add_argument("--out", help="rank 0 writes the whole output here (.npy)")
    p.add_argument("--memory", action="store_true",
                   help="each rank prints its peak resident memory, and what it was "
                        "before the encoder (torch and Python alone)")
    args = p.parse_args()

    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=args.timeout))
    before = peak_mib()
    enc = SequenceParallelEncoder(args.artifact, args.weights, threads=args.threads)
    length = args.length or enc.seq_len * enc.ranks
    mine = rank_tokens(args.seed, enc.rank, enc.tokens, length, enc.d_model)
    lengths = torch.tensor([length])

    times = []
    for i in range(args.warmup + args.repeat):
        dist.barrier()
        t0 = time.perf_counter()
        y = enc(mine, lengths)
        if i >= args.warmup:
            times.append(time.perf_counter() - t0)
    if args.memory:  # before the gather, which only rank 0 does
        print(f"rank {enc.rank}: peak resident memory {peak_mib():.0f} MiB "
              f"({before:.0f} MiB before the encoder)", flush=True)
    # Rank 0 gathers the ranks' rows (padded to one share each).
    padded = torch.zeros(1, enc.seq_len, enc.d_model)
    padded[:, :y.shape[1]] = y
    parts = [torch.zeros_like(padded) for _ in range(enc.ranks)] if enc.rank == 0 else None
    dist.gather(padded, parts, dst=0)
    if enc.rank == 0:
        out = torch.cat(parts, dim=1)[:, :length]
        print(f"ranks: {enc.ranks} x {enc.seq_len} tokens, {length} in all; "
              f"median {1e3 * sorted(times)[len(times) // 2]:.3f} ms over {len(times)} runs")
        if args.out:
            np.save(args.out, out.numpy())
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
