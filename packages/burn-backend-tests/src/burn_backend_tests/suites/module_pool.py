"""Conformance: avg and max pooling (1-D and 2-D) and the 2-D backward primitives.

Autodiff differentiates the 1-D pools through the 2-D backward primitives, so those are the
contract's only pool backward ops.

Forward ops go through `burn_tensor.module` (the user path, argument checks included); backward
ops are called on the backend with primitives, as Autodiff does. Every result is compared with the
nested-loop references of `reference.pool`; backward passes also satisfy the adjoint identity
<pool(x), g> == <x, pool_backward(g)> (linear pools) against the backend's own forward.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Int, module

from .._ctx import sample
from .._prim import adjoint, prim, wrap
from ..reference import pool as ref


def distinct(shape, seed=0) -> np.ndarray:
    """Values without ties, exact in every float dtype, so the max's index is unambiguous."""
    n = int(np.prod(shape))
    return (np.random.default_rng(seed).permutation(n).reshape(shape) - n // 2) * 0.25


def ties(shape, seed=0) -> np.ndarray:
    """Few distinct values: most windows hold several equal maxima (the first one must win)."""
    return np.random.default_rng(seed).integers(-2, 3, shape).astype(np.float64)


# (id, shape, kernel, stride, padding, input layout): non-square, strides, asymmetric padding
AVG_CASES = [
    ("k2s2", (2, 3, 6, 7), (2, 2), (2, 2), (0, 0), "contiguous"),
    ("k32s21p11", (1, 2, 7, 6), (3, 2), (2, 1), (1, 1), "permuted"),
    ("k34s12p12", (2, 1, 5, 8), (3, 4), (1, 2), (1, 2), "strided"),
    ("k33s22p10", (2, 2, 5, 5), (3, 3), (2, 2), (1, 0), "flipped"),
    ("k44s11p22", (1, 1, 4, 4), (4, 4), (1, 1), (2, 2), "contiguous"),
    ("k23s31p01", (3, 2, 6, 9), (2, 3), (3, 1), (0, 1), "expanded"),
]


def _avg_case(cid):
    return next(c[1:] for c in AVG_CASES if c[0] == cid)


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["incl_pad", "excl_pad"])
@pytest.mark.parametrize("cid", [c[0] for c in AVG_CASES])
def test_avg_pool2d(burn, cid, count_include_pad):
    shape, k, s, p, layout = _avg_case(cid)
    t, x = burn.view_input(sample(shape, "any", 1), layout=layout)
    out = module.avg_pool2d(t, list(k), list(s), list(p), count_include_pad)
    burn.assert_close(out, ref.avg_pool2d(x, k, s, p, count_include_pad), burn.loose)


def test_avg_pool2d_stride_defaults_to_kernel(burn):
    t, x = burn.view_input(sample((1, 2, 6, 9), "any", 2))
    burn.assert_close(module.avg_pool2d(t, [2, 3]), ref.avg_pool2d(x, (2, 3), (2, 3), (0, 0), True))


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["incl_pad", "excl_pad"])
@pytest.mark.parametrize("cid", [c[0] for c in AVG_CASES])
def test_avg_pool2d_backward(burn, cid, count_include_pad):
    shape, k, s, p, _ = _avg_case(cid)
    x = burn.ref(sample(shape, "any", 3))
    g = burn.ref(sample((shape[0], shape[1]) + ref.pool_out_hw(shape[2:], k, s, p), "any", 4))
    xp = prim(burn, x)
    dx = wrap(burn, burn.backend.avg_pool2d_backward(xp, prim(burn, g), k, s, p, count_include_pad))
    burn.assert_close(dx, ref.avg_pool2d_backward(shape, g, k, s, p, count_include_pad), burn.loose)
    y = wrap(burn, burn.backend.avg_pool2d(xp, k, s, p, count_include_pad)).numpy()
    adjoint(burn, y, dx.numpy(), x, g)


@pytest.mark.parametrize("count_include_pad", [True, False], ids=["incl_pad", "excl_pad"])
@pytest.mark.parametrize("layout", ["contiguous", "permuted", "strided"])
def test_avg_pool1d(burn, layout, count_include_pad):
    for seed, (length, k, s, p) in enumerate([(9, 3, 2, 1), (8, 4, 3, 2), (5, 2, 1, 0)]):
        t, x = burn.view_input(sample((2, 3, length), "any", seed), layout=layout)
        x4 = x[..., None]
        expected = ref.avg_pool2d(x4, (k, 1), (s, 1), (p, 0), count_include_pad)[..., 0]
        out = module.avg_pool1d(t, k, s, p, count_include_pad)
        burn.assert_close(out, expected, burn.loose)


