"""linformer_mlir.torch: a compiled artifact as a PyTorch op and module.

    import linformer_mlir.torch as lft
    enc = lft.LinformerEncoder.from_artifact("model.lfa", "weights.safetensors")
    y = enc(x, lengths)                 # x: float32 CPU [b, L, d_model]
    y = enc(xp, cu_seqlens=offsets)     # packed: xp [T, d_model], y [T, d_model]

    # or straight from a PyTorch Linformer (lucidrains `Linformer`):
    enc = lft.compile_module(lucidrains_linformer, example_input)

The artifact runs as one custom op, `torch.ops.linformer_mlir.run`, registered
with `torch.library.custom_op` and a fake (meta) implementation, so a model
that contains it runs eagerly, under `torch.compile(fullgraph=True)` without a
graph break (the op is opaque to Dynamo and Inductor, which compile the rest),
and through `torch.export` (the op appears in the exported graph). Needs torch
>= 2.4. The op takes the artifact by a key (its path, its weights' path and
the thread count, as JSON): a session is loaded once per key and process and
shared by every call. Inputs are read without copies where they are
C-contiguous float32 CPU tensors (DLPack), and the output is written in place
into the tensor the op returns.

Bad input raises before any kernel runs: ValueError for a wrong dtype,
device or shape (the message names the argument), linformer_mlir.Error (a
RuntimeError) for what the runtime refuses. See docs/Python.md.
"""

import json as _json
import os as _os
import tempfile as _tempfile
import threading as _threading
from typing import Optional

import torch

from . import Error, Module, Session, Weights
from . import compile as _compile
from . import importer as _importer

__all__ = ["LinformerEncoder", "SequenceParallelEncoder", "compile_module", "run"]

if torch.__version__ < (2, 4):
    raise ImportError(f"linformer_mlir.torch needs torch >= 2.4 (torch.library.custom_op); "
                      f"this is torch {torch.__version__}")

_lock = _threading.Lock()
_modules = {}   # key -> Module (the fake implementation reads shapes from it)
_sessions = {}  # key -> Session


def _key(artifact, weights, threads):
    return _json.dumps([_os.path.abspath(_os.fspath(artifact)),
                        _os.path.abspath(_os.fspath(weights)), int(threads)])


def _module(key):
    with _lock:
        m = _modules.get(key)
        if m is None:
            m = _modules[key] = Module(_json.loads(key)[0])
        return m


def _session(key):
    with _lock:
        s = _sessions.get(key)
    if s is not None:
        return s
    artifact, weights, threads = _json.loads(key)
    s = Session(_module(key), Weights(weights), threads=threads)
    with _lock:
        return _sessions.setdefault(key, s)


def _output_shape(m, x):
    out = m.outputs[0]
    # Packed x [T, d]: the output is packed the same way, T rows.
    return (x.shape[0], *out.shape[2:]) if x.dim() == 2 else \
        (x.shape[0], x.shape[1], *out.shape[2:])


def _check_packed(m, x, cu_seqlens, lengths, mask):
    """The packed form's checks: x [T, d], cu_seqlens int [b + 1]. The
    offsets' values are data (the runtime checks them); their count is a
    shape, checked here."""
    d = m.data_input
    batch, width = m.batch, d.shape[2]
    roles = {t.role for t in m.inputs}
    if not isinstance(cu_seqlens, torch.Tensor) or cu_seqlens.device.type != "cpu":
        raise ValueError("cu_seqlens: expected a CPU torch.Tensor")
    if lengths is not None or mask is not None:
        raise ValueError("cu_seqlens: give it or lengths / mask, not both (a packed run takes "
                         "each sequence's length from its offsets)")
    if not roles & {"lengths", "mask"}:
        raise ValueError("cu_seqlens: the model has no lengths or mask input, so it cannot tell "
                         "where a packed sequence ends; pass x as [b, L, d]")
    if cu_seqlens.dtype not in (torch.int32, torch.int64) or cu_seqlens.dim() != 1 or \
            not 2 <= cu_seqlens.shape[0] <= batch + 1:
        raise ValueError(f"cu_seqlens: expected an int32 or int64 tensor of 2 to {batch + 1} offsets "
                         f"(0, then where each of 1 to {batch} sequences ends), "
                         f"got {cu_seqlens.dtype} {list(cu_seqlens.shape)}")
    if x.dim() != 2 or x.shape[1] != width:
        raise ValueError(f"x: packed (with cu_seqlens), expected shape [T, {width}], got {list(x.shape)}")


