"""linformer-import: PyTorch Linformer checkpoints -> model.json + safetensors.

Reads a state dict (a .pt/.bin/.pth through torch, or a .safetensors file
without torch) of

- the lucidrains `linformer` package: `Linformer` (the encoder, keys
  `net.layers.{i}.{0,1}...`), `LinformerSelfAttention` alone (keys `to_q...`),
  or the encoder inside `LinformerLM` (keys under `linformer.`);
- fairseq's Linformer RoBERTa (examples/linformer): the layers under
  `encoder.sentence_encoder.` (or any prefix ending in `layers.{i}.self_attn`),

and writes our model.json (docs/Model.md) and a safetensors file with our
names and layouts: nn.Linear weights [out, in] transposed to [in, out], the
projections as E [k, n], their sharing mapped to our flags. What our model
cannot express is an ImportError that names it. See docs/Python.md.
"""

import argparse
import json
import re
import struct
import sys

import numpy as np


class CheckpointError(Exception):
    """A checkpoint our model cannot express, or a malformed one."""


# -------------------------------------------------------------------------
# Reading state dicts


_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "F64": np.float64,
              "I64": np.int64, "I32": np.int32, "U8": np.uint8, "BOOL": np.bool_}


def read_safetensors(path):
    """name -> numpy array (float32 for floating tensors), no torch."""
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) != 8:
            raise CheckpointError("not a safetensors file (shorter than 8 bytes)")
        (n,) = struct.unpack("<Q", raw)
        if n > 100 << 20:
            raise CheckpointError(f"safetensors header of {n} bytes is implausible")
        try:
            header = json.loads(f.read(n))
        except ValueError as e:
            raise CheckpointError(f"safetensors header is not JSON: {e}") from None
        data = f.read()
    if not isinstance(header, dict):
        raise CheckpointError("safetensors header is not a JSON object")
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        try:
            dtype = info.get("dtype")
            begin, end = (int(v) for v in info["data_offsets"])
            shape = [int(d) for d in info["shape"]]
        except (AttributeError, KeyError, TypeError, ValueError):
            raise CheckpointError(f"tensor '{name}' has a malformed header entry") from None
        if not 0 <= begin <= end <= len(data):
            raise CheckpointError(f"tensor '{name}' has data offsets [{begin}, {end}] outside the "
                                  f"{len(data)} bytes of data")
        if dtype == "BF16":
            u16 = np.frombuffer(data[begin:end], dtype=np.uint16)
            a = (u16.astype(np.uint32) << 16).view(np.float32)
        elif dtype in _ST_DTYPES:
            if (end - begin) % np.dtype(_ST_DTYPES[dtype]).itemsize:
                raise CheckpointError(f"tensor '{name}': {end - begin} bytes is not a whole number "
                                      f"of {dtype} elements")
            a = np.frombuffer(data[begin:end], dtype=_ST_DTYPES[dtype])
        else:
            raise CheckpointError(f"tensor '{name}' has dtype {dtype}, which is not read")
        if a.size != int(np.prod(shape, dtype=np.int64)):
            raise CheckpointError(f"tensor '{name}' has {a.size} elements for shape {shape}")
        out[name] = a.reshape(shape)
    return out


