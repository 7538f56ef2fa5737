#!/usr/bin/env bash
#===- bench/sequence_parallel/run.sh - one sequence on two processes -----===#
#
# Issue 71's measurement on one machine: the default encoder
# (examples/models/default.json: 4 layers, d_model 512, k 256, one E) at
# n = $N tokens (default 65536), compiled whole and with
# "sequence_parallel": 2, on the same weights and input. Timed, in one run:
#   - whole, 1 thread and 2 threads (linformer-run);
#   - 2 ranks x 1 thread: two processes under torchrun, gloo on loopback
#     (examples/sequence_parallel/encoder.py);
#   - rank 0 alone, 1 thread (linformer-run --rank 0: its all-reduce sums
#     nothing): a rank's own time and memory, with no Python or torch in
#     the process (what a C embedder's rank holds);
# with each process's peak resident memory (GNU time for linformer-run,
# ru_maxrss and the pre-encoder baseline, torch and Python, for the ranks)
# and the bytes each layer all-reduces (from the manifest). Medians of
# $REPEAT runs (default 3) after one warm-up. KIND=mean_pool, max_pool or
# conv measures that projection instead of the default encoder's learned
# one (its slots all-gathered). Not part of CI.
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${LINFORMER_BUILD_DIR:-$root/build}"
n="${N:-65536}"
repeat="${REPEAT:-3}"
kind="${KIND:-learned}"
venv="${LINFORMER_TORCH_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/linformer-mlir/torch-venv-2.15.0}"
dir="$build/bench/sequence_parallel/$kind-n$n"

"$root/scripts/setup" --tests >/dev/null
"$root/scripts/build" >/dev/null
mkdir -p "$dir"
lscpu | grep -m1 "Model name" || true
nproc

python3 - "$root/examples/models/default.json" "$n" "$dir" "$kind" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["max_seq_len"] = int(sys.argv[2])
if sys.argv[4] != "learned":
    m["projection"], m["sharing"] = sys.argv[4], "none"
json.dump(m, open(sys.argv[3] + "/whole.json", "w"))
m["sequence_parallel"] = 2
json.dump(m, open(sys.argv[3] + "/split.json", "w"))
PY
"$build/bin/linformer-compile" "$dir/whole.json" --random-weights "$dir/w.safetensors" -o "$dir/whole.lfa" >/dev/null
"$build/bin/linformer-compile" "$dir/split.json" -o "$dir/split.lfa" >/dev/null
python3 "$root/test/tools/Inputs/edit_manifest.py" --print-collectives "$dir/split.lfa"
layers=$(python3 -c "import json; print(json.load(open('$dir/whole.json'))['layers'])")
echo "layers: $layers (all-reduced bytes per layer: the total above / $layers, at any n)"

whole() { # threads
  /usr/bin/time -f "peak resident memory %M KiB" "$build/bin/linformer-run" "$dir/whole.lfa" \
    --weights "$dir/w.safetensors" --random-input --threads "$1" --warmup 1 --repeat "$repeat" 2>&1 |
    grep -E "median|peak resident"
}
echo "== whole, 1 thread"
whole 1
echo "== whole, 2 threads"
whole 2
echo "== 2 ranks x 1 thread (torchrun, gloo)"
PYTHONPATH="$build/python" "$venv/bin/python" -m torch.distributed.run --standalone \
  --nproc-per-node 2 "$root/examples/sequence_parallel/encoder.py" "$dir/split.lfa" \
  "$dir/w.safetensors" --threads 1 --warmup 1 --repeat "$repeat" --memory 2>&1 |
  grep -E "ranks:|rank [0-9]: peak"
echo "== rank 0 alone, 1 thread (linformer-run --rank 0)"
/usr/bin/time -f "peak resident memory %M KiB" "$build/bin/linformer-run" "$dir/split.lfa" \
  --weights "$dir/w.safetensors" --random-input --rank 0 --threads 1 --warmup 1 \
  --repeat "$repeat" 2>&1 | grep -E "median|peak resident"