def _check(m, x, lengths, mask, cu_seqlens=None):
    """ValueError naming the argument, before any kernel runs."""
    d = m.data_input
    if not isinstance(x, torch.Tensor):
        raise ValueError(f"x: expected a torch.Tensor, got {type(x).__name__}")
    if d.dtype != "f32" or x.dtype != torch.float32:
        raise ValueError(f"x: expected dtype torch.float32 (the model's input '{d.name}' is {d.dtype}), "
                         f"got {x.dtype}")
    if x.device.type != "cpu":
        raise ValueError(f"x: expected a CPU tensor, got device '{x.device}' (the artifact runs on the CPU)")
    if cu_seqlens is not None:
        return _check_packed(m, x, cu_seqlens, lengths, mask)
    batch, n, width = m.batch, m.seq_len, d.shape[2]
    roles = {t.role for t in m.inputs}
    if x.dim() != 3 or x.shape[2] != width:
        raise ValueError(f"x: expected shape [b, L, {width}], got {list(x.shape)}")
    if not 1 <= x.shape[1] <= n:
        raise ValueError(f"x: {x.shape[1]} tokens; the model takes 1 to {n}")
    # A model with lengths takes 1 to its compiled batch (docs/Runtime.md).
    dynamic = "lengths" in roles
    if not (1 <= x.shape[0] <= batch if dynamic else x.shape[0] == batch):
        want = f"1 to {batch}" if dynamic else f"exactly {batch}"
        raise ValueError(f"x: batch {x.shape[0]}; the model takes {want} sequences")
    for name, t, role in (("lengths", lengths, "lengths"), ("mask", mask, "mask")):
        if t is None:
            continue
        if role not in roles:
            raise ValueError(f"{name}: the model takes no {name} (its padding inputs: "
                             f"{', '.join(sorted(r for r in roles if r)) or 'none'})")
        if not isinstance(t, torch.Tensor) or t.device.type != "cpu":
            raise ValueError(f"{name}: expected a CPU torch.Tensor")
        if role == "lengths":
            if t.dtype not in (torch.int32, torch.int64) or t.shape != (x.shape[0],):
                raise ValueError(f"{name}: expected an int32 or int64 tensor of shape [{x.shape[0]}], "
                                 f"got {t.dtype} {list(t.shape)}")
        elif t.dtype not in (torch.bool, torch.uint8, torch.int32, torch.int64) or \
                t.shape != tuple(x.shape[:2]):
            raise ValueError(f"{name}: expected a bool or integer tensor of shape {list(x.shape[:2])}, "
                             f"got {t.dtype} {list(t.shape)}")


@torch.library.custom_op("linformer_mlir::run", mutates_args=())
def run(x: torch.Tensor, lengths: Optional[torch.Tensor], mask: Optional[torch.Tensor],
        cu_seqlens: Optional[torch.Tensor], key: str) -> torch.Tensor:
    """Runs the artifact `key` names on x (lengths or mask as its padding
    input takes; none: every sequence is L tokens long), or on packed x
    [T, d] with cu_seqlens (then the output is packed too)."""
    m = _module(key)
    _check(m, x, lengths, mask, cu_seqlens)
    inputs = {m.data_input.name: x.detach().contiguous()}
    if cu_seqlens is not None:
        inputs["cu_seqlens"] = cu_seqlens.detach().contiguous()
    for t, role in (() if cu_seqlens is not None else ((lengths, "lengths"), (mask, "mask"))):
        desc = next((d for d in m.inputs if d.role == role), None)
        if desc is None:
            continue
        if t is None:
            if role == "mask":
                t = torch.ones(x.shape[:2], dtype=torch.uint8)
            else:
                t = torch.full((x.shape[0],), x.shape[1], dtype=torch.int32)
        inputs[desc.name] = t.detach().contiguous()
    out = torch.empty(_output_shape(m, x), dtype=torch.float32)
    _session(key).run(inputs, {m.outputs[0].name: out.numpy()})
    return out


