"""`linear` with a bias as one cuBLASLt GEMM with the bias epilogue (`_gemm_lt.py`), on the CPU
stand-in (`cpu_backend.py`, cuBLASLt emulated by `fake_cublaslt.py` on the stand-in's memory):
no `bias_add` kernel, the values of numpy float64 on the stored operands, one plan per shape,
the bias pointer taken per call, and the GEMM + bias kernel path where cuBLASLt has no kernel
or the switch is off. The library binding itself (`_lt_api.py`) runs only on a GPU
(`test_gemm_lt_gpu.py`)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

#: relative rounding step of the stored type (one rounding of a float32 sum)
EPS = {"float32": 2.0**-23, "bfloat16": 2.0**-8, "float16": 2.0**-11}


def _np_dtype(dt):
    if dt == "bfloat16":
        return np.dtype(pytest.importorskip("ml_dtypes").bfloat16)
    return np.dtype(dt)


def _setup(be, fake):
    from burn_tensor import TensorData

    dev = be.device()
    put = lambda a: be.float_from_data(TensorData(a), dev)  # noqa: E731
    get = lambda p: np.asarray(be.float_into_data(p).array).astype(np.float64)  # noqa: E731
    return put, get


def _want(x, w, b):
    return x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64)


def _check(got, want, dt, k):
    # float32 sums of k products, then one rounding to the stored type
    tol = 4 * k * 2.0**-23 * float(np.abs(want).max()) + EPS[dt] * float(np.abs(want).max())
    np.testing.assert_allclose(got, want, rtol=2 * EPS[dt], atol=tol)


@pytest.mark.parametrize("dt", ("float32", "bfloat16", "float16"))
def test_linear_with_bias_is_one_lt_call_and_no_bias_kernel(dt):
    from burn_cuda import _gemm_lt
    from cpu_backend import cuda_on_cpu_backend

    npdt = _np_dtype(dt)
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 5, 24)).astype(npdt)  # a 3-D input: rows [10, 24]
    w = rng.standard_normal((24, 12)).astype(npdt)
    b = rng.standard_normal(12).astype(npdt)
    with cuda_on_cpu_backend(float_dtype=dt) as (be, fake):
        put, get = _setup(be, fake)
        px, pw, pb = put(x), put(w), put(b)
        fake.launches.clear()
        fake.cublas.calls.clear()
        out = be.linear(px, pw, pb)
        assert out.shape == (2, 5, 12) and out.dtype == npdt
        assert [launch.name for launch in fake.launches] == []  # no bias_add, no conversion
        assert fake.cublas.calls == []
        assert fake.cublaslt.calls == [("matmul", 12, 10, 24)]  # column-major D [n, m]
        _check(get(out), _want(x, w, b), dt, 24)
        assert len(_gemm_lt._PLANS) == 1 and not _gemm_lt.REFUSED


def test_a_plan_is_reused_and_each_call_reads_its_own_bias():
    from burn_cuda import _gemm_lt
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(6)
    x = rng.standard_normal((7, 16)).astype(np.float32)
    w = rng.standard_normal((16, 8)).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _setup(be, fake)
        px, pw = put(x), put(w)
        for i in range(3):  # same shape, same alignments: one plan; a new bias each call
            b = rng.standard_normal(8).astype(np.float32) * (i + 1)
            _check(get(be.linear(px, pw, put(b))), _want(x, w, b), "float32", 16)
        assert len(_gemm_lt._PLANS) == 1
        assert len(fake.cublaslt.calls) == 3
        before = len(fake.cublaslt._objs)
        be.linear(px, pw, put(b))
        assert len(fake.cublaslt._objs) == before  # no descriptor made for a known shape


def test_transposed_weight_view_and_unaligned_input():
    from burn_cuda import _gemm_lt
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(7)
    x = rng.standard_normal((9, 16)).astype(np.float32)
    wt = rng.standard_normal((8, 16)).astype(np.float32)  # stored [n, k]: w = wt.T
    b = rng.standard_normal(8).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _setup(be, fake)
        pw = be.float_swap_dims(put(wt), 0, 1)  # a transposed view: cuBLASLt's TRANSA
        # x as elements 1..144 of a flat buffer: contiguous, its data 4 bytes past an
        # allocation's start (the heuristic is told 4-byte alignment)
        flat = np.concatenate([np.zeros(1, np.float32), x.ravel()])
        px = be.float_reshape(be.float_slice(put(flat), [slice(1, 145, 1)]), [9, 16])
        told, create = [], fake.cublaslt.pref_create  # the preference is freed after its use
        fake.cublaslt.pref_create = lambda ws, aligns: told.append(aligns) or create(ws, aligns)
        out = be.linear(px, pw, put(b))
        _check(get(out), _want(x, wt.T, b), "float32", 16)
        assert fake.cublaslt.calls == [("matmul", 8, 9, 16)]
        (key,) = _gemm_lt._PLANS
        assert key[6] is True or key[6] == 1  # w read transposed
        assert key[9] == 4  # x's alignment, as told to the heuristic
        (aligns,) = told
        assert aligns[1] == 4


def test_refused_shapes_and_the_switch_take_the_gemm_and_bias_kernel(monkeypatch):
    from burn_cuda import _gemm_lt, _ops_linear
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(8)
    x = rng.standard_normal((6, 10)).astype(np.float32)
    w = rng.standard_normal((10, 4)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _setup(be, fake)
        px, pw, pb = put(x), put(w), put(b)
        fake.cublaslt.refuse = True  # cuBLASLt has no kernel: remembered, not asked again
        fake.launches.clear()
        out = be.linear(px, pw, pb)
        assert [launch.name for launch in fake.launches] == ["bias_add"]
        assert len(fake.cublas.calls) == 1 and fake.cublaslt.calls == []
        _check(get(out), _want(x, w, b), "float32", 10)
        assert len(_gemm_lt.REFUSED) == 1 and not _gemm_lt._PLANS
        fake.cublaslt.refuse = False
        be.linear(px, pw, pb)
        assert fake.cublaslt.calls == []  # the refusal holds for the shape
        monkeypatch.setattr(_ops_linear, "LT", False)  # BURN_CUDA_LT=0
        xs = put(x[:5])
        fake.launches.clear()
        _check(get(be.linear(xs, pw, pb)), _want(x[:5], w, b), "float32", 10)
        assert [launch.name for launch in fake.launches] == ["bias_add"]
        assert fake.cublaslt.calls == []


def test_float64_and_no_bias_keep_the_plain_gemm():
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(9)
    with cuda_on_cpu_backend(float_dtype="float64") as (be, fake):
        put, get = _setup(be, fake)
        x, w, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2)), rng.standard_normal(2)
        out = get(be.linear(put(x), put(w), put(b)))
        np.testing.assert_allclose(out, _want(x, w, b), rtol=1e-12)
        assert fake.cublaslt.calls == []
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _setup(be, fake)
        x, w = (rng.standard_normal(s).astype(np.float32) for s in ((3, 4), (4, 2)))
        out = get(be.linear(put(x), put(w), None))
        np.testing.assert_allclose(out, x.astype(np.float64) @ w, rtol=1e-5)
        assert fake.cublaslt.calls == []


def test_each_thread_has_its_own_plan():
    """A call sets its plan's descriptor's bias pointer and then runs it: two threads on one
    GPU (data parallel) each get a descriptor of their own, and both read their own bias."""
    import threading

    from burn_cuda import _gemm_lt
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(10)
    x = rng.standard_normal((5, 8)).astype(np.float32)
    w = rng.standard_normal((8, 3)).astype(np.float32)
    b1, b2 = (rng.standard_normal(3).astype(np.float32) for _ in range(2))
    with cuda_on_cpu_backend() as (be, fake):
        put, get = _setup(be, fake)
        px, pw = put(x), put(w)
        got = {}

        def run(name, b):
            got[name] = get(be.linear(px, pw, put(b)))

        t = threading.Thread(target=run, args=("thread", b2))
        t.start()
        t.join()
        run("main", b1)
        assert len(_gemm_lt._PLANS) == 2
        assert len({key[13] for key in _gemm_lt._PLANS}) == 2  # one per thread (key[13])
        _check(got["main"], _want(x, w, b1), "float32", 8)
        _check(got["thread"], _want(x, w, b2), "float32", 8)


def test_handles_are_freed_when_not_kept(monkeypatch):
    """A plan keeps its descriptor, three layouts and algorithm buffer and nothing else (the
    preference is freed once the heuristic answered); a refused shape frees everything it made;
    past `MAX_PLANS` a new plan frees this thread's plans and keeps other threads' (one of
    them may be running its descriptor)."""
    from burn_cuda import _gemm_lt
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(11)
    w = rng.standard_normal((6, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    with cuda_on_cpu_backend() as (be, fake):
        lt = fake.cublaslt
        put, get = _setup(be, fake)
        pw, pb = put(w), put(b)
        be.linear(put(rng.standard_normal((2, 6)).astype(np.float32)), pw, pb)
        assert lt.live() == {"handle": 1, "desc": 1, "layout": 3} and len(lt.algos) == 1
        lt.refuse = True
        be.linear(put(rng.standard_normal((3, 6)).astype(np.float32)), pw, pb)  # refused
        assert lt.live() == {"handle": 1, "desc": 1, "layout": 3} and len(lt.algos) == 1
        lt.refuse = False
        # another thread's plan (its key's thread field): kept across this thread's eviction
        other_key, other = next(iter(_gemm_lt._PLANS.items()))
        foreign = other_key[:13] + (-1,) + other_key[14:]
        _gemm_lt._PLANS[foreign] = other
        monkeypatch.setattr(_gemm_lt, "MAX_PLANS", 3)
        for rows in (4, 5):  # the 3rd entry, then a 4th plan: this thread's two are freed
            x = rng.standard_normal((rows, 6)).astype(np.float32)
            _check(get(be.linear(put(x), pw, pb)), _want(x, w, b), "float32", 6)
        assert foreign in _gemm_lt._PLANS and len(_gemm_lt._PLANS) == 2
        # live: the foreign entry's handles (shared with the freed plan's tuple, so freed
        # once with it: the fake counts objects) and the new plan's
        assert lt.live()["desc"] == 1 and lt.live()["layout"] == 3 and "pref" not in lt.live()
