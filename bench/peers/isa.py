"""The peers' environment for one ISA, shared by bench/peers/bench.py and
bench/lengths/run.py: threads, TorchInductor's cache, and with "avx2" every
peer's kernels limited to AVX2 (peer.py checks that the limit took)."""

import os


def peer_environment(isa, threads, work):
    env = dict(os.environ)
    env["OMP_NUM_THREADS"] = str(threads)
    # TorchInductor's on-disk cache does not key its kernels by
    # ATEN_CPU_CAPABILITY: an AVX2 run that finds the native run's kernels
    # there computes garbage (the encoder's output 1.2 normwise off under
    # torch 2.15). Each ISA's work directory gets a cache of its own.
    env["TORCHINDUCTOR_CACHE_DIR"] = os.path.join(work, "inductor-cache")
    if isa == "avx2":
        # ATen's dispatch, oneDNN, MKL (torch's sgemm), XLA; IREE compiles
        # for an AVX2 CPU (peer.py --isa-cpu).
        env.update({"ATEN_CPU_CAPABILITY": "avx2", "ONEDNN_MAX_CPU_ISA": "AVX2",
                    "MKL_ENABLE_INSTRUCTIONS": "AVX2"})
        env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " --xla_cpu_max_isa=AVX2").strip()
    return env
