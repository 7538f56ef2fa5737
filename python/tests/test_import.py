"""linformer-import: PyTorch Linformer checkpoints compiled and run by us,
compared with the model they came from.

Tolerance: normwise relative error <= 1e-5 in f32 (the issue's bound). Both
sides compute in f32 with different summation orders and our polynomial
exp/erf; on these shapes the error is ~1e-6, and a wrong transpose, a
missing bias or a wrong sharing gives errors of order 1."""

import json

import numpy as np
import pytest

import linformer_mlir as lf
from linformer_mlir import importer
from conftest import rel_error, run_tool

torch = pytest.importorskip("torch")
linformer = pytest.importorskip("linformer")

TOL = 1e-5


def randomize(module, seed):
    """Non-trivial values everywhere (LayerNorm starts at 1 and 0, biases
    small), so that a parameter mapped to the wrong place shows."""
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for name, p in module.named_parameters():
            u = torch.empty(p.shape).uniform_(-1, 1, generator=g)
            if "norm.weight" in name:
                p.copy_(1 + 0.2 * u)
            else:
                p.copy_(u / max(1, p.shape[-1]) ** 0.5)


def compile_and_run(tmp_path, checkpoint, x, **kw):
    model_json, weights = tmp_path / "model.json", tmp_path / "w.safetensors"
    r = run_tool("linformer-import", checkpoint, "-o", model_json, "-w", weights,
                 *sum(([f"--{k}", str(v)] for k, v in kw.items()), []))
    assert r.returncode == 0, r.stderr
    config = json.loads(model_json.read_text())
    art = lf.compile(str(model_json), tmp_path / "m.lfa")
    return lf.load(art, weights, threads=2)(x), config


@pytest.mark.parametrize("options,sharing", [
    ({}, "headwise"),
    ({"share_kv": True}, "key_value"),
    ({"one_kv_head": True}, "headwise"),
    ({"one_kv_head": True, "share_kv": True}, "key_value"),
])
def test_lucidrains_linformer(tmp_path, options, sharing):
    torch.manual_seed(0)
    m = linformer.Linformer(dim=64, seq_len=128, depth=2, k=32, heads=4, **options).eval()
    randomize(m, 1)
    torch.save(m.state_dict(), tmp_path / "model.pt")
    x = torch.randn(1, 128, 64)
    with torch.no_grad():
        want = m(x).numpy()
    got, config = compile_and_run(tmp_path, tmp_path / "model.pt", x.numpy(), heads=4)
    assert config["sharing"] == sharing and config["norm"] == "pre"
    assert rel_error(got, want) <= TOL


def test_lucidrains_self_attention_from_safetensors_without_torch_load(tmp_path):
    torch.manual_seed(0)
    m = linformer.LinformerSelfAttention(dim=64, seq_len=128, k=16, heads=8).eval()
    randomize(m, 2)
    importer.write_safetensors(tmp_path / "attn.safetensors",
                               {k: v.numpy() for k, v in m.state_dict().items()})
    x = torch.randn(1, 128, 64)
    with torch.no_grad():
        want = m(x).numpy()
    got, config = compile_and_run(tmp_path, tmp_path / "attn.safetensors", x.numpy(), heads=8)
    assert config["block"] == "attention"
    assert rel_error(got, want) <= TOL


def test_lucidrains_lm_imports_its_encoder(tmp_path):
    torch.manual_seed(0)
    lm = linformer.LinformerLM(num_tokens=50, dim=64, seq_len=128, depth=1, k=32, heads=4).eval()
    randomize(lm, 3)
    torch.save(lm.state_dict(), tmp_path / "lm.pt")
    x = torch.randn(1, 128, 64)
    with torch.no_grad():
        want = lm.linformer(x).numpy()
    got, _ = compile_and_run(tmp_path, tmp_path / "lm.pt", x.numpy(), heads=4)
    assert rel_error(got, want) <= TOL


@pytest.mark.parametrize("make,message", [
    (lambda: linformer.Linformer(dim=64, seq_len=128, depth=1, k=32, heads=4, reversible=True),
     "reversible=True"),
    (lambda: linformer.Linformer(dim=64, seq_len=128, depth=1, k=32, heads=4, dim_head=8),
     "dim_head 8 x heads 4 = 32 differs from dim 64"),
])
def test_lucidrains_what_we_cannot_express_is_named(tmp_path, make, message):
    torch.save(make().state_dict(), tmp_path / "m.pt")
    r = run_tool("linformer-import", tmp_path / "m.pt", "-o", tmp_path / "m.json", "-w",
                 tmp_path / "w.safetensors", "--heads", "4")
    assert r.returncode == 1
    assert message in r.stderr
    assert not (tmp_path / "m.json").exists()


