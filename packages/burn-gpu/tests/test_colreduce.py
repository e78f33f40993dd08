"""The column reductions (`burn_gpu.col_program`, `col_plan`): their OpenCL text run on PoCL
over the plan's geometry (one launch and two) against numpy float64, bit-identical across runs,
half storage summed in float32 and rounded once; the CUDA text is the same but for the dialect
(test_dialects) and runs in burn-cuda's CPU stand-in."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import pytest
from burn_gpu import ColPlan, col_plan, col_program, use_cols

RWG = 64


def _run(cl_queue, prg, op, x, shape, dt, div=1):
    """`op` of x (host array of storage dtype) viewed as `shape` = (outer, n, inner) along n,
    launched as `col_plan` says; returns the [outer, inner] result as numpy."""
    import pyopencl as cl

    ctx, queue, _ = cl_queue
    outer, n, inner = shape
    plan = col_plan(outer, n, inner, RWG)
    mf = cl.mem_flags
    xb = cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=x)
    out = np.empty((outer, inner), x.dtype)
    ob = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
    acc = np.int32 if dt == "int32" else np.float32
    pb = cl.Buffer(ctx, mf.READ_WRITE, max(1, outer * plan.chunks * inner) * np.dtype(acc).itemsize)
    i32 = np.int32
    k = cl.Kernel(prg, f"{op}_cols")
    k.set_args(ob, pb, xb, i32(0), i32(outer), i32(n), i32(inner), i32(plan.chunks),
               i32(plan.ltx), i32(div))  # fmt: skip
    cl.enqueue_nd_range_kernel(queue, k, (plan.groups * RWG,), (RWG,))
    if plan.chunks > 1:
        k = cl.Kernel(prg, f"{op}_cols_fin")
        k.set_args(ob, pb, i32(0), i32(outer), i32(plan.chunks), i32(inner), i32(plan.ltx),
                   i32(div))  # fmt: skip
        cl.enqueue_nd_range_kernel(queue, k, (plan.fin_groups * RWG,), (RWG,))
    cl.enqueue_copy(queue, out, ob)
    queue.finish()
    return out, plan


# (outer, n, inner): one chunk; many chunks with a ragged last tile (17, 33 columns); two columns
SHAPES = [(3, 40, 5), (1, 3000, 17), (2, 1100, 33), (1, 700, 2)]


# each kernel costs PoCL ~0.25-0.4 s to compile cold (CI): float32 runs sum / mean / max (min is
# max's text with `<`; burn-opencl's conformance suite runs it, and float64), int32 the sum / mean
@pytest.mark.parametrize(
    "dt,ops", [("float32", ("sum", "max", "mean")), ("int32", ("sum", "mean"))]
)
def test_column_kernels_match_numpy_float64(cl_queue, cl_build, dt, ops):
    prg = cl_build(col_program(dt, RWG, "opencl"))
    rng = np.random.default_rng(5)
    chunked = set()
    for shape in SHAPES:
        if dt == "int32":
            x = rng.integers(-9, 10, shape).astype(dt)
        else:
            x = rng.standard_normal(shape).astype(dt)
            x[0, shape[1] // 2, 1] = np.nan  # one column's max/min is NaN, as numpy's
        x64 = x.astype(np.float64)
        n = shape[1]
        refs = {"sum": x64.sum(1), "max": x64.max(1), "min": x64.min(1), "mean": x64.sum(1) / n}
        for op in ops:
            want = refs[op]
            got, plan = _run(cl_queue, prg, "sum" if op == "mean" else op, x, shape, dt,
                             n if op == "mean" else 1)  # fmt: skip
            chunked.add(plan.chunks > 1)
            if dt == "int32":
                want = np.trunc(want) if op == "mean" else want
                np.testing.assert_array_equal(got, want.astype(dt), err_msg=f"{op} {shape}")
            else:
                tol = 1e-5 * np.sqrt(n)
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol, err_msg=f"{op} {shape}")
    assert chunked == {True, False}  # both the one-launch and the two-launch forms ran


def test_two_runs_give_the_same_bits(cl_queue, cl_build):
    """A fixed order (tiles, chunks, trees): the same float32 sum bits every run."""
    prg = cl_build(col_program("float32", RWG, "opencl"))
    x = (np.random.default_rng(8).standard_normal((2, 1100, 33)) * 1e3).astype(np.float32)
    a, plan = _run(cl_queue, prg, "sum", x, x.shape, "float32")
    b, _ = _run(cl_queue, prg, "sum", x, x.shape, "float32")
    assert plan.chunks > 1
    np.testing.assert_array_equal(a.view(np.uint32), b.view(np.uint32))


@pytest.mark.parametrize("dt", ["bfloat16", "float16"])
def test_half_storage_sums_in_float32_rounded_once(cl_queue, cl_build, dt):
    """3000 ones plus 1e-3-sized values: a half running sum would stall at 256 (bfloat16) /
    2048 (float16); the float32 sum rounded once is numpy's float64 sum rounded to the type."""
    prg = cl_build(col_program(dt, RWG, "opencl"))
    np_dt = np.dtype(ml_dtypes.bfloat16) if dt == "bfloat16" else np.dtype(np.float16)
    rng = np.random.default_rng(2)
    x = (1.0 + rng.uniform(0, 1e-3, (1, 3000, 17))).astype(np_dt)
    storage = x.view(np.uint16) if dt == "bfloat16" else x
    got, plan = _run(cl_queue, prg, "sum", storage, x.shape, dt)
    got = got.view(np_dt) if dt == "bfloat16" else got
    assert plan.chunks > 1
    want = x.astype(np.float64).sum(1).astype(np.float32).astype(np_dt)
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))
    mean, _ = _run(cl_queue, prg, "sum", storage, x.shape, dt, 3000)
    mean = mean.view(np_dt) if dt == "bfloat16" else mean
    rtol = 1e-2 if dt == "bfloat16" else 1e-3
    np.testing.assert_allclose(mean.astype(np.float64), x.astype(np.float64).mean(1), rtol=rtol)


def test_plan_depends_on_the_shape_only_and_rejects_bad_geometry():
    assert col_plan(1, 4096, 512, 256) == ColPlan(5, 64, 1024, 16)
    assert col_plan(32, 128, 512, 256).chunks == 2  # 512 tiles: two chunks of 64 rows
    assert col_plan(100, 40, 300, 256).chunks == 1  # many tiles, short column: one launch
    assert col_plan(1, 10, 3, 64).ltx == 2  # three columns in a 4-wide tile
    assert use_cols(1, 4096, 512) and use_cols(32, 128, 512)
    assert not use_cols(4096, 512, 1)  # the last dim: the row kernels
    assert not use_cols(1, 8, 512)  # a short column: `*_rows`
    assert not use_cols(1024, 64, 1024)  # a million outputs fill the device one thread each
    with pytest.raises(ValueError, match="rwg=48"):
        col_plan(1, 10, 3, 48)
    with pytest.raises(ValueError, match="n=0"):
        col_plan(1, 0, 3, 64)
