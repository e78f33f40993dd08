"""The index template (`burn_gpu.index_program`) run on PoCL in the OpenCL dialect against numpy
float64: gather over a strided tensor with negative and out-of-range indices, select as a gather
of a broadcast 1-D index, and both scatter forms (the deterministic `scatter_sum` and the atomic
`scatter_add`), for select_assign's broadcast index too."""

from __future__ import annotations

import numpy as np
import pytest
from burn_gpu import index_layout, index_program


@pytest.fixture(scope="module")
def cl_run(cl_queue, cl_build):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, device = cl_queue
    exts = device.extensions
    if "cl_khr_fp64" not in exts or "cl_khr_int64_base_atomics" not in exts:
        pytest.skip("no cl_khr_fp64 / int64 atomics on this device")
    progs = {}
    mf = cl.mem_flags

    def build(dt):
        if dt not in progs:
            progs[dt] = cl_build(index_program(dt, "int64", "opencl", True))
        return progs[dt]

    def launch(dt, name, out, ins, ints, n):
        """`name` writing `out` in place (its initial contents uploaded) from base arrays `ins`."""
        ob = cl.Buffer(ctx, mf.READ_WRITE | mf.COPY_HOST_PTR, hostbuf=out)
        bufs = [cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=a) for a in ins]
        k = cl.Kernel(build(dt), name)
        k.set_args(ob, *bufs, np.int64(n), *map(np.int64, ints))
        cl.enqueue_nd_range_kernel(queue, k, (64,), None)  # fewer items than elements
        cl.enqueue_copy(queue, out, ob)
        queue.finish()
        return out

    return launch


def _el(a):
    """(element strides, element offset into its base) of a view `a` of a 1-D base."""
    base = a.base if a.base is not None else a
    off = (a.__array_interface__["data"][0] - base.__array_interface__["data"][0]) // a.itemsize
    return [s // a.itemsize for s in a.strides], off, base


def test_gather_strided_negative_out_of_range_and_select(cl_run):
    rng = np.random.default_rng(3)
    base = rng.standard_normal(4 * 5 * 7 + 3)
    x = base[3:].reshape(4, 7, 5).transpose(0, 2, 1)  # [4, 5, 7], strided, offset 3
    idx = rng.integers(-7, 7, (4, 5, 6))
    idx[0, 0, :2] = [7, -8]  # outside the dim: read 0
    xs, xo, xb = _el(x)
    for dim_idx, dim in ((idx, 2), (np.broadcast_to(np.array([2, -1, 0])[None, :, None], (4, 3, 7)), 1)):
        ii = np.ascontiguousarray(dim_idx)
        sizes, (xt, it), (xstep, _) = index_layout(ii.shape, dim, [xs, _el(ii)[0]], 1)
        out = np.zeros(ii.shape)
        got = cl_run("float64", "gather", out, [xb, ii.ravel()], [*sizes, *xt, *it, xstep, x.shape[dim], xo, 0], ii.size)
        j = np.where(ii < 0, ii + x.shape[dim], ii)
        ok = (j >= 0) & (j < x.shape[dim])
        want = np.where(ok, np.take_along_axis(x, np.clip(j, 0, x.shape[dim] - 1), dim), 0)
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dt", ["float64", "float32", "int32", "int64"])
@pytest.mark.parametrize("select", [False, True])
def test_scatter_sum_and_scatter_add_agree_with_numpy(cl_run, dt, select):
    rng = np.random.default_rng(4)
    x = rng.integers(-5, 5, (3, 6, 4)).astype(dt)
    dim, k = 1, 9
    if select:  # select_assign: a 1-D index seen along dim, values of x's shape with k there
        idx = np.broadcast_to(rng.integers(-1, 7, k)[None, :, None], (3, k, 4))
    else:
        idx = rng.integers(-1, 7, (3, k, 4))  # -1 and 6 are outside: add nothing
    v = rng.integers(-5, 5, (3, k, 4)).astype(dt)
    want = x.astype(np.float64)
    pos = list(np.indices(idx.shape, sparse=True))
    ok = (idx >= 0) & (idx < 6)
    pos[dim] = np.where(ok, idx, 0)
    np.add.at(want, tuple(pos), np.where(ok, v, 0))
    ii = np.ascontiguousarray(idx)
    vs, _, _ = _el(v)
    its = [0, 1, 0] if select else _el(ii)[0]  # select_assign's index: stride 0 off its dim
    ib = ii[0, :, 0].copy() if select else ii.ravel()
    # gather form: walk out (x's shape) with the index and values seen with dim zeroed; x read
    # through a transposed view
    xb = np.ascontiguousarray(x.transpose(2, 1, 0))
    xv = xb.transpose(2, 1, 0)
    sizes, (vt, it, xt), (vstep, istep, _) = index_layout(x.shape, dim, [vs, its, _el(xv)[0]], 2)
    inner = x.shape[2]
    ints = [*sizes, *xt, *vt, *it, k, istep, vstep, inner, x.shape[dim], 0, 0, 0]
    got = cl_run(dt, "scatter_sum", np.zeros_like(x).ravel(), [xb.ravel(), v.ravel(), ib], ints, x.size)
    np.testing.assert_array_equal(got.reshape(x.shape), want.astype(dt))
    # atomic form: walk the index, out strides zeroed along dim
    sizes, (ot, vt, it), (ostep, _, _) = index_layout(idx.shape, dim, [[24, 4, 1], vs, its], 1)
    ints = [*sizes, *ot, *vt, *it, ostep, x.shape[dim], 0, 0]
    got = cl_run(dt, "scatter_add", x.ravel().copy(), [v.ravel(), ib], ints, idx.size)
    np.testing.assert_array_equal(got.reshape(x.shape), want.astype(dt))