@run.register_fake
def _(x, lengths, mask, cu_seqlens, key):
    m = _module(key)
    _check(m, x, lengths, mask, cu_seqlens)
    return x.new_empty(_output_shape(m, x))


class LinformerEncoder(torch.nn.Module):
    """An nn.Module around a compiled artifact: forward(x, lengths=None,
    mask=None) -> float32 [b, L, d_model], or forward(x, cu_seqlens=offsets)
    for packed x [T, d_model] -> [T, d_model]. Inference only (no
    autograd)."""

    def __init__(self, artifact, weights, threads=0):
        super().__init__()
        self.key = _key(artifact, weights, threads)
        m = _module(self.key)
        Weights(_json.loads(self.key)[1]).check(m)
        self.batch, self.seq_len = m.batch, m.seq_len
        self.d_model = m.data_input.shape[2]

    @classmethod
    def from_artifact(cls, artifact, weights, threads=0):
        return cls(artifact, weights, threads)

    def forward(self, x, lengths=None, mask=None, cu_seqlens=None):
        return torch.ops.linformer_mlir.run(x, lengths, mask, cu_seqlens, self.key)

    def extra_repr(self):
        artifact, weights, threads = _json.loads(self.key)
        return f"artifact={artifact!r}, weights={weights!r}, threads={threads}"


class SequenceParallelEncoder(torch.nn.Module):
    """One rank of a sequence split over the processes of a torch.distributed
    group (an artifact compiled with "sequence_parallel": P, P = the group's
    size; docs/Model.md, "Sequence parallelism"). Rank r holds tokens
    [r n, (r + 1) n) of every sequence (n = seq_len, a rank's share):

        dist.init_process_group("gloo")          # torchrun sets rank and size
        enc = SequenceParallelEncoder("sp.lfa", "w.safetensors")
        start, stop = enc.tokens                 # this rank's share
        y_r = enc(x[:, start:stop], lengths)     # lengths: the whole sequences'

    Each layer sums its projected keys and values over the ranks with one
    dist.all_reduce (in place on a CPU tensor over the session's buffer:
    gloo; NCCL needs CUDA tensors, so a CPU artifact takes a gloo group),
    called from forward in the same order on every rank. A rank that fails
    or dies makes the others' all_reduce fail (gloo's timeout bounds the
    wait: init_process_group(timeout=...)), and their forward raises
    linformer_mlir.Error (LF_ABORTED) with the transport's message.
    Inference only, float32 (or the model's dtype) CPU tensors."""

    def __init__(self, artifact, weights, group=None, threads=0):
        super().__init__()
        import torch.distributed as dist
        if not dist.is_initialized():
            raise RuntimeError("SequenceParallelEncoder needs torch.distributed: call "
                               "dist.init_process_group first (torchrun sets its rank and size)")
        self.group = group
        self.rank = dist.get_rank(group)
        self.ranks = dist.get_world_size(group)
        m = Module(artifact)
        if m.sequence_parallel == 0:
            raise ValueError(f"{artifact} runs whole sequences; compile the model with "
                             f"\"sequence_parallel\": {self.ranks} for this group")

        def all_reduce(buffer):
            dist.all_reduce(torch.from_numpy(buffer), group=group)

        self.session = Session(m, Weights(weights), threads=threads, rank=self.rank,
                               ranks=self.ranks, all_reduce=all_reduce)
        self.batch, self.seq_len = m.batch, m.seq_len
        self.d_model = m.data_input.shape[2]
        self._dtype = m.data_input.dtype

    @property
    def tokens(self):
        """(start, stop): the tokens of each sequence this rank holds."""
        return self.rank * self.seq_len, (self.rank + 1) * self.seq_len

    def forward(self, x, lengths=None):
        """x: this rank's tokens [b, L_r, d_model] (L_r = seq_len but on the
        ranks that hold a shorter input's end: fewer, or none); lengths: the
        whole sequences' lengths [b] (each rank takes its share of them,
        which may be 0). Returns this rank's output rows [b, L_r, d_model]."""
        if not isinstance(x, torch.Tensor) or x.device.type != "cpu" or x.dim() != 3:
            raise ValueError("x must be a CPU tensor [b, L_r, d_model] of this rank's tokens")
        rows = x.shape[1]
        if lengths is None and rows == 0:
            lengths = torch.zeros(x.shape[0], dtype=torch.int64)
        if rows == 0:
            # A rank past a short input's end still takes part in every
            # all-reduce: one padding row, length 0 (no work).
            x = x.new_zeros(x.shape[0], 1, x.shape[2])
        inputs = {"x": x.detach().contiguous().numpy()}
        if lengths is not None:
            whole = torch.as_tensor(lengths).to(torch.int64)
            start = self.rank * self.seq_len
            inputs["lengths"] = (whole - start).clamp(0, self.seq_len).to(torch.int32).numpy()
        out = self.session.run(inputs)
        return torch.from_numpy(next(iter(out.values())))[:, :rows]

    def extra_repr(self):
        return (f"rank={self.rank}, ranks={self.ranks}, seq_len={self.seq_len} a rank, "
                f"d_model={self.d_model}")


