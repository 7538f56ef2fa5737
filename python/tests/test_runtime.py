"""The Python API over the runtime: same numbers as linformer-run, zero-copy
binding, DLPack inputs, errors carrying the runtime's code and message."""

import os
import threading

import numpy as np
import pytest

import linformer_mlir as lf
import linformer_mlir.importer
from conftest import rel_error, run_tool


def test_module_describes_its_signature(small):
    art, _, config = small
    m = lf.Module(art)
    assert (m.batch, m.seq_len) == (2, 128)
    assert [(d.name, d.dtype, d.shape, d.role) for d in m.inputs] == [
        ("x", "f32", (2, 128, 64), ""), ("lengths", "i32", (2,), "lengths")]
    assert [d.name for d in m.outputs] == ["y"]
    assert len(m.weights) == 1 + 2 * 16  # shared.e, 16 per layer
    assert m.manifest["model"]["layers"] == 2


def test_same_numbers_as_linformer_run(small, tmp_path):
    art, w, _ = small
    x = np.random.default_rng(0).standard_normal((2, 100, 64), dtype=np.float32)
    np.save(tmp_path / "x.npy", x)
    r = run_tool("linformer-run", art, "--weights", w, "--input", f"x={tmp_path / 'x.npy'}",
                 "--output", tmp_path / "y.npy", "--threads", "2")
    assert r.returncode == 0, r.stderr
    want = np.load(tmp_path / "y.npy")
    model = lf.load(art, w, threads=2)
    got = model(x)
    assert got.shape == (2, 100, 64)
    # The same kernels on the same inputs: every workgroup computes its rows
    # the same way whichever thread runs it, so the results are identical.
    np.testing.assert_array_equal(got, want)


def test_lengths_masks_and_preallocated_outputs(small):
    art, w, _ = small
    s = lf.Session(art, w, threads=1)
    x = np.random.default_rng(1).standard_normal((2, 128, 64), dtype=np.float32)
    full = s(x)
    # Python ints for lengths are converted to the model's i32.
    short = s(x, lengths=[128, 50])
    assert np.array_equal(short[0], full[0])
    assert not np.allclose(short[1], full[1])
    # The output array given is the one written (no copy back).
    out = np.zeros((2, 128, 64), np.float32)
    res = s.run({"x": x, "lengths": np.array([128, 50])}, {"y": out})
    assert res["y"] is out and np.array_equal(out, short)
    # Rows past a sequence's length are padding, returned as zeros.
    assert not short[1, 50:].any() and short[1, :50].all()


def test_dynamic_batch(small):
    # The compiled batch (2) is a maximum: one sequence costs one, and
    # gives the bits the batch-of-two run gives it.
    art, w, _ = small
    s = lf.Session(art, w, threads=1)
    x = np.random.default_rng(2).standard_normal((2, 128, 64), dtype=np.float32)
    both = s(x, lengths=[128, 40])
    one = s(x[1:], lengths=[40])
    assert one.shape == (1, 128, 64)
    assert np.array_equal(one[0], both[1])
    with pytest.raises(lf.Error, match=r"LF_SHAPE_MISMATCH: .*batch 3, the model "
                                       r"was compiled for batch 2 \(at most 2"):
        s(np.zeros((3, 128, 64), np.float32))


def test_torch_tensors_through_dlpack(small):
    torch = pytest.importorskip("torch")
    art, w, _ = small
    s = lf.Session(art, w, threads=1)
    x = torch.randn(2, 128, 64)
    np.testing.assert_array_equal(s(x), s(x.numpy()))


def test_sessions_from_several_python_threads(small):
    art, w, _ = small
    s = lf.Session(art, w, threads=1)
    x = np.random.default_rng(2).standard_normal((2, 128, 64), dtype=np.float32)
    want = s(x)
    results = [None] * 4

    def work(i):
        results[i] = s(x)
    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for r in results:
        np.testing.assert_array_equal(r, want)


def test_sessions_that_do_not_spin(small):
    # spin_us=0: the threads sleep between kernels at once; same bytes as
    # the spinning default. A bad value is the runtime's error.
    art, w, _ = small
    x = np.random.default_rng(5).standard_normal((2, 128, 64), dtype=np.float32)
    want = lf.Session(art, w, threads=2)(x)
    np.testing.assert_array_equal(lf.Session(art, w, threads=2, spin_us=0)(x), want)
    with pytest.raises(lf.Error, match="LF_INVALID_ARGUMENT: spin_us is -5"):
        lf.Session(art, w, threads=2, spin_us=-5)
    # CUDA graphs need a cuda module.
    with pytest.raises(lf.Error, match="LF_INVALID_ARGUMENT: cuda_graphs is set, and .* runs on the cpu"):
        lf.Session(art, w, threads=2, cuda_graphs=True)
    with pytest.raises(lf.Error, match="LF_INVALID_ARGUMENT: cuda_graph_branches is set, and .* runs on the cpu"):
        lf.Session(art, w, threads=2, cuda_graph_branches=4)