def read_torch(path, allow_pickle=False):
    """A state dict from torch.save (a bare state dict, or a checkpoint with
    'model' (fairseq) or 'state_dict'), as name -> numpy; also returns the
    checkpoint's fairseq configuration when it has one.

    torch.load runs pickled code; by default only tensors and plain
    containers are accepted (weights_only=True). A checkpoint that needs
    more (fairseq's argparse Namespace) loads with allow_pickle, which
    trusts the file as much as running it."""
    import pickle

    import torch

    try:
        obj = torch.load(path, map_location="cpu", weights_only=not allow_pickle)
    except pickle.UnpicklingError as e:
        raise CheckpointError(
            f"torch.load refused it with weights_only=True ({str(e).splitlines()[0]}); if you "
            f"trust the file, pass --allow-pickle, or convert it to .safetensors") from None
    except (RuntimeError, EOFError, ValueError) as e:
        raise CheckpointError(f"torch.load cannot read it: {str(e).splitlines()[0]}") from None
    cfg = None
    if isinstance(obj, torch.nn.Module):
        obj = obj.state_dict()
    if isinstance(obj, dict) and "model" in obj and isinstance(obj["model"], dict):
        cfg = obj.get("cfg") or obj.get("args")
        if cfg is not None and not isinstance(cfg, dict):
            cfg = vars(cfg) if hasattr(cfg, "__dict__") else None
        if isinstance(cfg, dict) and isinstance(cfg.get("model"), dict):
            cfg = cfg["model"]
        elif isinstance(cfg, dict) and cfg.get("model") is not None and hasattr(cfg["model"], "__dict__"):
            cfg = vars(cfg["model"])
        obj = obj["model"]
    elif isinstance(obj, dict) and "state_dict" in obj and isinstance(obj["state_dict"], dict):
        obj = obj["state_dict"]
    if not isinstance(obj, dict):
        raise CheckpointError(f"it holds a {type(obj).__name__}, not a state dict")
    out = {}
    for name, t in obj.items():
        if isinstance(t, torch.Tensor):
            out[name] = t.detach().to(torch.float32).numpy() if t.is_floating_point() else t.numpy()
    return out, cfg


def read_state_dict(path, allow_pickle=False):
    if str(path).endswith(".safetensors"):
        return read_safetensors(path), None
    return read_torch(path, allow_pickle)


# -------------------------------------------------------------------------
# Writing ours


def write_safetensors(path, tensors, metadata=None):
    """Our safetensors layout: f32, names sorted, data 64-byte aligned."""
    header, offset, blobs = {}, 0, []
    if metadata:
        header["__metadata__"] = metadata
    for name in sorted(tensors):
        a = np.ascontiguousarray(tensors[name], dtype=np.float32)
        b = a.tobytes()
        header[name] = {"dtype": "F32", "shape": list(a.shape), "data_offsets": [offset, offset + len(b)]}
        offset += len(b)
        blobs.append(b)
    text = json.dumps(header, separators=(",", ":"))
    text += " " * ((-(8 + len(text))) % 64)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)))
        f.write(text.encode())
        for b in blobs:
            f.write(b)


# -------------------------------------------------------------------------
# Helpers


def _need(sd, name, shape=None):
    if name not in sd:
        raise CheckpointError(f"the checkpoint has no '{name}'")
    a = np.asarray(sd[name], dtype=np.float32)
    if shape is not None and tuple(a.shape) != tuple(shape):
        raise CheckpointError(f"'{name}' has shape {list(a.shape)}, expected {list(shape)}")
    return a


def _layer_count(sd, pattern):
    ids = {int(m.group(1)) for k in sd for m in [re.fullmatch(pattern, k)] if m}
    if not ids:
        return 0
    if ids != set(range(max(ids) + 1)):
        raise CheckpointError(f"layers {sorted(set(range(max(ids) + 1)) - ids)} are missing")
    return max(ids) + 1


def _strip(sd, prefix):
    return {k[len(prefix):]: v for k, v in sd.items() if k.startswith(prefix)}


# -------------------------------------------------------------------------
# lucidrains/linformer


