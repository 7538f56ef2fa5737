"""The peer benchmark: our compiled layer and encoder against what a user
would run instead, in one run, on one machine (see bench/README.md).

For each block (the attention layer, the 4-layer encoder), sequence length
n and projected length k: write the model.json, seeded weights and input,
compile with linformer-compile (the cost model's schedules, or --autotune),
run through linformer-run (median of --runs after a warm-up, peak RSS of
the process), then run each peer in its own process (peer.py) on the same
weights and input, check its output against ours, time it and record its
peak RSS. Writes bench/results/peers.csv and summary.md; plot.py draws the
PNGs. Not part of CI.
"""

import argparse
import csv
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import models  # noqa: E402
from isa import peer_environment  # noqa: E402
from peer import BF16_PEERS, F16_PEERS  # noqa: E402

BLOCKS = {
    "layer": {"block": "attention", "layers": 1, "d_model": 512, "heads": 8,
              "projection": "learned", "sharing": "layerwise", "bias": False,
              "padding": "none", "batch": 1},
    "encoder": {"block": "encoder", "layers": 4, "d_model": 512, "heads": 8,
                "projection": "learned", "sharing": "layerwise", "ffn_dim": 2048,
                "activation": "gelu", "norm": "post", "dtype": "f32",
                "padding": "lengths", "batch": 1},
}
PEERS = ["torch_eager", "torch_compile", "lucidrains", "iree", "jax", "sdpa"]


def run_measured(cmd, env=None, timeout=3600):
    """Runs cmd; returns (returncode, stdout, stderr, wall seconds). Peak RSS
    comes from GNU time (with_rss): RUSAGE_CHILDREN would be a maximum over
    all children so far, not this one's."""
    t0 = time.time()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        p.kill()
        out, err = p.communicate()
        return -1, out, f"timed out after {timeout} s", 0.0
    return p.returncode, out, err, time.time() - t0


def with_rss(cmd):
    """cmd prefixed by GNU time, which prints the peak RSS (KiB) last."""
    return ["/usr/bin/time", "-f", "LF_MAXRSS_KB %M"] + cmd