def test_errors_carry_the_runtime_code_and_message(small, tmp_path):
    art, w, _ = small
    with pytest.raises(lf.Error, match=r"LF_IO_ERROR: .*missing\.lfa"):
        lf.Module(tmp_path / "missing.lfa")
    (tmp_path / "junk.lfa").write_bytes(b"not an artifact")
    with pytest.raises(lf.Error, match="LF_FORMAT_ERROR"):
        lf.Module(tmp_path / "junk.lfa")
    s = lf.load(art, w, threads=1)
    with pytest.raises(lf.Error, match=r"LF_SHAPE_MISMATCH: .*200"):
        s(np.zeros((2, 200, 64), np.float32))
    with pytest.raises(lf.Error, match="LF_INVALID_ARGUMENT: no input named 'q'"):
        s.run({"q": np.zeros(3)})
    with pytest.raises(lf.Error, match=r"LF_INVALID_ARGUMENT: .*lengths"):
        s(np.zeros((2, 128, 64), np.float32), lengths=[0, 5])
    with pytest.raises(TypeError, match="tensor 'lengths' has dtype float64"):
        s(np.zeros((2, 128, 64), np.float32), lengths=[1.5, 2.0])
    # Weights of another model are refused when the session is created.
    other = tmp_path / "other"
    lf.compile({"layers": 1, "d_model": 32, "heads": 4, "max_seq_len": 64, "k": 16, "ffn_dim": 64},
               str(other) + ".lfa", random_weights=str(other) + ".safetensors")
    with pytest.raises(lf.Error, match="LF_WEIGHTS_MISMATCH"):
        lf.load(art, str(other) + ".safetensors")


def test_compile_with_bf16_products(small, tmp_path):
    # precision="bf16" reaches the compiler, in process and through the
    # tool: the manifest says so and the numbers move by the factors'
    # rounding (a few 1e-3; f32 products agree to ~1e-7), within --check's
    # default bound for them (3e-2).
    art, w, config = small
    x = np.random.default_rng(2).standard_normal((2, 128, 64), dtype=np.float32)
    want = lf.load(art, w, threads=2)(x)
    for extra in ((), ("--reassociate=auto",)):
        path = lf.compile(config, tmp_path / f"bf16-{len(extra)}.lfa", extra_args=extra,
                          precision="bf16")
        assert lf.Module(path).manifest["products"] == "bf16"
        err = rel_error(lf.load(path, w, threads=2)(x), want)
        assert 1e-4 < err < 3e-2, err
    assert "products" not in lf.Module(art).manifest
    # f16 products (AMX-FP16 tiles; --bf16-dot=amx emulates them where the
    # CPU lacks them): a tenth of bf16's error, within their bound (5e-3).
    path = lf.compile(config, tmp_path / "f16.lfa", extra_args=("--bf16-dot=amx",),
                      precision="f16")
    assert lf.Module(path).manifest["products"] == "f16"
    err = rel_error(lf.load(path, w, threads=2)(x), want)
    assert 1e-5 < err < 5e-3, err
    with pytest.raises(lf.Error, match="--precision takes auto, f32, bf16 or f16, not 'fp8'"):
        lf.compile(config, tmp_path / "fp8.lfa", precision="fp8")


def test_compile_errors_name_the_problem(tmp_path):
    with pytest.raises(lf.Error, match="heads 6 does not divide d_model 512"):
        lf.compile({"heads": 6}, tmp_path / "bad.lfa")


def test_packed_input(small):
    # cu_seqlens: the sequences' real tokens end to end, in and out, with
    # the bits of the padded run's real rows.
    art, w, _ = small
    s = lf.Session(art, w, threads=1)
    x = np.random.default_rng(5).standard_normal((2, 128, 64), dtype=np.float32)
    padded = s(x, lengths=[100, 37])
    # The second sequence does not start where the kernels' packed layout
    # has it (row 100): its real rows are copied in and out.
    assert s.copied_bytes() == (137 * 64 * 4, 137 * 64 * 4)
    packed = np.concatenate([x[0, :100], x[1, :37]])
    y = s(packed, cu_seqlens=[0, 100, 137])
    # Packed: read and written in place.
    assert s.copied_bytes() == (0, 0)
    assert y.shape == (137, 64)
    np.testing.assert_array_equal(y, np.concatenate([padded[0, :100], padded[1, :37]]))
    # One sequence, fewer than compiled; offsets as a torch-style int32 array.
    one = s(x[1, :37], cu_seqlens=np.array([0, 37], np.int32))
    np.testing.assert_array_equal(one, padded[1, :37])
    with pytest.raises(lf.Error, match=r"LF_SHAPE_MISMATCH: input 'cu_seqlens': "
                                       r"sequence 1 has no tokens"):
        s(packed, cu_seqlens=[0, 100, 100, 137])
    with pytest.raises(lf.Error, match=r"LF_SHAPE_MISMATCH: input 'x' has shape "
                                       r"\[137, 64\], and packed inputs must be \[136, 64\]"):
        s(packed, cu_seqlens=[0, 100, 136])
    with pytest.raises(lf.Error, match=r"LF_INVALID_ARGUMENT: 'cu_seqlens' and "
                                       r"'lengths' are both given"):
        s(packed, cu_seqlens=[0, 100, 137], lengths=[100, 37])
    with pytest.raises(ValueError, match="cu_seqlens must be 1-D"):
        s(packed, cu_seqlens=[137])


