"""Every eager elementwise kernel of `burn_gpu.eager_program`, rendered in the OpenCL dialect,
run on PoCL in both forms (`ewc_` contiguous, `ew_` strided: a transposed first operand and a
broadcast second one) and compared with numpy float64 (`_numpy_ref.py`). The CUDA rendering
differs from this text only by the dialect (`test_dialects.py`), so the expressions, helpers
and index arithmetic CUDA runs are the ones tested here."""

from __future__ import annotations

import importlib.util
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest
from burn_gpu import cast_program, eager_ops, eager_program, pack

cl = pytest.importorskip("pyopencl")
_spec = importlib.util.spec_from_file_location(
    "_numpy_ref", Path(__file__).with_name("_numpy_ref.py")
)
ref = importlib.util.module_from_spec(_spec)
sys.modules["_numpy_ref"] = ref
_spec.loader.exec_module(ref)

SHAPE = (3, 5)
_POSITIVE = {"log", "sqrt", "powf", "powf_scalar"}


def _build(ctx, src):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # PoCL build notes
        return cl.Program(ctx, src).build()


def _operands(dt: str, name: str, rng):
    """Host operands a (T), b (T or bool mask), c (T) of SHAPE and scalars s0, s1."""
    n = int(np.prod(SHAPE))
    if dt == "bool":
        a, b, c = (rng.integers(0, 2, n).reshape(SHAPE).astype(np.uint8) for _ in range(3))
        return a, b, c, 1, 0
    if dt.startswith("int"):
        a = rng.integers(-9, 10, n).reshape(SHAPE)
        b = rng.integers(-3, 4, n).reshape(SHAPE)  # zeros: division by 0 is defined
        if name.startswith("bitwise_") and "shift" in name:
            b = rng.integers(-2, 40, n).reshape(SHAPE)  # past the width too
        if name.startswith("powi"):
            b = rng.integers(-2, 5, n).reshape(SHAPE)
        c = rng.integers(-9, 10, n).reshape(SHAPE)
        s0, s1 = (3, -2) if name.startswith(("powi", "bitwise")) else (-2, 3)
        return a.astype(dt), b.astype(dt), c.astype(dt), s0, s1
    lo = 0.1 if name in _POSITIVE else -0.9
    a = rng.uniform(lo, 0.9, SHAPE)
    if name == "acosh":
        a = a + 2.0
    b = rng.uniform(0.2, 1.5, SHAPE) * rng.choice([-1.0, 1.0], SHAPE)
    if name.startswith("relu") or name in ("sign", "abs", "is_nan", "is_inf"):
        a.flat[:3] = [0.0, np.nan, np.inf]
    c = rng.uniform(-2, 2, SHAPE)
    return a.astype(dt), b.astype(dt), c.astype(dt), -0.25, 0.5


def _run(ctx, queue, prg, kname, op, dt, host, out_dt, strided: bool):
    """Launch `kname` over SHAPE; strided: a transposed first operand, a (1, 5) second."""
    mf = cl.mem_flags
    a, b, c, s0, s1 = host
    ins, strides, offs, used = [], [], [], []
    for k, letter in enumerate(op.inputs):
        x = (a, b, c)[k]
        if letter == "B":
            x = x.astype(np.uint8) if dt != "bool" else x
            x = (x != 0).astype(np.uint8) if dt != "bool" else x
        st = (SHAPE[1], 1)
        if strided and k == 0:
            buf_host = np.ascontiguousarray(x.T)  # x[i, j] at j * 3 + i
            st = (1, SHAPE[0])
        elif strided and k == 1:
            x = np.broadcast_to(x[:1], SHAPE)
            buf_host = np.ascontiguousarray(x[:1])
            st = (0, 1)
        else:
            buf_host = np.ascontiguousarray(x)
        ins.append(cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=buf_host))
        strides.append(st)
        offs.append(0)
        used.append(x)
    n = int(np.prod(SHAPE))
    out = np.empty(SHAPE, out_dt)
    obuf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    lay = np.frombuffer(pack(n, SHAPE, [(SHAPE[1], 1), *strides], [0, *offs]), np.uint8)
    sc = np.uint8 if dt == "bool" else np.dtype(dt).type
    args = [lay, obuf, *ins, *[sc(v) for v in (s0, s1)[: op.scalars]]]
    kernel = cl.Kernel(prg, kname)
    kernel.set_args(*args)
    cl.enqueue_nd_range_kernel(queue, kernel, (n,), None)
    cl.enqueue_copy(queue, out, obuf)
    queue.finish()
    while len(used) < 3:
        used.append(None)
    return out, used