def test_gated_feed_forward_is_refused():
    m = linformer.Linformer(dim=64, seq_len=128, depth=1, k=32, heads=4)
    m.net.layers[0][1].fn = linformer.linformer.FeedForward(64, glu=True)
    sd = {k: v.detach().numpy() for k, v in m.state_dict().items()}
    with pytest.raises(importer.CheckpointError, match="gated"):
        importer.import_state_dict(sd, heads=4)


# ---------------------------------------------------------------------------
# fairseq: a synthetic state dict with fairseq's names, checked against an
# independent NumPy forward of its MultiheadLinearAttention and post-norm
# TransformerEncoderLayer (examples/linformer/linformer_src).


def fairseq_state_dict(rng, layers, dim, ffn, n, k, shared_kv, shared_layer, kv_bias=False):
    p = "encoder.sentence_encoder."
    sd = {}
    r = lambda *s: (rng.standard_normal(s) * 0.2).astype(np.float32)
    if shared_layer:
        sd[p + "compress_layer.weight"] = r(k, n)
        sd[p + "compress_layer.bias"] = r(k)  # present in fairseq, never used
    for i in range(layers):
        a = f"{p}layers.{i}.self_attn."
        for proj in ("q_proj", "k_proj", "v_proj", "out_proj"):
            sd[a + proj + ".weight"] = r(dim, dim)
            sd[a + proj + ".bias"] = r(dim) if (kv_bias or proj in ("q_proj", "out_proj")) \
                else np.zeros(dim, np.float32)
        if shared_layer:
            sd[a + "compress_k.weight"] = sd[p + "compress_layer.weight"]
        else:
            sd[a + "compress_k.weight"] = r(k, n)
            if not shared_kv:
                sd[a + "compress_v.weight"] = r(k, n)
        l = f"{p}layers.{i}."
        for ln in ("self_attn_layer_norm", "final_layer_norm"):
            sd[l + ln + ".weight"] = 1 + r(dim)
            sd[l + ln + ".bias"] = r(dim)
        sd[l + "fc1.weight"], sd[l + "fc1.bias"] = r(ffn, dim), r(ffn)
        sd[l + "fc2.weight"], sd[l + "fc2.bias"] = r(dim, ffn), r(dim)
    sd[p + "embed_tokens.weight"] = r(10, dim)
    return sd


def fairseq_forward(sd, x, heads, layers, shared_kv, shared_layer):
    """x: [b, L, d]; fairseq's math in float64."""
    from math import erf, sqrt
    p = "encoder.sentence_encoder."
    x = x.astype(np.float64)
    b, L, d = x.shape
    dh = d // heads
    gelu = np.vectorize(lambda v: 0.5 * v * (1 + erf(v / sqrt(2))))
    lin = lambda t, name: t @ sd[name + ".weight"].astype(np.float64).T + sd[name + ".bias"]

    def ln(t, name):
        mu = t.mean(-1, keepdims=True)
        var = ((t - mu) ** 2).mean(-1, keepdims=True)
        return (t - mu) / np.sqrt(var + 1e-5) * sd[name + ".weight"] + sd[name + ".bias"]

    for i in range(layers):
        a = f"{p}layers.{i}.self_attn."
        ek = sd[p + "compress_layer.weight"] if shared_layer else sd[a + "compress_k.weight"]
        ev = ek if (shared_kv or shared_layer) else sd[a + "compress_v.weight"]
        q = lin(x, a + "q_proj") * dh ** -0.5
        kk = lin(np.einsum("kn,bnd->bkd", ek[:, :L], x), a + "k_proj")
        vv = lin(np.einsum("kn,bnd->bkd", ev[:, :L], x), a + "v_proj")
        qh = q.reshape(b, L, heads, dh).transpose(0, 2, 1, 3)
        kh = kk.reshape(b, -1, heads, dh).transpose(0, 2, 1, 3)
        vh = vv.reshape(b, -1, heads, dh).transpose(0, 2, 1, 3)
        s = qh @ kh.transpose(0, 1, 3, 2)
        s = np.exp(s - s.max(-1, keepdims=True))
        o = (s / s.sum(-1, keepdims=True)) @ vh
        o = lin(o.transpose(0, 2, 1, 3).reshape(b, L, d), a + "out_proj")
        l = f"{p}layers.{i}."
        x = ln(x + o, l + "self_attn_layer_norm")
        x = ln(x + lin(gelu(lin(x, l + "fc1")), l + "fc2"), l + "final_layer_norm")
    return x