# (id, shape, kernel, stride, padding, dilation, input layout)
MAX_CASES = [
    ("k2s2", (2, 3, 6, 7), (2, 2), (2, 2), (0, 0), (1, 1), "contiguous"),
    ("k32s21p11d21", (1, 2, 7, 6), (3, 2), (2, 1), (1, 1), (2, 1), "permuted"),
    ("k33s11p11", (2, 1, 5, 8), (3, 3), (1, 1), (1, 1), (1, 1), "strided"),
    ("k23s32p11d23", (1, 2, 9, 9), (2, 3), (3, 2), (1, 1), (2, 3), "flipped"),
    ("k32s12p10d12", (2, 2, 6, 5), (3, 2), (1, 2), (1, 0), (1, 2), "expanded"),
    ("k44s13p21", (1, 3, 5, 10), (4, 4), (1, 3), (2, 1), (1, 1), "contiguous"),
]
INPUTS = {"distinct": distinct, "ties": ties}


def _max_case(cid):
    return next(c[1:] for c in MAX_CASES if c[0] == cid)


@pytest.mark.parametrize("values", list(INPUTS))
@pytest.mark.parametrize("cid", [c[0] for c in MAX_CASES])
def test_max_pool2d_with_indices(burn, cid, values):
    shape, k, s, p, d, layout = _max_case(cid)
    t, x = burn.view_input(INPUTS[values](shape, seed=5), layout=layout)
    want, want_idx = ref.max_pool2d_with_indices(x, k, s, p, d)
    out, idx = module.max_pool2d_with_indices(t, list(k), list(s), list(p), list(d))
    burn.assert_close(out, want)
    burn.assert_equal(idx, want_idx)
    burn.assert_close(module.max_pool2d(t, list(k), list(s), list(p), list(d)), want)


@pytest.mark.parametrize("values", list(INPUTS))
@pytest.mark.parametrize("cid", [c[0] for c in MAX_CASES])
def test_max_pool2d_with_indices_backward(burn, cid, values):
    shape, k, s, p, d, _ = _max_case(cid)
    x = burn.ref(INPUTS[values](shape, seed=6))
    _, idx = ref.max_pool2d_with_indices(x, k, s, p, d)
    g = burn.ref(sample(idx.shape, "any", 7))
    want = ref.max_pool2d_backward(shape, g, idx)
    b = burn.backend
    # with the reference's indices, then with the indices of the backend's own forward pass
    dx = b.max_pool2d_with_indices_backward(
        prim(burn, x), k, s, p, d, prim(burn, g), prim(burn, idx, Int)
    )
    burn.assert_close(wrap(burn, dx), want, burn.loose)
    _, own = b.max_pool2d_with_indices(prim(burn, x), k, s, p, d)
    dx = b.max_pool2d_with_indices_backward(prim(burn, x), k, s, p, d, prim(burn, g), own)
    burn.assert_close(wrap(burn, dx), want, burn.loose)


@pytest.mark.parametrize("layout", ["contiguous", "flipped", "strided"])
def test_max_pool1d_with_indices(burn, layout):
    for seed, (length, k, s, p, d) in enumerate(
        [(10, 3, 2, 1, 2), (7, 2, 1, 1, 1), (9, 4, 3, 2, 1)]
    ):
        for make in (distinct, ties):
            t, x = burn.view_input(make((2, 2, length), seed=seed), layout=layout)
            want, want_idx = ref.max_pool2d_with_indices(
                x[..., None], (k, 1), (s, 1), (p, 0), (d, 1)
            )
            out, idx = module.max_pool1d_with_indices(t, k, s, p, d)
            burn.assert_close(out, want[..., 0])
            burn.assert_equal(idx, want_idx[..., 0])
            burn.assert_close(module.max_pool1d(t, k, s, p, d), want[..., 0])


def test_max_pool2d_ties_keep_first_and_nan_wins(burn):
    # NaN wins its window (PyTorch); equal maxima keep the first in kernel (row-major) order.
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, np.nan, 2.0], [0.0, 2.0, 2.0]]]])
    out, idx = module.max_pool2d_with_indices(burn.float(x), 2, 1)
    burn.assert_close(out, np.full((1, 1, 2, 2), np.nan))
    burn.assert_equal(idx, np.array([[[[4, 4], [4, 4]]]]))
    x = np.array([[[[1.0, 1.0, 0.0], [1.0, 0.0, 2.0], [0.0, 2.0, 2.0]]]])
    out, idx = module.max_pool2d_with_indices(burn.float(x), 2, 1)
    burn.assert_close(out, [[[[1.0, 2.0], [2.0, 2.0]]]])
    burn.assert_equal(idx, np.array([[[[0, 5], [7, 5]]]]))