def parse_rss(stderr):
    for line in reversed(stderr.splitlines()):
        if line.startswith("LF_MAXRSS_KB "):
            return int(line.split()[1]) / 1024.0
    return float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    ap.add_argument("--out", default=os.path.join(ROOT, "bench", "results"))
    ap.add_argument("--blocks", default="layer,encoder")
    ap.add_argument("--n", default="1024,4096,16384,65536")
    ap.add_argument("--k", default="128,256")
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5, help="timed runs per process (after one warm-up)")
    ap.add_argument("--repeats", type=int, default=6,
                    help="processes per measurement, interleaved with the other peers; the best median counts "
                         "(a shared VM's two vCPUs sometimes run a whole process 1.5-2x slower: on the Zen 4 "
                         "of 2026-11-29 one artifact's medians spread 39-77 ms within a round, and a ratio "
                         "of the best of 3 moved by 0.1 from round to round)")
    ap.add_argument("--autotune", action="store_true", help="compile ours with --autotune")
    ap.add_argument("--isa", default="native", choices=["native", "avx2"],
                    help="avx2: ours compiled for --isa-cpu, the peers limited to AVX2 (see peer.py), the peak "
                         "measured with AVX2; results go to OUT/avx2 beside the native ones")
    ap.add_argument("--isa-cpu", default="znver3", help="the AVX2 CPU ours and IREE compile for with --isa avx2")
    ap.add_argument("--dtype", default="f32", choices=["f32", "bf16", "f16"],
                    help="the model's dtype: bf16 compiles ours with \"dtype\": \"bf16\" and runs the peers "
                         "that have a bf16 variant (torch eager and torch.compile on the module .to(bfloat16), "
                         "JAX in bfloat16); results under results/[ISA/]bf16, read against the bf16 peak; "
                         "f16 likewise (torch eager and torch.compile on the module .to(float16)), read "
                         "against the AMX peak where the CPU has AMX-FP16 (tdpfp16ps, at tdpbf16ps' rate)")
    ap.add_argument("--precision", default="f32", choices=["f32", "bf16", "f16"],
                    help="ours compiled with linformer-compile --precision: bf16 multiplies bf16 factors and "
                         "sums in f32 (for f32 models too), read against the bf16 peak; f16 likewise in f16 "
                         "(AMX-FP16), read against the AMX peak where the CPU has it; results under "
                         "results/[ISA/][DTYPE/]{bf16,f16}-products")
    ap.add_argument("--max-peer-gflop", type=float, default=4000,
                    help="skip a peer whose run would exceed this many GFLOP (full attention at large n)")
    a = ap.parse_args()

    bin_dir = os.path.join(a.build, "bin")
    work = os.path.join(a.build, "bench", "peers" if a.isa == "native" else "peers-" + a.isa)
    if a.isa != "native":
        a.out = os.path.join(a.out, a.isa)
    if a.dtype != "f32":
        work += "-" + a.dtype
        a.out = os.path.join(a.out, a.dtype)
    if a.precision != "f32":
        work += "-" + a.precision + "-products"
        a.out = os.path.join(a.out, a.precision + "-products")
    os.makedirs(work, exist_ok=True)
    os.makedirs(a.out, exist_ok=True)
    py = sys.executable
    env = peer_environment(a.isa, a.threads, work)
    ours_target = []
    peer_isa = []
    if a.isa == "avx2":
        # Every peer's kernels limited to AVX2 (isa.py); IREE and ours
        # compile for an AVX2 CPU.
        ours_target = [f"--cpu={a.isa_cpu}"]
        peer_isa = ["--isa", a.isa, "--isa-cpu", a.isa_cpu]
    if a.precision != "f32":
        ours_target.append(f"--precision={a.precision}")

    # The machine's ceiling, measured in this run.
    peak_bin = os.path.join(a.build, "bench", "linformer-peak")
    subprocess.run(["g++", "-O2", "-pthread", os.path.join(ROOT, "bench", "peak", "peak.cpp"), "-o", peak_bin],
                   check=True)
    peak_isa = ["--isa", a.isa] if a.isa != "native" else []
    peak = json.loads(subprocess.run([peak_bin, "--threads", str(a.threads), "--json"] + peak_isa,
                                     capture_output=True, text=True, check=True).stdout)
    # bf16 products may use the bf16 engines: their peak is the ceiling.
    products = a.precision if a.precision != "f32" else a.dtype
    peak_gflops, peak_name = ceiling(peak, products, a.isa,
                                     host_engines(bin_dir) if products == "f16" else [])
    lscpu = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    cpu = next((l.split(":", 1)[1].strip() for l in lscpu.splitlines() if l.startswith("Model name")), "?")
    isa = peak.get("isa", "?")
    # AMX's rate on operands that change step to step (a GEMM's), below the
    # constant operands' peak on the Xeons measured: said beside it.
    data_rate = ""
    if "AMX" in peak_name and peak.get("amx_bf16_data_gflops_nt"):
        data_rate = f" ({peak['amx_bf16_data_gflops_nt']:.1f} on changing operands)"
    # The FMA peak has no loads; a GEMM's register tile with its operands in
    # L1 (linformer-peak's fma-tile) is what a GEMM can reach: said beside it.
    elif peak_name == "FMA peak" and peak.get("fma_tile_gflops_nt"):
        data_rate = f" ({peak['fma_tile_gflops_nt']:.1f} for a register tile, operands in L1)"
    print(f"machine: {cpu}, {isa}, {peak_name} {peak_gflops:.1f} GFLOP/s{data_rate} on {a.threads} threads",
          flush=True)

    rows = []
    csv_path = os.path.join(a.out, "peers.csv")
    fields = ["block", "n", "k", "peer", "median_ms", "min_ms", "gflops", "pct_peak", "rss_mib",
              "peer_over_ours", "rel_err", "compile_s", "notes", "error", "caveat"]

    def emit(row):
        rows.append(row)
        with open(csv_path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=fields)
            w.writeheader()
            for r in rows:
                w.writerow({k: r.get(k, "") for k in fields})
        ratio = row.get("peer_over_ours")
        print(f"  {row['peer']:14s} " +
              (f"{row['median_ms']:10.2f} ms {row['gflops']:7.1f} GFLOP/s {row['pct_peak']:5.1f}% "
               f"{row['rss_mib']:8.0f} MiB" if row.get("median_ms") else f"{'':>46s}") +
              (f"  peer/ours {ratio:5.2f}" if isinstance(ratio, float) else "") +
              (f"  [{row['error']}]" if row.get("error") else ""), flush=True)

    for block in a.blocks.split(","):
        for n in [int(v) for v in a.n.split(",")]:
            for k in [int(v) for v in a.k.split(",")]:
                config = dict(BLOCKS[block], max_seq_len=n, k=k, dtype=a.dtype)
                name = f"{block}-n{n}-k{k}"
                d = os.path.join(work, name)
                os.makedirs(d, exist_ok=True)
                cfg_path = os.path.join(d, "model.json")
                json.dump(config, open(cfg_path, "w"))
                flop = models.flops(config)
                print(f"== {name}: {flop / 1e9:.2f} GFLOP per run", flush=True)
                w = os.path.join(d, "weights.safetensors")
                subprocess.run([os.path.join(bin_dir, "linformer-compile"), cfg_path, "--random-weights", w,
                                "--seed", "1"], check=True, capture_output=True)
                rng = np.random.default_rng(1)
                x_path = os.path.join(d, "x.npy")
                np.save(x_path, rng.uniform(-1, 1, (1, n, 512)).astype(np.float32))

                # Ours.
                lfa = os.path.join(d, "model.lfa")
                t0 = time.time()
                compile_cmd = [os.path.join(bin_dir, "linformer-compile"), cfg_path, "-o", lfa] + ours_target
                if a.autotune:
                    compile_cmd.append("--autotune")
                subprocess.run(compile_cmd, check=True, capture_output=True)
                compile_s = time.time() - t0
                y_path = os.path.join(d, "y.npy")
                prof = os.path.join(d, "profile.json")
                runs = a.runs

                def measure_ours():
                    rc, out, err, _ = run_measured(with_rss(
                        [os.path.join(bin_dir, "linformer-run"), lfa, "--weights", w, "--input", f"x={x_path}",
                         "--output", y_path, "--threads", str(a.threads), "--warmup", "1", "--repeat",
                         str(runs), "--profile-json", prof]), env)
                    if rc != 0:
                        return {"error": err.strip()[-200:]}
                    p = json.load(open(prof))
                    top = max(p["kernels"], key=lambda kk: kk["median_ms"])
                    return {"median_ms": p["median_ms"], "rss_mib": parse_rss(err),
                            "notes": [f"top kernel {top['symbol']} {top['median_ms']:.2f} ms"]}

                def measure_peer(peer):
                    cmd = [py, os.path.join(HERE, "peer.py"), peer, "--config", cfg_path,
                           "--weights", lr_weights if peer == "lucidrains" else w, "--input", x_path,
                           "--reference", lr_ref if peer == "lucidrains" else y_path,
                           "--threads", str(a.threads), "--runs", str(runs), "--dtype", a.dtype,
                           "--reference-products", a.precision] + peer_isa
                    rc, out, err, _ = run_measured(with_rss(cmd), env)
                    result = None
                    for line in out.splitlines():
                        if line.startswith("{"):
                            result = json.loads(line)
                    if rc != 0 or result is None:
                        lines = err.strip().splitlines()
                        return {"error": (lines[-2] if len(lines) > 1 else "failed")[-200:]}
                    result["rss_mib"] = parse_rss(err)
                    return result

                # lucidrains: zero Q/K/V biases (its structure has none) and,
                # for the encoder, compare with our pre-norm variant.
                lr_weights, lr_ref = w, y_path
                if "lucidrains" in a.peers and block == "encoder" and a.dtype == "f32":
                    lr_weights = os.path.join(d, "weights-lucidrains.safetensors")
                    write_zero_qkv_biases(w, lr_weights)
                    pre_cfg = dict(config, norm="pre")
                    pre_path = os.path.join(d, "model-pre.json")
                    json.dump(pre_cfg, open(pre_path, "w"))
                    pre_lfa = os.path.join(d, "model-pre.lfa")
                    subprocess.run([os.path.join(bin_dir, "linformer-compile"), pre_path, "-o", pre_lfa] +
                                   ours_target, check=True, capture_output=True)
                    lr_ref = os.path.join(d, "y-pre.npy")
                    subprocess.run([os.path.join(bin_dir, "linformer-run"), pre_lfa, "--weights", lr_weights,
                                    "--input", f"x={x_path}", "--output", lr_ref, "--threads", str(a.threads)],
                                   check=True, capture_output=True)

                # Which peers run (full attention is skipped where a run
                # would take too long).
                todo = []
                for peer in a.peers.split(","):
                    if peer not in PEERS:
                        sys.exit(f"unknown peer {peer}")
                    peer_flop = flop
                    if peer == "sdpa":
                        # Full attention: Q/K/V/O projections, n x n scores
                        # and weighted sum, the same FFN.
                        m, f = 512, config.get("ffn_dim", 2048)
                        peer_flop = config["layers"] * (8 * n * m * m + 4 * n * n * m +
                                                        (4 * n * m * f if block == "encoder" else 0))
                    if a.dtype != "f32" and peer not in (F16_PEERS if a.dtype == "f16" else BF16_PEERS):
                        todo.append((peer, f"skipped: no {a.dtype} variant here"))
                    elif peer_flop / 1e9 > a.max_peer_gflop:
                        todo.append((peer, f"skipped: {peer_flop / 1e12:.1f} TFLOP per run"))
                    else:
                        todo.append((peer, None))

                # Every measurement `repeats` times, interleaved; the best
                # median of each counts.
                results = {"ours": []}
                results.update({peer: [] for peer, skip in todo if not skip})
                for _ in range(max(1, a.repeats)):
                    results["ours"].append(measure_ours())
                    for peer, skip in todo:
                        if not skip:
                            results[peer].append(measure_peer(peer))

                def best(rs):
                    timed = [r for r in rs if "median_ms" in r]
                    return min(timed, key=lambda r: r["median_ms"]) if timed else rs[-1], \
                        [r["median_ms"] for r in timed]

                ours, ours_all = best(results["ours"])
                if "median_ms" not in ours:
                    emit({"block": block, "n": n, "k": k, "peer": "ours", "error": ours.get("error")})
                    continue
                ours_ms = ours["median_ms"]
                spread = lambda v: "medians " + "/".join(f"{x:.2f}" for x in v)
                emit({"block": block, "n": n, "k": k, "peer": "ours", "median_ms": ours_ms, "min_ms": ours_ms,
                      "gflops": flop / (ours_ms * 1e6), "pct_peak": 100 * flop / (ours_ms * 1e6) / peak_gflops,
                      "rss_mib": ours["rss_mib"], "compile_s": compile_s,
                      "notes": "; ".join(["linformer-compile" + (" --autotune" if a.autotune else "") +
                                          "".join(" " + t for t in ours_target),
                                          spread(ours_all)] + ours["notes"])})
                for peer, skip in todo:
                    if skip:
                        emit({"block": block, "n": n, "k": k, "peer": peer, "error": skip})
                        continue
                    result, all_ms = best(results[peer])
                    row = {"block": block, "n": n, "k": k, "peer": peer, "rss_mib": result.get("rss_mib", ""),
                           "rel_err": result.get("rel_err", ""), "compile_s": result.get("compile_s", ""),
                           "notes": "; ".join(result.get("notes", []) + ([spread(all_ms)] if all_ms else [])),
                           "error": result.get("error", ""), "caveat": result.get("caveat", "")}
                    if "median_ms" in result:
                        ms = result["median_ms"]
                        row.update({"median_ms": ms, "min_ms": result["min_ms"], "gflops": flop / (ms * 1e6),
                                    "pct_peak": 100 * flop / (ms * 1e6) / peak_gflops,
                                    "peer_over_ours": ms / ours_ms})
                    emit(row)

    write_summary(rows, a.out, cpu, isa, peak_gflops, a.threads, peak_name, a.dtype, data_rate)
    print(f"wrote {csv_path} and {os.path.join(a.out, 'summary.md')}")


