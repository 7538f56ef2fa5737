#!/bin/sh
# docs/generated holds what the build generates from TableGen (the dialect
# and the passes, CUDA's included): fails, with the difference, where a copy
# is stale. Usage: check-generated.sh BUILD/docs SOURCE/docs/generated
set -u
built=$1 kept=$2 status=0
for f in Dialects/LinformerDialect.md Passes/LinformerDialectPasses.md \
         Passes/LinformerCompilerPasses.md; do
  name=$(basename "$f")
  if ! diff -u "$kept/$name" "$built/$f"; then
    echo "docs/generated/$name is not what the build generates from TableGen:" \
         "run ninja -C build linformer-docs and commit it" >&2
    status=1
  fi
done
exit $status
