"""Native kernels (`_native`, `_native_ops`): against numpy float64 references on odd sizes,
broadcasts, strides, NaN/inf and empty tensors; bitwise identical across thread counts; the
on-disk cache (atomic builds by concurrent processes, a corrupted file rebuilt); the fallback
without a compiler. Skipped where no C compiler builds the kernels (the fallback tests run)."""

from __future__ import annotations

import math
import os
import platform
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_ndarray import NdArray, _native

LIB = _native.lib()
needs_native = pytest.mark.skipif(LIB is None, reason=f"native kernels: {_native.status()}")
RNG = np.random.default_rng(11)
# parallel_min=1: every size goes native (and memory-bound ops too, whatever the budget).
BACKENDS = {n: NdArray(num_threads=n, parallel_min=1) for n in (1, 2, 3, 8)}
B64 = NdArray(float_dtype="float64", int_dtype="int64", num_threads=4, parallel_min=1)
SIZES = [1, 7, 4095, 4096, 4097, 3 * 4096 + 5, 100_003]


def special(n, dtype):
    x = RNG.uniform(-5, 5, n).astype(dtype)
    if n >= 8:
        x[:6] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30]
        x[-1] = np.nan
    return x


UNARY = {
    "exp": np.exp, "log": np.log, "log1p": np.log1p, "sqrt": np.sqrt, "sin": np.sin,
    "cos": np.cos, "tan": np.tan, "tanh": np.tanh, "sinh": np.sinh, "cosh": np.cosh,
    "atan": np.arctan, "asin": np.arcsin, "acos": np.arccos, "abs": np.abs, "neg": np.negative,
    "recip": np.reciprocal, "erf": np.vectorize(math.erf, otypes=[np.float64]),
}  # fmt: skip


def _close(got, want, dtype, rtol=None):
    rtol = rtol or (4e-6 if dtype == np.float32 else 1e-13)
    want = np.asarray(want)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(
            got.astype(np.float64), want.astype(dtype).astype(np.float64), rtol=rtol, atol=rtol
        )


@needs_native
@pytest.mark.parametrize("name", list(UNARY))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_unary_against_float64(name, dtype):
    b = BACKENDS[3] if dtype == np.float32 else B64
    for n in SIZES:
        x = special(n, dtype)
        if name in ("log", "sqrt", "log1p", "asin", "acos"):
            x = np.abs(x) if name not in ("asin", "acos") else np.clip(x / 5, -1, 1)
        ref = x.astype(np.float64)
        with np.errstate(all="ignore"):
            want = UNARY[name](np.nan_to_num(ref, nan=0.0)) if name == "erf" else UNARY[name](ref)
        if name == "erf":
            want = np.where(np.isnan(ref), np.nan, want)
        got = getattr(b, f"float_{name}")(x)
        assert got.dtype == x.dtype and got.shape == x.shape
        _close(got, want, dtype)


def test_erf_float32_accuracy_against_math_erf():
    x = np.linspace(-6, 6, 200_001).astype(np.float32)
    got = BACKENDS[2].float_erf(x).astype(np.float64)
    want = np.array([math.erf(v) for v in x.astype(np.float64)])
    # glibc >= 2.35: its erff (~1e-7); older glibc: A-S 7.1.26 in float32 (~5e-7)
    assert np.abs(got - want).max() < 6e-7


BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide,
          "powf": np.power}  # fmt: skip
SHAPES = [
    ((37, 4099), (37, 4099)),  # same shape
    ((37, 4099), (1, 4099)),  # row broadcast
    ((37, 4099), (37, 1)),  # column broadcast
    ((1, 4099), (37, 4099)),
    ((37, 1), (1, 4099)),  # outer
    ((3, 5, 4097), (5, 1)),  # trailing column, 3-D
    ((3, 5, 4097), (4097,)),
    ((2, 3, 5, 7), (2, 1, 5, 7)),  # falls back (3 groups)
    ((0, 7), (1, 7)),  # empty
]