def _refs(dt: str) -> dict:
    if dt == "bool":
        return ref.bool_refs()
    if dt.startswith("int"):
        return ref.int_refs(np.dtype(dt).itemsize * 8)
    return ref.float_refs()


@pytest.mark.parametrize("dt", ["float32", "float64", "int32", "int64", "bool"])
def test_every_eager_kernel_matches_numpy_float64(cl_queue, dt):
    ctx, queue, device = cl_queue
    if dt == "float64" and "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    prg = _build(ctx, eager_program(dt, "opencl"))
    refs = _refs(dt)
    ops = eager_ops(dt)
    assert set(ops) == set(refs), set(ops) ^ set(refs)  # every kernel has a reference
    rng = np.random.default_rng(7)
    ran = []
    for name, op in ops.items():
        host = _operands(dt, name, rng)
        out_dt = np.uint8 if op.out == "B" or dt == "bool" else np.dtype(dt)
        for prefix, strided in (("ewc_", False), ("ew_", True)):
            if prefix == "ewc_" and strided:
                continue
            got, (a, b, c) = _run(ctx, queue, prg, prefix + name, op, dt, host, out_dt, strided)
            f64 = [None if x is None else x.astype(np.float64) for x in (a, b, c)]
            if dt != "float32" and dt != "float64":
                f64 = [None if x is None else x.astype(np.int64) for x in (a, b, c)]
            s0, s1 = host[3], host[4]
            want = np.asarray(refs[name](*f64, s0, s1, np.arange(got.size).reshape(SHAPE)))
            want = np.broadcast_to(want, SHAPE)
            if op.out == "B" or dt == "bool":
                np.testing.assert_array_equal(got != 0, want.astype(bool), err_msg=prefix + name)
            elif dt.startswith("int"):
                wrapped = want.astype(np.int64).astype(dt)  # C's wrap at the type's width
                np.testing.assert_array_equal(got, wrapped, err_msg=prefix + name)
            else:
                tol = 2e-6 if dt == "float32" else 1e-12
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=prefix + name)
            ran.append(prefix + name)
    print(f"{dt}: {len(ran)} OpenCL kernels run against numpy float64")
    assert len(ran) == 2 * len(ops)


@pytest.mark.parametrize(
    ("src", "dst"), [("float32", "int32"), ("float32", "bool"), ("int64", "float64")]
)
def test_cast_program_matches_numpy(cl_queue, src, dst):
    ctx, queue, device = cl_queue
    if "float64" in (src, dst) and "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    prg = _build(ctx, cast_program(src, dst, "opencl"))
    x = np.array([[-2.7, -0.5, 0.0, 0.5, 3.9]]).astype(src)
    out_dt = np.uint8 if dst == "bool" else np.dtype(dst)
    op = type("Cast", (), {"inputs": "T", "scalars": 0})
    got, _ = _run_cast(ctx, queue, prg, x, out_dt)
    want = (x.astype(np.float64) != 0) if dst == "bool" else np.trunc(x.astype(np.float64))
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    del op


def _run_cast(ctx, queue, prg, x, out_dt):
    mf = cl.mem_flags
    out = np.empty(x.shape, out_dt)
    obuf = cl.Buffer(ctx, mf.WRITE_ONLY, out.nbytes)
    ibuf = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    lay = np.frombuffer(pack(x.size, x.shape, [(x.shape[1], 1)] * 2, [0, 0]), np.uint8)
    k = cl.Kernel(prg, "cast")
    k.set_args(lay, obuf, ibuf)
    cl.enqueue_nd_range_kernel(queue, k, (x.size,), None)
    cl.enqueue_copy(queue, out, obuf)
    queue.finish()
    return out, None
