#!/usr/bin/env bash
#===- bench/halide/run.sh - our schedules against Halide's autoschedulers -===#
#
# The same kernels from both code generators, in one run on one machine
# (issue: Halide as a second code generator). For the attention layer
# (bench/models/layer.json) and the default 4-layer encoder
# (examples/models/default.json), f32, $THREADS threads (default 2):
#   - our CPU pipeline (--backend=mlir, the cost model's schedules);
#   - Halide with Adams2019, Mullapudi2016 and Li2018 (--backend=halide);
#   - --backend=best (Adams2019 against ours, per kernel, timed at compile
#     time), compiled and then timed here like the others.
# Every artifact is checked against the reference. Per-kernel medians come
# from linformer-run --profile-json; the table and bench/results/halide-*.csv
# give each kernel's time and GFLOP/s under each generator and the machine's
# FMA peak (bench/peak). Not part of CI.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${LINFORMER_BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
repeat="${REPEAT:-5}"
out="$root/bench/results"

"$root/scripts/setup"
"$root/scripts/build"
mkdir -p "$build/bench/halide" "$out"
g++ -O2 -pthread "$root/bench/peak/peak.cpp" -o "$build/bench/linformer-peak"
peak=$("$build/bench/linformer-peak" --threads "$threads" --json 2>/dev/null)
echo "== peak ($threads threads): $peak"
lscpu | grep -m1 "Model name" || true

for model in "$root/bench/models/layer.json" "$root/examples/models/default.json"; do
  name=$(basename "$model" .json)
  dir="$build/bench/halide/$name"
  mkdir -p "$dir"
  "$build/bin/linformer-compile" "$model" --random-weights "$dir/w.safetensors" >/dev/null
  for variant in mlir adams2019 mullapudi2016 li2018 best; do
    case "$variant" in
      mlir|best) flags=(--backend="$variant") ;;
      *) flags=(--backend=halide --halide-autoscheduler="$variant") ;;
    esac
    start=$(date +%s.%N)
    "$build/bin/linformer-compile" "$model" "${flags[@]}" -o "$dir/$variant.lfa" \
      >"$dir/$variant.compile.log" 2>&1 || { cat "$dir/$variant.compile.log"; exit 1; }
    end=$(date +%s.%N)
    echo "== $name, $variant: compiled in $(python3 -c "print(round($end - $start, 1))") s"
    if [ "$variant" = best ]; then
      grep -E "^best: (kernels|no per-kernel)" "$dir/best.compile.log" || true
    fi
    "$build/bin/linformer-run" "$dir/$variant.lfa" --weights "$dir/w.safetensors" \
      --random-input --check --threads "$threads" --warmup 1 --repeat "$repeat" \
      --profile-json "$dir/$variant.json" | tail -2
  done
  # The same binary's median moves between processes on this shared machine
  # (buffer placement; up to 1.1x here): ours against best, interleaved.
  for round in 1 2 3; do
    for variant in mlir best; do
      "$build/bin/linformer-run" "$dir/$variant.lfa" --weights "$dir/w.safetensors" \
        --random-input --threads "$threads" --warmup 1 --repeat "$repeat" |
        sed -n "s/.*median \([0-9.]*\) ms.*/$variant \1/p"
    done
  done >"$dir/interleaved.txt"
  python3 - "$dir" "$name" "$out" "$peak" <<'PY'
import csv, json, os, sys
d, name, out, peak = sys.argv[1], sys.argv[2], sys.argv[3], json.loads(sys.argv[4])
peak_gflops = max(v for k, v in peak.items() if isinstance(v, (int, float)) and "gflop" in k.lower()) if isinstance(peak, dict) else None
variants = ("mlir", "adams2019", "mullapudi2016", "li2018", "best")
runs = {v: {k["symbol"]: k for k in json.load(open(os.path.join(d, v + ".json")))["kernels"]}
        for v in variants}
# Which generator made each kernel of the best artifact: its manifest (JSON
# inside the artifact file).
blob = open(os.path.join(d, "best.lfa"), "rb").read().decode("latin-1")
manifest, _ = json.JSONDecoder().raw_decode(blob, blob.index('{\n  "format": "linformer-artifact"'))
best_gen = {k["symbol"]: k.get("generator", "mlir") for k in manifest["kernels"]}
rows, total = [], {v: 0.0 for v in runs}
total["best_per_kernel"] = 0.0
for sym, k in runs["mlir"].items():
    ms = {v: runs[v][sym]["median_ms"] for v in runs if sym in runs[v]}
    if len(ms) != len(runs):
        continue
    for v in runs:
        total[v] += ms[v]
    total["best_per_kernel"] += min(ms["mlir"], ms["adams2019"])
    gen = best_gen.get(sym, "?")
    gf = lambda t: k["flops"] / (t * 1e6) if k.get("flops") else 0.0
    rows.append([sym, k.get("key", ""), f"{ms['mlir']:.3f}", f"{ms['adams2019']:.3f}",
                 f"{ms['mullapudi2016']:.3f}", f"{ms['li2018']:.3f}", f"{ms['best']:.3f}", gen,
                 f"{gf(ms['mlir']):.1f}", f"{gf(ms['adams2019']):.1f}",
                 "halide" if ms["adams2019"] < ms["mlir"] else "mlir"])
header = ["kernel", "key", "mlir_ms", "adams2019_ms", "mullapudi2016_ms", "li2018_ms", "best_ms",
          "best_generator", "mlir_gflops", "adams2019_gflops", "faster"]
with open(os.path.join(out, f"halide-{name}.csv"), "w", newline="") as f:
    w = csv.writer(f)
    w.writerow(header)
    w.writerows(rows)
print(f"\n{name}: per kernel (median ms; GFLOP/s; peak {peak_gflops} GFLOP/s)")
print(f"{'kernel':20s} {'key':40s} {'mlir':>8s} {'adams':>8s} {'mullapudi':>9s} {'li2018':>8s} {'best':>8s} {'(gen)':>7s} {'GF mlir':>8s} {'GF adams':>8s}  faster")
for r in rows:
    print(f"{r[0]:20s} {r[1][:40]:40s} {r[2]:>8s} {r[3]:>8s} {r[4]:>9s} {r[5]:>8s} {r[6]:>8s} {r[7]:>7s} {r[8]:>8s} {r[9]:>8s}  {r[10]}")
m = total["mlir"]
print(f"{name}: sums: mlir {m:.2f} ms, adams2019 {total['adams2019']:.2f} ms "
      f"({total['adams2019']/m:.2f}x ours), mullapudi2016 {total['mullapudi2016']:.2f} ms "
      f"({total['mullapudi2016']/m:.2f}x), li2018 {total['li2018']:.2f} ms ({total['li2018']/m:.2f}x), "
      f"best (compiled) {total['best']:.2f} ms ({total['best']/m:.2f}x), "
      f"best per kernel from these runs {total['best_per_kernel']:.2f} ms")
inter = {}
for line in open(os.path.join(d, "interleaved.txt")):
    v, t = line.split()
    inter.setdefault(v, []).append(float(t))
med = {v: sorted(ts)[len(ts) // 2] for v, ts in inter.items()}
print(f"{name}: interleaved, median of {len(inter['mlir'])} processes each: mlir {med['mlir']:.2f} ms, "
      f"best {med['best']:.2f} ms ({med['best']/med['mlir']:.3f}x ours); runs: "
      + ", ".join(f"{v} {ts}" for v, ts in inter.items()))
PY
done
echo "wrote $out/halide-layer.csv and $out/halide-default.csv"
