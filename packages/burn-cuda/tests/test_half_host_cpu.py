"""The half types' host path on the CPU stand-in (issue 34): bfloat16/float16 GEMMs as direct
`cublasGemmEx` calls (`_gemm.py`, the stand-in's numpy cuBLAS `fake_cublas.py` computing in
float32 as cuBLAS does), the half linear ops as direct GEMMs, dtype checks by dtype object, and
the Python calls an op costs (cProfile's count: the host work per op on the GPU host). Results
against numpy float64 on the half-rounded inputs."""

from __future__ import annotations

import cProfile
import pstats
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(1, str(Path(__file__).resolve().parents[3]))  # the repository: benches/

import cuda_on_cpu
from benches.probes.bf16_host import layer_ops  # the ops the H200 probe times, counted here

ml_dtypes = pytest.importorskip("ml_dtypes")
NP = {"bfloat16": np.dtype(ml_dtypes.bfloat16), "float16": np.dtype(np.float16)}
EPS = {"bfloat16": 2.0**-8, "float16": 2.0**-11}  # half an ulp: one rounding's relative error
GEMMS = {"gemmEx", "gemmStridedBatchedEx"}

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")


def _half(rng, shape, dt):
    return rng.standard_normal(shape).astype(NP[dt])


def _check_product(got, a, b, dt):
    """`got` (half) equals a @ b (float64 of the half values) rounded once: within half an ulp
    of the result plus float32 accumulation error."""
    a64, b64 = np.asarray(a, np.float64), np.asarray(b, np.float64)
    want = a64 @ b64
    bound = EPS[dt] * np.abs(want) + 1e-6 * (np.abs(a64) @ np.abs(b64)) + 1e-30
    err = np.abs(np.asarray(got, np.float64) - want)
    assert got.dtype == NP[dt]
    assert (err <= bound).all(), float((err / bound).max())


def _operand(fake_cupy, a, transposed):
    """`a` as a stand-in array: row-major, or the transposed view of a row-major copy."""
    if transposed:
        return fake_cupy.asfake(np.ascontiguousarray(np.swapaxes(a, -1, -2))).swapaxes(-1, -2)
    return fake_cupy.asfake(a)


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_gemm_layouts_through_gemm_ex(dt):
    """Every layout `_gemm.matmul` reads in place, for both half types, is one gemmEx /
    gemmStridedBatchedEx call whose result is the float32-accumulated product rounded once."""
    import fake_cupy
    from burn_cuda import _gemm
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(0)
    with cuda_on_cpu_backend(float_dtype=dt) as (_backend, fake):
        for m, k, n in [(1, 1, 1), (3, 5, 7), (33, 65, 17), (6, 1, 5), (1, 9, 4)]:
            a, b = _half(rng, (m, k), dt), _half(rng, (k, n), dt)
            for tx in (False, True):
                for ty in (False, True):
                    got = _gemm.matmul(_operand(fake_cupy, a, tx), _operand(fake_cupy, b, ty))
                    assert got is not None, (m, k, n, tx, ty)
                    _check_product(got, a, b, dt)
        a, b = _half(rng, (2, 3, 5, 4), dt), _half(rng, (2, 3, 4, 6), dt)
        b1 = _half(rng, (1, 1, 4, 6), dt)
        for x, y, want_b in [
            (fake_cupy.asfake(a), fake_cupy.asfake(b), b),
            (_operand(fake_cupy, a, True), _operand(fake_cupy, b, True), b),
            (fake_cupy.asfake(a), fake_cupy.asfake(b1), np.broadcast_to(b1, b.shape)),
        ]:
            got = _gemm.matmul(x, y)
            assert got is not None
            _check_product(got, a, want_b, dt)
        names = [c[0] for c in fake.cublas.calls]
        assert set(names) == GEMMS, set(names)
        assert names.count("gemmStridedBatchedEx") == 3


