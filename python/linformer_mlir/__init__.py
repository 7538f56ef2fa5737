"""linformer_mlir: compile and run Linformer models from Python.

    import linformer_mlir as lf
    model = lf.load("model.lfa", "weights.safetensors", threads=2)
    y = model(x)                      # x: float32 [b, L, d_model], L <= n

`load` returns a `Session`; `Module`, `Weights` and `Session` mirror the C API
of the runtime (docs/Runtime.md), `compile` runs linformer-compile, and
`linformer_mlir.importer` turns PyTorch Linformer checkpoints into a
model.json and a safetensors file. Errors raise `linformer_mlir.Error` with
the runtime's status code and message ("LF_SHAPE_MISMATCH: ...").
See docs/Python.md.
"""

import json as _json
import os as _os
import shutil as _shutil
import subprocess as _subprocess

import numpy as _np

from . import _runtime
from ._runtime import Error

__all__ = ["Error", "Module", "Weights", "Session", "load", "compile", "version"]

_NUMPY_DTYPES = {"f32": _np.float32, "f16": _np.float16, "i32": _np.int32,
                 "i64": _np.int64, "u8": _np.uint8}


def version():
    """The runtime library's version, "MAJOR.MINOR.PATCH"."""
    return _runtime.version()


class TensorDesc:
    """One input, output or weight of a module: name, dtype, shape, role
    ("lengths", "mask" or "" for data)."""

    def __init__(self, name, dtype, shape, role):
        self.name, self.dtype, self.shape, self.role = name, dtype, tuple(shape), role

    def __repr__(self):
        role = f", role={self.role!r}" if self.role else ""
        return f"TensorDesc({self.name!r}, {self.dtype}, {list(self.shape)}{role})"


class Module:
    """A compiled artifact (.lfa), validated and loaded (docs/Runtime.md)."""

    def __init__(self, path):
        self._m = _runtime._Module.load(_os.fspath(path))
        self.inputs = [TensorDesc(*t) for t in self._m.inputs()]
        self.outputs = [TensorDesc(*t) for t in self._m.outputs()]
        self.weights = [TensorDesc(*t) for t in self._m.weights()]
        self.batch, self.seq_len = self._m.sequence_shape()
        # The ranks a sequence-parallel artifact splits a sequence over
        # ("sequence_parallel" in model.json), 0 for any other; seq_len is
        # then one rank's share.
        self.sequence_parallel = self._m.sequence_parallel()

    @property
    def data_input(self):
        """The input that carries the sequence (the one without a role)."""
        return next(d for d in self.inputs if not d.role)

    @property
    def manifest(self):
        """The artifact's manifest as a dict."""
        return _json.loads(self._m.manifest())


class Weights:
    """A safetensors file, mapped read-only (zero-copy)."""

    def __init__(self, path):
        self._w = _runtime._Weights.load(_os.fspath(path))

    def check(self, module):
        """Raises Error unless these weights are the ones `module` expects."""
        self._w.check(module._m)


def _contiguous(name, value, dtype):
    """`value` as a C-contiguous CPU array; no copy when it already is one of
    the expected dtype (NumPy arrays, or torch tensors through DLPack)."""
    if hasattr(value, "__dlpack__") and not isinstance(value, _np.ndarray):
        try:
            value = _np.from_dlpack(value)
        except (RuntimeError, TypeError, BufferError) as e:
            raise TypeError(f"tensor '{name}': {e}") from None
    a = _np.asarray(value)
    want = _NUMPY_DTYPES.get(dtype)
    if want is not None and a.dtype != want:
        if dtype == "u8" and a.dtype == _np.bool_:
            a = a.view(_np.uint8)
        elif dtype in ("i32", "i64", "u8") and not _np.issubdtype(a.dtype, _np.integer) \
                and a.dtype != _np.bool_:
            raise TypeError(f"tensor '{name}' has dtype {a.dtype}; the model takes {dtype}")
        elif dtype in ("i32", "i64"):
            info = _np.iinfo(want)
            if a.size and (a.min() < info.min or a.max() > info.max):
                raise ValueError(f"tensor '{name}' has values outside {dtype}")
            a = a.astype(want)
        elif dtype == "u8":
            a = (a != 0).astype(_np.uint8)  # masks: nonzero = real token
        else:
            a = a.astype(want)
    return _np.ascontiguousarray(a)


