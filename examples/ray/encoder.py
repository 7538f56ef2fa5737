"""Encode documents of mixed lengths with a compiled Linformer encoder on Ray.

Two ways in (docs/Serving.md):

- batch: `encode_dataset(ds, artifact, weights)` runs Ray Data `map_batches`
  with `DocumentEncoder`, a callable class that loads the artifact once per
  actor (the artifact and weights shared by path: each process maps them
  read-only, and the kernels go to a memfd of its own, no shared temp file);
- online: `EncoderDeployment`, a Ray Serve deployment whose `@serve.batch`
  method gathers concurrent requests into one run of up to the artifact's
  batch, answering HTTP on the address Serve was started with.

A document is a float32 array [L, d_model] (token embeddings), 1 <= L <= n;
its encoding is the mean over its L rows of the encoder's output. Documents
are grouped up to the artifact's compiled batch and padded to the longest of
the group; the lengths input makes each cost its real tokens
(docs/Runtime.md).

    python3 examples/ray/encoder.py ARTIFACT WEIGHTS [--docs 300]
"""

import argparse

import numpy as np

import linformer_mlir as lf


class DocumentEncoder:
    """Loads the artifact once (per Ray actor); calling it encodes a batch
    {"id": [...], "x": [array [L_i, d], ...]} into {"id", "embedding"}."""

    def __init__(self, artifact, weights, threads=1):
        self.session = lf.load(artifact, weights, threads=threads)
        m = self.session.module
        if not any(d.role == "lengths" for d in m.inputs):
            raise ValueError(f"{artifact}: the encoder needs a lengths input (\"padding\": \"lengths\")")
        self.batch, self.n, self.d_model = m.batch, m.seq_len, m.data_input.shape[2]

    def encode(self, docs):
        """One embedding [d_model] a document, in order."""
        out = []
        for i in range(0, len(docs), self.batch):
            group = [np.asarray(doc, np.float32) for doc in docs[i:i + self.batch]]
            for doc in group:
                if doc.ndim != 2 or doc.shape[1] != self.d_model or not 1 <= doc.shape[0] <= self.n:
                    raise ValueError(f"document of shape {list(doc.shape)}: expected [L, {self.d_model}] "
                                     f"with 1 <= L <= {self.n}")
            lengths = np.array([len(doc) for doc in group], np.int32)
            x = np.zeros((len(group), lengths.max(), self.d_model), np.float32)
            for j, doc in enumerate(group):
                x[j, :len(doc)] = doc
            y = self.session(x, lengths=lengths)
            out.extend(y[j, :lengths[j]].mean(0) for j in range(len(group)))
        return out

    def __call__(self, batch):
        return {"id": batch["id"], "embedding": np.stack(self.encode(list(batch["x"])))}


def encode_dataset(ds, artifact, weights, actors=2, batch_size=16, threads=1):
    """Ray Data: the dataset's documents encoded by `actors` actors."""
    return ds.map_batches(DocumentEncoder, fn_constructor_args=(artifact, weights, threads),
                          batch_size=batch_size, batch_format="numpy", concurrency=actors)


def deployment(max_batch_size=4, wait_s=0.01):
    """The Ray Serve deployment class (imported lazily: Serve is optional)."""
    from ray import serve

    @serve.deployment
    class EncoderDeployment:
        def __init__(self, artifact, weights, threads=1):
            self.encoder = DocumentEncoder(artifact, weights, threads)

        @serve.batch(max_batch_size=max_batch_size, batch_wait_timeout_s=wait_s)
        async def encode(self, docs):
            return self.encoder.encode(docs)

        async def __call__(self, request):
            body = await request.json()
            try:
                doc = np.asarray(body["x"], np.float32)
            except (KeyError, TypeError, ValueError) as e:
                return {"error": f"expected JSON {{\"x\": [[...], ...]}}: {e}"}
            try:
                return {"embedding": (await self.encode(doc)).tolist()}
            except (ValueError, lf.Error) as e:
                return {"error": str(e)}

    return EncoderDeployment


def main():
    import ray

    ap = argparse.ArgumentParser()
    ap.add_argument("artifact")
    ap.add_argument("weights")
    ap.add_argument("--docs", type=int, default=300)
    ap.add_argument("--address", default=None, help="a running cluster (ray.init(address=...))")
    args = ap.parse_args()
    ray.init(address=args.address)
    enc = DocumentEncoder(args.artifact, args.weights)
    rng = np.random.default_rng(0)
    docs = [rng.standard_normal((int(rng.integers(1, enc.n + 1)), enc.d_model), dtype=np.float32)
            for _ in range(args.docs)]
    ds = ray.data.from_items([{"id": i, "x": d} for i, d in enumerate(docs)])
    rows = encode_dataset(ds, args.artifact, args.weights).take_all()
    print(f"encoded {len(rows)} documents; embedding width {len(rows[0]['embedding'])}")


if __name__ == "__main__":
    main()