def test_bf16_matmuls_of_any_layout_run_on_cublas_without_conversions():
    """bfloat16 matmuls on `Cuda(float_dtype="bfloat16")` -- 2-D, batched, and attention's
    permuted heads (a batch cuBLAS cannot stride: copied contiguous as 16-bit patterns) -- are
    cuBLAS bf16 GEMMs: no float32 conversion kernel is built (cupy's batched matmul refuses
    bfloat16 on the GPU, which sent each through the float32 detour)."""
    from burn_tensor import Tensor
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(1)
    q, k = _half(rng, (2, 5, 3, 4), "bfloat16"), _half(rng, (2, 5, 3, 4), "bfloat16")
    w = _half(rng, (4, 6), "bfloat16")
    with cuda_on_cpu_backend(float_dtype="bfloat16") as (backend, fake):
        d = backend.device()
        tq, tk, tw = (Tensor.from_data(v, d) for v in (q, k, w))
        # heads: [b, s, h, e] -> [b, h, s, e]; scores [b, h, s, s] = q @ k^T
        qh, kh = tq.swap_dims(1, 2), tk.swap_dims(1, 2)
        scores = qh.matmul(kh.swap_dims(2, 3))
        qs, ks = np.swapaxes(q, 1, 2), np.swapaxes(k, 1, 2)
        _check_product(scores.into_data().array, qs, np.swapaxes(ks, 2, 3), "bfloat16")
        _check_product(tq.matmul(tw.reshape([1, 1, 4, 6])).into_data().array, q,
                       w.reshape(1, 1, 4, 6), "bfloat16")  # fmt: skip
        _check_product(tq.reshape([30, 4]).matmul(tw).into_data().array, q.reshape(30, 4), w,
                       "bfloat16")  # fmt: skip
        assert [c[0] for c in fake.cublas.calls] == [
            "gemmStridedBatchedEx", "gemmStridedBatchedEx", "gemmEx"
        ]  # fmt: skip
        assert not {"bf16_to_f32", "f32_to_bf16"} & set(fake.compiled), fake.compiled


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_linear_ops_are_direct_gemms(dt):
    """linear and its three backward ops on a half backend: one GEMM each (the forward's bias
    added in cuBLASLt's epilogue, the bias gradient summed by the half column reduction),
    against numpy float64."""
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(2)
    x, w = _half(rng, (2, 7, 5), dt), _half(rng, (5, 3), dt)
    bias, g = _half(rng, (3,), dt), _half(rng, (2, 7, 3), dt)
    f64 = lambda v: np.asarray(v, np.float64)
    with cuda_on_cpu_backend(float_dtype=dt) as (backend, fake):
        from burn_tensor import TensorData

        d = backend.device()
        tx, tw, tb, tg = (backend.float_from_data(TensorData(v), d) for v in (x, w, bias, g))
        out = backend.linear(tx, tw, tb)
        prod = f64(x) @ f64(w)
        # the product and the bias summed in float32, rounded once (cuBLASLt's bias epilogue)
        want = prod + f64(bias)
        np.testing.assert_allclose(f64(out), want, rtol=3 * EPS[dt], atol=1e-2)
        assert out.shape == (2, 7, 3) and out.dtype == NP[dt]
        _check_product(backend.linear_x_backward(tw, tg), g, f64(w).T, dt)
        _check_product(backend.linear_weight_backward(tx, tg), f64(x).reshape(14, 5).T,
                       f64(g).reshape(14, 3), dt)  # fmt: skip
        db = backend.linear_bias_backward(tg)
        want_db = f64(g).reshape(14, 3).sum(0)
        np.testing.assert_allclose(f64(db), want_db, rtol=2 * EPS[dt], atol=1e-6)
        assert db.shape == (3,) and db.dtype == NP[dt]
        assert [c[0] for c in fake.cublas.calls] == ["gemmEx"] * 2
        assert fake.cublaslt.calls == [("matmul", 3, 14, 5)]


def test_dtype_checks_by_object_answer_as_the_names_did():
    """`is_bf16` / `is_half` (set membership by dtype object) give what the `dtype.name`
    comparisons gave, for every array dtype, equal dtype objects that are not the same object,
    and things that are not arrays."""
    from burn_cuda._bf16 import is_bf16
    from burn_cuda._half_ops import is_half
    from burn_tensor import DType

    bf = NP["bfloat16"]
    values = [np.zeros(2, dt) for dt in (bf, np.float16, np.float32, np.float64, np.bool_,
                                         np.int32, np.int64, np.uint16)]  # fmt: skip
    values.append(np.zeros(2, bf.newbyteorder("=")))  # equal to bfloat16, not the same object
    values += [None, 1.0, 3, [np.zeros(1, bf)], DType.BF16, np.float32(1)]
    for v in values:
        name = getattr(getattr(v, "dtype", None), "name", None)
        assert is_bf16(v) == (name == "bfloat16"), v
        assert is_half(v) == (name in ("bfloat16", "float16")), v


