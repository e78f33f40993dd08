"""The softmax template (`burn_gpu.softmax_program`) run on PoCL in the OpenCL dialect against
numpy float64: forward and backward, row and column kernels, non-zero input offsets, and the
NaN/inf rules of the decomposition."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_gpu import COL_GROUP, row_group, softmax_program


def _softmax(x, dim):
    e = np.exp(x - x.max(dim, keepdims=True))
    return e / e.sum(dim, keepdims=True)


@pytest.fixture(scope="module")
def run(cl_fp64, cl_build):
    cl = pytest.importorskip("pyopencl")
    ctx, queue, _ = cl_fp64
    prg = cl_build(softmax_program("float64", "opencl"))
    mf = cl.mem_flags

    def launch(bwd, ins, dim, log_mode, pad=0):
        """Kernel over float64 arrays `ins` (each stored after `pad` leading elements)."""
        shape = ins[0].shape
        outer, n, inner = math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1 :])
        bufs = [
            cl.Buffer(ctx, mf.READ_ONLY | mf.COPY_HOST_PTR, hostbuf=np.concatenate([np.zeros(pad), a.ravel()]))
            for a in ins
        ]
        out = np.empty(shape)
        ob = cl.Buffer(ctx, mf.READ_WRITE, out.nbytes)
        offs = [np.int64(pad)] * len(ins)
        kind = "softmax_bwd" if bwd else "softmax"
        if inner == 1:
            k = cl.Kernel(prg, kind + "_rows")
            k.set_args(ob, *bufs, np.int32(n), np.int32(log_mode), *offs)
            g = row_group(n)
            cl.enqueue_nd_range_kernel(queue, k, (outer * g,), (g,))
        else:
            cols = outer * inner
            k = cl.Kernel(prg, kind + "_cols")
            k.set_args(ob, *bufs, np.int64(cols), np.int32(n), np.int64(inner), np.int32(log_mode), *offs)
            cl.enqueue_nd_range_kernel(queue, k, (-(-cols // COL_GROUP) * COL_GROUP,), (COL_GROUP,))
        cl.enqueue_copy(queue, out, ob)
        queue.finish()
        return out

    return launch


@pytest.mark.parametrize("shape,dim", [((5, 10), 1), ((3, 700), 1), ((1, 1), 1), ((4, 6, 3), 1), ((7, 2), 0)])
@pytest.mark.parametrize("pad", [0, 3])
def test_softmax_forward_and_backward(run, shape, dim, pad):
    rng = np.random.default_rng(len(shape) * 10 + dim)
    x = rng.standard_normal(shape) * 4
    s = _softmax(x, dim)
    np.testing.assert_allclose(run(False, [x], dim, 0, pad), s, rtol=1e-12, atol=1e-15)
    np.testing.assert_allclose(run(False, [x], dim, 1, pad), np.log(s), rtol=1e-12, atol=1e-13)
    g = rng.standard_normal(shape)
    want = s * (g - (g * s).sum(dim, keepdims=True))
    np.testing.assert_allclose(run(True, [s, g], dim, 0, pad), want, rtol=1e-11, atol=1e-13)
    ls = np.log(s)
    want = g - s * g.sum(dim, keepdims=True)
    np.testing.assert_allclose(run(True, [ls, g], dim, 1, pad), want, rtol=1e-11, atol=1e-13)


@pytest.mark.parametrize("dim", [0, 1])
def test_softmax_nan_and_infinities_follow_the_decomposition(run, dim):
    x = np.array([[1.0, np.nan, 2.0], [1.0, np.inf, 0.0], [1.0, -np.inf, 0.0]])
    x = x if dim == 1 else x.T.copy()
    got = run(False, [x], dim, 0)
    row = lambda a, i: a[i] if dim == 1 else a[:, i]
    assert np.isnan(row(got, 0)).all() and np.isnan(row(got, 1)).all()
    want = _softmax(np.array([1.0, -np.inf, 0.0]), 0)
    np.testing.assert_allclose(row(got, 2), want, rtol=1e-12)
    assert row(run(False, [x], dim, 1), 2)[1] == -np.inf