@needs_native
@pytest.mark.parametrize("name", list(BINARY))
@pytest.mark.parametrize("shapes", SHAPES, ids=[f"{a}-{b}" for a, b in SHAPES])
def test_binary_broadcasts_against_float64(name, shapes):
    for dtype, b in ((np.float32, BACKENDS[3]), (np.float64, B64)):
        x = RNG.uniform(0.5, 2, shapes[0]).astype(dtype)
        y = RNG.uniform(0.5, 2, shapes[1]).astype(dtype)
        if x.size > 10:
            x.flat[:3] = [np.nan, np.inf, 0.0]
        got = getattr(b, f"float_{name}")(x, y)
        with np.errstate(all="ignore"):
            want = BINARY[name](x.astype(np.float64), y.astype(np.float64))
        assert got.shape == want.shape and got.dtype == dtype
        if name in ("add", "sub", "mul", "div"):  # exact IEEE ops: numpy's bits
            with np.errstate(all="ignore"):
                np.testing.assert_array_equal(got, BINARY[name](x, y))
        else:
            _close(got, want, dtype, 1e-5 if dtype == np.float32 else 1e-12)


@needs_native
def test_binary_strided_and_transposed_operands():
    b = BACKENDS[2]
    x = RNG.uniform(-1, 1, (300, 400)).astype(np.float32)
    y = RNG.uniform(-1, 1, (400, 300)).astype(np.float32)
    np.testing.assert_array_equal(b.float_add(x, y.T), x + y.T)  # not collapsible: numpy
    np.testing.assert_array_equal(b.float_mul(x[:, ::2], x[:, 1::2]), x[:, ::2] * x[:, 1::2])
    np.testing.assert_array_equal(b.float_sub(x[10:200], x[:1]), x[10:200] - x[:1])
    np.testing.assert_array_equal(
        b.float_exp(x[:, ::3]), b.float_exp(np.ascontiguousarray(x[:, ::3]))
    )


@needs_native
@pytest.mark.parametrize("threads", [1, 2, 4])
def test_memory_bound_ops_native_at_every_budget(threads):
    """Default sizes: row broadcasts, sums and sqrt run the kernels whatever the budget (all
    threads from 2 on); the exact ops numpy runs as fast on one thread (NUMPY_ON_ONE_THREAD,
    same-shape add) keep numpy there, argmax/argmin below 4 threads. Either way the bits do not
    depend on the thread count."""
    from burn_ndarray._native_ops import ARG_OPS, NUMPY_ON_ONE_THREAD

    b = NdArray(num_threads=threads)
    for name in ("float_add", "float_sqrt", "float_recip", "float_sum_dim", "float_sum",
                 "float_mean_dim"):  # fmt: skip
        assert getattr(b, name).__module__.startswith("burn_ndarray._native"), name
    for name in sorted(NUMPY_ON_ONE_THREAD):
        native = getattr(b, name).__module__.startswith("burn_ndarray._native")
        assert native == (threads >= (4 if name in ARG_OPS else 2)), name
    x = RNG.uniform(-1, 1, (1024, 1024)).astype(np.float32)
    x[3, 5], x[700, 2] = np.nan, -0.0
    r = RNG.uniform(-1, 1, (1, 1024)).astype(np.float32)
    np.testing.assert_array_equal(b.float_add(x, r), x + r)
    np.testing.assert_array_equal(b.float_add(x, x), x + x)
    np.testing.assert_array_equal(b.float_abs(x), np.abs(x))
    ref = NdArray(num_threads=4)  # the kernels: the same bits as numpy's loops
    for name, args in (("float_max_dim", (x, 1)), ("float_min_dim", (x, 0)),
                       ("float_argmax", (x, 1)), ("float_argmin", (x, 0)), ("float_max", (x,)),
                       ("float_mul_scalar", (x, 3.0)), ("float_neg", (x,)),
                       ("float_sum_dim", (x, 0)), ("float_clamp", (x, -0.5, 0.5))):  # fmt: skip
        np.testing.assert_array_equal(getattr(b, name)(*args), getattr(ref, name)(*args), name)


