#!/bin/sh
# docs/generated holds what the build generates from TableGen (the dialect
# and the passes, CUDA's included): fails, with the difference, where a copy
# is stale; and docs/Passes.md, the index passes-index.py writes from the
# sources. Usage: check-generated.sh BUILD/docs SOURCE/docs/generated [PYTHON]
set -u
built=$1 kept=$2 python=${3:-python3} status=0
for f in Dialects/LinformerDialect.md Passes/LinformerDialectPasses.md \
         Passes/LinformerCompilerPasses.md Passes/LinformerCPUPasses.md \
         Passes/LinformerCUDAPasses.md; do
  name=$(basename "$f")
  if ! diff -u "$kept/$name" "$built/$f"; then
    echo "docs/generated/$name is not what the build generates from TableGen:" \
         "run ninja -C build linformer-docs and commit it" >&2
    status=1
  fi
done
docs=$(cd "$kept/.." && pwd)
if ! "$python" "$docs/passes-index.py" "$docs/.." | diff -u "$docs/Passes.md" -; then
  echo "docs/Passes.md is not what docs/passes-index.py writes from the sources:" \
       "run ninja -C build linformer-docs and commit it" >&2
  status=1
fi
exit $status
