"""examples/python/from_pytorch.py (the worked example of docs/Python.md)
runs and reproduces the trained model's output."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")
pytest.importorskip("linformer")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_from_pytorch_example(tmp_path):
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "from_pytorch.py"),
                        str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "ours vs PyTorch: normwise relative error" in r.stdout