def test_bf16_allocation_takes_the_constructor_or_a_uint16_view():
    """`_half_ops.empty` allocates bfloat16 with the constructor where cupy takes ml_dtypes'
    dtype, else as uint16 viewed as bfloat16; either way a bfloat16 array of the shape."""
    from burn_cuda import _half_ops
    from fake_cupy import FakeArray, FakeCupy

    class Refusing(FakeCupy):
        """A cupy whose constructor refuses bfloat16 (the uint16 view is then the way)."""

        def __init__(self):
            super().__init__()

            def ndarray(shape, dtype=float, **kw):
                if np.dtype(dtype) == NP["bfloat16"]:
                    raise TypeError("data type 'E' not understood")
                return FakeArray(shape, dtype, **kw)

            self.ndarray = ndarray

    for fake in (FakeCupy(), Refusing()):
        alloc = _half_ops._bf16_allocator(fake)
        a = alloc((3, 5))
        assert a.dtype == NP["bfloat16"] and a.shape == (3, 5) and a.itemsize == 2
        assert a.nbytes == 30


def _calls(fn) -> int:
    """Python-level calls (cProfile's count) of one `fn()` after a warm-up call."""
    fn()
    pr = cProfile.Profile()
    pr.enable()
    fn()
    pr.disable()
    return sum(v[1] for v in pstats.Stats(pr).stats.values())


def _layer_ops(be) -> dict:
    """name -> a call of that backend op on operands of `be`'s float dtype."""
    from burn_tensor import TensorData

    d = be.device()
    rng = np.random.default_rng(3)

    def arr(*shape):
        data = rng.standard_normal(shape).astype(be.float_dtype.np)
        return be.float_from_data(TensorData(data), d)

    x, w, bias, x3 = arr(64, 16), arr(16, 16), arr(16), arr(4, 16, 16)
    q, k = arr(2, 4, 8, 16), arr(2, 4, 16, 8)
    return layer_ops(be, x, w, bias, x3, q, k)


def test_half_ops_host_calls_stay_near_float32():
    """The Python calls per op of a transformer layer's ops on bfloat16 against float32 (the
    host cost per op on the GPU host; launches are no-ops here): at most a few frames more for
    elementwise ops and reductions, no more for GEMMs, linear layers and views. Before issue
    34's fixes bfloat16 took 2-4x float32's calls (385 vs 19 for a broadcast add; 273 vs 104
    for linear)."""
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    counts = {}
    for dt in ("float32", "bfloat16"):
        with cuda_on_cpu_backend(fake=FakeCupy(execute=False), float_dtype=dt) as (be, _):
            counts[dt] = {name: _calls(fn) for name, fn in _layer_ops(be).items()}
    f32, bf16 = counts["float32"], counts["bfloat16"]
    slack = {"add": 25, "add (broadcast)": 40, "mul_scalar": 20, "sum_dim": 25,
             "linear": 30, "linear_bias_backward": 20}  # fmt: skip
    over = {n: (f32[n], bf16[n]) for n in f32 if bf16[n] > f32[n] + slack.get(n, 5)}
    assert not over, over


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_adam_many_is_one_launch_with_the_one_tensor_bits(dt):
    """Adam over a half model's parameters (`float_adam_update_many`) is one `adam_many`
    launch -- ~100 per-parameter launches per step before, on issue 34's transformer -- giving
    the bits of the per-parameter half kernel, on a first step (moments of the parameter's
    dtype) and with float32 moments (a mixed-precision optimizer's)."""
    from burn_tensor import TensorData
    from cpu_backend import cuda_on_cpu_backend

    rng = np.random.default_rng(4)
    shapes = [(3, 4), (5,), (0,), (2, 3, 7)]
    hp = (0.01, 0.9, 0.999, 1e-5)
    with cuda_on_cpu_backend(float_dtype=dt) as (be, fake):
        d = be.device()

        def arrs(dtype):
            return [be.float_from_data(TensorData(rng.uniform(0.1, 2, s).astype(dtype)), d)
                    for s in shapes]  # fmt: skip

        ps, gs = arrs(NP[dt]), arrs(NP[dt])
        for m1s, m2s, time in [(None, None, 1), (arrs(np.float32), arrs(np.float32), 2)]:
            before = [x.name for x in fake.launches]
            got = be.float_adam_update_many(ps, gs, m1s, m2s, *hp, time)
            launched = [x.name for x in fake.launches][len(before):]
            assert launched == ["adam_many"], launched
            for i, (p, g) in enumerate(zip(ps, gs)):
                m1 = None if m1s is None else m1s[i]
                m2 = None if m2s is None else m2s[i]
                want = be.float_adam_update(p, g, m1, m2, *hp, time)
                for a, w in zip((got[0][i], got[1][i], got[2][i]), want):
                    assert a.dtype == w.dtype and a.shape == w.shape
                    np.testing.assert_array_equal(np.asarray(a).view(np.uint8),
                                                  np.asarray(w).view(np.uint8))  # fmt: skip
            assert got[1][0].dtype == (NP[dt] if m1s is None else np.float32)


