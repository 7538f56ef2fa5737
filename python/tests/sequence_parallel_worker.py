"""A rank of test_torch.py's sequence-parallel failure test, started by it as
a plain process (MASTER_ADDR, MASTER_PORT, RANK, WORLD_SIZE in the
environment, as torchrun sets them): `die` exits before the first run, as a
crashed rank would; the others run and write what they raised to OUT."""

import datetime
import os
import sys

import torch
import torch.distributed as dist

from linformer_mlir.torch import SequenceParallelEncoder


def main(artifact, weights, out, die):
    dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=20))
    enc = SequenceParallelEncoder(artifact, weights, threads=1)
    if enc.rank == int(die):
        os._exit(3)
    x = torch.zeros(1, enc.seq_len, enc.d_model)
    try:
        enc(x)
        message = "no error"
    except Exception as e:  # the test reads what it was
        message = f"{type(e).__name__}: {e}"
    with open(out, "w") as f:
        f.write(message)
    os._exit(0)


if __name__ == "__main__":
    main(*sys.argv[1:])
