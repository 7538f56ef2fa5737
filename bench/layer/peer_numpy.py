#!/usr/bin/env python3
"""The peer for the layer benchmark: the same Linformer attention layer in
NumPy float32 (its OpenBLAS sgemm), in the cheapest order, (E X) W for K
and V with one E shared by heads and by K and V (layerwise sharing), as the
compiler picks for this shape. Prints one JSON line: median ms, GFLOP/s
with the same FLOP count as linformer-e2e, and the BLAS in use."""
import json, sys, time

import numpy as np

b, n, dm, h, k = (int(a) for a in sys.argv[1:6]) if len(sys.argv) > 5 else (1, 4096, 512, 8, 256)
repeat = int(sys.argv[6]) if len(sys.argv) > 6 else 10
d = dm // h
rng = np.random.default_rng(1)
f32 = np.float32
x = rng.uniform(-1, 1, (b, n, dm)).astype(f32)
wq, wk, wv, wo = (rng.uniform(-1, 1, (dm, dm)).astype(f32) / np.sqrt(dm) for _ in range(4))
e = rng.uniform(-1, 1, (k, n)).astype(f32) / np.sqrt(n)


def layer(x):
    q = (x @ wq).reshape(b, n, h, d).transpose(0, 2, 1, 3)          # [b,h,n,d]
    ex = e @ x                                                        # [b,k,dm]
    kp = (ex @ wk).reshape(b, k, h, d).transpose(0, 2, 1, 3)          # [b,h,k,d]
    vp = (ex @ wv).reshape(b, k, h, d).transpose(0, 2, 1, 3)
    s = (q @ kp.transpose(0, 1, 3, 2)) * f32(1 / np.sqrt(d))          # [b,h,n,k]
    s -= s.max(axis=-1, keepdims=True)
    np.exp(s, out=s)
    s /= s.sum(axis=-1, keepdims=True)
    a = (s @ vp).transpose(0, 2, 1, 3).reshape(b, n, dm)
    return a @ wo


layer(x)
times = []
for _ in range(repeat):
    t0 = time.perf_counter()
    layer(x)
    times.append((time.perf_counter() - t0) * 1e3)
times.sort()
median = times[len(times) // 2]
flops = 2 * (2 * b * n * dm * dm) + 2 * (2 * b * n * k * dm) + 2 * b * k * n * dm + 2 * (2 * b * k * dm * dm)
blas = "unknown"
try:
    from threadpoolctl import threadpool_info
    info = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    if info:
        blas = "%s %s (%s, %s threads)" % (info[0].get("internal_api"), info[0].get("version"),
                                            info[0].get("architecture"), info[0].get("num_threads"))
except ImportError:
    pass
print(json.dumps({"median_ms": median, "min_ms": times[0], "gflops": flops / (median * 1e6),
                  "flops": flops, "blas": blas}))
