#!/usr/bin/env bash
#===- bench/lengths/pair.sh - ours against the static artifact, paired ---===#
#
# After bench/lengths/run.py (its work directory, default
# /tmp/linformer-bench-lengths): the n = 4096 artifact given L tokens and the
# n = L artifact run in turn, A B A B, and the median of the pairs' ratios is
# printed. On a shared machine a ratio of two runs minutes apart can be off
# by more than the effect measured; pairing keeps it meaningful.
#
#   bench/lengths/pair.sh BLOCK L [PAIRS=6] [REPEAT=10] [WORK]
#
#===----------------------------------------------------------------------===#
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
run="${LINFORMER_BUILD_DIR:-$root/build}/bin/linformer-run"
block=${1:?usage: pair.sh BLOCK L [PAIRS] [REPEAT] [WORK]}
L=${2:?usage: pair.sh BLOCK L [PAIRS] [REPEAT] [WORK]}
pairs=${3:-6}; repeat=${4:-10}; work=${5:-/tmp/linformer-bench-lengths}
median() { grep -o 'median [0-9.]*' | cut -d' ' -f2; }
for _ in $(seq "$pairs"); do
  a=$("$run" "$work/$block-n.lfa" --weights "$work/$block-n.st" \
        --input "x=$work/$block-x$L.npy" --warmup 2 --repeat "$repeat" --threads 2 | median)
  b=$("$run" "$work/$block-$L.lfa" --weights "$work/$block-$L.st" \
        --random-input --warmup 2 --repeat "$repeat" --threads 2 | median)
  echo "$a $b"
done | python3 -c "
import statistics as st, sys
p = [tuple(map(float, l.split())) for l in sys.stdin]
r = [a / b for a, b in p]
print('$block L=$L: ours %.3f ms, static %.3f ms, ours/static median %.3f '
      '(min %.3f, max %.3f, %d pairs)' % (st.median(a for a, _ in p),
      st.median(b for _, b in p), st.median(r), min(r), max(r), len(r)))"