@needs_native
def test_broadcast_plan_cache_keys_on_strides():
    """The same shapes with other strides (a transposed view) must not reuse a cached plan."""
    b = NdArray(num_threads=2, parallel_min=1)
    x = RNG.uniform(-1, 1, (300, 300)).astype(np.float32)
    c = RNG.uniform(-1, 1, (300, 1)).astype(np.float32)
    for _ in range(2):  # the second call hits the cache
        np.testing.assert_array_equal(b.float_sub(x, c), x - c)
        np.testing.assert_array_equal(b.float_sub(x.T, c), x.T - c)
        np.testing.assert_array_equal(b.float_sub(c.T, x), c.T - x)
    with pytest.raises(ValueError):
        b.float_add(x, np.ones((299, 1), np.float32))


@needs_native
def test_scalar_ops_and_clamp_are_numpys_bits():
    b = BACKENDS[3]
    x = special(50_001, np.float32)
    with np.errstate(all="ignore"):
        for s in (1.5, -3, 1e300, 0.1):
            np.testing.assert_array_equal(b.float_add_scalar(x, s), x + s)
            np.testing.assert_array_equal(b.float_sub_scalar(x, s), x - s)
            np.testing.assert_array_equal(b.float_mul_scalar(x, s), x * s)
            np.testing.assert_array_equal(b.float_div_scalar(x, s), x / s)
        np.testing.assert_array_equal(b.float_clamp(x, -1.0, 2.5), np.clip(x, -1.0, 2.5))
        np.testing.assert_array_equal(b.float_clamp_min(x, 0.5), np.maximum(x, np.float32(0.5)))
        np.testing.assert_array_equal(b.float_clamp_max(x, 0.5), np.minimum(x, np.float32(0.5)))
        z = np.zeros(50_000, np.float32)
        z[::3] = -0.0
        z[1::7] = np.nan
        for lo in (0.0, -0.0, np.nan):
            for got, want in (
                (b.float_clamp_min(z, lo), np.maximum(z, np.float32(lo))),
                (b.float_clamp_max(z, lo), np.minimum(z, np.float32(lo))),
                (b.relu(z), np.maximum(z, np.float32(0))),
            ):
                np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
        np.testing.assert_array_equal(
            b.float_clamp(z, -0.0, 0.0).view(np.uint32), np.clip(z, -0.0, 0.0).view(np.uint32)
        )
    _close(
        b.float_powf_scalar(np.abs(x), 1.7), np.abs(x).astype(np.float64) ** 1.7, np.float32, 1e-5
    )


@needs_native
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_powf_scalar_two_is_the_correctly_rounded_square(dtype):
    """x ** 2 (the MSE loss) is x * x: float32's square is exact in float64, so the reference is
    that product rounded once; float64 against the same IEEE product. Every budget, numpy's
    small-tensor path included, gives those bits (libmvec's powf missed ~3% by an ulp)."""
    x = special(100_003, dtype) * dtype(37.3)
    exact = (x.astype(np.float64) * x.astype(np.float64)).astype(dtype)
    for b in (*BACKENDS.values(), NdArray(num_threads=1)):
        if b.float_dtype.np != dtype:
            b = NdArray(float_dtype=np.dtype(dtype).name, num_threads=b.num_threads, parallel_min=1)
        got = b.float_powf_scalar(x, 2.0)
        np.testing.assert_array_equal(got.view(np.uint8), exact.view(np.uint8))
        np.testing.assert_array_equal(b.float_powf_scalar(x[:100], 2.0), exact[:100])


REDUCE_SHAPES = [(100_003,), (37, 4099), (4099, 37), (3, 4097, 5), (1, 70_000), (70_000, 1)]


