"""python -m linformer_mlir.importer is the importer; this prints the version."""
from . import version

print(f"linformer_mlir {version()}")
