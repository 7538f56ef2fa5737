#!/usr/bin/env bash
#===- bench/layer/run.sh - one Linformer attention layer, against peers ---===#
#
# B=1, n=4096, d_model=512, h=8, k=256, f32, learned projection shared by
# heads and by K and V, 2 threads. In one run, on one machine:
#   1. the machine's peak (bench/peak: FMA GFLOP/s, 1 and 2 threads);
#   2. the generated kernels (linformer-e2e --repeat: compiled by the CPU
#      pipeline, workgroups on 2 threads, checked against the reference);
#   3. the peer: the same layer in NumPy/OpenBLAS sgemm (bench-venv).
# Prints GFLOP/s of each, as a fraction of the measured peak, and the ratio
# of the generated kernels to the peer. Not part of CI.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${LINFORMER_BUILD_DIR:-$root/build}"
threads="${THREADS:-2}"
repeat="${REPEAT:-10}"

"$root/scripts/setup"
"$root/scripts/build" linformer-e2e
mkdir -p "$build/bench"
g++ -O2 -pthread "$root/bench/peak/peak.cpp" -o "$build/bench/linformer-peak"
if [ ! -x "$build/bench-venv/bin/python" ]; then
  python3 -m venv "$build/bench-venv"
  "$build/bench-venv/bin/pip" install -q numpy threadpoolctl
fi

echo "== peak (FMA, $threads threads)"
peak_json=$("$build/bench/linformer-peak" --threads "$threads" --json 2>/dev/null)
echo "$peak_json"
echo "== generated kernels"
ours=$("$build/bin/linformer-e2e" --kind=learned --sharing=layerwise --n=4096 \
  --d-model=512 --heads=8 --k=256 --batch=1 --run-threads="$threads" \
  --repeat="$repeat" --tolerance=1e-3 ${EXTRA_FLAGS:-})
echo "$ours"
echo "== peer: NumPy (OpenBLAS), OPENBLAS_NUM_THREADS=$threads"
# The machine may set OPENBLAS_CORETYPE/OPENBLAS_L2_SIZE for old OpenBLAS
# builds; they slow a current one, so this command alone runs without them.
peer=$(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE OPENBLAS_NUM_THREADS="$threads" \
  "$build/bench-venv/bin/python" "$root/bench/layer/peer_numpy.py" 1 4096 512 8 256 "$repeat")
echo "$peer"

python3 - "$peak_json" "$ours" "$peer" "$threads" <<'PY'
import json, re, sys
peak = json.loads(sys.argv[1]); ours = sys.argv[2]; peer = json.loads(sys.argv[3])
t = sys.argv[4]
g = float(re.search(r"gflops=([0-9.]+)", ours).group(1))
ms = float(re.search(r"TIME median_ms=([0-9.]+)", ours).group(1))
p = peak["fma_gflops_nt"]
print("\n== summary (%s threads)" % t)
print("peak FMA           %7.1f GFLOP/s" % p)
print("generated kernels  %7.1f GFLOP/s  %6.1f ms  %5.1f%% of peak" % (g, ms, 100 * g / p))
print("NumPy/OpenBLAS     %7.1f GFLOP/s  %6.1f ms  %5.1f%% of peak  [%s]" % (
    peer["gflops"], peer["median_ms"], 100 * peer["gflops"] / p, peer["blas"]))
print("generated / peer   %7.2fx (time ratio %.2f)" % (g / peer["gflops"], peer["median_ms"] / ms))
PY