@pytest.mark.parametrize("driver", [True, False], ids=["driver", "rawkernel"])
def test_half_vector_kernels_through_both_launchers(driver):
    """The vector kernels' fixed launch form (`vec`: n, out, inputs, float32 scalars) packs
    what the kernel reads, through the driver launcher and through cupy's RawKernel call."""
    from burn_tensor import TensorData
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    rng = np.random.default_rng(6)
    a, b = _half(rng, (5, 40), "bfloat16"), _half(rng, (5, 40), "bfloat16")
    with cuda_on_cpu_backend(fake=FakeCupy(driver=driver), float_dtype="bfloat16") as (be, _):
        d = be.device()
        ta, tb = (be.float_from_data(TensorData(v), d) for v in (a, b))
        f64 = lambda v: np.asarray(v, np.float64)
        want = (f64(a) + f64(b)).astype(NP["bfloat16"])
        np.testing.assert_array_equal(np.asarray(be.float_add(ta, tb)), want)
        want = (f64(a) * 2.5).astype(NP["bfloat16"])
        np.testing.assert_array_equal(np.asarray(be.float_mul_scalar(ta, 2.5)), want)


def test_bf16_conversions_are_one_fixed_form_launch_with_ml_dtypes_bits():
    """`_bf16.to_f32` / `to_bf16` (147 of each per mixed-precision transformer step, issue 34):
    one launch each through the launcher's fixed (in*, out*, n) form, no `uint16` view of a
    contiguous source and no per-argument dispatch (`args`), and the bits ml_dtypes gives, for
    contiguous and strided sources (NaN kept, round to nearest even)."""
    import fake_cupy
    from burn_cuda import _bf16
    from cpu_backend import cuda_on_cpu_backend

    bf = NP["bfloat16"]
    x = np.random.default_rng(5).standard_normal((6, 40)).astype(np.float32) * 1e3
    x[0, ::7] = np.float32(np.nan)
    x[1, :3] = [1.0 + 2**-8, 1.0 + 3 * 2**-8, -0.0]  # ties to even, a signed zero
    views = (lambda a: a, lambda a: a[:, ::2], lambda a: a.T)  # contiguous, strided, transposed
    with cuda_on_cpu_backend(float_dtype="float32") as (_be, fake):
        for view in views:
            for conv, arr, want in (
                (_bf16.to_bf16, view(fake_cupy.asfake(x)), view(x).astype(bf)),
                (_bf16.to_f32, view(fake_cupy.asfake(x.astype(bf))), view(x.astype(bf))),
            ):
                conv(arr)  # warm: the kernel compiles once
                before = len(fake.launches)
                pr = cProfile.Profile()
                pr.enable()
                got = conv(arr)
                pr.disable()
                assert len(fake.launches) - before == 1
                got, want = np.asarray(got), np.asarray(want, got.dtype)
                assert got.dtype == (bf if conv is _bf16.to_bf16 else np.float32)
                bits = np.uint16 if got.itemsize == 2 else np.uint32
                assert got.view(bits).tobytes() == np.ascontiguousarray(want).view(bits).tobytes()
                names = {k[2] for k in pstats.Stats(pr).stats}
                assert "args" not in names, names
                if arr.flags.c_contiguous:
                    assert "view" not in names, names
