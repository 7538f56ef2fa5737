"""Fixtures of the Python tests: the build tree's package and tools.

scripts/test runs these through ctest (the `python` entry), with
PYTHONPATH=build/python and LINFORMER_BIN_DIR=build/bin."""

import os
import subprocess

import numpy as np
import pytest

import linformer_mlir as lf

BIN = os.environ.get("LINFORMER_BIN_DIR", "")


def tool(name):
    return os.path.join(BIN, name) if BIN else name


@pytest.fixture(scope="session")
def small(tmp_path_factory):
    """A compiled 2-layer encoder with random weights: (artifact, weights, config)."""
    d = tmp_path_factory.mktemp("small")
    config = {"layers": 2, "d_model": 64, "heads": 4, "max_seq_len": 128, "k": 32,
              "ffn_dim": 128, "padding": "lengths", "batch": 2}
    art = lf.compile(config, d / "m.lfa", random_weights=d / "w.safetensors")
    return art, str(d / "w.safetensors"), config


def run_tool(*args):
    return subprocess.run([tool(args[0]), *map(str, args[1:])], capture_output=True, text=True)


def rel_error(got, want):
    """Normwise relative error, as linformer-run --check reports it."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))
