#!/usr/bin/env python3
"""Cost against real length (issue 31): one artifact compiled for n = 4096
run at real lengths L, against the artifact compiled for n = L (the static
lower bound) and, optionally, peers given L tokens (E sliced to L columns,
as lucidrains' Linformer does), plus a mixed batch, padded and packed
(cu_seqlens), against the sum of its sequences run alone.

    bench/lengths/run.py [--blocks layer,encoder,mean_pool] [--lengths 256,...,4096]
                         [--mixed 4096,512,512,256] [--peers torch_eager]
                         [--threads 2] [--repeat 7] [--pairs 1]
                         [--dtype bf16] [--precision bf16]
                         [--isa avx2 [--isa-cpu znver3]] [--out bench/results]

--dtype bf16 compiles the models with "dtype": "bf16" (bf16 weights,
activations and products; the peers run the module in bfloat16); --dtype
f16 likewise in f16 (f16 products where the CPU has AMX-FP16);
--precision bf16 compiles f32 models with bf16 products.

--isa avx2 is AVX2 mode on an AVX-512 machine: ours (both artifacts)
compiled for --isa-cpu, the peers limited to AVX2 (bench/peers/isa.py), and
each peer's notes on what it really ran go into the CSV.

Writes OUT/lengths.csv and prints a table; speeds are ratios in one run on
one machine (say which: lscpu). With --pairs N, ours and the n = L artifact
run in turn N times (A B A B) and the ratio is the median of the pairs'
ratios: on a shared machine two runs minutes apart can differ by more than
the effect measured (bench/lengths/pair.sh does the same afterwards).
"""
import argparse
import csv
import json
import os
import re
import statistics
import struct
import subprocess
import sys

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "bench", "peers"))
from isa import peer_environment  # noqa: E402
MODELS = {"layer": os.path.join(ROOT, "bench", "models", "layer.json"),
          "encoder": os.path.join(ROOT, "examples", "models", "default.json")}
# The bench layer with mean pooling shared by the heads (windows of n / k
# tokens, pooled before the K/V projections): its n = L artifact keeps the
# window, so it has k L / n slots.
VARIANTS = {"mean_pool": ("layer", {"projection": "mean_pool", "sharing": "headwise"})}


def load_block(block):
    if block in VARIANTS:
        name, changes = VARIANTS[block]
        return dict(json.load(open(MODELS[name])), **changes)
    return json.load(open(MODELS[block]))


def read_safetensors(path):
    data = open(path, "rb").read()
    (size,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + size])
    base = 8 + size
    # BF16 as its raw 16-bit words: sliced and written back as they are.
    kinds = {"F32": np.float32, "F16": np.float16, "BF16": np.uint16, "I32": np.int32,
             "I64": np.int64, "U8": np.uint8}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[base + a:base + b], kinds[t["dtype"]]).reshape(t["shape"])
    return out


def write_safetensors(path, tensors):
    names = {np.dtype(np.float32): "F32", np.dtype(np.float16): "F16", np.dtype(np.uint16): "BF16",
             np.dtype(np.int32): "I32", np.dtype(np.int64): "I64", np.dtype(np.uint8): "U8"}
    header, blobs, offset = {}, [], 0
    for name, a in tensors.items():
        a = np.ascontiguousarray(a)
        header[name] = {"dtype": names[a.dtype], "shape": list(a.shape),
                        "data_offsets": [offset, offset + a.nbytes]}
        blobs.append(a.tobytes())
        offset += a.nbytes
    text = json.dumps(header).encode()
    text += b" " * (-(len(text) + 8) % 64)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def run(cmd, env=None):
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        sys.exit("failed: %s\n%s%s" % (" ".join(cmd), r.stdout, r.stderr))
    return r.stdout