@needs_native
@pytest.mark.parametrize("shape", REDUCE_SHAPES, ids=str)
def test_reductions_against_float64(shape):
    for dtype, b in ((np.float32, BACKENDS[3]), (np.float64, B64)):
        x = RNG.uniform(-1, 1, shape).astype(dtype)
        r = x.astype(np.float64)
        tol = 2e-5 if dtype == np.float32 else 1e-12
        scale = max(1.0, math.sqrt(x.size))
        np.testing.assert_allclose(b.float_sum(x), [r.sum()], atol=tol * scale)
        np.testing.assert_allclose(b.float_mean(x), [r.mean()], atol=tol)
        np.testing.assert_array_equal(b.float_max(x), [x.max()])
        np.testing.assert_array_equal(b.float_min(x), [x.min()])
        for d in range(x.ndim):
            np.testing.assert_allclose(
                b.float_sum_dim(x, d), r.sum(d, keepdims=True), atol=tol * math.sqrt(shape[d]) * 4
            )
            np.testing.assert_allclose(
                b.float_mean_dim(x, d), r.mean(d, keepdims=True), atol=tol * 4
            )
            np.testing.assert_array_equal(b.float_max_dim(x, d), x.max(d, keepdims=True))
            np.testing.assert_array_equal(b.float_min_dim(x, d), x.min(d, keepdims=True))
            np.testing.assert_array_equal(b.float_argmax(x, d), x.argmax(d, keepdims=True))
            np.testing.assert_array_equal(b.float_argmin(x, d), x.argmin(d, keepdims=True))


@needs_native
def test_reductions_nan_ties_and_inf():
    b = BACKENDS[2]
    x = np.zeros((40, 1000), np.float32)
    x[3, 500] = np.nan
    x[3, 700] = np.nan
    x[5, 10:20] = 7.0  # ties: first index
    x[6, :] = -np.inf
    x[7, 999] = np.inf
    x[:, 900] = np.where(np.arange(40) % 2, 1.0, np.nan).astype(np.float32)
    for d in (0, 1):
        np.testing.assert_array_equal(b.float_argmax(x, d), x.argmax(d, keepdims=True))
        np.testing.assert_array_equal(b.float_argmin(x, d), x.argmin(d, keepdims=True))
        np.testing.assert_array_equal(b.float_max_dim(x, d), x.max(d, keepdims=True))
        np.testing.assert_array_equal(b.float_min_dim(x, d), x.min(d, keepdims=True))
    assert np.isnan(b.float_max(x)[0]) and np.isnan(b.float_sum(x)[0])
    y = np.full(50_000, 7.0, np.float32)
    y[[10, 40_000]] = 9.0
    assert b.float_argmax(y, 0)[0] == 10


@needs_native
def test_results_do_not_depend_on_the_thread_count():
    x = RNG.uniform(-3, 3, (301, 1003)).astype(np.float32)
    y = RNG.uniform(0.5, 2, (301, 1003)).astype(np.float32)
    ops = [
        lambda b: b.float_exp(x), lambda b: b.float_erf(x), lambda b: b.float_tanh(x),
        lambda b: b.float_powf(y, x), lambda b: b.float_add(x, y[:1]), lambda b: b.float_sum(x),
        lambda b: b.float_mean(x), lambda b: b.float_sum_dim(x, 0), lambda b: b.float_sum_dim(x, 1),
        lambda b: b.float_argmax(x, 1), lambda b: b.relu(x),
    ]  # fmt: skip
    for op in ops:
        ref = op(BACKENDS[1])
        for n in (2, 3, 8):
            np.testing.assert_array_equal(op(BACKENDS[n]).view(np.uint8), ref.view(np.uint8))
    # default sizes: the native path is chosen by size, not by the budget
    big = RNG.uniform(-3, 3, 1 << 16).astype(np.float32)
    outs = [NdArray(num_threads=n).float_exp(big) for n in (1, 2, 5)]
    for o in outs[1:]:
        np.testing.assert_array_equal(o, outs[0])


def test_small_tensors_keep_the_numpy_path():
    x = np.arange(16, dtype=np.float32)
    np.testing.assert_array_equal(NdArray(num_threads=4).float_exp(x), np.exp(x))


# -- cache and build --------------------------------------------------------------------------------
def _run(code, env, timeout=600):
    return subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=timeout,
        check=False,
    )  # fmt: skip


STATUS = "from burn_ndarray import _native as n; print(n.status())"