@pytest.mark.parametrize("shared_kv,shared_layer,sharing", [
    (False, False, "headwise"), (True, False, "key_value"), (False, True, "layerwise")])
def test_fairseq_linformer_roberta(tmp_path, shared_kv, shared_layer, sharing):
    rng = np.random.default_rng(4)
    sd = fairseq_state_dict(rng, layers=2, dim=64, ffn=128, n=128, k=32,
                            shared_kv=shared_kv, shared_layer=shared_layer)
    importer.write_safetensors(tmp_path / "roberta.safetensors", sd)
    # Shorter than n: fairseq slices E's columns, our lengths input pads.
    x = rng.standard_normal((1, 100, 64)).astype(np.float32)
    want = fairseq_forward(sd, x, 4, 2, shared_kv, shared_layer)
    got, config = compile_and_run(tmp_path, tmp_path / "roberta.safetensors", x, heads=4)
    assert config["sharing"] == sharing and config["norm"] == "post"
    assert rel_error(got, want) <= TOL


def test_fairseq_kv_bias_after_compression_is_named():
    sd = fairseq_state_dict(np.random.default_rng(5), 1, 64, 128, 128, 32, False, False, kv_bias=True)
    with pytest.raises(importer.CheckpointError, match="adds the k_proj bias after the sequence compression"):
        importer.import_state_dict(sd, heads=4)


def test_fairseq_needs_heads():
    sd = fairseq_state_dict(np.random.default_rng(6), 1, 64, 128, 128, 32, False, False)
    with pytest.raises(importer.CheckpointError, match="pass --heads"):
        importer.import_state_dict(sd)


def test_not_a_linformer_checkpoint(tmp_path):
    importer.write_safetensors(tmp_path / "x.safetensors", {"w": np.zeros(3, np.float32)})
    r = run_tool("linformer-import", tmp_path / "x.safetensors", "-o", tmp_path / "m.json",
                 "-w", tmp_path / "w.safetensors")
    assert r.returncode == 1
    assert "neither a lucidrains Linformer nor a fairseq Linformer state dict" in r.stderr


def test_fairseq_checkpoint_with_args_needs_allow_pickle(tmp_path):
    """A fairseq checkpoint ({"model": ..., "args": Namespace}) holds more
    than tensors: torch.load runs it only with --allow-pickle; then the
    heads come from its args."""
    import argparse
    rng = np.random.default_rng(7)
    sd = fairseq_state_dict(rng, 1, 64, 128, 128, 32, shared_kv=True, shared_layer=False)
    args = argparse.Namespace(encoder_attention_heads=4, encoder_normalize_before=False,
                              activation_fn="gelu")
    torch.save({"model": {k: torch.from_numpy(v) for k, v in sd.items()}, "args": args},
               tmp_path / "checkpoint.pt")
    out = ["-o", tmp_path / "m.json", "-w", tmp_path / "w.safetensors"]
    r = run_tool("linformer-import", tmp_path / "checkpoint.pt", *out)
    assert r.returncode == 1 and "pass --allow-pickle" in r.stderr, r.stderr
    r = run_tool("linformer-import", tmp_path / "checkpoint.pt", *out, "--allow-pickle")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "m.json").read_text())["heads"] == 4


@pytest.mark.parametrize("header,message", [
    (b'[1, 2]', "header is not a JSON object"),
    (b'{"w": {"dtype": "F32", "shape": [4], "data_offsets": [0, 64]}}', "outside the 0 bytes of data"),
    (b'{"w": {"dtype": "F32", "shape": "x"}}', "malformed header entry"),
])
def test_malformed_safetensors_are_named(tmp_path, header, message):
    import struct
    (tmp_path / "bad.safetensors").write_bytes(struct.pack("<Q", len(header)) + header)
    r = run_tool("linformer-import", tmp_path / "bad.safetensors", "-o", tmp_path / "m.json",
                 "-w", tmp_path / "w.safetensors")
    assert r.returncode == 1 and message in r.stderr, r.stderr
