"""examples/ray: batch inference with Ray Data and online serving with Ray
Serve, on a local cluster (ray.init(num_cpus=2)).

Runs in ctest's `python-ray` (the Ray venv scripts/setup --tests makes);
elsewhere it skips, unless LINFORMER_REQUIRE_RAY=1 (set by `python-ray`).

Every output is compared with a single-process run of the same artifact on
each document alone (batch 1, its own length): normwise relative error <=
1e-5 per embedding. On Ray the documents share runs of up to 4, padded to
the longest of the group; the lengths input keeps padded tokens out of every
real row, so what differs is only the order of f32 additions in kernels
whose tiles see another L (measured ~1e-7).
"""

import concurrent.futures
import json
import os
import shutil
import socket
import sys
import urllib.request

import numpy as np
import pytest

if os.environ.get("LINFORMER_REQUIRE_RAY") == "1":
    import ray
else:
    ray = pytest.importorskip("ray", reason="Ray is in the venv of ctest python-ray")

import linformer_mlir as lf

EXAMPLE = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", "examples", "ray"))
sys.path.insert(0, EXAMPLE)
import encoder as ray_encoder  # noqa: E402

D, N, DOCS = 32, 64, 300


def rel(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


@pytest.fixture(scope="module")
def artifact(tmp_path_factory):
    d = tmp_path_factory.mktemp("ray")
    model = {"layers": 1, "d_model": D, "heads": 2, "max_seq_len": N, "k": 16, "ffn_dim": 64,
             "batch": 4, "padding": "lengths"}
    path = lf.compile(model, str(d / "m.lfa"), random_weights=str(d / "w.safetensors"))
    return path, str(d / "w.safetensors")


@pytest.fixture(scope="module")
def docs():
    rng = np.random.default_rng(7)
    return [rng.standard_normal((int(rng.integers(1, N + 1)), D), dtype=np.float32)
            for _ in range(DOCS)]


@pytest.fixture(scope="module")
def reference(artifact, docs):
    """Each document alone, in this process."""
    enc = ray_encoder.DocumentEncoder(*artifact)
    return [enc.encode([doc])[0] for doc in docs]


@pytest.fixture(scope="module")
def cluster():
    # The workers import the package (build/python) and the example by path.
    # Serve's HTTP proxy must answer its readiness check within 5 s by
    # default, which a 2-core machine busy with the rest of the suite can
    # miss (seen here: the proxy restarted until the test timed out).
    env = {"PYTHONPATH": os.pathsep.join(p for p in (os.environ.get("PYTHONPATH"), EXAMPLE) if p),
           "RAY_SERVE_PROXY_READY_CHECK_TIMEOUT_S": "120",
           "RAY_SERVE_PROXY_HEALTH_CHECK_TIMEOUT_S": "120"}
    os.environ.update(env)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             runtime_env={"env_vars": env})
    yield
    ray.shutdown()


def test_ray_data_map_batches(cluster, artifact, docs, reference):
    ds = ray.data.from_items([{"id": i, "x": doc} for i, doc in enumerate(docs)])
    rows = ray_encoder.encode_dataset(ds, *artifact, actors=2, batch_size=16).take_all()
    assert sorted(int(r["id"]) for r in rows) == list(range(DOCS))
    worst = max(rel(np.asarray(r["embedding"]), reference[int(r["id"])]) for r in rows)
    assert worst <= 1e-5


def test_one_actor_many_threads(cluster, artifact, docs, reference):
    # Ray's thread pool: one actor (one session) called from 4 threads at
    # once; runs are serialized inside the session, the answers stay right.
    Actor = ray.remote(ray_encoder.DocumentEncoder).options(max_concurrency=4)
    actor = Actor.remote(*artifact)
    futures = [actor.encode.remote(docs[i:i + 10]) for i in range(0, 80, 10)]
    got = [e for part in ray.get(futures) for e in part]
    assert max(rel(g, r) for g, r in zip(got, reference[:80])) <= 1e-5


def test_artifact_gone_under_a_worker(cluster, artifact, docs, reference, tmp_path):
    # A worker that loaded the artifact keeps going after its file is
    # deleted (the code is in its memfd, the weights mapped); a worker that
    # starts afterwards fails with the runtime's message naming the file.
    lfa, weights = str(tmp_path / "gone.lfa"), str(tmp_path / "gone.safetensors")
    shutil.copy(artifact[0], lfa)
    shutil.copy(artifact[1], weights)
    Actor = ray.remote(ray_encoder.DocumentEncoder)
    early = Actor.remote(lfa, weights)
    assert rel(ray.get(early.encode.remote(docs[:1]))[0], reference[0]) <= 1e-5
    os.remove(lfa)
    late = Actor.remote(lfa, weights)
    with pytest.raises(ray.exceptions.RayActorError, match="gone.lfa"):
        ray.get(late.encode.remote(docs[:1]))
    assert rel(ray.get(early.encode.remote(docs[1:2]))[0], reference[1]) <= 1e-5


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _post(url, body):
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=120) as r:
        return json.loads(r.read())


def test_sequence_parallel_rank_actors(cluster, tmp_path):
    # examples/ray/sequence_parallel.py: one sequence over 2 rank actors that
    # sum through an AllReduce actor, against the same encoder compiled whole
    # and run here on the same weights and input (1e-5: the ranks' partial
    # sums add in another order; measured ~3e-7). Rank 1 holds 40 of the
    # 104 tokens.
    import sequence_parallel as ray_sp
    model = {"layers": 2, "d_model": D, "heads": 2, "max_seq_len": 128, "k": 16, "ffn_dim": 64,
             "batch": 2, "padding": "lengths", "sharing": "none"}
    whole = lf.compile(model, str(tmp_path / "whole.lfa"), random_weights=str(tmp_path / "w.safetensors"))
    split = lf.compile(dict(model, sequence_parallel=2), str(tmp_path / "split.lfa"))
    weights = str(tmp_path / "w.safetensors")
    x = np.random.default_rng(3).uniform(-1, 1, (2, 104, D)).astype(np.float32)
    lengths = np.array([104, 90], np.int32)
    got = ray_sp.encode(split, weights, x, lengths, cpus=0)
    want = lf.load(whole, weights, threads=1)(x, lengths=lengths)
    assert got.shape == want.shape == (2, 104, D)
    for b, length in enumerate(lengths):
        assert rel(got[b, :length], want[b, :length]) <= 1e-5
        assert not got[b, length:].any()


def test_ray_serve_batches_requests(cluster, artifact, docs, reference):
    from ray import serve

    port = _free_port()
    serve.start(http_options={"host": "127.0.0.1", "port": port})
    try:
        serve.run(ray_encoder.deployment(max_batch_size=4).bind(*artifact), name="encoder",
                  route_prefix="/encode")
        url = f"http://127.0.0.1:{port}/encode"
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            answers = list(pool.map(lambda doc: _post(url, {"x": doc.tolist()}), docs[:40]))
        worst = max(rel(np.asarray(a["embedding"], np.float32), r) for a, r in zip(answers, reference))
        assert worst <= 1e-5
        # Bad input: an answer that names the problem, and the next is fine.
        bad = _post(url, {"x": np.zeros((N + 1, D)).tolist()})
        assert "expected [L, 32] with 1 <= L <= 64" in bad["error"]
        assert "expected JSON" in _post(url, {"y": 1})["error"]
        ok = _post(url, {"x": docs[0].tolist()})
        assert rel(np.asarray(ok["embedding"], np.float32), reference[0]) <= 1e-5
    finally:
        serve.shutdown()