@needs_native
def test_two_processes_build_at_once_and_a_truncated_or_corrupted_file_is_rebuilt(tmp_path):
    env = {**os.environ, "BURN_CACHE_DIR": str(tmp_path)}
    procs = [
        subprocess.Popen([sys.executable, "-c", STATUS], env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(2)
    ]
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert all(o.startswith("native kernels") for o in outs), outs
    files = sorted((tmp_path / "ndarray-native").iterdir())
    assert not [f for f in files if ".tmp" in f.name], files  # no temporaries left
    libs = [f for f in files if f.suffix == ".so"]  # each with its .so.sum (size, sha256)
    assert sorted(f.name for f in files) == sorted([*(f.name for f in libs),
                                                    *(f.name + ".sum" for f in libs)])
    kernels = [f for f in libs if f.name.startswith("kernels-")]
    assert len(kernels) == 1, files
    whole = kernels[0].stat().st_size
    # truncated as a crash before fsync leaves it: dlopen of it died with SIGBUS on every start
    # (security review F13), so it must never reach the loader; the addr helper: not an ELF
    os.truncate(kernels[0], min(146_732, whole // 2))
    for f in libs:
        if f != kernels[0]:
            f.write_bytes(b"not an ELF file")
    out = _run(STATUS, env)
    assert out.returncode == 0, (out.returncode, out.stderr[-2000:])
    assert out.stdout.startswith(f"native kernels {kernels[0]}"), out.stdout + out.stderr
    assert all(f.stat().st_size > 1000 for f in libs) and kernels[0].stat().st_size > whole // 2
    assert ("through ctypes" in out.stdout) == ("through ctypes" in _native.status())


def test_fallback_without_a_compiler(tmp_path):
    env = {**os.environ, "BURN_CACHE_DIR": str(tmp_path), "PATH": str(tmp_path)}
    env.pop("CC", None)
    code = STATUS + "; from burn_ndarray import NdArray; import numpy as np;" \
        "print(NdArray(num_threads=2, parallel_min=1).float_exp(np.zeros(3, np.float32)))"  # fmt: skip
    out = _run(code, env)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("numpy fallback: no C compiler"), out.stdout
    assert "[1. 1. 1.]" in out.stdout


def test_env_turns_native_off():
    env = {**os.environ, "BURN_NDARRAY_NATIVE": "0"}
    out = _run(STATUS, env)
    assert out.stdout.startswith("off"), out.stdout + out.stderr


@needs_native
def test_libmvec_vector_math_is_called_when_available():
    path = Path(_native._STATE["path"])
    dis = subprocess.run(["objdump", "-d", str(path)], capture_output=True, text=True, check=False)
    if dis.returncode != 0 or "libmvec" not in Path("/proc/self/maps").read_text():
        pytest.skip("objdump or libmvec unavailable")
    assert "_ZGV" in dis.stdout and "logf" in dis.stdout  # exp f32 is our own


@needs_native
@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_forked_child_runs_kernels_without_hanging():
    # libgomp's pool does not survive fork: the child must not start a parallel region.
    code = (
        "import os, numpy as np; from burn_ndarray import NdArray; b = NdArray(num_threads=4);"
        "x = np.ones(1 << 20, np.float32); b.float_exp(x); pid = os.fork()\n"
        "if pid == 0:\n print(float(b.float_exp(x)[0]), float(b.float_sum(x)[0]), flush=True); os._exit(0)\n"
        "os.waitpid(pid, 0)"
    )
    out = _run(code, dict(os.environ), timeout=120)
    got = [float(v) for v in out.stdout.split()]
    assert len(got) == 2 and abs(got[0] - math.e) < 1e-6 and got[1] == 2.0**20, (
        out.stdout + out.stderr
    )


POOLS = [  # kernel, stride, padding, dilation
    ((2, 2), (2, 2), (0, 0), (1, 1)),
    ((3, 3), (1, 1), (1, 1), (1, 1)),
    ((3, 2), (2, 1), (1, 0), (1, 1)),
    ((3, 3), (2, 3), (1, 1), (2, 1)),
    ((1, 5), (1, 2), (0, 2), (1, 1)),
]


@needs_native
@pytest.mark.parametrize("pool", POOLS, ids=str)
def test_pools_are_the_numpy_passes_bit_for_bit(pool):
    from burn_ndarray import _pool

    k, s, p, d = pool
    for b in (BACKENDS[3], B64):
        dt, it = b.float_dtype.np, b.int_dtype.np
        x = RNG.uniform(-1, 1, (3, 5, 23, 1100)).astype(dt)
        x[0, 0, 3, 4:9] = np.nan
        x[1, 2, :, 7] = 0.5  # ties
        x[2, 1, 5, :] = -np.inf
        v, i = b.max_pool2d_with_indices(x, k, s, p, d)
        rv, ri = _pool.max_pool2d_with_indices(x, k, s, p, d, it)
        np.testing.assert_array_equal(v, rv)
        np.testing.assert_array_equal(i, ri)
        assert v.dtype == dt and i.dtype == it
        g = RNG.uniform(-1, 1, v.shape).astype(dt)
        np.testing.assert_allclose(
            b.max_pool2d_with_indices_backward(x, k, s, p, d, g, i),
            _pool.max_pool2d_backward(x, g, ri),
            rtol=1e-6,
            atol=1e-6,
        )
        if d == (1, 1):
            for inc in (True, False):
                np.testing.assert_array_equal(
                    b.avg_pool2d(x, k, s, p, inc), _pool.avg_pool2d(x, k, s, p, inc)
                )


CONVS = [  # x shape, weight shape, stride, padding, dilation
    ((3, 3, 17, 23), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1)),
    ((2, 5, 16, 16), (4, 5, 3, 2), (2, 1), (0, 2), (1, 1)),
    ((2, 4, 19, 15), (6, 4, 3, 3), (1, 2), (2, 1), (2, 3)),
    ((2, 40, 16, 16), (16, 40, 3, 3), (1, 1), (1, 1), (1, 1)),  # a Winograd shape
    ((1, 2, 9, 9), (3, 2, 1, 1), (1, 1), (0, 0), (1, 1)),
]


@needs_native
@pytest.mark.parametrize("conv", CONVS, ids=str)
def test_conv2d_against_float64(conv, monkeypatch):
    from burn_ndarray import _conv, _native_conv
    from burn_tensor.ops import ConvOptions

    monkeypatch.setattr(_native_conv, "WINOGRAD_MAX_THREADS", 1)  # im2col for every shape
    xs, ws, s, p, d = conv
    opt = ConvOptions(s, p, d, 1)
    for b, tol in ((NdArray(num_threads=2, parallel_min=1), 2e-5), (B64, 1e-12)):
        dt = b.float_dtype.np
        x = RNG.uniform(-1, 1, xs).astype(dt)
        w = RNG.uniform(-1, 1, ws).astype(dt)
        bias = RNG.uniform(-1, 1, ws[0]).astype(dt)
        want = _conv.conv2d(x.astype(np.float64), w.astype(np.float64), bias, s, p, d, 1)
        for bb in (bias, None):
            got = b.conv2d(x, w, bb, opt)
            assert got.dtype == dt and got.shape == want.shape
            ref = want if bb is not None else want - bias.reshape(1, -1, 1, 1)
            np.testing.assert_allclose(got, ref, rtol=tol, atol=tol * ws[1] * ws[2] * ws[3])


def test_burn_backend_listing_says_which_kernels_run():
    from burn_ndarray._spec import SPEC

    (line,) = SPEC.devices()
    assert "kernels: " in line and _native.status() in line


@needs_native
def test_ctypes_addresses_when_the_helper_is_missing(monkeypatch):
    from burn_ndarray import _native_ops

    monkeypatch.setattr(_native_ops, "_ptr", _native._ctypes_addr)
    monkeypatch.setattr(_native_ops, "_cptr", _native._ctypes_caddr)
    b = BACKENDS[2]
    x = RNG.uniform(-1, 1, (300, 200)).astype(np.float32)
    np.testing.assert_array_equal(b.float_add(x, x[:1]), x + x[:1])
    np.testing.assert_array_equal(b.float_mul(x, x), x * x)
    np.testing.assert_array_equal(b.float_exp(x.T), b.float_exp(np.ascontiguousarray(x.T)))
    np.testing.assert_array_equal(b.float_neg(x[:, ::2]), -x[:, ::2])


@needs_native
def test_scalars_beyond_float32_stay_quiet_under_raise():
    b = BACKENDS[2]
    x = np.ones(50_000, np.float32)
    with np.errstate(all="raise"):
        assert np.isinf(b.float_add_scalar(x, 1e300)).all()
        assert (b.float_mul_scalar(x, 2) == 2).all()


@needs_native
@pytest.mark.skipif(
    platform.machine() != "x86_64" or shutil.which("objdump") is None,
    reason="libmvec's SIMD names are x86_64's; needs objdump",
)
def test_transcendental_loops_call_libmvec():
    """The kernels' loops must reach libmvec's SIMD variants (`_ZGV<isa>N<lanes>v_<fn>`): a
    scalar call per element is 4-8x slower and no other test would notice (an exp mixed into a
    float64 sum kept gcc from them once)."""
    path = _native._STATE["path"]
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(path)],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    if "_ZGV" not in dis:
        pytest.skip("built without libmvec (BURN_NO_MVEC)")
    blocks = {}
    for block in dis.split("\n\n"):
        m = re.search(r"<([\w.]+)>:\n", block)
        if m:
            blocks[m.group(1)] = block
    glibc = tuple(int(v) for v in (platform.libc_ver()[1] or "0.0").split(".")[:2])
    # float32 exp and the softmax kernels inline our own (test_native_expf.py)
    want = {"un_log_f32": "logf", "un_sin_f32": "sinf", "un_exp_f64": "exp",
            "softmax_f64": "exp", "softmax_bwd_f64": "exp"}  # fmt: skip
    if glibc >= (2, 35):  # vectorized tanhf / erff since 2.35 (float32 tanh takes it there)
        want.update({"un_tanh_f64": "tanh", "un_erf_f32": "erff", "un_tanh_f32": "tanhf"})
    # the row helpers the softmax kernels call, when gcc keeps them out of line (it does with
    # -mprefer-vector-width=512 on AVX-512 CPUs)
    helpers = {"softmax_f64": ("sm_", "_f64"), "softmax_bwd_f64": ("smb_", "_f64")}
    for fn, math_fn in want.items():
        pre, suf = helpers.get(fn, (None, None))
        text = "".join(
            v
            for k, v in blocks.items()
            if k == fn
            or k.startswith(fn + "._omp_fn")
            or (pre is not None and k.startswith(pre) and suf in k)
        )
        assert re.search(rf"_ZGV\w+v_{math_fn}@", text), f"{fn}: no SIMD {math_fn}"


@needs_native
def test_relu_backward_is_the_defaults_bits():
    """One pass for mask_fill(grad, output <= 0, 0): +0.0 where output <= 0 (-0.0 too), the
    gradient elsewhere (NaN or inf output included); every thread count alike."""
    from burn_tensor import Backend  # its relu_backward is the default decomposition

    for dtype, bs in ((np.float32, list(BACKENDS.values())), (np.float64, [B64])):
        out = special(100_003, dtype)
        out[10:20] = -0.0
        grad = RNG.uniform(-1, 1, out.shape).astype(dtype)
        grad[30] = np.nan
        want = Backend.relu_backward(bs[0], out, grad)
        for b in bs:
            assert b.relu_backward.__module__ == "burn_ndarray._native_activation"
            got = b.relu_backward(out, grad)
            assert got.dtype == dtype
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    b = BACKENDS[2]
    x = RNG.uniform(-1, 1, (300, 200)).astype(np.float32)
    np.testing.assert_array_equal(b.relu_backward(x.T, x.T), np.where(x.T <= 0, 0, x.T))


def test_wide_vectors_only_where_avx512_exists():
    """-mprefer-vector-width=512 (libmvec's 16-wide transcendentals) is added for CPUs whose flags
    list avx512f, never for AVX2-only ones (this 2-core box) or other architectures."""
    from burn_ndarray import _native

    avx2 = "x86_64\nmodel name\t: Some CPU\nflags\t\t: fpu sse2 avx avx2 fma"
    avx512 = avx2 + " avx512f avx512dq avx512bw"
    assert not _native._has_avx512(avx2)
    assert _native._has_avx512(avx512)
    assert not _native._has_avx512("aarch64\nFeatures\t: fp asimd sve")
    assert not _native._has_avx512(avx2 + " avx512fp16")  # another flag with that prefix
    want = _native._has_avx512(_native._cpu_key())
    assert (_native.WIDE_FLAGS[0] in _native.flags()) == want