def _lucidrains_attention(sd, p, heads, dim, ours, o):
    """One LinformerSelfAttention under prefix `p` into our layer `o`.
    Returns (n, k, share_kv)."""
    wq = _need(sd, p + "to_q.weight")
    if wq.shape[1] != dim:
        raise CheckpointError(f"'{p}to_q.weight' has shape {list(wq.shape)}; expected [*, {dim}]")
    inner = wq.shape[0]
    if inner % heads:
        raise CheckpointError(f"'{p}to_q.weight' has {inner} rows, not a multiple of heads {heads} "
                           f"(pass the model's --heads)")
    dh = inner // heads
    if inner != dim:
        raise CheckpointError(f"dim_head {dh} x heads {heads} = {inner} differs from dim {dim}; our "
                           f"model needs heads x head size = d_model (dim_head = dim / heads)")
    wk = _need(sd, p + "to_k.weight")
    one_kv_head = wk.shape[0] == dh and heads > 1
    if wk.shape not in ((inner, dim), (dh, dim)):
        raise CheckpointError(f"'{p}to_k.weight' has shape {list(wk.shape)}; expected "
                           f"[{inner}, {dim}] or [{dh}, {dim}] (one_kv_head)")
    share_kv = p + "to_v.weight" not in sd
    wv = wk if share_kv else _need(sd, p + "to_v.weight", wk.shape)
    pk = _need(sd, p + "proj_k")
    n, k = pk.shape
    pv = pk if share_kv else _need(sd, p + "proj_v", (n, k))
    wo = _need(sd, p + "to_out.weight", (dim, inner))
    bo = _need(sd, p + "to_out.bias", (dim,))
    if one_kv_head:
        # One K/V head broadcast to every head: the same columns per head.
        wk, wv = np.tile(wk, (heads, 1)), np.tile(wv, (heads, 1))
    ours[o + "attn.wq"] = wq.T
    ours[o + "attn.wk"] = wk.T
    ours[o + "attn.wv"] = wv.T
    ours[o + "attn.wo"] = wo.T
    # No Q/K/V biases in lucidrains; ours are zero, its output bias kept.
    for b in ("bq", "bk", "bv"):
        ours[o + "attn." + b] = np.zeros(dim, np.float32)
    ours[o + "attn.bo"] = bo
    ours[o + "attn.e"] = pk.T
    if not share_kv:
        ours[o + "attn.f"] = pv.T
    return n, k, share_kv


