#!/usr/bin/env python3
"""Random valid Linformer models, compiled and checked against the reference.

A randomized differential test (issue 67): each case draws a model.json
(every projection kind and sharing, per-layer k lists, pre/post norm,
biases, every padding input, the attention block alone, f16/bf16 storage,
sizes drawn so that n, k, d_model, ffn_dim, the head width and the batch
often coincide, n of 1 and primes, now and then an FFN of 4 KiB rows,
which the CPU pipeline pads), compiles it with linformer-compile and
runs it with linformer-run --check against the C++ reference encoder:

  - with a lengths input: random real lengths, padded with poisoned padding
    (NaN rows past each length), packed, and with fewer sequences than
    compiled; the first run of each model also with every intermediate
    poisoned (LINFORMER_DEBUG_POISON=1);
  - with a mask: random prefix lengths as the mask;
  - without padding: the full length;
  - about a third of the f32 models split over 2 to 4 ranks
    ("sequence_parallel"; pooled and convolved ones where the ranks divide
    k, so that no window crosses a rank), which linformer-run runs as
    threads of one process and checks as one sequence, with lengths that
    end in any rank's share (and some ranks then hold none).

With --bf16-products K every K-th case compiles with --precision=bf16 (bf16
factors, f32 sums), with --bf16-dot=emulate, auto, off and amx in turn.
With --f16-products K every K-th case (of those bf16 products leave)
compiles with --precision=f16 (f16 factors, f32 sums), with --bf16-dot=amx
(AMX-FP16 tiles, emulated without them) and auto (the tiles where the CPU
has them, FMAs elsewhere) in turn. (An f16 model on a CPU with AMX-FP16
takes f16 products by default, whichever option.)
With --other-isa K every K-th case also compiles for another CPU than the
host, in turn: on an AVX-512 host --cpu=haswell (AVX2) and the other
vendor's AVX-512 cores (icelake-server on AMD, znver4 on Intel), each also
run and checked; on an AVX2 host --cpu=znver4 and icelake-server.
With --cuda-host every case also runs its whole encoder through the CUDA
pipeline's loop nest on the CPU (linformer-e2e --model --pipeline=cuda-host,
which compares with the same reference); --cuda-knobs draws two of three
such runs' CUDA pipeline options at random (tensor-core tiles emulated
exactly, staging, prefetch, ldmatrix, k chunks, split-K, the cores' lanes,
rows, slots and groups) and gives the third, where its attention cores run
with f32 products, a schedule file of random lanes and rows for each of
them (#linformer.cuda_f32_core_schedule), which the run must take or refuse
naming what does not fit. With --cuda-ptx K every K-th
valid case also compiles for a GPU (--target=cuda, sm_80 and sm_90 in turn,
every other sm_90 one with --cuda-wgmma (half of those with
--cuda-wgmma-in-flight=1), some with deeper k chunks, TF32
tensor cores or packed indexing; ptxas
makes the cubin where the toolkit has it, so a kernel it refuses fails the
case; every fourth sm_90 one, where its rows are whole 16 bytes, with a
tensor map of its data input bound past the parameters of the kernels that
read it), and runs that artifact on the
stand-in CUDA driver
(test/unit/FakeCudaDriver.c: loading, shared-memory opt-ins, launches;
nothing computes there, so nothing is compared).

With --schedules K every K-th valid case also compiles with a random
schedule file: the cost model's (--print-schedule) with every kernel's
workgroup tiles, register tile, reduction block and packing drawn anew
(mostly valid: tiles that divide their loops; now and then one that does
not, which linformer-compile must refuse naming the kernel's key), and
runs --check on the result.

With --vary-runtime every linformer-run takes 1 to 4 threads (drawn from
the case's run seed; 2 without it), so each kernel's workgroups are split
over other thread counts than the machine's; whole-sequence models' runs now
and then also open a second session (--sessions 2, which must give the same
bytes) and place their inputs and output off alignment (--io-offset).

Some cases are drawn invalid on purpose (a window that does not divide n,
k above n, heads that do not divide d_model, layer sharing with two k):
linformer-compile must refuse them with a model.json error naming the field.

Anything else fails the case: a compiler or runtime error on a valid model,
a crash, a wrong answer. A failing case prints its model.json and the
command lines that reproduce it; `--case I` runs case I of a seed alone.

  random_models.py --bin build/bin --count 100 --seed 1
  random_models.py --bin build/bin --seed 1 --case 37 --keep
"""

import argparse
import json
import os
import random
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

KINDS = ["learned", "mean_pool", "max_pool", "conv"]
PRESETS = {
    (False, False, False): "none",
    (True, False, False): "headwise",
    (True, True, False): "key_value",
    (True, True, True): "layerwise",
}
PRIMES = [2, 3, 5, 7, 11, 13, 17, 31, 37, 61, 127]


def host_has(word, field="flags"):
    """Whether /proc/cpuinfo's `field` lines name `word` (a CPU flag, or the
    vendor with field="vendor_id")."""
    try:
        with open("/proc/cpuinfo") as f:
            return any(line.startswith(field) and f" {word}" in line for line in f)
    except OSError:
        return False


# The other CPUs than this host's, in turn: AVX-512 hosts also compile (and
# run) for an AVX2 CPU and for the other vendor's AVX-512 cores (Intel's
# schedules differ from AMD's: register tiles of 8 to 14 rows by 32, a 48 KiB
# L1), AVX2 hosts compile for both AVX-512 ones.
OTHER_RUNS = host_has("avx512f")
OTHER_CPUS = (["haswell", "znver4" if host_has("GenuineIntel", "vendor_id") else "icelake-server"]
              if OTHER_RUNS else ["znver4", "icelake-server"])


def divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0]


def draw_model(rng):
    """One model.json (a dict), and None, or for a model drawn invalid the
    words its refusal must contain (they name the field and the rule)."""
    heads = rng.choice([1, 1, 2, 3, 4, 8])
    head_dim = rng.choice([1, 2, 3, 4, 5, 8, 8, 16])
    d_model = heads * head_dim
    batch = rng.choice([1, 1, 2, 3, 4])
    # n: often one of the other sizes, sometimes 1 or a prime.
    n = rng.choice([
        1, 2, rng.choice(PRIMES), rng.choice([8, 16, 24, 32, 48, 64, 96, 128]),
        d_model, head_dim, heads, batch, 2 * d_model, rng.randint(1, 128)])
    n = max(1, min(n, 160))
    ffn_dim = rng.choice([1, 3, d_model, 2 * d_model, n, head_dim, 50, 128])
    kind = rng.choice(KINDS + ["learned", "learned"])
    # Half the time a preset (the paper's names), else any flags.
    if rng.random() < 0.5:
        flags = rng.choice(list(PRESETS))
    else:
        flags = (rng.random() < 0.5, rng.random() < 0.5, rng.random() < 0.4)
    layers = rng.choice([1, 1, 2, 2, 3])

    def one_k():
        if kind == "learned":
            # k = n often: one E for K and V then makes E X [b, k, d_model]
            # the output's type (issue 67).
            if rng.random() < 0.35:
                return n
            pool = [1, n, max(1, n - 1), rng.randint(1, n)]
            pool += [v for v in (d_model, head_dim, ffn_dim, batch, heads) if v <= n]
            return rng.choice(pool)
        ds = divisors(n)
        pool = ds + [n, 1] + [v for v in (d_model, head_dim, batch, heads) if v in ds]
        return rng.choice(pool)

    has_params = kind in ("learned", "conv")
    if flags[2] and has_params:
        k = [one_k()] * layers
    else:
        k = [one_k() for _ in range(layers)]
    m = {
        "layers": layers, "d_model": d_model, "heads": heads, "max_seq_len": n,
        "ffn_dim": ffn_dim, "batch": batch, "projection": kind,
        "norm": rng.choice(["post", "pre"]),
        "bias": rng.random() < 0.7,
        "padding": rng.choice(["lengths", "lengths", "lengths", "mask", "none"]),
        "block": "attention" if rng.random() < 0.15 else "encoder",
        "dtype": rng.choice(["f32"] * 8 + ["bf16", "f16"]),
    }
    # k as a number, or a list (one per layer).
    m["k"] = k[0] if len(set(k)) == 1 and rng.random() < 0.6 else k
    if flags in PRESETS and rng.random() < 0.5:
        m["sharing"] = PRESETS[flags]
    else:
        m["sharing"] = {name: True for name, on in zip(("heads", "kv", "layers"), flags) if on}

    # Now and then an invalid model, which must be refused by name.
    invalid = None
    r = rng.random()
    if r < 0.03 and n > 1:
        m["k"] = [n + rng.randint(1, 3)] * layers
        invalid = "projected length k"
    elif r < 0.06 and kind != "learned" and n > 2:
        bad = [v for v in range(2, n) if n % v]
        if bad:
            m["k"] = [rng.choice(bad)] * layers
            invalid = "is not divisible by k"
    elif r < 0.08 and heads > 1:
        m["d_model"] = d_model + 1
        invalid = "does not divide d_model"
    elif r < 0.10 and has_params and layers > 1 and n > 1:
        m["sharing"] = {"heads": flags[0], "kv": flags[1], "layers": True}
        m["k"] = [1] + [n] * (layers - 1)
        invalid = "layer sharing needs one k"
    return m, invalid


def draw_sequence_parallel(rng, m, invalid):
    """Now and then a valid model split over ranks ("sequence_parallel": P,
    P dividing n, and k too for windows): (P, invalid, runs) with the runs
    linformer-run's ranks take (lengths, fewer sequences, packed; not
    poisoned padding). Or one drawn invalid: P not dividing n, or a
    window's k. None otherwise."""
    if invalid or m["dtype"] != "f32" or rng.random() >= 0.3:
        return None
    n, b = m["max_seq_len"], m["batch"]
    ranks = [p for p in (2, 3, 4) if n % p == 0]
    if m["projection"] != "learned":
        # Windows split at rank boundaries: P divides every layer's k.
        ks = m["k"] if isinstance(m["k"], list) else [m["k"]]
        whole = [p for p in ranks if all(k % p == 0 for k in ks)]
        if not whole:
            if ranks and rng.random() < 0.2:
                return rng.choice(ranks), "does not divide layer", []
            return None
        ranks = whole
    if not ranks:
        if n > 1:
            return n + 1, "does not divide max_seq_len", []
        return None
    if m["padding"] == "none":
        runs = [["--batch", str(b)]]
    else:
        # Lengths that end in any rank's share, or before the last (that
        # rank then runs with length 0).
        runs = [["--lengths", ",".join(str(rng.randint(1, n)) for _ in range(b))]]
        # Fewer sequences than compiled: lengths models only (a mask model
        # takes exactly its batch).
        if b > 1 and m["padding"] == "lengths":
            runs.append(["--lengths", ",".join(str(rng.randint(1, n))
                                               for _ in range(rng.randint(1, b - 1)))])
        if m["padding"] == "lengths":
            runs.append(["--packed", "--lengths",
                         ",".join(str(rng.randint(1, n)) for _ in range(b))])
    p = rng.choice(ranks)
    if m["padding"] == "mask":
        runs.append(["--packed", "--lengths",
                     ",".join(str(rng.randint(1, n)) for _ in range(b))])
    return p, None, runs


