"""The benchmark's math, written for each peer (torch, JAX), and weight loading.

Every peer computes exactly what linformer-compile compiles for a model.json
(docs/Model.md): the attention layer in the (E X) W order the compiler picks
for layerwise sharing (K = (E X) W_k + rowsum(E) b_k: with biases, the K/V
biases are scaled by E's row sums), then, for "block": "encoder", the
post- or pre-norm residual/LayerNorm/FFN around it. Inputs are full length
(no padding), so the compiled model's lengths input is L for every sequence.
Modelled: "projection": "learned" with layerwise (or layers) sharing, the
benchmark's configuration, and "mean_pool" (any sharing: pooling has no
weights), whose windows of n / k tokens are averaged before the K/V
projections (mean(X W + b) = mean(X) W + b), as the compiler reassociates
it. Other kinds are refused.
"""

import json
import math
import struct

import numpy as np


def read_safetensors(path):
    """name -> float32 numpy array, from a safetensors file of F32, BF16 or
    F16 tensors (no torch; a bf16 is the upper half of an f32, exactly)."""
    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        if info["dtype"] == "F32":
            a = np.frombuffer(data[begin:end], dtype=np.float32).copy()
        elif info["dtype"] == "BF16":
            a = (np.frombuffer(data[begin:end], dtype=np.uint16).astype(np.uint32) << 16).view(np.float32)
        elif info["dtype"] == "F16":
            a = np.frombuffer(data[begin:end], dtype=np.float16).astype(np.float32)
        else:
            raise ValueError(f"{name}: only F32, BF16 and F16 weights are read here, not {info['dtype']}")
        out[name] = a.reshape(info["shape"])
    return out


def layer_weights(w, config, i):
    """Per-layer weights as a dict, biases None when the model has none."""
    p = f"layers.{i}."
    get = lambda name: w.get(p + name)
    shared = w.get("shared.e")
    e = shared if shared is not None else get("attn.e")
    lw = {k: get("attn." + k) for k in ("wq", "wk", "wv", "wo", "bq", "bk", "bv", "bo")}
    lw["e"] = e
    if config.get("block", "encoder") == "encoder":
        for k in ("ln1.gamma", "ln1.beta", "ln2.gamma", "ln2.beta", "ffn.w1", "ffn.b1", "ffn.w2", "ffn.b2"):
            lw[k] = get(k)
    return lw


def flops(config):
    """Multiply-add FLOPs (2 per multiply-add) of the order the compiler
    runs, as linformer-e2e and the manifest count them."""
    b, n, m = config.get("batch", 1), config["max_seq_len"], config["d_model"]
    k = config["k"] if isinstance(config["k"], int) else config["k"][0]
    f = config.get("ffn_dim", 2048)
    per_layer = 2 * (2 * b * n * m * m)  # Q and output projections
    per_layer += 2 * (2 * b * n * k * m)  # scores and P V
    per_layer += 2 * b * k * n * m  # E X (layerwise: once)
    per_layer += 2 * (2 * b * k * m * m)  # (E X) W_k, (E X) W_v
    if config.get("block", "encoder") == "encoder":
        per_layer += 2 * (2 * b * n * m * f)  # FFN
    return per_layer * config["layers"]


# --------------------------------------------------------------------------
# torch


def supported_projection(config):
    """(pooled, k): whether the model mean-pools (else learned), and its k."""
    kind = config.get("projection", "learned")
    if kind not in ("learned", "mean_pool"):
        raise SystemExit(f"bench/peers models 'learned' and 'mean_pool' projections, not '{kind}'")
    k = config["k"]
    if isinstance(k, list):
        k = k[0]
    return kind == "mean_pool", k