def import_lucidrains(sd, heads):
    """(model config, our weights, notes) from a lucidrains state dict."""
    notes = []
    if any(k.startswith("token_emb.") for k in sd):
        notes.append("LinformerLM: imported its encoder (linformer.*); token/position embeddings and "
                     "the logits head stay in PyTorch")
        sd = _strip(sd, "linformer.")
    if any(k.startswith("net.blocks.") for k in sd):
        raise CheckpointError("reversible=True: a reversible Linformer (two half-width residual streams) "
                           "is not our encoder; retrain or export with reversible=False")
    ours = {}
    if "to_q.weight" in sd:  # LinformerSelfAttention alone
        dim = _need(sd, "to_q.weight").shape[1]
        n, k, share_kv = _lucidrains_attention(sd, "", heads, dim, ours, "layers.0.")
        config = {"block": "attention", "layers": 1}
        kvs = [share_kv]
        ks = [k]
    else:
        layers = _layer_count(sd, r"net\.layers\.(\d+)\.0\.fn\.to_q\.weight")
        if not layers:
            raise CheckpointError("not a lucidrains Linformer state dict (no 'net.layers.0.0.fn.to_q.weight' "
                               "or 'to_q.weight')")
        dim = _need(sd, "net.layers.0.0.fn.to_q.weight").shape[1]
        ks, kvs, ns, ffn = [], [], set(), None
        for i in range(layers):
            p, o = f"net.layers.{i}.", f"layers.{i}."
            n, k, share_kv = _lucidrains_attention(sd, p + "0.fn.", heads, dim, ours, o)
            ks.append(k)
            kvs.append(share_kv)
            ns.add(n)
            ours[o + "ln1.gamma"] = _need(sd, p + "0.norm.weight", (dim,))
            ours[o + "ln1.beta"] = _need(sd, p + "0.norm.bias", (dim,))
            ours[o + "ln2.gamma"] = _need(sd, p + "1.norm.weight", (dim,))
            ours[o + "ln2.beta"] = _need(sd, p + "1.norm.bias", (dim,))
            w1 = _need(sd, p + "1.fn.w1.weight")
            w2 = _need(sd, p + "1.fn.w2.weight")
            if w1.shape[0] == 2 * w2.shape[1]:
                raise CheckpointError(f"layer {i}: the feed-forward is gated (glu=True); our FFN is "
                                   f"GELU(x W1 + b1) W2 + b2")
            if w1.shape != (w2.shape[1], dim) or w2.shape[0] != dim:
                raise CheckpointError(f"layer {i}: feed-forward weights {list(w1.shape)} and "
                                   f"{list(w2.shape)} do not fit dim {dim}")
            if ffn is not None and w1.shape[0] != ffn:
                raise CheckpointError(f"layer {i}: feed-forward width {w1.shape[0]} differs from layer 0's {ffn}")
            ffn = w1.shape[0]
            ours[o + "ffn.w1"] = w1.T
            ours[o + "ffn.b1"] = _need(sd, p + "1.fn.w1.bias", (ffn,))
            ours[o + "ffn.w2"] = w2.T
            ours[o + "ffn.b2"] = _need(sd, p + "1.fn.w2.bias", (dim,))
        if len(ns) != 1:
            raise CheckpointError(f"the layers' projections have different sequence lengths {sorted(ns)}")
        config = {"block": "encoder", "layers": layers, "ffn_dim": ffn, "norm": "pre",
                  "activation": "gelu", "layer_norm_eps": 1e-5}
        notes.append("pre-norm encoder (PreNorm), no final LayerNorm, as lucidrains")
    if len(set(kvs)) != 1:
        raise CheckpointError("share_kv differs between layers; our sharing is one setting for the model")
    config.update({"d_model": dim, "heads": heads, "max_seq_len": n, "k": ks if len(set(ks)) > 1 else ks[0],
                   "projection": "learned", "bias": True, "padding": "lengths", "batch": 1,
                   "sharing": "key_value" if kvs[0] else "headwise", "dtype": "f32"})
    notes.append("padding 'lengths': lucidrains takes any length up to seq_len and slices E to it, "
                 "which our lengths input reproduces")
    if kvs[0]:
        notes.append("share_kv: K and V share E and W_k (our key_value sharing with W_v = W_k)")
    notes.append("Q/K/V biases written as zeros (lucidrains has none)")
    return config, ours, notes


# -------------------------------------------------------------------------
# fairseq examples/linformer


