"""From a trained PyTorch Linformer to a compiled artifact, and back to the
same numbers (docs/Python.md walks through it; python/tests runs it).

    PYTHONPATH=build/python LINFORMER_BIN_DIR=build/bin \
        build/py-venv/bin/python examples/python/from_pytorch.py [WORKDIR]
"""

import os
import subprocess
import sys
import tempfile

import numpy as np
import torch
from linformer import Linformer

import linformer_mlir as lf
from linformer_mlir import importer

work = sys.argv[1] if len(sys.argv) > 1 else tempfile.mkdtemp()

# 1. Train a small Linformer encoder for a few steps (a toy regression:
#    predict each token's running mean), as a user's own training would.
torch.manual_seed(0)
model = Linformer(dim=64, seq_len=256, depth=2, k=64, heads=4, share_kv=True)
opt = torch.optim.Adam(model.parameters(), lr=1e-3)
for step in range(50):
    x = torch.randn(8, 256, 64)
    target = x.cumsum(1) / torch.arange(1, 257)[None, :, None]
    loss = torch.nn.functional.mse_loss(model(x), target)
    opt.zero_grad()
    loss.backward()
    opt.step()
model.eval()
torch.save(model.state_dict(), os.path.join(work, "model.pt"))
print(f"trained: loss {loss.item():.4f}")

# 2. Import: model.json + weights in our names and layouts.
config, notes = importer.import_checkpoint(os.path.join(work, "model.pt"),
                                           os.path.join(work, "model.json"),
                                           os.path.join(work, "w.safetensors"), heads=4)
print("imported:", {k: config[k] for k in ("layers", "d_model", "heads", "max_seq_len", "k", "sharing")})

# 3. Compile (linformer-compile) and load.
lf.compile(os.path.join(work, "model.json"), os.path.join(work, "model.lfa"))
session = lf.load(os.path.join(work, "model.lfa"), os.path.join(work, "w.safetensors"), threads=2)

# 4. Same input, both models.
x = torch.randn(1, 256, 64)
with torch.no_grad():
    want = model(x).numpy()
got = session(x)
err = float(np.max(np.abs(got - want)) / np.max(np.abs(want)))
print(f"ours vs PyTorch: normwise relative error {err:.2e}")
sys.exit(0 if err <= 1e-5 else 1)