def write_zero_qkv_biases(src, dst):
    """A copy of a safetensors file with the Q/K/V biases set to zero."""
    import struct
    with open(src, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header_bytes = f.read(n)
        data = bytearray(f.read())
    header = json.loads(header_bytes)
    for name, info in header.items():
        if name != "__metadata__" and name.split(".")[-1] in ("bq", "bk", "bv"):
            b, e = info["data_offsets"]
            data[b:e] = bytes(e - b)
    with open(dst, "wb") as f:
        f.write(struct.pack("<Q", n))
        f.write(header_bytes)
        f.write(data)


def host_engines(bin_dir):
    """The matrix engines linformer-compile finds on this host (its
    schedule file's target), e.g. ["amx-bf16", "amx-fp16", ...]."""
    small = os.path.join(ROOT, "test", "tools", "Inputs", "small.json")
    out = subprocess.run([os.path.join(bin_dir, "linformer-compile"), small, "--print-schedule",
                          "-o", os.devnull], capture_output=True, text=True).stdout
    try:
        return json.loads(out)["target"].get("engines", [])
    except (ValueError, KeyError):
        return []


def ceiling(peak, dtype, isa, engines=()):
    """The GFLOP/s a run is read against, and its name: the f32 FMA peak,
    or for bf16 the fastest bf16 multiply-add unit linformer-peak measured
    here (AMX TDPBF16PS, else AVX512_BF16 VDPBF16PS; with --isa avx2 the
    peers may use neither), else the FMA peak: without such a unit bf16
    arithmetic is f32 arithmetic. For f16 the AMX peak where the CPU has
    AMX-FP16 (`engines`: TDPFP16PS runs at TDPBF16PS' rate), else the FMA
    peak."""
    if dtype == "f16" and isa == "native" and "amx-fp16" in engines and peak.get("amx_bf16_gflops_nt"):
        return peak["amx_bf16_gflops_nt"], "AMX peak (tdpfp16ps at tdpbf16ps' rate)"
    if dtype == "bf16" and isa == "native":
        for key, name in (("amx_bf16_gflops_nt", "AMX bf16 peak"), ("bf16_dot_gflops_nt", "AVX512_BF16 peak")):
            if peak.get(key):
                return peak[key], name
    return peak["fma_gflops_nt"], "FMA peak"


def write_summary(rows, out, cpu, isa, peak, threads, peak_name="FMA peak", dtype="f32", data_rate=""):
    lines = [f"# Peer benchmark" + (f" ({dtype})" if dtype != "f32" else ""), "",
             f"Machine: {cpu}, {isa}; {peak_name} {peak:.1f} GFLOP/s{data_rate} on {threads} threads "
             "(measured in this run).",
             "Times are medians; `peer/ours` > 1 means we are faster. GFLOP/s count the multiply-adds of the",
             "(E X) W order for every Linformer peer (full attention: its own).", ""]
    for block in ("layer", "encoder"):
        sel = [r for r in rows if r["block"] == block]
        if not sel:
            continue
        lines += [f"## {block}", "", "| n | k | peer | median ms | GFLOP/s | % peak | peak RSS MiB | peer/ours | note |",
                  "|---|---|---|---|---|---|---|---|---|"]
        for r in sel:
            if r.get("median_ms"):
                ratio = r.get("peer_over_ours")
                lines.append(f"| {r['n']} | {r['k']} | {r['peer']} | {r['median_ms']:.2f} | {r['gflops']:.1f} | "
                             f"{r['pct_peak']:.1f} | {r['rss_mib']:.0f} | "
                             f"{ratio:.2f} | {r.get('error') or r.get('caveat') or ''} |" if isinstance(ratio, float) else
                             f"| {r['n']} | {r['k']} | {r['peer']} | {r['median_ms']:.2f} | {r['gflops']:.1f} | "
                             f"{r['pct_peak']:.1f} | {r['rss_mib']:.0f} | - | {r.get('error') or r.get('caveat') or ''} |")
            else:
                lines.append(f"| {r['n']} | {r['k']} | {r['peer']} | - | - | - | - | - | {r.get('error', '')} |")
        lines.append("")
    open(os.path.join(out, "summary.md"), "w").write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
