"""The reduction template (`burn_gpu.reduce_program`) in both dialects, and its OpenCL text run
on PoCL against numpy float64: every `*_rows`, `*_tree`, arg, scan kernel and `sum_keep_mid`
(the merge sort runs in burn-opencl's sort tests); the CUDA text is the same but for the
dialect (test_dialects) and Cuda's column reductions launch `*_rows` in burn-cuda's CPU stand-in)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import reduce_program

RWG = 64
OUTER, N, INNER = 3, 200, 4


def _numpy(name, x):
    x64 = x.astype(np.float64)
    return {
        "sum": lambda: x64.sum(1),
        "prod": lambda: x64.prod(1),
        "max": lambda: x64.max(1),
        "min": lambda: x64.min(1),
        "argmax": lambda: np.argmax(x64, 1),
        "argmin": lambda: np.argmin(x64, 1),
        "cumsum": lambda: np.cumsum(x64, 1),
        "cumprod": lambda: np.cumprod(x64, 1),
        "cummax": lambda: np.maximum.accumulate(x64, 1),
        "cummin": lambda: np.minimum.accumulate(x64, 1),
        "sum_keep_mid": lambda: x64.sum((0, 2)),
    }[name]()


@pytest.mark.parametrize("dt", ["float32", "float64", "int32"])
def test_every_reduction_kernel_matches_numpy_float64(cl_queue, cl_build, dt):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    if dt == "float64" and "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    prg = cl_build(reduce_program(dt, "int32", RWG, "opencl"))
    rng = np.random.default_rng(3)
    if dt.startswith("int"):
        x = rng.integers(-5, 6, (OUTER, N, INNER)).astype(dt)
    else:
        x = rng.uniform(0.5, 1.5, (OUTER, N, INNER)).astype(dt)
        x[1, 7, 2] = np.nan  # max/min/arg propagate NaN like numpy
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    i32 = np.int32
    ran = []

    def run(name, out_shape, out_dt, args, gsize, lsize=None):
        out = np.empty(out_shape, out_dt)
        ob = cl.Buffer(ctx, mf.WRITE_ONLY, max(out.nbytes, 1))
        k = cl.Kernel(prg, name)
        k.set_args(ob, xb, *args)
        cl.enqueue_nd_range_kernel(queue, k, (gsize,), None if lsize is None else (lsize,))
        cl.enqueue_copy(queue, out, ob)
        queue.finish()
        ran.append(name)
        return out

    geo = (i32(0), i32(OUTER), i32(N), i32(INNER))
    outs = OUTER * INNER
    for op in ("sum", "prod", "max", "min"):
        want = _numpy(op, x)
        rows = run(f"{op}_rows", (OUTER, INNER), dt, (*geo, i32(1)), outs)
        tree = run(f"{op}_tree", (OUTER, INNER), dt, (*geo, i32(1), i32(1)), outs * RWG, RWG)
        for got in (rows, tree):
            if dt.startswith("int"):
                np.testing.assert_array_equal(got, want.astype(dt), err_msg=op)
            else:
                tol = 1e-4 if dt == "float32" else 1e-12
                np.testing.assert_allclose(got, want, rtol=tol, err_msg=op)
    mean = run("sum_rows", (OUTER, INNER), dt, (*geo, i32(N)), outs)
    want = _numpy("sum", x) / N
    want = np.trunc(want) if dt.startswith("int") else want
    np.testing.assert_allclose(mean, want, rtol=1e-5 if dt == "float32" else 1e-12)
    for op in ("argmax", "argmin"):
        got = run(f"{op}_rows", (OUTER, INNER), np.int32, geo, outs)
        np.testing.assert_array_equal(got, _numpy(op, x), err_msg=op)
    for op in ("cumsum", "cummax", "cummin"):
        got = run(op, x.shape, dt, geo, outs)
        tol = 1e-4 if dt == "float32" else 1e-12
        np.testing.assert_allclose(got, _numpy(op, x), rtol=tol, atol=tol, err_msg=op)
    got = run("sum_keep_mid", (N,), dt, geo[:1] + (i32(OUTER), i32(N), i32(INNER)), N * RWG, RWG)
    np.testing.assert_allclose(got, _numpy("sum_keep_mid", x), rtol=1e-4, err_msg="keep_mid")
    print(f"{dt}: {len(ran)} reduction kernels run against numpy float64")
    assert len(ran) == 4 * 2 + 1 + 2 + 3 + 1


def test_sum_keep_mid_in_float64_with_wide_indices(cl_queue, cl_build):
    """Cuda's bias-gradient variant (`bias_acc="float64"`, `wide=True`): float32 data summed in
    float64 equals numpy's float64 sum rounded once to float32."""
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    if "cl_khr_fp64" not in device.extensions:
        pytest.skip("no cl_khr_fp64 on this device")
    src = reduce_program("float32", "int32", 64, "opencl", bias_acc="float64", wide=True)
    prg = cl_build(src)
    k = cl.Kernel(prg, "sum_keep_mid")
    mf = cl.mem_flags
    # inner above, at, just around and below the 64-item group, and 1 (a bias over rows): the
    # items step through [outer, inner] without a division per element
    for shape in [(3, 5, 1000), (3, 2, 64), (4, 2, 65), (5, 3, 63), (9, 2, 7), (70, 3, 1)]:
        x = (np.random.default_rng(9).standard_normal(shape) * 1e4).astype(np.float32)
        xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
        out = np.empty(shape[1], np.float32)
        ob = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
        k.set_args(ob, xb, *map(np.int64, (0, *shape)))
        cl.enqueue_nd_range_kernel(queue, k, (shape[1] * 64,), (64,))
        cl.enqueue_copy(queue, out, ob)
        queue.finish()
        want = x.astype(np.float64).sum((0, 2)).astype(np.float32)
        np.testing.assert_array_equal(out, want, err_msg=str(shape))