class Session:
    """A module bound to weights, with its threads and buffers. Calling it
    runs the model; sessions may be called from several Python threads (the
    GIL is released while kernels run). `spin_us`: how long its threads spin
    between kernels before sleeping (-1: the runtime's default, 200; 0: sleep
    at once; lf_session_options.spin_us). `cuda_graphs`: True, a cuda
    module's runs launch their kernels as one CUDA graph each, captured on
    first use of their launch shapes (lf_session_options.cuda_graphs);
    None (the default), the runs on device tensors do, unless profiling;
    False, none does. `cuda_graph_branches` N >= 2: a graph's kernels on up
    to N branches, each waiting only for the kernels it conflicts with
    (lf_session_options.cuda_graph_branches; 0, the default: one chain).

    A sequence-parallel module (Module.sequence_parallel = P > 0) needs
    `rank` (0 <= rank < ranks), `ranks` (= P) and `all_reduce`: a callable
    that sums a float32 NumPy array over the ranks in place (every rank
    calls it in the same order, once or twice per layer; an exception in it
    fails the run). linformer_mlir.torch.SequenceParallelEncoder passes
    torch.distributed's. See docs/Runtime.md, "Sequence parallelism"."""

    def __init__(self, module, weights, threads=0, profile=False, spin_us=-1,
                 rank=0, ranks=0, all_reduce=None, cuda_graphs=None,
                 cuda_graph_branches=0):
        if not isinstance(module, Module):
            module = Module(module)
        if not isinstance(weights, Weights):
            weights = Weights(weights)
        self.module, self.weights = module, weights
        self._s = _runtime._Session.create(module._m, weights._w, int(threads), bool(profile),
                                           int(spin_us), int(rank), int(ranks), all_reduce,
                                           -1 if cuda_graphs is None else int(bool(cuda_graphs)),
                                           int(cuda_graph_branches))

    @property
    def num_threads(self):
        return self._s.num_threads()

    def run(self, inputs, outputs=None):
        """Runs the model. `inputs` maps input names to arrays; `outputs`
        optionally maps output names to preallocated arrays (written in
        place). Returns a dict name -> array of every output.

        Packed (varlen) input, as FlashAttention's: with `cu_seqlens` (the
        b + 1 offsets 0, end of sequence 0, ..., T) the data input is
        [T, d], the sequences' real tokens end to end, and so is the
        output (docs/Runtime.md)."""
        by_name = {d.name: d for d in self.module.inputs}
        bound, keep = [], []
        seq = None
        packed = None  # T, the rows of a packed run
        for name, value in inputs.items():
            d = by_name.get(name)
            if d is None and name == "cu_seqlens":
                a = _contiguous(name, value, "i64")
                if a.ndim != 1 or a.size < 2:
                    raise ValueError("cu_seqlens must be 1-D with b + 1 offsets "
                                     f"(0 first), not shape {a.shape}")
                keep.append(a)
                bound.append((name, a))
                packed = int(a[-1])
                continue
            if d is None:
                raise Error(f"LF_INVALID_ARGUMENT: no input named '{name}' "
                            f"(inputs: {', '.join(by_name)})")
            a = _contiguous(name, value, d.dtype)
            keep.append(a)
            bound.append((name, a))
            if not d.role and a.ndim >= 2 and len(d.shape) >= 2 and d.shape[1] == self.module.seq_len:
                # (batch, tokens) of this run: a model with lengths takes
                # up to its compiled batch and n.
                seq = a.shape[:2]
        result = {}
        out_bound = []
        for d in self.module.outputs:
            given = (outputs or {}).get(d.name)
            if given is None:
                shape = list(d.shape)
                if packed is not None and len(shape) >= 2 and shape[1] == self.module.seq_len:
                    shape = [packed] + shape[2:]
                elif seq is not None and len(shape) >= 2 and shape[1] == self.module.seq_len:
                    shape[0], shape[1] = seq
                given = _np.empty(shape, dtype=_NUMPY_DTYPES[d.dtype])
            elif not (isinstance(given, _np.ndarray) and given.flags.c_contiguous):
                raise TypeError(f"output '{d.name}' must be a C-contiguous numpy array")
            result[d.name] = given
            out_bound.append((d.name, given))
        self._s.run(bound, out_bound)
        return result

    def __call__(self, x=None, **inputs):
        """`session(x, lengths=...)`: the data input positionally (or every
        input by name); returns the output array (a tuple for several)."""
        if x is not None:
            inputs[self.module.data_input.name] = x
        out = self.run(inputs)
        values = tuple(out.values())
        return values[0] if len(values) == 1 else values

    def profile(self):
        """Per-kernel times (sessions created with profile=True)."""
        return self._s.profile()

    def copied_bytes(self):
        """(in, out): bytes the last run copied from the inputs into the
        session's buffers and from those into the outputs; (0, 0) when the
        kernels read and wrote the arrays in place (docs/Runtime.md,
        "Copies")."""
        return self._s.copied_bytes()