def import_fairseq(sd, heads, cfg=None, norm=None):
    """(model config, our weights, notes) from a fairseq Linformer RoBERTa."""
    notes = []
    first = re.compile(r"(.*?)layers\.0\.self_attn\.q_proj\.weight")
    m = next(filter(None, map(first.fullmatch, sd)), None)
    if m is None:
        raise CheckpointError("not a fairseq Linformer state dict (no '...layers.0.self_attn.q_proj.weight')")
    prefix = m.group(1)
    layers = _layer_count(sd, re.escape(prefix) + r"layers\.(\d+)\.self_attn\.q_proj\.weight")
    cfg = cfg or {}
    if heads is None:
        heads = cfg.get("encoder_attention_heads")
    if heads is None:
        raise CheckpointError("the number of heads is not in the checkpoint: pass --heads")
    if norm is None:
        norm = "pre" if cfg.get("encoder_normalize_before") else "post"
    act = cfg.get("activation_fn", "gelu")
    if act != "gelu":
        raise CheckpointError(f"activation_fn '{act}': our FFN uses the exact GELU only")
    if norm == "pre" and prefix + "layer_norm.weight" in sd:
        raise CheckpointError("encoder_normalize_before with a final LayerNorm after the last layer: "
                           "our pre-norm stack has none")
    dim = _need(sd, prefix + "layers.0.self_attn.q_proj.weight").shape[1]
    shared_layer = prefix + "compress_layer.weight" in sd
    ours, ks, kvs, ns, ffn = {}, [], [], set(), None
    for i in range(layers):
        p, o = f"{prefix}layers.{i}.", f"layers.{i}."
        a = p + "self_attn."
        for ours_name, theirs in (("wq", "q_proj"), ("wk", "k_proj"), ("wv", "v_proj"), ("wo", "out_proj")):
            ours[o + "attn." + ours_name] = _need(sd, a + theirs + ".weight", (dim, dim)).T
            ours[o + "attn.b" + ours_name[1]] = _need(sd, a + theirs + ".bias", (dim,))
        for b in ("bk", "bv"):
            if np.any(ours[o + "attn." + b] != 0):
                raise CheckpointError(
                    f"layer {i}: fairseq adds the {'k' if b == 'bk' else 'v'}_proj bias after the sequence "
                    f"compression (K = (E X) W + b), ours before it (K = E (X W + b) = (E X) W + rowsum(E) b); "
                    f"they differ unless the bias is zero")
        e = sd.get(prefix + "compress_layer.weight") if shared_layer else None
        if e is None:
            e = _need(sd, a + "compress_k.weight")
        e = np.asarray(e, np.float32)
        kv = shared_layer or a + "compress_v.weight" not in sd
        k, n = e.shape
        ks.append(k)
        ns.add(n)
        kvs.append(kv)
        if shared_layer:
            if i == 0:
                ours["shared.e"] = e
        else:
            ours[o + "attn.e"] = e
            if not kv:
                ours[o + "attn.f"] = _need(sd, a + "compress_v.weight", (k, n))
        ours[o + "ln1.gamma"] = _need(sd, p + "self_attn_layer_norm.weight", (dim,))
        ours[o + "ln1.beta"] = _need(sd, p + "self_attn_layer_norm.bias", (dim,))
        ours[o + "ln2.gamma"] = _need(sd, p + "final_layer_norm.weight", (dim,))
        ours[o + "ln2.beta"] = _need(sd, p + "final_layer_norm.bias", (dim,))
        w1 = _need(sd, p + "fc1.weight")
        if ffn is not None and w1.shape[0] != ffn:
            raise CheckpointError(f"layer {i}: fc1 width {w1.shape[0]} differs from layer 0's {ffn}")
        ffn = w1.shape[0]
        ours[o + "ffn.w1"] = _need(sd, p + "fc1.weight", (ffn, dim)).T
        ours[o + "ffn.b1"] = _need(sd, p + "fc1.bias", (ffn,))
        ours[o + "ffn.w2"] = _need(sd, p + "fc2.weight", (dim, ffn)).T
        ours[o + "ffn.b2"] = _need(sd, p + "fc2.bias", (dim,))
    if len(ns) != 1:
        raise CheckpointError(f"the layers' compressions take different sequence lengths {sorted(ns)}")
    if len(set(kvs)) != 1:
        raise CheckpointError("shared_kv_compressed differs between layers")
    sharing = "layerwise" if shared_layer else ("key_value" if kvs[0] else "headwise")
    if dim % heads:
        raise CheckpointError(f"heads {heads} does not divide the embedding dimension {dim}")
    config = {"block": "encoder", "layers": layers, "d_model": dim, "heads": heads,
              "max_seq_len": ns.pop(), "k": ks if len(set(ks)) > 1 else ks[0], "projection": "learned",
              "sharing": sharing, "ffn_dim": ffn, "activation": "gelu", "norm": norm,
              "layer_norm_eps": 1e-5, "bias": True, "padding": "lengths", "batch": 1, "dtype": "f32"}
    notes.append(f"fairseq layers under '{prefix}'; embeddings, emb_layer_norm and the LM head stay in "
                 f"PyTorch")
    notes.append("padding 'lengths': fairseq slices E's columns to the real length, which our lengths "
                 "input reproduces")
    return config, ours, notes


