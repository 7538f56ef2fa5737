#!/usr/bin/env bash
#===- bench/peers/run.sh - our layer and encoder against the peers -------===#
#
# One command (not in CI): builds, creates the benchmark venv under build/
# (PyPI: torch with its CUDA libraries, jax[cpu], IREE compiler/runtime and
# iree-turbine, the lucidrains linformer package, numpy, matplotlib; ~6.5
# GB, once), measures the machine's FMA peak, then runs bench.py (every
# block x n x k, ours and every peer, same weights, input and threads) and
# plot.py. Results: bench/results/peers.csv, summary.md and *.png.
#
#   bench/peers/run.sh                       # the full sweep (hours: every
#                                            # measurement 6 processes, the
#                                            # best median counts; --repeats 2
#                                            # for about an hour)
#   bench/peers/run.sh --n 1024,4096 --k 256 # a quick one
#   bench/peers/run.sh --autotune            # ours compiled with --autotune
#   bench/peers/run.sh --isa avx2            # AVX2 mode on any machine: ours
#                                            # for znver3, peers limited to AVX2
#   bench/peers/run.sh --dtype bf16          # bf16 models: ours, torch eager,
#                                            # torch.compile and JAX in bf16
#   bench/peers/run.sh --precision bf16      # ours with bf16 products
#
# Extra arguments go to bench.py (--blocks, --n, --k, --peers, --threads,
# --runs, --repeats, --autotune, --isa, --isa-cpu, --dtype, --precision,
# --max-peer-gflop).
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${LINFORMER_BUILD_DIR:-$root/build}"

"$root/scripts/setup"
"$root/scripts/build"
if ! command -v /usr/bin/time >/dev/null; then
  SUDO=""; [ "$(id -u)" != 0 ] && SUDO="sudo"
  $SUDO apt-get install -y -qq time >/dev/null
fi
venv="$build/bench-venv"
if ! "$venv/bin/python" -c "import torch, jax, iree.turbine, linformer, matplotlib" 2>/dev/null; then
  echo "== creating $venv (torch, jax, IREE, linformer, matplotlib; several GB, once)"
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --upgrade pip
  "$venv/bin/pip" install -q numpy threadpoolctl matplotlib torch "jax[cpu]" \
    iree-base-compiler iree-base-runtime iree-turbine linformer
fi
"$venv/bin/python" "$root/bench/peers/bench.py" --build "$build" "$@"
# --isa avx2 writes its results beside the native ones, in results/avx2;
# --dtype bf16 in a bf16/ below that, --precision bf16 in bf16-products/
# below those.
results="$root/bench/results"
dtype=""
products=""
prev=""
for arg in "$@"; do
  case "$arg" in
    --isa=avx2) results="$root/bench/results/avx2" ;;
    --dtype=bf16) dtype=bf16 ;;
    --precision=bf16) products=bf16-products ;;
  esac
  if [ "$prev" = "--isa" ] && [ "$arg" = avx2 ]; then results="$root/bench/results/avx2"; fi
  if [ "$prev" = "--dtype" ] && [ "$arg" = bf16 ]; then dtype=bf16; fi
  if [ "$prev" = "--precision" ] && [ "$arg" = bf16 ]; then products=bf16-products; fi
  prev="$arg"
done
[ -n "$dtype" ] && results="$results/$dtype"
[ -n "$products" ] && results="$results/$products"
"$venv/bin/python" "$root/bench/peers/plot.py" "$results"