def torch_module(config, weights, full_attention=False):
    """An nn.Module computing the model; `full_attention` replaces the
    Linformer projection by standard softmax attention (SDPA)."""
    import torch
    import torch.nn.functional as F

    heads, dm = config["heads"], config["d_model"]
    d = dm // heads
    eps = config.get("layer_norm_eps", 1e-5)
    encoder = config.get("block", "encoder") == "encoder"
    pre = config.get("norm", "post") == "pre"
    pooled, k = supported_projection(config)
    t = lambda a: None if a is None else torch.nn.Parameter(torch.from_numpy(a), requires_grad=False)

    class Layer(torch.nn.Module):
        def __init__(self, lw):
            super().__init__()
            self.p = torch.nn.ParameterDict({k.replace(".", "_"): t(v) for k, v in lw.items() if v is not None})

        def attention(self, x):
            p = self.p
            b, n, _ = x.shape
            q = x @ p["wq"]
            if "bq" in p:
                q = q + p["bq"]
            if full_attention:
                kk, vv = x @ p["wk"], x @ p["wv"]
                if "bk" in p:
                    kk, vv = kk + p["bk"], vv + p["bv"]
                kh = kk.view(b, n, heads, d).transpose(1, 2)
                vh = vv.view(b, n, heads, d).transpose(1, 2)
                qh = q.view(b, n, heads, d).transpose(1, 2)
                o = F.scaled_dot_product_attention(qh, kh, vh)
            elif pooled:
                ex = x.view(b, k, n // k, x.shape[2]).mean(2)
                kp, vp = ex @ p["wk"], ex @ p["wv"]
                if "bk" in p:
                    kp, vp = kp + p["bk"], vp + p["bv"]
            else:
                e = p["e"]
                ex = torch.einsum("kn,bnm->bkm", e, x)
                kp, vp = ex @ p["wk"], ex @ p["wv"]
                if "bk" in p:
                    rs = e.sum(1)[:, None]
                    kp, vp = kp + rs * p["bk"], vp + rs * p["bv"]
            if not full_attention:
                kk = kp.shape[1]
                qh = q.view(b, n, heads, d).transpose(1, 2)
                kh = kp.view(b, kk, heads, d).transpose(1, 2)
                vh = vp.view(b, kk, heads, d).transpose(1, 2)
                s = (qh @ kh.transpose(-1, -2)) * (d ** -0.5)
                o = torch.softmax(s, dim=-1) @ vh
            o = o.transpose(1, 2).reshape(b, n, dm) @ p["wo"]
            if "bo" in p:
                o = o + p["bo"]
            return o

        def ln(self, x, which):
            return F.layer_norm(x, (dm,), self.p[which + "_gamma"], self.p[which + "_beta"], eps)

        def ffn(self, x):
            p = self.p
            h = x @ p["ffn_w1"]
            if "ffn_b1" in p:
                h = h + p["ffn_b1"]
            h = F.gelu(h) @ p["ffn_w2"]
            if "ffn_b2" in p:
                h = h + p["ffn_b2"]
            return h

        def forward(self, h):
            if not encoder:
                return self.attention(h)
            if pre:
                h = h + self.attention(self.ln(h, "ln1"))
                return h + self.ffn(self.ln(h, "ln2"))
            h = self.ln(h + self.attention(h), "ln1")
            return self.ln(h + self.ffn(h), "ln2")

    class Model(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = torch.nn.ModuleList(
                [Layer(layer_weights(weights, config, i)) for i in range(config["layers"])])

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            return x

    return Model().eval()


def lucidrains_module(config, weights):
    """The lucidrains `linformer` package's own modules with our weights.

    Where its structure differs from ours it cannot take our weights as they
    are: it has no Q/K/V biases (the caller zeroes ours), its encoder is
    pre-norm (compare with our "norm": "pre"), its share_kv also shares W_k
    and W_v (so share_kv=False with proj_k = proj_v = E^T is used), and it
    projects K and V after X W_k (E (X W), more FLOPs than our (E X) W).
    Returns (module, notes)."""
    import torch
    from linformer import Linformer, LinformerSelfAttention

    heads, dm, n = config["heads"], config["d_model"], config["max_seq_len"]
    k = config["k"] if isinstance(config["k"], int) else config["k"][0]
    notes = ["no Q/K/V biases (ours zeroed)", "E (X W) order", "share_kv=False, proj_k = proj_v = E^T"]

    def load_attention(attn, lw):
        with torch.no_grad():
            attn.to_q.weight.copy_(torch.from_numpy(lw["wq"].T))
            attn.to_k.weight.copy_(torch.from_numpy(lw["wk"].T))
            attn.to_v.weight.copy_(torch.from_numpy(lw["wv"].T))
            attn.proj_k.copy_(torch.from_numpy(lw["e"].T))
            attn.proj_v.copy_(torch.from_numpy(lw["e"].T))
            attn.to_out.weight.copy_(torch.from_numpy(lw["wo"].T))
            bo = lw["bo"] if lw["bo"] is not None else np.zeros(dm, np.float32)
            attn.to_out.bias.copy_(torch.from_numpy(bo))

    if config.get("block", "encoder") == "attention":
        assert config["layers"] == 1
        m = LinformerSelfAttention(dm, n, k=k, heads=heads, share_kv=False)
        load_attention(m, layer_weights(weights, config, 0))
        return m.eval(), notes
    m = Linformer(dm, n, config["layers"], k=k, heads=heads, share_kv=False)
    notes.append("pre-norm encoder (checked against our \"norm\": \"pre\")")
    for i, (attn_block, ff_block) in enumerate(m.net.layers):
        lw = layer_weights(weights, config, i)
        load_attention(attn_block.fn, lw)
        with torch.no_grad():
            attn_block.norm.weight.copy_(torch.from_numpy(lw["ln1.gamma"]))
            attn_block.norm.bias.copy_(torch.from_numpy(lw["ln1.beta"]))
            ff_block.norm.weight.copy_(torch.from_numpy(lw["ln2.gamma"]))
            ff_block.norm.bias.copy_(torch.from_numpy(lw["ln2.beta"]))
            ff = ff_block.fn
            ff.w1.weight.copy_(torch.from_numpy(lw["ffn.w1"].T))
            ff.w1.bias.copy_(torch.from_numpy(lw["ffn.b1"]))
            ff.w2.weight.copy_(torch.from_numpy(lw["ffn.w2"].T))
            ff.w2.bias.copy_(torch.from_numpy(lw["ffn.b2"]))
    return m.eval(), notes


# --------------------------------------------------------------------------
# JAX


def jax_function(config, weights, dtype="f32"):
    """A jitted function of x computing the model (weights as constants
    closed over, as a deployed model has them), in f32 or, with dtype
    "bf16", in bfloat16: weights, input, activations and matmuls, with
    LayerNorm's statistics and the softmax in f32 and rounded back, as
    torch's bf16 kernels compute them (and flax's LayerNorm, whose
    statistics are f32)."""
    import jax
    import jax.numpy as jnp

    jdtype = jnp.bfloat16 if dtype == "bf16" else jnp.float32

    heads, dm = config["heads"], config["d_model"]
    d = dm // heads
    eps = config.get("layer_norm_eps", 1e-5)
    encoder = config.get("block", "encoder") == "encoder"
    pre = config.get("norm", "post") == "pre"
    layers = [{k: (None if v is None else jnp.asarray(v, jdtype))
               for k, v in layer_weights(weights, config, i).items()}
              for i in range(config["layers"])]

    pooled, k = supported_projection(config)

    def attention(x, p):
        b, n, _ = x.shape
        q = x @ p["wq"] + (p["bq"] if p["bq"] is not None else 0)
        if pooled:
            ex = x.reshape(b, k, n // k, x.shape[2]).mean(2)
            kp, vp = ex @ p["wk"], ex @ p["wv"]
            if p["bk"] is not None:
                kp, vp = kp + p["bk"], vp + p["bv"]
        else:
            ex = jnp.einsum("kn,bnm->bkm", p["e"], x)
            kp, vp = ex @ p["wk"], ex @ p["wv"]
            if p["bk"] is not None:
                rs = p["e"].sum(1)[:, None]
                kp, vp = kp + rs * p["bk"], vp + rs * p["bv"]
        kk = kp.shape[1]
        qh = q.reshape(b, n, heads, d).transpose(0, 2, 1, 3)
        kh = kp.reshape(b, kk, heads, d).transpose(0, 2, 1, 3)
        vh = vp.reshape(b, kk, heads, d).transpose(0, 2, 1, 3)
        s = (qh @ kh.transpose(0, 1, 3, 2)) * (d ** -0.5)
        o = jax.nn.softmax(s.astype(jnp.float32), axis=-1).astype(jdtype) @ vh
        o = o.transpose(0, 2, 1, 3).reshape(b, n, dm) @ p["wo"]
        return o + (p["bo"] if p["bo"] is not None else 0)

    def ln(x, g, bta):
        x = x.astype(jnp.float32)
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return ((x - mu) / jnp.sqrt(var + eps) * g + bta).astype(jdtype)

    def ffn(x, p):
        h = x @ p["ffn.w1"] + (p["ffn.b1"] if p["ffn.b1"] is not None else 0)
        h = jax.nn.gelu(h, approximate=False) @ p["ffn.w2"]
        return h + (p["ffn.b2"] if p["ffn.b2"] is not None else 0)

    def forward(x):
        x = x.astype(jdtype)
        for p in layers:
            if not encoder:
                x = attention(x, p)
            elif pre:
                x = x + attention(ln(x, p["ln1.gamma"], p["ln1.beta"]), p)
                x = x + ffn(ln(x, p["ln2.gamma"], p["ln2.beta"]), p)
            else:
                x = ln(x + attention(x, p), p["ln1.gamma"], p["ln1.beta"])
                x = ln(x + ffn(x, p), p["ln2.gamma"], p["ln2.beta"])
        return x.astype(jnp.float32)

    return jax.jit(forward)


def rel_error(got, want):
    """Normwise relative error, as linformer-run --check reports it."""
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    return float(np.max(np.abs(got - want)) / max(np.max(np.abs(want)), 1e-30))