def _heads(module):
    for sub in module.modules():
        if hasattr(sub, "heads") and hasattr(sub, "to_q"):
            return int(sub.heads)
    raise ValueError("module: no attention with a 'heads' attribute (a lucidrains Linformer or "
                     "LinformerSelfAttention is expected)")


def compile_module(module, example_input, workdir=None, threads=0, padding=None, extra_args=()):
    """A PyTorch Linformer (lucidrains `Linformer`, `LinformerSelfAttention`
    or `LinformerLM`'s encoder) compiled by our pipeline: its state dict is
    imported (linformer_mlir.importer), compiled for this CPU with
    `linformer-compile` into `workdir` (a new temporary folder by default),
    and returned as a LinformerEncoder. `example_input` gives the batch (a
    maximum: a run may pass fewer sequences); `padding` ("lengths", "mask"
    or "none") the padding input the artifact takes. By default it takes
    what the source module takes: lucidrains runs any length up to its
    seq_len (slicing E), and so does the compiled encoder ("lengths": a
    shorter input is one of that many real tokens); "none" compiles for
    exactly seq_len tokens."""
    if not isinstance(example_input, torch.Tensor) or example_input.dim() != 3:
        raise ValueError("example_input: expected a tensor [b, n, d_model]")
    if padding not in (None, "lengths", "mask", "none"):
        raise ValueError(f"padding: expected 'lengths', 'mask', 'none' or None (the source "
                         f"module's behaviour), got {padding!r}")
    sd = {k: v.detach().cpu().float().numpy() for k, v in module.state_dict().items()}
    try:
        config, weights, _notes = _importer.import_state_dict(
            sd, fmt="lucidrains", heads=_heads(module), batch=example_input.shape[0], padding=padding)
    except _importer.CheckpointError as e:
        raise ValueError(f"module: {e}") from None
    workdir = workdir or _tempfile.mkdtemp(prefix="linformer-")
    _os.makedirs(workdir, exist_ok=True)
    model = _os.path.join(workdir, "model.json")
    with open(model, "w") as f:
        _json.dump(config, f)
    wpath = _os.path.join(workdir, "weights.safetensors")
    _importer.write_safetensors(wpath, weights, {"linformer.model": _json.dumps(config)})
    artifact = _compile(model, _os.path.join(workdir, "model.lfa"), extra_args=extra_args)
    return LinformerEncoder(artifact, wpath, threads)