def draw_runs(rng, m):
    """linformer-run argument lists for the model's padding input."""
    n, b = m["max_seq_len"], m["batch"]

    def lengths(count):
        pool = [1, n, n, max(1, n - 1), max(1, n // 2)]
        return [rng.choice(pool + [rng.randint(1, n)]) for _ in range(count)]

    def fmt(ls):
        return ",".join(map(str, ls))

    if m["padding"] == "none":
        return [["--batch", str(b)]]
    if m["padding"] == "mask":
        return [["--lengths", fmt(lengths(b))]]
    runs = [["--lengths", fmt(lengths(b)), "--poison-padding"],
            ["--lengths", fmt(lengths(b)), "--packed"]]
    if b > 1:
        fewer = rng.randint(1, b - 1)
        runs.append(["--lengths", fmt(lengths(fewer)),
                     rng.choice(["--packed", "--poison-padding"])])
    return runs


class Case:
    def __init__(self, seed, index, args):
        self.seed, self.index = seed, index
        rng = random.Random(seed * 1000003 + index)
        self.model, self.invalid = draw_model(rng)
        self.runs = draw_runs(rng, self.model)
        self.run_seed = rng.randint(1, 1 << 30)
        # Now and then an FFN whose rows span 4 KiB (1024 f32, 2048 16-bit
        # values), which linformer-cpu-pad-row-strides pads: from a stream
        # of its own, as sequence parallelism below.
        wide = random.Random(seed * 1000003 + index + 2750159)
        if (self.model["block"] == "encoder" and self.invalid is None
                and wide.random() < 0.1):
            self.model["ffn_dim"] = 1024 if self.model["dtype"] == "f32" else 2048
        # Sequence parallelism from a stream of its own, so that the models
        # and runs above stay what they were for every seed and case.
        sp = draw_sequence_parallel(random.Random(seed * 1000003 + index + 7919),
                                    self.model, self.invalid)
        if sp:
            self.model["sequence_parallel"], self.invalid, self.runs = sp
        self.args = args

    def name(self):
        return f"case {self.index} (seed {self.seed})"

    def execute(self):
        """(ok, text): text is the report of a failure."""
        work = tempfile.mkdtemp(prefix=f"lf-random-{self.index}-", dir=self.args.work)
        mpath = os.path.join(work, "model.json")
        with open(mpath, "w") as f:
            json.dump(self.model, f)
        log = []
        bin_ = self.args.bin

        def run(cmd, timeout, env=None):
            prefix = "".join(f"{k}={v} " for k, v in (env or {}).items())
            log.append("$ " + prefix + " ".join(shlex.quote(c) for c in cmd))
            try:
                p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                   text=True, timeout=timeout,
                                   env={**os.environ, **env} if env else None)
            except subprocess.TimeoutExpired:
                log.append(f"timed out after {timeout} s")
                return None, ""
            except OSError as e:
                # A tool that cannot be started (a binary being rebuilt
                # under a soak) fails this case, not the whole run.
                log.append(f"could not start: {e}")
                return None, ""
            log.append(p.stdout.rstrip())
            return p.returncode, p.stdout

        def fail(why):
            text = [f"FAIL {self.name()}: {why}", "model.json: " + json.dumps(self.model)]
            text += log
            return False, "\n".join(text)

        lfa = os.path.join(work, "model.lfa")
        compile_cmd = [os.path.join(bin_, "linformer-compile"), mpath, "-o", lfa]
        # Every K-th case with bf16 products (linformer-run's --check then
        # bounds its error by the manifest's "products"), their dot
        # products in turn emulated (vdpbf16ps where the target has it,
        # shifts and FMAs elsewhere: the pair path on every host), as the
        # target decides (native on AVX512_BF16, FMAs elsewhere), off, and
        # AMX tiles (tdpbf16ps where the target has AMX-BF16, emulated
        # elsewhere).
        # Not for d_model 2: LayerNorm over two channels is a sign function
        # of their difference, which bf16 products flip where the two are
        # close (normwise 8e-2 on seed 20261202 case 296 in every product
        # path, f32 products 1.3e-5). Nor for d_model 3, whose LayerNorm
        # divides by the spread of three channels, which is as small where
        # they nearly agree (seed 20261237 case 54, post-norm, 3 heads of
        # width 1: normwise 3.4e-2 in a packed run with bf16 products on
        # FMAs, above their bound of 3e-2; f32 products 1.6e-7). Nor for stacks of bare attention
        # layers ("block": "attention", h = Attention(h), no residual): their
        # rows collapse towards one vector a layer, and the next layer's
        # token mixing (F V, P V) then cancels what is left of their
        # differences, which bf16 rounding of the factors swamps (seed
        # 20261204 case 161 and seed 20261205 case 12: 5.6e-2 and 3.8e-2 with
        # bf16-dot=off, output norms 1e-4 of their inputs').
        # Such models keep f32 products even where --precision=auto would
        # give a bf16 model bf16 ones (a host with AVX512_BF16 or AMX: seed
        # 20261203 case 279, d_model 2, pre-norm, bf16, lengths 1,1:
        # normwise 5.6e-2 in every product path, 1.6e-3 with f32 products).
        ill_conditioned = (self.model["d_model"] <= 3
                           or (self.model.get("block") == "attention"
                               and self.model["layers"] > 1))
        flags = ["--precision=f32"] if ill_conditioned else []
        if (self.args.bf16_products and not ill_conditioned
                and self.index % self.args.bf16_products == 1 % self.args.bf16_products):
            dot = ("emulate", "auto", "off", "amx")[(self.index // self.args.bf16_products) % 4]
            flags = ["--precision=bf16", f"--bf16-dot={dot}"]
        elif (self.args.f16_products and not ill_conditioned
                and self.index % self.args.f16_products == 1 % self.args.f16_products):
            dot = ("amx", "auto")[(self.index // self.args.f16_products) % 2]
            flags = ["--precision=f16", f"--bf16-dot={dot}"]
        compile_cmd += flags
        rc, out = run(compile_cmd, 300)
        if self.invalid:
            if rc == 1 and "model.json:" in out and self.invalid in out:
                self.cleanup(work)
                return True, f"refused {self.name()}: {out.strip().splitlines()[-1]}"
            return fail(f"an invalid model was not refused with '{self.invalid}'")
        if rc != 0:
            return fail("linformer-compile failed on a valid model")
        weights = os.path.join(work, "w.safetensors")
        for i, extra in enumerate(self.runs):
            cmd = [os.path.join(bin_, "linformer-run"), lfa, "--weights", weights,
                   "--random-input", "--seed", str(self.run_seed + i), *self.runtime(i),
                   "--check"] + extra
            # The first run also with every intermediate NaN before it runs
            # (the runtime's debug poisoning): a kernel that reads what no
            # kernel wrote shows up as a non-finite output.
            env = None
            if i == 0:
                cmd.append("--make-weights")
                env = {"LINFORMER_DEBUG_POISON": "1"}
            rc, out = run(cmd, 300, env)
            if rc != 0 or "PASS" not in out:
                return fail("linformer-run --check failed")
        if self.args.other_isa and self.index % self.args.other_isa == 0:
            # Another CPU's schedules (register tiles, packed panels, L2
            # blocks) differ: an AVX2 host compiles for AVX-512 CPUs (which
            # it cannot run), an AVX-512 host for an AVX2 one and the other
            # vendor's AVX-512 one (which it runs and checks too, unless the
            # runtime refuses it by name for a feature this CPU lacks).
            cpu = OTHER_CPUS[(self.index // self.args.other_isa) % len(OTHER_CPUS)]
            other = os.path.join(work, "other.lfa")
            rc, out = run([os.path.join(bin_, "linformer-compile"), mpath, "-o", other,
                           f"--cpu={cpu}"] + flags, 300)
            if rc != 0:
                return fail(f"linformer-compile --cpu={cpu} failed on a valid model")
            if OTHER_RUNS:
                extra = self.runs[0]
                rc, out = run([os.path.join(bin_, "linformer-run"), other, "--weights", weights,
                               "--random-input", "--seed", str(self.run_seed), *self.runtime(0),
                               "--check"] + extra, 300)
                refused = (rc == 1 and "LF_UNAVAILABLE" in out
                           and "which this CPU lacks" in out)
                if not refused and (rc != 0 or "PASS" not in out):
                    return fail(f"linformer-run --check failed on the --cpu={cpu} artifact")
        if (self.args.schedules and "sequence_parallel" not in self.model
                and self.index % self.args.schedules == 2 % self.args.schedules):
            ok, why = self.random_schedule(run, mpath, flags, work, weights)
            if not ok:
                return fail(why)
        if (self.args.cuda_ptx and "sequence_parallel" not in self.model
                and self.index % self.args.cuda_ptx == 0):
            # The GPU path's code generation (NVVM, PTX, ptxas) on this
            # model, and the runtime's loading and launching of it on the
            # stand-in driver.
            turn = self.index // self.args.cuda_ptx
            sm = (80, 90)[turn % 2]
            gpu = os.path.join(work, "gpu.lfa")
            cmd = [os.path.join(bin_, "linformer-compile"), mpath, "-o", gpu,
                   "--target=cuda", f"--sm={sm}"]
            if sm == 90 and turn % 4 == 1:
                cmd.append("--cuda-wgmma")
                # Half of those with a batch of wgmma left running past
                # each chunk.
                if turn % 8 == 5:
                    cmd.append("--cuda-wgmma-in-flight=1")
            if turn % 3 == 2:
                cmd.append(f"--cuda-chunk-k-contractions={(32, 64)[turn % 2]}")
            # f32 models in turn without tensor cores, on TF32 ones and on
            # 3xTF32.
            if self.model["dtype"] == "f32" and turn % 4 >= 2:
                cmd.append(("--cuda-mma=tf32", "--cuda-mma=tf32x3")[turn % 4 - 2])
            # With a lengths input, every fifth with packed indexing, which
            # its run on the stand-in driver then passes packed.
            packed = self.model["padding"] == "lengths" and turn % 5 == 4
            if packed:
                cmd.append("--cuda-packed-sequences")
            rc, out = run(cmd, 600)
            if rc != 0:
                return fail(f"linformer-compile --target=cuda --sm={sm} failed on a valid model")
            # Every other sm_90 one of them with a tensor map of its data
            # input bound past the parameters of the kernels that read it
            # (edit_manifest.py tensor-map-extra=): the runtime encodes it
            # on the stand-in driver, which refuses what the real one
            # would.
            # (Where its rows are whole 16 bytes, as a map's strides must be.)
            row = self.model["d_model"] * {"f32": 4, "f16": 2, "bf16": 2}[self.model["dtype"]]
            if sm == 90 and turn % 4 == 3 and row % 16 == 0:
                edit = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    os.pardir, os.pardir, "tools", "Inputs",
                                    "edit_manifest.py")
                mapped = os.path.join(work, "gpu-map.lfa")
                rc, out = run([sys.executable, edit, gpu, mapped,
                               "tensor-map-extra=@input"], 60)
                if rc != 0:
                    return fail("edit_manifest.py tensor-map-extra failed on the cuda artifact")
                gpu = mapped
            if self.args.fake_cuda:
                extra = [a for a in self.runs[0] if a != "--poison-padding"]
                if packed and "--packed" not in extra:
                    extra.append("--packed")
                rc, out = run([os.path.join(bin_, "linformer-run"), gpu, "--weights", weights,
                               "--random-input", "--seed", str(self.run_seed), "--device", "cuda",
                               "--repeat", "2"] + extra + (["--cuda-graphs"] if turn % 2 else []),
                              300, {"LF_CUDA_DRIVER": self.args.fake_cuda,
                                    "FAKE_CUDA": f"sm{sm}"})
                if rc != 0:
                    return fail("linformer-run of the cuda artifact failed on the stand-in driver")
        if self.args.cuda_host and "sequence_parallel" not in self.model:
            # f32 products (the emulation without tensor cores): 1e-4 for
            # f32 storage; 16-bit storage rounds the output (2^-11, 2^-8).
            tolerance = {"f32": 1e-4, "f16": 1e-3, "bf16": 3.92e-3}[self.model["dtype"]]
            cmd = [os.path.join(bin_, "linformer-e2e"), f"--model={mpath}",
                   "--pipeline=cuda-host", "--run-threads=0", f"--seed={self.run_seed}",
                   f"--tolerance={tolerance}", f"--work-dir={work}"]
            lengths = next((r[1] for r in self.runs if r[0] == "--lengths"
                            and len(r[1].split(",")) == self.model["batch"]), None)
            if lengths and self.model["padding"] == "lengths":
                cmd.append(f"--lengths={lengths}")
                # Every other case with the CUDA kernels' packed indexing.
                if self.index % 2:
                    cmd.append("--packed")
            # Two cases of three with random pipeline options, the third
            # with the defaults and, where its attention cores run with
            # f32 products, a schedule file giving each of them random
            # lanes and rows, which must either run or be refused by name.
            core_file, tf32 = None, False
            if self.args.cuda_knobs and self.index % 3:
                cmd += self.cuda_knobs(tolerance)
            elif self.args.cuda_knobs:
                core_file, why, tf32 = self.random_f32_core_schedules(run, mpath, work)
                if why:
                    return fail(why)
                if core_file:
                    cmd += ["--schedule", core_file]
                if tf32 == "tf32x3":
                    # 3xTF32 products: near f32's, the f32 bound kept.
                    cmd += ["--cuda-mma=tf32x3"]
                elif tf32:
                    # TF32 products: the TF32 GEMMs' tolerance (2e-3,
                    # cuda-host.test) on top of a 16-bit output's rounding.
                    cmd += ["--cuda-mma=tf32", f"--tolerance={tolerance + 2e-3:g}"]
            rc, out = run(cmd, 300)
            if (core_file and rc != 0 and "op cannot take the schedule of" in out
                    and ("need n a multiple of" in out or "do not divide its head width" in out
                         or "on TF32 tensor cores" in out or "do not divide its" in out)):
                self.core_note = (f"{tf32} " if tf32 else "") + "refused"
            elif rc != 0 or "PASS" not in out:
                return fail("the CUDA pipeline's loop nest (cuda-host) failed"
                            + (f" with the f32 core schedules of {core_file}" if core_file else ""))
            elif core_file:
                self.core_note = (f"{tf32} " if tf32 else "") + "checked"
        self.cleanup(work)
        note = getattr(self, "schedule_note", None)
        core = getattr(self, "core_note", None)
        return True, (f"ok {self.name()}" + (f"; random schedule {note}" if note else "")
                      + (f"; f32 core schedules {core}" if core else ""))

    def cuda_knobs(self, tolerance):
        """Random CUDA pipeline options for the cuda-host run (their own
        stream of draws): the tensor-core tiles emulated exactly (their
        structure at f32 accuracy, the f32 bound `tolerance` kept) or, for
        TF32, rounded as on the GPU (TF32 or 3xTF32), for 16-bit ones
        now and then as warpgroup MMAs (swizzled or not), staging, prefetch,
        ldmatrix, cp.async stages, k chunks, pair stores, split-K, the f32
        core's lanes and rows, the tensor-core core's slots, staging and
        groups, the staged SIMT tiles, the core fused or not, launches
        merged, split-K's parts added in the kernel or not."""
        rng = random.Random(self.seed * 1000003 + self.index + 31337)
        flip = lambda: rng.choice(["true", "false"])
        dtype = self.model["dtype"]
        mma = rng.choice(["none", "tf32"] + ([dtype] if dtype != "f32" else ["bf16", "f16"]))
        knobs = [f"--cuda-mma={mma}"]
        # Two TF32 draws in three round as the GPU does (their own stream):
        # TF32 at its GEMMs' tolerance on top of the bound (2e-3,
        # cuda-host.test), or 3xTF32 at the bound itself; the others, as
        # the 16-bit ones, emulated exactly at the bound.
        rounding = "exact"
        if mma == "tf32":
            rounding = random.Random(self.seed * 1000003 + self.index + 104729).choice(
                ["exact", "tf32", "tf32x3"])
        if rounding == "tf32x3":
            knobs = ["--cuda-mma=tf32x3"]
        elif rounding == "tf32":
            knobs.append(f"--tolerance={tolerance + 2e-3:g}")
        elif mma != "none":
            # One 16-bit draw in three runs warpgroup MMAs (their own
            # stream) as the GPU rounds them, swizzled 128, 64 or 32
            # bytes or not, a batch left in flight or not, tiles up to
            # m64n64, m64n128 or m64n256: bf16 / f16
            # products on top of the bound; the others exactly.
            wg = random.Random(self.seed * 1000003 + self.index + 7919)
            if wg.randrange(3) == 0:
                knobs += ["--cuda-wgmma",
                          f"--cuda-wgmma-swizzle={wg.choice([0, 32, 64, 128])}",
                          f"--cuda-wgmma-in-flight={wg.choice([0, 1])}",
                          f"--cuda-wgmma-tile-n={wg.choice([64, 128, 256])}",
                          f"--tolerance={tolerance + 1e-2:g}"]
            else:
                knobs.append("--cuda-mma-exact")
        knobs += [f"--cuda-stage-contractions={flip()}",
                  f"--cuda-prefetch-contractions={flip()}",
                  f"--cuda-ldmatrix-contractions={flip()}",
                  f"--cuda-ldmatrix-trans-contractions={flip()}",
                  f"--cuda-async-copy-contractions={flip()}",
                  f"--cuda-async-stages={rng.choice([2, 3, 4])}",
                  f"--cuda-chunk-k-contractions={rng.choice([16, 32, 64])}",
                  f"--cuda-pair-stores-contractions={flip()}",
                  f"--cuda-split-k-warps={rng.choice([-1, 1, 4, 64])}",
                  f"--cuda-simt-contractions={flip()}",
                  f"--cuda-fuse-core={rng.choice(['true', 'true', 'false'])}",
                  f"--cuda-core-lanes={rng.choice([0, 1, 4, 8, 16])}",
                  f"--cuda-core-rows={rng.choice([1, 2, 4])}",
                  f"--cuda-core-slots={rng.choice([16, 32, 64])}",
                  f"--cuda-stage-core={flip()}",
                  f"--cuda-ldmatrix-core={flip()}",
                  f"--cuda-core-groups={rng.choice([1, 2, 4])}",
                  f"--cuda-core-tiles={rng.choice([1, 2])}",
                  f"--cuda-blocks-per-sm={rng.choice([1, 2])}",
                  # Launches merged while their grids fit the SMs, never,
                  # or whatever their size (every independent pair on the
                  # same threads: the most merged kernels to check).
                  f"--cuda-merge-launches={rng.choice([-1, 0, 1 << 20])}",
                  # Staged split-K's parts added in the GEMM's kernel (the
                  # default) or by a loop of their own.
                  f"--cuda-split-k-in-kernel={rng.choice(['true', 'true', 'false'])}",
                  # Row sums' steps a lane takes an iteration (1: the
                  # loop of one load at a time).
                  f"--cuda-row-sum-unroll={rng.choice([1, 2, 4, 8])}",
                  # A lane's unrolled steps contiguous, one vector a load,
                  # or 32 apart.
                  f"--cuda-row-sum-vectors={flip()}",
                  # Weight-only launches once per session, or every run.
                  f"--cuda-initializers={flip()}"]
        return knobs

    def random_f32_core_schedules(self, run, mpath, work):
        """(path or None, why, tf32): a CUDA schedule file of the model's
        f32 attention cores only (--target=cuda --print-schedule's records
        of them), each with random lanes a row and rows a thread; None where
        no core runs with f32 products. Now and then (tf32: "tf32" or, one
        time in two, "tf32x3", else False) the run is to use that
        --cuda-mma and the cores go on TF32 tensor cores
        instead (three times in four where their shapes take TF32, one in
        six elsewhere): unstaged #linformer.cuda_core_schedule records of
        random warps, slots and query tiles a warp, which must run or be
        refused by name."""
        rc, out = run([os.path.join(self.args.bin, "linformer-compile"), mpath,
                       "--target=cuda", "--print-schedule"], 300)
        if rc != 0 or "{" not in out:
            return (None, "linformer-compile --target=cuda --print-schedule failed on a valid model",
                    False)
        doc = json.loads(out[out.index("{"):out.rindex("}") + 1])
        rng = random.Random(self.seed * 1000003 + self.index + 15485863)
        cores = [r for r in doc["kernels"]
                 if r["schedule"].startswith("#linformer.cuda_f32_core_schedule")]
        if not cores:
            return None, None, False
        # TF32 three times in four where every core's shape takes it (n and
        # k multiples of 16, d of 8: about one valid model in twenty), one
        # in six elsewhere (refused by name).
        def tf32_shape(r):
            _, n, d, k = map(int, r["key"].split("/")[1].split("x")[1:])
            return n % 16 == 0 and k % 16 == 0 and d % 8 == 0
        draw = random.Random(self.seed * 1000003 + self.index + 7919)
        tf32 = draw.random() < (3 / 4 if all(tf32_shape(r) for r in cores) else 1 / 6)
        if tf32:
            tf32 = draw.choice(["tf32", "tf32x3"])
        for r in cores:
            if tf32:
                # Query tiles a warp (1 or 2); warps whose tiles divide the
                # n / 16 query tiles and slots dividing k three times in
                # four, the fourth among all.
                _, n, _, k = map(int, r["key"].split("/")[1].split("x")[1:])
                tiles = rng.choice([1, 2])
                warps = [1, 2, 4, 8] if rng.random() < 0.25 else \
                    [x for x in (1, 2, 4, 8) if x == 1 or (n // 16) % (x * tiles) == 0]
                slots = [16, 32, 64] if rng.random() < 0.25 else \
                    [x for x in (16, 32, 64) if x == 16 or k % x == 0]
                r["schedule"] = (f"#linformer.cuda_core_schedule<warps = {rng.choice(warps)}, "
                                 f"slots = {rng.choice(slots)}, staged = false, groups = 1, "
                                 f"ldmatrix = false, wgmma = false, tiles = {tiles}>")
                continue
            # attention_core/BxHxNxDxK/...: three draws of four among the
            # counts that fit (rows: n a multiple of 32 of them; lanes:
            # dividing d, n a multiple of 32), the fourth among all.
            _, n, d, _ = map(int, r["key"].split("/")[1].split("x")[1:])
            rows = [1, 2, 4] if rng.random() < 0.25 else \
                [x for x in (1, 2, 4) if x == 1 or n % (32 * x) == 0]
            lanes = [1, 4, 8, 16] if rng.random() < 0.25 else \
                [x for x in (1, 4, 8, 16) if x == 1 or (d % x == 0 and n % 32 == 0)]
            r["schedule"] = (f"#linformer.cuda_f32_core_schedule<lanes = "
                             f"{rng.choice(lanes)}, rows = {rng.choice(rows)}>")
        doc["kernels"] = cores
        path = os.path.join(work, "f32-cores.json")
        with open(path, "w") as f:
            json.dump(doc, f)
        return path, None, tf32

    def random_schedule(self, run, mpath, flags, work, weights):
        """(ok, why): the model compiled with a random schedule file, which
        linformer-compile either refuses naming a kernel's key or compiles
        into an artifact that passes --check."""
        bin_ = self.args.bin
        compile_ = os.path.join(bin_, "linformer-compile")
        rc, out = run([compile_, mpath, "--print-schedule"] + flags, 300)
        if rc != 0 or "{" not in out:
            return False, "linformer-compile --print-schedule failed on a valid model"
        doc = json.loads(out[out.index("{"):out.rindex("}") + 1])
        rng = random.Random(self.seed * 1000003 + self.index + 104729)
        refusable = False
        for r in doc["kernels"]:
            s = r.get("schedule")
            if (not s or "split" in r.get("source", "") or r.get("kernel", "").startswith("(")
                    or "split" in s and s["split"] != 1):
                continue
            loops, iterators = r["loops"], r["iterators"]
            wg = list(s.get("workgroup", [0] * len(loops)))
            # An attention core's workgroups keep the value width whole.
            last = len(loops) - 1 if r["kind"] == "attention_core" else len(loops)
            for i, (extent, it) in enumerate(zip(loops, iterators)):
                if it != "p" or i >= min(len(wg), last) or rng.random() < 0.4:
                    continue
                if rng.random() < 0.01:
                    bad = [t for t in range(2, extent) if extent % t]
                    if bad:
                        wg[i] = rng.choice(bad)
                        refusable = True
                        continue
                wg[i] = rng.choice([0] + divisors(extent))
            s["workgroup"] = wg
            if r["kind"] != "attention_core":
                s["register"] = [rng.choice([1, 2, 3, 4, 5, 6, 8]),
                                 rng.choice([1, 4, 8, 16, 24, 32, 48, 64])]
                s["reduction"] = rng.choice([0, 0, 2, 4, 8, 16, 32, 64, 128, s.get("reduction", 0)])
                s["pack"] = rng.random() < 0.5
        spath = os.path.join(work, "schedule.json")
        with open(spath, "w") as f:
            json.dump(doc, f)
        slfa = os.path.join(work, "schedule.lfa")
        rc, out = run([compile_, mpath, "-o", slfa, "--schedule", spath] + flags, 300)
        if rc == 1 and "error" in out and any(r["key"] in out for r in doc["kernels"]):
            self.schedule_note = "refused: " + next(
                line for line in out.splitlines() if "error" in line)
            return True, ""
        if rc != 0:
            return False, ("linformer-compile --schedule failed on a valid model"
                           + (" (a refusal should name the kernel's key)" if rc == 1 else ""))
        if refusable and self.args.verbose:
            print(f"{self.name()}: a tile that does not divide its loop was not refused", flush=True)
        extra = self.runs[0]
        rc, out = run([os.path.join(bin_, "linformer-run"), slfa, "--weights", weights,
                       "--random-input", "--seed", str(self.run_seed), *self.runtime(0),
                       "--check"] + extra, 300)
        if rc != 0 or "PASS" not in out:
            return False, "linformer-run --check failed on the random schedule's artifact"
        self.schedule_note = "checked"
        return True, ""

    def runtime(self, i):
        """Run i's runtime options: --threads 2, or with --vary-runtime
        drawn from the case's run seed (not the model's draw, so a seed's
        models stay the same): 1 to 4 threads, over which the runtime splits
        each kernel's workgroups, each thread with its own cache of scratch
        blocks (a kernel that writes outside its workgroup's box, or a
        scratch block reused too early, answers differently); and for whole
        sequences now and then a second session on the same module and
        weights (--sessions 2: the same output bytes) and inputs and output
        placed 0 to 3 bytes past 64-byte alignment (--io-offset: bound in
        place or copied)."""
        if not self.args.vary_runtime:
            return ["--threads", "2"]
        rng = random.Random(self.run_seed * 31 + i)
        opts = ["--threads", str(rng.choice([1, 2, 3, 4]))]
        if "sequence_parallel" not in self.model:
            if rng.random() < 0.25:
                opts += ["--sessions", "2"]
            offset = rng.choice([None, None, 0, 1, 2, 3])
            if offset is not None:
                opts += ["--io-offset", str(offset)]
        return opts

    def cleanup(self, work):
        if not self.args.keep:
            shutil.rmtree(work, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="folder with linformer-compile and linformer-run")
    ap.add_argument("--count", type=int, default=100)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--case", type=int, action="append", help="run only these cases")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default=None, help="where the cases' files go (default: a temp folder)")
    ap.add_argument("--keep", action="store_true", help="keep every case's files")
    ap.add_argument("--cuda-host", action="store_true",
                    help="also run each valid case through the CUDA pipeline's loop nest on the CPU")
    ap.add_argument("--cuda-knobs", action="store_true",
                    help="with --cuda-host: two of three cases' runs with random CUDA "
                         "pipeline options")
    ap.add_argument("--other-isa", type=int, default=0, metavar="K",
                    help="every K-th case also compiles for another CPU than this host, in turn "
                         "AVX2 and the other vendor's AVX-512 (or two AVX-512 ones on an AVX2 "
                         "host), and runs it where the host can (0: none)")
    ap.add_argument("--bf16-products", type=int, default=0, metavar="K",
                    help="every K-th case compiles with --precision=bf16 (0: none)")
    ap.add_argument("--f16-products", type=int, default=0, metavar="K",
                    help="every K-th case compiles with --precision=f16 (0: none)")
    ap.add_argument("--cuda-ptx", type=int, default=0, metavar="K",
                    help="every K-th valid case also compiles --target=cuda (sm_80 / sm_90) and "
                         "runs on the stand-in CUDA driver (0: none)")
    ap.add_argument("--fake-cuda", default=None,
                    help="the stand-in driver for --cuda-ptx (default: BIN/../lib/"
                         "linformer_fake_cuda.so where it exists; none: compile only)")
    ap.add_argument("--schedules", type=int, default=0, metavar="K",
                    help="every K-th valid case also compiles with a random schedule file and "
                         "runs --check on it (0: none)")
    ap.add_argument("--vary-runtime", action="store_true",
                    help="each linformer-run draws --threads (1 to 4; default 2), "
                         "and for whole sequences --sessions 2 and --io-offset")
    ap.add_argument("--print", action="store_true", help="print the models, run nothing")
    ap.add_argument("-v", "--verbose", action="store_true")
    args = ap.parse_args()
    if args.cuda_ptx and args.fake_cuda is None:
        fake = os.path.join(args.bin, os.pardir, "lib", "linformer_fake_cuda.so")
        args.fake_cuda = os.path.abspath(fake) if os.path.exists(fake) else ""

    indices = args.case or list(range(args.count))
    cases = [Case(args.seed, i, args) for i in indices]
    if args.print:
        for c in cases:
            print(c.index, json.dumps(c.model), "invalid:" + c.invalid if c.invalid else "",
                  c.runs)
        return 0
    args.work = args.work or tempfile.mkdtemp(prefix="lf-random-")
    os.makedirs(args.work, exist_ok=True)
    start = time.time()
    failures, refused, schedules = [], 0, {"checked": 0, "refused": 0}
    cores = {f"{mma}{what}": 0 for mma in ("", "tf32 ", "tf32x3 ")
             for what in ("checked", "refused")}
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        for c, (ok, text) in zip(cases, pool.map(lambda c: c.execute(), cases)):
            if not ok:
                failures.append(text)
                print(text, flush=True)
                continue
            text, _, core = text.partition("; f32 core schedules ")
            if core:
                cores[core] += 1
            if "random schedule " in text:
                schedules["checked" if text.endswith("checked") else "refused"] += 1
            elif text.startswith("refused"):
                refused += 1
            if args.verbose:
                print(text + (f"; f32 core schedules {core}" if core else ""), flush=True)
    if not args.keep and not failures:
        shutil.rmtree(args.work, ignore_errors=True)
    print(f"random models: {len(cases)} cases (seed {args.seed}), "
          f"{len(cases) - refused - len(failures)} checked, {refused} refused by name, "
          f"{len(failures)} failed, {time.time() - start:.0f} s"
          + (f"; random schedules: {schedules['checked']} checked, {schedules['refused']} "
             f"refused by key" if args.schedules else "")
          + (f"; random f32 core schedules (cuda-host): "
             f"{sum(v for k, v in cores.items() if k.endswith('checked'))} checked, "
             f"{sum(v for k, v in cores.items() if k.endswith('refused'))} refused by name "
             f"(on TF32 tensor cores: {cores['tf32 checked']} checked, "
             f"{cores['tf32 refused']} refused; on 3xTF32: {cores['tf32x3 checked']} checked, "
             f"{cores['tf32x3 refused']} refused)"
             if args.cuda_knobs else ""))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