def test_pools_nan_and_inf_stay_in_their_windows(burn):
    x = distinct((2, 2, 7, 8), seed=8)
    x[0, 0, 2, 3] = np.nan
    x[1, 1, 5, 1] = np.inf
    x[1, 0, 0, 6] = np.nan
    x[1, 0, 1, 7] = -np.inf
    t, xr = burn.view_input(x, layout="permuted")
    for k, s, p in (((3, 3), (2, 2), (1, 1)), ((2, 4), (1, 3), (0, 2))):
        for cip in (True, False):
            out = module.avg_pool2d(t, list(k), list(s), list(p), cip)
            burn.assert_close(out, ref.avg_pool2d(xr, k, s, p, cip), burn.loose)
        want, want_idx = ref.max_pool2d_with_indices(xr, k, s, p, (1, 1))
        out, idx = module.max_pool2d_with_indices(t, list(k), list(s), list(p), [1, 1])
        burn.assert_close(out, want)
        burn.assert_equal(idx, want_idx)
    for out_hw in ((3, 3), (4, 5)):
        burn.assert_close(
            module.adaptive_avg_pool2d(t, list(out_hw)),
            ref.adaptive_avg_pool2d(xr, out_hw),
            burn.loose,
        )


ADAPTIVE_OUT = [(3, 4), (5, 6), (7, 9), (1, 1), (2, 5), (4, 3)]


@pytest.mark.parametrize("out_hw", ADAPTIVE_OUT, ids=lambda o: f"{o[0]}x{o[1]}")
def test_adaptive_avg_pool2d_and_backward(burn, out_hw):
    # windows of in=5 -> 3, 6 -> 4 (and 7 -> 9 upsampling) overlap: the ends round up
    layout = ["contiguous", "permuted", "flipped", "strided", "expanded"][len(out_hw) % 5]
    t, x = burn.view_input(sample((2, 3, 5, 6), "any", 9), layout=layout)
    burn.assert_close(
        module.adaptive_avg_pool2d(t, list(out_hw)), ref.adaptive_avg_pool2d(x, out_hw), burn.loose
    )
    g = burn.ref(sample((2, 3) + out_hw, "any", 10))
    xp = prim(burn, x)
    dx = wrap(burn, burn.backend.adaptive_avg_pool2d_backward(xp, prim(burn, g)))
    burn.assert_close(dx, ref.adaptive_avg_pool2d_backward(x.shape, g), burn.loose)
    y = wrap(burn, burn.backend.adaptive_avg_pool2d(xp, out_hw)).numpy()
    adjoint(burn, y, dx.numpy(), x, g)


@pytest.mark.parametrize("layout", ["contiguous", "strided"])
def test_adaptive_avg_pool1d(burn, layout):
    for length, size in ((7, 3), (5, 5), (4, 6), (9, 1), (10, 4)):
        t, x = burn.view_input(sample((2, 3, length), "any", length), layout=layout)
        want = ref.adaptive_avg_pool2d(x[..., None], (size, 1))[..., 0]
        burn.assert_close(module.adaptive_avg_pool1d(t, size), want, burn.loose)


def test_pools_of_an_empty_batch(burn):
    b = burn.backend
    x = np.zeros((0, 2, 5, 6))
    t = burn.float(x)
    k, s, p, d = (3, 2), (2, 1), (1, 1), (1, 2)
    for cip in (True, False):
        burn.assert_close(
            module.avg_pool2d(t, list(k), list(s), list(p), cip), np.zeros((0, 2, 3, 7))
        )
        g = prim(burn, np.zeros((0, 2, 3, 7)))
        burn.assert_close(wrap(burn, b.avg_pool2d_backward(t.into_primitive(), g, k, s, p, cip)), x)
    out, idx = module.max_pool2d_with_indices(t, list(k), list(s), list(p), list(d))
    max_shape = (0, 2) + ref.pool_out_hw((5, 6), k, s, p, d)
    burn.assert_close(out, np.zeros(max_shape))
    burn.assert_equal(idx, np.zeros(max_shape, np.int64))
    dx = b.max_pool2d_with_indices_backward(
        t.into_primitive(), k, s, p, d, out.into_primitive(), idx.into_primitive()
    )
    burn.assert_close(wrap(burn, dx), x)
    out = module.adaptive_avg_pool2d(t, [2, 4])
    burn.assert_close(out, np.zeros((0, 2, 2, 4)))
    dx = b.adaptive_avg_pool2d_backward(t.into_primitive(), out.into_primitive())
    burn.assert_close(wrap(burn, dx), x)
    t1 = burn.float(np.zeros((0, 3, 8)))
    burn.assert_close(module.avg_pool1d(t1, 2), np.zeros((0, 3, 4)))
    burn.assert_close(module.max_pool1d(t1, 3, 1, 1), np.zeros((0, 3, 8)))
    burn.assert_close(module.adaptive_avg_pool1d(t1, 3), np.zeros((0, 3, 3)))