def load(artifact, weights, threads=0, profile=False):
    """Loads an artifact and its weights: a Session ready to call."""
    return Session(Module(artifact), Weights(weights), threads=threads, profile=profile)


def _tool(name):
    """A linformer tool: $LINFORMER_BIN_DIR, the build tree, then PATH."""
    here = _os.path.dirname(_os.path.abspath(__file__))
    for d in (_os.environ.get("LINFORMER_BIN_DIR"),
              _os.path.join(here, "..", "..", "bin"),  # build/python/linformer_mlir
              _os.path.join(here, "bin")):
        if d and _os.access(_os.path.join(d, name), _os.X_OK):
            return _os.path.join(d, name)
    found = _shutil.which(name)
    if not found:
        raise FileNotFoundError(f"{name} not found: set LINFORMER_BIN_DIR or put it on PATH")
    return found


def compile(model, output, random_weights=None, extra_args=(), *, target="cpu",
            cpu=None, autotune=False, lengths_hint=None, tuning_cache=None,
            schedule=None, precision="auto"):
    """Compiles `model` (a model.json path, or a dict written to
    OUTPUT.json) into the artifact `output`; with `random_weights`, also
    writes seeded random weights there. `target`, `cpu`, `autotune`,
    `lengths_hint` (the real lengths served: the cost model plans for the
    shortest, --autotune times at them), `tuning_cache`, `schedule` and
    `precision` ("auto": bf16 products for a bf16 model on a CPU with
    AVX512_BF16 or AMX, f16 ones for an f16 model on a CPU with AMX-FP16,
    else f32; "f32"; "bf16": the CPU contractions multiply bf16 factors and
    sum in f32; or "f16": f16 factors, f32 sums, on AMX-FP16 tiles) are
    linformer-compile's flags of those names. Raises Error
    with the compiler's diagnostics on failure.

    The compiler runs in this process (linformer_mlir._compiler, with the
    GIL released) when the package has it, as the build tree's does;
    `extra_args` (more linformer-compile flags) or a package without it (pip
    installs the runtime only) runs linformer-compile instead."""
    output = _os.fspath(output)
    if isinstance(model, dict):
        path = output + ".json"
        with open(path, "w") as f:
            _json.dump(model, f)
        model = path
    model = _os.fspath(model)
    hint = [int(n) for n in (lengths_hint or ())]
    compiler = _in_process_compiler() if not extra_args else None
    if compiler is not None:
        ok, message, _log = compiler.compile(
            model, output, target=target, cpu=cpu or "",
            random_weights=_os.fspath(random_weights) if random_weights is not None else "",
            autotune=autotune, lengths_hint=hint,
            tuning_cache=_os.fspath(tuning_cache) if tuning_cache else "",
            schedule=_os.fspath(schedule) if schedule else "",
            precision=precision)
        if not ok:
            raise Error(f"LF_COMPILE_ERROR: {message.strip()}")
        return output
    cmd = [_tool("linformer-compile"), model, "-o", output, f"--target={target}",
           f"--precision={precision}", *extra_args]
    if cpu:
        cmd.append(f"--cpu={cpu}")
    if autotune:
        cmd.append("--autotune")
    if hint:
        cmd.append("--lengths-hint=" + ",".join(map(str, hint)))
    if tuning_cache:
        cmd += ["--tuning-cache", _os.fspath(tuning_cache)]
    if schedule:
        cmd += ["--schedule", _os.fspath(schedule)]
    if random_weights is not None:
        cmd += ["--random-weights", _os.fspath(random_weights)]
    p = _subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise Error(f"LF_COMPILE_ERROR: {p.stderr.strip() or p.stdout.strip()}")
    return output


def _in_process_compiler():
    """linformer_mlir._compiler, or None where the package lacks it."""
    try:
        from . import _compiler
    except ImportError:
        return None
    return _compiler
