"""One long sequence over the actors of a Ray cluster (docs/Serving.md).

An artifact compiled with "sequence_parallel": P (docs/Model.md, "Sequence
parallelism") runs one rank's n / P tokens; each layer sums its projected
keys and values over the ranks. Here a rank is a Ray actor (`Rank`), and the
sum goes through `AllReduce`, an async actor every rank sends its partial
sums to: it answers each rank with the sum of the round once all P have
arrived (in rank order: the same bits on every rank, whatever arrives
first). The session calls it through `linformer_mlir.Session(...,
all_reduce=...)`; any other collective (torch.distributed inside the
actors, MPI) plugs in the same way.

    python3 examples/ray/sequence_parallel.py SPLIT.lfa WEIGHTS [--length L]

On a real cluster the code is the same with ray.init(address=...); the
artifact and weights must be readable at the same path on every node.
"""

import argparse
import asyncio

import numpy as np
import ray

import linformer_mlir as lf


@ray.remote(num_cpus=0)
class AllReduce:
    """Sums each round's buffers from `ranks` ranks; a round that waits longer
    than `timeout` seconds for a rank fails (a rank that died)."""

    def __init__(self, ranks, timeout=60.0):
        self.ranks, self.timeout = ranks, timeout
        self.rounds = {}

    async def reduce(self, round_id, rank, part):
        r = self.rounds.setdefault(round_id, {"parts": {}, "done": asyncio.Event(), "left": self.ranks})
        r["parts"][rank] = part
        if len(r["parts"]) == self.ranks:
            total = np.zeros_like(part)
            for i in range(self.ranks):
                total += r["parts"][i]
            r["sum"] = total
            r["done"].set()
        else:
            await asyncio.wait_for(r["done"].wait(), self.timeout)
        total = r["sum"]
        r["left"] -= 1
        if r["left"] == 0:
            del self.rounds[round_id]
        return total


@ray.remote
class Rank:
    """Rank `rank` of `ranks`: a session on its tokens, summing through
    `reducer`."""

    def __init__(self, artifact, weights, rank, ranks, reducer, threads=1):
        self.rank, self.round = rank, 0

        def all_reduce(buffer):
            buffer[:] = ray.get(reducer.reduce.remote(self.round, rank, buffer.copy()))
            self.round += 1

        self.session = lf.Session(artifact, weights, threads=threads, rank=rank, ranks=ranks,
                                  all_reduce=all_reduce)
        self.n = self.session.module.seq_len

    def run(self, x, lengths):
        """x: this rank's tokens [b, L_r, d] (none past a short input's end:
        the rank still runs, one padding row of length 0, to take its part in
        each all-reduce); lengths: the whole sequences'."""
        mine = np.clip(np.asarray(lengths, np.int64) - self.rank * self.n, 0, self.n)
        rows = x.shape[1]
        if rows == 0:
            x = np.zeros((x.shape[0], 1, x.shape[2]), np.float32)
        y = self.session(np.ascontiguousarray(x, np.float32), lengths=mine.astype(np.int32))
        return y[:, :rows]


def encode(artifact, weights, x, lengths, threads=1, cpus=1):
    """The whole sequences x [b, L, d] on P rank actors of `cpus` CPUs each
    (and `threads` threads); returns [b, L, d]."""
    ranks = lf.Module(artifact).sequence_parallel
    n = lf.Module(artifact).seq_len
    if ranks == 0:
        raise ValueError(f"{artifact} runs whole sequences (no \"sequence_parallel\")")
    reducer = AllReduce.remote(ranks)
    actors = [Rank.options(num_cpus=cpus).remote(artifact, weights, r, ranks, reducer, threads)
              for r in range(ranks)]
    parts = ray.get([a.run.remote(x[:, r * n:(r + 1) * n], lengths) for r, a in enumerate(actors)])
    return np.concatenate(parts, axis=1)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("artifact")
    p.add_argument("weights")
    p.add_argument("--length", type=int, default=0)
    args = p.parse_args()
    ray.init()
    m = lf.Module(args.artifact)
    length = args.length or m.seq_len * m.sequence_parallel
    x = np.random.default_rng(1).uniform(-1, 1, (1, length, m.data_input.shape[2])).astype(np.float32)
    y = encode(args.artifact, args.weights, x, [length])
    print(f"{m.sequence_parallel} rank actors, {length} tokens: output {list(y.shape)}")


if __name__ == "__main__":
    main()