def median_ms(out):
    m = re.search(r"median ([0-9.]+) ms", out)
    if not m:
        sys.exit("no timing in:\n" + out)
    return float(m.group(1))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--work", default="/tmp/linformer-bench-lengths")
    ap.add_argument("--blocks", default="layer,encoder")
    ap.add_argument("--lengths", default="256,512,1024,2048,4096")
    ap.add_argument("--mixed", default="4096,512,512,256")
    ap.add_argument("--peers", default="", help="e.g. torch_eager,torch_compile (bench venv)")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--cpu", default="",
                    help="compile ours for this CPU (e.g. znver3: AVX2 mode on an AVX-512 machine)")
    ap.add_argument("--isa", default="native", choices=["native", "avx2"],
                    help="avx2: ours compiled for --isa-cpu (unless --cpu says otherwise) and the "
                         "peers limited to AVX2 as bench/peers/bench.py --isa avx2 limits them "
                         "(peer.py refuses to time a peer whose code was not limited)")
    ap.add_argument("--isa-cpu", default="znver3")
    ap.add_argument("--repeat", type=int, default=20,
                    help="timed runs per process, after --warmup (short lengths take a few ms: "
                         "fewer runs left the median to this VM's noise)")
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                    help="the models' dtype (bf16: the peers run the module in bfloat16; f16 "
                         "in float16, torch only)")
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16"],
                    help="ours compiled with linformer-compile --precision")
    ap.add_argument("--pairs", type=int, default=1,
                    help="ours and the n = L artifact in turn, this many times")
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    os.makedirs(args.out, exist_ok=True)
    compile_ = os.path.join(args.build, "bin", "linformer-compile")
    runner = os.path.join(args.build, "bin", "linformer-run")
    lengths = [int(v) for v in args.lengths.split(",")] if args.lengths else []
    mixed = [int(v) for v in args.mixed.split(",")] if args.mixed else []
    rows = []
    if args.isa != "native" and not args.cpu:
        args.cpu = args.isa_cpu
    cpu = ["--cpu=" + args.cpu] if args.cpu else []
    if args.precision != "f32":
        cpu.append("--precision=" + args.precision)
    peer_dtype = ["--dtype", args.dtype] if args.dtype != "f32" else []
    if args.precision != "f32":
        peer_dtype += ["--reference-products", args.precision]
    peer_env = peer_environment(args.isa, args.threads, os.path.join(args.work, "peers-" + args.isa))
    peer_isa = ["--isa", args.isa, "--isa-cpu", args.isa_cpu] if args.isa != "native" else []

    def time_ours(art, weights, extra):
        out = run([runner, art, "--weights", weights, "--random-input", "--warmup", str(args.warmup),
                   "--repeat", str(args.repeat), "--threads", str(args.threads)] + extra)
        return median_ms(out)

    for block in args.blocks.split(","):
        base = load_block(block)
        n = base["max_seq_len"]
        # Ours at n, with a lengths input (the layer bench model has none).
        full = dict(base, padding="lengths", batch=1, dtype=args.dtype)
        path = lambda name: os.path.join(args.work, "%s-%s" % (block, name))
        json.dump(full, open(path("n.json"), "w"))
        run([compile_, path("n.json"), "--random-weights", path("n.st"), "-o", path("n.lfa")] + cpu)
        weights = read_safetensors(path("n.st"))
        for L in lengths:
            # One input for ours and the peers; the peers are checked against
            # our output before they are timed (bench/peers/peer.py).
            x = np.random.default_rng(0).standard_normal((1, L, full["d_model"]),
                                                        dtype=np.float32)
            np.save(path("x%d.npy" % L), x)
            ours_args = (path("n.lfa"), path("n.st"),
                         ["--input", "x=" + path("x%d.npy" % L),
                          "--output", path("y%d.npy" % L)])
            ours = time_ours(*ours_args)
            # The static lower bound: compiled for n = L, E sliced to L columns.
            cfg = dict(full, max_seq_len=L)
            if full.get("projection", "learned") != "learned":
                cfg["k"] = max(1, full["k"] * L // n)  # the same windows
            json.dump(cfg, open(path("%d.json" % L), "w"))
            sliced = {k: (v[..., :L] if v.ndim >= 2 and v.shape[-1] == n else v)
                      for k, v in weights.items()}
            write_safetensors(path("%d.st" % L), sliced)
            run([compile_, path("%d.json" % L), "-o", path("%d.lfa" % L)] + cpu)
            static_args = (path("%d.lfa" % L), path("%d.st" % L), [])
            static = time_ours(*static_args)
            pairs = [(ours, static)]
            for _ in range(args.pairs - 1):
                pairs.append((time_ours(*ours_args), time_ours(*static_args)))
            ours = statistics.median(a for a, _ in pairs)
            static = statistics.median(b for _, b in pairs)
            row = {"block": block, "dtype": args.dtype, "precision": args.precision,
                   "L": L, "ours_ms": ours, "static_ms": static,
                   "ours_over_static": statistics.median(a / b for a, b in pairs),
                   "pairs": len(pairs)}
            for peer in filter(None, args.peers.split(",")):
                out = run([sys.executable, os.path.join(ROOT, "bench", "peers", "peer.py"), peer,
                           "--config", path("%d.json" % L), "--weights", path("%d.st" % L),
                           "--input", path("x%d.npy" % L), "--reference", path("y%d.npy" % L),
                           "--threads", str(args.threads), "--runs", str(args.repeat),
                           "--warmup", str(args.warmup)] + peer_isa + peer_dtype, env=peer_env)
                res = json.loads(out.strip().splitlines()[-1])
                if "error" in res:
                    sys.exit("%s at L = %d: %s" % (peer, L, res["error"]))
                if args.isa != "native":
                    row[peer + "_isa_notes"] = "; ".join(res.get("notes", []))
                row[peer + "_rel_err"] = res.get("rel_err")
                row[peer + "_ms"] = res.get("median_ms")
                if res.get("median_ms"):
                    row[peer + "_over_ours"] = res["median_ms"] / ours
            rows.append(row)
            print(json.dumps(row), flush=True)
        if mixed:
            cfg = dict(full, batch=len(mixed))
            json.dump(cfg, open(path("mixed.json"), "w"))
            run([compile_, path("mixed.json"), "-o", path("mixed.lfa")] + cpu)
            ms = time_ours(path("mixed.lfa"), path("n.st"),
                           ["--lengths", ",".join(map(str, mixed))])
            # The same batch packed (cu_seqlens): [T, d] in and out.
            packed = time_ours(path("mixed.lfa"), path("n.st"),
                               ["--lengths", ",".join(map(str, mixed)), "--packed"])
            alone = sum(time_ours(path("n.lfa"), path("n.st"), ["--seq-len", str(L)])
                        for L in mixed)
            row = {"block": block, "dtype": args.dtype, "precision": args.precision,
                   "L": "mixed " + "/".join(map(str, mixed)),
                   "ours_ms": ms, "static_ms": alone, "ours_over_static": ms / alone,
                   "packed_ms": packed, "packed_over_static": packed / alone}
            rows.append(row)
            print(json.dumps(row), flush=True)
    keys = sorted({k for r in rows for k in r}, key=lambda k: (k not in ("block", "L"), k))
    with open(os.path.join(args.out, "lengths.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys)
        w.writeheader()
        w.writerows(rows)
    print("| block | L | ours (n artifact) ms | n = L artifact (mixed: sum alone) ms | ratio |"
          " packed ms | packed ratio |")
    print("|---|---|---|---|---|---|---|")
    for r in rows:
        packed = ("%.1f | %.2f" % (r["packed_ms"], r["packed_over_static"])
                  if "packed_ms" in r else "- | -")
        print("| %s | %s | %.1f | %.1f | %.2f | %s |" % (
            r["block"], r["L"], r["ours_ms"], r["static_ms"], r["ours_over_static"], packed))


if __name__ == "__main__":
    main()