# -------------------------------------------------------------------------
# Entry points


def detect(sd):
    keys = list(sd)
    if any(re.search(r"(^|\.)layers\.\d+\.self_attn\.q_proj\.weight$", k) for k in keys):
        return "fairseq"
    if any(k.endswith("to_q.weight") for k in keys):
        return "lucidrains"
    raise CheckpointError("neither a lucidrains Linformer nor a fairseq Linformer state dict "
                       f"(first keys: {', '.join(keys[:5])})")


def import_state_dict(sd, fmt="auto", heads=None, cfg=None, norm=None, batch=None, padding=None):
    """(model config dict, {our name: float32 array}, notes)."""
    if heads is not None and heads < 1:
        raise CheckpointError(f"--heads {heads}: needs at least one head")
    fmt = detect(sd) if fmt == "auto" else fmt
    if fmt == "lucidrains":
        config, weights, notes = import_lucidrains(sd, heads if heads is not None else 8)
    elif fmt == "fairseq":
        config, weights, notes = import_fairseq(sd, heads, cfg, norm)
    else:
        raise CheckpointError(f"unknown format '{fmt}' (lucidrains, fairseq or auto)")
    if batch is not None:
        config["batch"] = int(batch)
    if padding is not None:
        config["padding"] = padding
    return config, weights, notes


def import_checkpoint(path, model_json, weights_path, allow_pickle=False, **kw):
    sd, cfg = read_state_dict(path, allow_pickle)
    config, weights, notes = import_state_dict(sd, cfg=cfg, **kw)
    with open(model_json, "w") as f:
        json.dump(config, f, indent=2)
        f.write("\n")
    write_safetensors(weights_path, weights, {"linformer.model": json.dumps(config),
                                              "linformer.imported_from": str(path)})
    return config, notes


def main(argv=None):
    ap = argparse.ArgumentParser(
        prog="linformer-import",
        description="PyTorch Linformer checkpoint (lucidrains linformer, fairseq Linformer RoBERTa) "
                    "-> model.json + weights.safetensors for linformer-compile / linformer-run")
    ap.add_argument("checkpoint", help=".pt/.bin/.pth (needs torch) or .safetensors")
    ap.add_argument("-o", "--model", required=True, help="model.json to write")
    ap.add_argument("-w", "--weights", required=True, help="weights.safetensors to write")
    ap.add_argument("--format", default="auto", choices=["auto", "lucidrains", "fairseq"])
    ap.add_argument("--heads", type=int, help="attention heads (not stored in state dicts; lucidrains "
                                              "default 8, fairseq from the checkpoint's cfg)")
    ap.add_argument("--norm", choices=["pre", "post"], help="fairseq: override encoder_normalize_before")
    ap.add_argument("--batch", type=int, help="the compiled batch size (default 1)")
    ap.add_argument("--padding", choices=["none", "lengths", "mask"], help="the padding input to compile")
    ap.add_argument("--allow-pickle", action="store_true",
                    help="let torch.load run the checkpoint's pickled objects (trust the file as code; "
                         "fairseq checkpoints with an argparse Namespace need it)")
    a = ap.parse_args(argv)
    try:
        config, notes = import_checkpoint(a.checkpoint, a.model, a.weights, allow_pickle=a.allow_pickle,
                                          fmt=a.format, heads=a.heads, norm=a.norm, batch=a.batch,
                                          padding=a.padding)
    except (CheckpointError, OSError) as e:
        print(f"linformer-import: error: {a.checkpoint}: {e}", file=sys.stderr)
        return 1
    print(f"wrote {a.model} ({config['layers']} layers, d_model {config['d_model']}, heads {config['heads']}, "
          f"n {config['max_seq_len']}, k {config['k']}, sharing {config['sharing']}) and {a.weights}")
    for n in notes:
        print(f"  note: {n}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
