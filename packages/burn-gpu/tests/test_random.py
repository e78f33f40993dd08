"""Philox random (`burn_gpu.random_program`): one set of semantics, rendered in both dialects,
and the OpenCL text run on PoCL against a numpy Philox4x32-10 and numpy float64 transforms."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from burn_gpu import KINDS, random_program

SEED = 0x0123456789ABCDEF
CALL = (1 << 32) + 5  # both call words in use


def philox(ctr, key):
    """Philox4x32-10 in Python integers, the reference of the kernel's words."""
    c, (k0, k1) = list(ctr), key
    m = 0xFFFFFFFF
    for _ in range(10):
        p0, p1 = c[0] * 0xD2511F53, c[2] * 0xCD9E8D57
        c = [((p1 >> 32) ^ c[1] ^ k0) & m, p1 & m, ((p0 >> 32) ^ c[3] ^ k1) & m, p0 & m]
        k0, k1 = (k0 + 0x9E3779B9) & m, (k1 + 0xBB67AE85) & m
    return c


def words(n: int):
    key = (SEED & 0xFFFFFFFF, SEED >> 32)
    return [philox((i, CALL & 0xFFFFFFFF, CALL >> 32, 0), key) for i in range(n)]


def unit(a, b, f64: bool) -> float:
    return (((a >> 5) << 26) | (b >> 6)) * 2.0**-53 if f64 else (a >> 8) * 2.0**-24


def reference(dt: str, kind: str, a: float, b: float, n: int, f64: bool) -> np.ndarray:
    """What element i must hold, computed from the numpy Philox in float64."""
    out = []
    for w in words(n):
        u = unit(w[0], w[1], f64)
        if kind == "bernoulli":
            out.append(1.0 if u < a else 0.0)
        elif kind == "normal":
            z = math.sqrt(-2 * math.log(1 - u)) * math.cos(2 * math.pi * unit(w[2], w[3], f64))
            out.append(np.rint(a + b * z) if dt.startswith("int") else a + b * z)
        elif dt.startswith("int"):
            out.append(a + ((w[0] << 32) | w[1]) % int(b - a))
        else:
            out.append(a + (b - a) * u)
    return np.array(out)


def test_random_renders_in_both_dialects():
    for dt in ("float32", "float64", "int32", "int64"):
        cl, cu = random_program(dt, "opencl"), random_program(dt, "cuda")
        assert "__kernel void philox_random(" in cl
        assert 'extern "C" __global__ void philox_random(' in cu
        assert cl.count("philox(") == cu.count("philox(") == 2
        assert ("#define INT_OUT" in cu) == dt.startswith("int")


CASES = [
    ("float32", "default", 0.0, 1.0),
    ("float32", "uniform", -2.0, 3.0),
    ("float32", "normal", 1.0, 2.0),
    ("float32", "bernoulli", 0.3, 0.0),
    ("float64", "uniform", -2.0, 3.0),
    ("float64", "normal", 0.0, 1.0),
    ("int32", "uniform", -3.0, 7.0),
    ("int64", "normal", 5.0, 3.0),
]


@pytest.mark.parametrize(("dt", "kind", "a", "b"), CASES)
def test_opencl_random_matches_numpy_philox(cl_queue, dt, kind, a, b):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    fp64 = "cl_khr_fp64" in device.extensions
    if dt == "float64" and not fp64:
        pytest.skip("no cl_khr_fp64 on this device")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        f64 = dt == "float64" or (dt.startswith("int") and fp64)
        prg = cl.Program(ctx, random_program(dt, "opencl", f64=f64)).build()
    n = 300
    out = np.empty(n, dt)
    buf = cl.Buffer(ctx, cl.mem_flags.WRITE_ONLY, out.nbytes)
    F = np.float64 if f64 else np.float32
    u32 = np.uint32
    k = cl.Kernel(prg, "philox_random")
    k.set_args(
        buf,
        np.int32(n),
        u32(SEED & 0xFFFFFFFF),
        u32(SEED >> 32),
        u32(CALL & 0xFFFFFFFF),
        u32(CALL >> 32),
        np.int32(KINDS[kind]),
        F(a),
        F(b),
    )
    cl.enqueue_nd_range_kernel(queue, k, (n,), None)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    want = reference(dt, kind, a, b, n, f64)
    if kind == "normal" and not dt.startswith("int"):
        np.testing.assert_allclose(out, want, rtol=1e-5 if dt == "float32" else 1e-12, atol=1e-5)
    elif kind == "normal":  # a rounding boundary may differ by the math library's last bit
        assert np.mean(out == want) > 0.99
    elif dt == "float64":  # a + (b - a) * u may be contracted to an FMA: the last bit
        np.testing.assert_allclose(out, want, rtol=1e-14, atol=1e-15)
    else:  # integer arithmetic and exact scaling: bit for bit
        np.testing.assert_array_equal(out, want.astype(dt))
    if kind in ("default", "uniform") and not dt.startswith("int"):
        assert out.min() >= a and out.max() < b


def test_random_at_reads_seed_and_call_from_device_words(cl_queue, cl_build):
    # a captured step's draw: seed = words[0], call = words[1] + delta, the same bits as
    # `philox_random` given that (seed, call) pair as arguments
    cl = pytest.importorskip("pyopencl")
    ctx, queue, _ = cl_queue
    src = random_program("float32", "opencl", from_block=True)
    assert "__kernel void philox_random_at(" in src and "philox_random(" not in src
    cu = random_program("float32", "cuda", from_block=True)
    assert 'extern "C" __global__ void philox_random_at(' in cu
    prg = cl_build(src)
    n, delta = 300, 7
    mf = cl.mem_flags
    block = np.array([SEED, CALL - delta], np.uint64)
    wbuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=block)
    out = np.empty(n, np.float32)
    buf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    k = cl.Kernel(prg, "philox_random_at")
    k.set_args(buf, np.int32(n), wbuf, np.uint32(delta), np.int32(KINDS["uniform"]),
               np.float32(-2.0), np.float32(3.0))  # fmt: skip
    cl.enqueue_nd_range_kernel(queue, k, (n,), None)
    cl.enqueue_copy(queue, out, buf)
    queue.finish()
    want = reference("float32", "uniform", -2.0, 3.0, n, False)
    np.testing.assert_array_equal(out, want.astype(np.float32))
