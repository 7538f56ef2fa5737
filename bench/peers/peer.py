"""Runs one peer on one model in this process and prints one JSON line.

    peer.py PEER --config model.json --weights w.safetensors --input x.npy
            [--reference y.npy] [--threads T] [--runs R] [--warmup W]

PEER: torch_eager, torch_compile, lucidrains, sdpa (full softmax attention,
torch eager, same n), iree (iree-turbine export of the torch module, IREE
llvm-cpu for the host CPU), jax (jax.jit). The output is checked against
--reference (our output) before timing; a mismatch above 1e-3 normwise
relative error is reported, and the peer is not timed. The parent process
measures peak RSS (one process per peer).
"""

import argparse
import json
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import models  # noqa: E402

TOLERANCE = 1e-3


def timed(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    ms = []
    for _ in range(runs):
        t0 = time.perf_counter()
        fn()
        ms.append((time.perf_counter() - t0) * 1e3)
    ms.sort()
    return ms[len(ms) // 2], ms[0]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peer")
    ap.add_argument("--config", required=True)
    ap.add_argument("--weights", required=True)
    ap.add_argument("--input", required=True)
    ap.add_argument("--reference")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    a = ap.parse_args()
    config = json.load(open(a.config))
    weights = models.read_safetensors(a.weights)
    x = np.load(a.input).astype(np.float32)
    result = {"peer": a.peer, "threads": a.threads}
    notes = []

    if a.peer == "jax":
        os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") +
                                   f" --xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={a.threads}")
        import jax
        jax.config.update("jax_platforms", "cpu")
        f = models.jax_function(config, weights)
        xj = jax.numpy.asarray(x)
        t0 = time.perf_counter()
        y = np.asarray(f(xj).block_until_ready())
        result["compile_s"] = time.perf_counter() - t0
        run = lambda: f(xj).block_until_ready()
        notes.append(f"jax {jax.__version__}")
    elif a.peer == "iree":
        import torch
        import iree.compiler as ireec
        import iree.runtime as ireert
        from iree.turbine import aot
        torch.set_num_threads(a.threads)
        m = models.torch_module(config, weights)
        t0 = time.perf_counter()
        exported = aot.export(m, torch.from_numpy(x))
        mlir = str(exported.mlir_module)
        vmfb = ireec.compile_str(mlir, target_backends=["llvm-cpu"],
                                 extra_args=["--iree-llvmcpu-target-cpu=host"])
        result["compile_s"] = time.perf_counter() - t0
        ireert.flags.parse_flags(f"--task_topology_max_group_count={a.threads}")
        rt_config = ireert.Config("local-task")
        ctx = ireert.SystemContext(config=rt_config)
        ctx.add_vm_module(ireert.VmModule.copy_buffer(ctx.instance, vmfb))
        fn = ctx.modules.module["main"]
        y = np.asarray(fn(x).to_host())
        run = lambda: fn(x).to_host()
        notes.append("iree-turbine aot.export, llvm-cpu, target-cpu=host")
    else:
        import torch
        torch.set_num_threads(a.threads)
        if a.peer == "lucidrains":
            m, lr_notes = models.lucidrains_module(config, weights)
            notes += lr_notes
        else:
            m = models.torch_module(config, weights, full_attention=(a.peer == "sdpa"))
        xt = torch.from_numpy(x)
        if a.peer == "torch_compile":
            m = torch.compile(m)
        with torch.inference_mode():
            t0 = time.perf_counter()
            y = m(xt).numpy()
            result["compile_s"] = time.perf_counter() - t0
        def run():
            with torch.inference_mode():
                m(xt)
        notes.append(f"torch {torch.__version__}")

    if a.reference and a.peer != "sdpa":
        err = models.rel_error(y, np.load(a.reference))
        result["rel_err"] = err
        if not (err <= TOLERANCE):
            result["error"] = f"output differs from ours: normwise relative error {err:.3e}"
            result["notes"] = notes
            print(json.dumps(result))
            return
    median, best = timed(run, a.runs, a.warmup)
    result.update({"median_ms": median, "min_ms": best, "runs": a.runs, "notes": notes})
    print(json.dumps(result))


if __name__ == "__main__":
    main()