def test_compile_runs_in_process_with_the_gil_released(tmp_path):
    # The build tree's package compiles through linformer_mlir._compiler
    # (compiler/Driver in this process), not a linformer-compile process.
    compiler = lf._in_process_compiler()
    assert compiler is not None, "the build tree's package has _compiler"
    # With the GIL released, another Python thread runs during the compile:
    # it counts while the call is in C++.
    import threading
    count, stop = [0], threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    import time
    t = threading.Thread(target=spin)
    t.start()
    try:
        # Its rate when this thread only waits.
        start, t0 = count[0], time.monotonic()
        time.sleep(0.2)
        rate = (count[0] - start) / (time.monotonic() - t0)
        before, t0 = count[0], time.monotonic()
        lf.compile({"layers": 1, "d_model": 32, "heads": 4, "max_seq_len": 64,
                    "k": 16, "ffn_dim": 64}, tmp_path / "m.lfa",
                   random_weights=tmp_path / "w.safetensors")
        elapsed = time.monotonic() - t0
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    assert (tmp_path / "m.lfa").stat().st_size > 0
    # Held, the GIL would let it count for a switch interval or two (5 ms
    # each) of a compile that takes hundreds; released, for most of it (the
    # compile has a core of its own, or shares one with it).
    assert during > 0.2 * rate * elapsed, (
        f"the other thread counted {during} in {elapsed:.3f} s of compile, "
        f"{rate:.0f}/s when free")


def test_in_process_compile_errors_carry_the_diagnostics(tmp_path):
    # An MLIR diagnostic comes back in the exception, with its location.
    bad = tmp_path / "bad.mlir"
    bad.write_text("func.func @f(%q: tensor<2x4x64x8xf32>, %k: tensor<2x4x16x8xf32>) {\n"
                   "  linformer.attention_core %q, %k, %k scale(0.0) outs(%q)\n"
                   "    : (tensor<2x4x64x8xf32>, tensor<2x4x16x8xf32>, tensor<2x4x16x8xf32>,\n"
                   "       tensor<2x4x64x8xf32>) -> tensor<2x4x64x8xf32>\n"
                   "  return\n}\n")
    with pytest.raises(lf.Error, match=r"LF_COMPILE_ERROR: .*bad\.mlir:2:\d+: error: "
                                       r"'linformer.attention_core' op scale must be finite "
                                       r"and non-zero, but is 0"):
        lf.compile(str(bad), tmp_path / "bad.lfa")
    # Options are checked as linformer-compile checks its flags.
    with pytest.raises(lf.Error, match="--lengths-hint: 0 is not a sequence length"):
        lf.compile({"layers": 1}, tmp_path / "x.lfa", lengths_hint=[0])


def test_only_outputs_that_hold_tokens_are_sequences(tmp_path):
    # Two outputs of the input's [b, n, d]: x + w (tokens) and w + w (a
    # weight's, no tokens, as E X with k = n has the output's shape). The
    # compiler's token analysis tells them apart and the manifest says so:
    # the runtime zeroes the first's rows past each length (and packs it),
    # and returns the second whole. It once treated both as sequences by
    # their shape and zeroed (and dropped, packed) the second's rows.
    here = os.path.dirname(os.path.abspath(__file__))
    source = os.path.join(here, "..", "..", "test", "tools", "Inputs", "sequence-results.mlir")
    art = lf.compile(source, tmp_path / "seq.lfa")
    w = np.random.default_rng(1).standard_normal((2, 8, 4)).astype(np.float32)
    lf.importer.write_safetensors(str(tmp_path / "w.safetensors"), {"arg2": w}, {})
    s = lf.load(art, tmp_path / "w.safetensors", threads=2)
    x = np.random.default_rng(2).standard_normal((2, 8, 4)).astype(np.float32)
    y = np.full((2, 8, 4), np.nan, np.float32)
    z = np.full((2, 8, 4), np.nan, np.float32)
    s.run({"arg0": x, "arg1": np.array([3, 5], np.int32)}, {"result0": y, "result1": z})
    assert np.array_equal(y[0, :3], x[0, :3] + w[0, :3]) and np.array_equal(y[1, :5], x[1, :5] + w[1, :5])
    assert not y[0, 3:].any() and not y[1, 5:].any()
    assert np.array_equal(z, w + w)
