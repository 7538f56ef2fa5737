"""The GPU peers of bench/results/gpu.md, timed on the machine that runs ours.

The anchors of ../shared/GPU.md were taken on an H100; a lent machine may be
another card (an H200), so the same run times the peers again: torch eager,
torch.compile and full-attention SDPA on the layer of the bench shapes (one
attention layer, d_model 512, h 8, k 256, layerwise learned E, the math of
bench/peers/models.py) and on the default encoder, with CUDA events, warm-up
first, the median of --runs. Weights and input are seeded random (never
zeros).

  python3 bench/gpu/torch_peers.py [--runs 50] [--shapes 1x4096,16x4096] [--dtypes bf16,f32]
                                  [--start-after FILE]

--start-after FILE builds and compiles every case first (torch.compile spends
its time on the CPU, so that can overlap other work), then waits until FILE
exists before timing any: the caller creates it when the GPU is otherwise
idle (scripts/dev/gpu-session), so no peer is timed while our checks run on
the same card.
"""

import argparse
import json
import os
import statistics
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "peers"))
import numpy as np  # noqa: E402
import torch  # noqa: E402

from models import torch_module  # noqa: E402


def random_weights(config, seed=0):
    rng = np.random.default_rng(seed)
    m, k, f = config["d_model"], config["k"], config.get("ffn_dim", 2048)
    n = config["max_seq_len"]
    w = {"shared.e": rng.standard_normal((k, n), dtype=np.float32) / np.sqrt(n)}
    for i in range(config["layers"]):
        p = f"layers.{i}."
        for name in ("wq", "wk", "wv", "wo"):
            w[p + "attn." + name] = rng.standard_normal((m, m), dtype=np.float32) / np.sqrt(m)
        for name in ("bq", "bk", "bv", "bo"):
            w[p + "attn." + name] = rng.standard_normal(m, dtype=np.float32) * 0.02
        if config.get("block", "encoder") == "encoder":
            w[p + "ln1.gamma"] = np.ones(m, np.float32)
            w[p + "ln1.beta"] = np.zeros(m, np.float32)
            w[p + "ln2.gamma"] = np.ones(m, np.float32)
            w[p + "ln2.beta"] = np.zeros(m, np.float32)
            w[p + "ffn.w1"] = rng.standard_normal((m, f), dtype=np.float32) / np.sqrt(m)
            w[p + "ffn.b1"] = np.zeros(f, np.float32)
            w[p + "ffn.w2"] = rng.standard_normal((f, m), dtype=np.float32) / np.sqrt(f)
            w[p + "ffn.b2"] = np.zeros(m, np.float32)
    return w


def time_ms(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(runs):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        fn()
        b.record()
        b.synchronize()
        times.append(a.elapsed_time(b))
    return statistics.median(times)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--shapes", default="1x4096,16x4096,1x16384,1x65536")
    ap.add_argument("--dtypes", default="bf16,f32")
    ap.add_argument("--encoder", default=os.path.join(os.path.dirname(__file__), "..", "..",
                                                      "examples", "models", "default.json"))
    ap.add_argument("--no-compile", action="store_true")
    ap.add_argument("--start-after", help="time nothing until this file exists")
    ap.add_argument("--wait-limit", type=float, default=600,
                    help="seconds to wait for --start-after's file")
    args = ap.parse_args()
    dev = "cuda"
    print(f"# {torch.cuda.get_device_name()} torch {torch.__version__}", flush=True)
    cases = []
    for s in args.shapes.split(","):
        b, n = map(int, s.split("x"))
        cases.append((f"b{b}-n{n}", b, {"layers": 1, "block": "attention", "d_model": 512, "heads": 8,
                                         "k": 256, "max_seq_len": n, "sharing": "layerwise"}))
    if args.encoder:
        enc = json.load(open(args.encoder))
        cases.append(("encoder", enc.get("batch", 1), enc))
    # Build (and compile, and warm) everything first; time afterwards.
    prepared = []
    with torch.inference_mode():
        for name, b, config in cases:
            for dt in args.dtypes.split(","):
                dtype = {"bf16": torch.bfloat16, "f32": torch.float32, "f16": torch.float16}[dt]
                torch.manual_seed(0)
                x = torch.randn(b, config["max_seq_len"], config["d_model"], device=dev, dtype=dtype)
                w = random_weights(config)
                mod = torch_module(config, w, full_attention=False).to(dev, dtype).eval()
                full = torch_module(config, w, full_attention=True).to(dev, dtype).eval()
                comp = None
                if not args.no_compile:
                    comp = torch.compile(mod)
                    comp(x)
                prepared.append((name, dt, x, mod, comp, full))
        torch.cuda.synchronize()
    if args.start_after:
        print(f"# compiled {len(prepared)} cases; waiting for {args.start_after}", flush=True)
        deadline = time.time() + args.wait_limit
        while not os.path.exists(args.start_after):
            if time.time() > deadline:
                sys.exit(f"torch_peers: {args.start_after} did not appear within {args.wait_limit} s")
            time.sleep(0.2)
    print(f"{'case':16} {'dtype':5} {'eager_ms':>9} {'compile_ms':>10} {'sdpa_ms':>9}", flush=True)
    with torch.inference_mode():
        for name, dt, x, mod, comp, full in prepared:
            eager = time_ms(lambda: mod(x), args.runs, 5)
            compiled = time_ms(lambda: comp(x), args.runs, 5) if comp else float("nan")
            sdpa = time_ms(lambda: full(x), args.runs, 5)
            print(f"{name:16} {dt:5} {eager:9.3f} {compiled:10.3f} {sdpa:9.3f}", flush=True)

if __name__ == "__main__":
    main()
