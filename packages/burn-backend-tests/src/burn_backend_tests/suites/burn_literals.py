"""Conformance: literal input/output pairs taken from Burn's own backend tests
(`crates/burn-tensor/src/tests/ops/*.rs`, `tests/activation/*.rs`, `tests/stats/*.rs`)."""

from __future__ import annotations

import numpy as np
from burn_tensor import Int, Tensor, Tolerance
from burn_tensor import activation as act

# Burn's expectations are printed with 4-5 significant digits (float32; `burn.literal_tol`
# widens it to a half type's own tolerance)
_T = Tolerance.rel_abs(2e-3, 2e-4)


def test_burn_remainder(burn):
    tol = burn.literal_tol(_T)
    lhs = burn.float([-3.0, -2.0, -1.0, 1.0, 2.0, 3.0])
    rhs = burn.float([2.0, 3.0, 1.0, 2.0, 1.0, 3.0])
    burn.assert_close(lhs.remainder(rhs), [1.0, 1.0, -0.0, 1.0, 0.0, 0.0], tol)
    burn.assert_close(lhs.remainder_scalar(2.0), [1.0, 0.0, 1.0, 1.0, 0.0, 1.0], tol)
    burn.assert_close(lhs % rhs, [1.0, 1.0, -0.0, 1.0, 0.0, 0.0], tol)
    t = burn.float([1.0, 2.0, 3.0, 4.0, 5.0])
    divisors = [1.4233, 2.7313, 0.2641, 1.9651, 0.5897]
    # Burn's values hold for float32 divisors. A half type rounds them first, and the remainder
    # carries that rounding times the quotient (0.2641 is 0.26367 in bfloat16: 3 % it is 0.0996,
    # not 0.0949), so there the reference is numpy's on the rounded divisors.
    if burn.fdt.size >= 4:
        want = [1.0, 2.0, 0.0949, 0.0698, 0.2824]
    else:
        want = np.mod(burn.ref([1.0, 2.0, 3.0, 4.0, 5.0]), burn.ref(divisors))
    burn.assert_close(
        t.remainder(burn.float(divisors)), want, burn.literal_tol(Tolerance.rel_abs(1e-2, 1e-3))
    )
    burn.assert_close(t.remainder_scalar(-1.5), [-0.5, -1.0, 0.0, -0.5, -1.0], tol)
    neg = burn.float([-7.0, -3.0, 2.0, 6.0])
    burn.assert_close(
        neg.remainder(burn.float([-2.5, -2.1, -1.5, -3.25])),
        [-2.0, -0.9, -1.0, -0.5],
        tol,
    )
    big = burn.float([-1.0, 1.0, -1.5, 1.5, -1.0, 1.0, -1.5, 1.5])
    div = burn.float([10.0, 10.0, 10.0, 10.0, -10.0, -10.0, -10.0, -10.0])
    burn.assert_close(big.remainder(div), [9.0, 1.0, 8.5, 1.5, -1.0, -9.0, -1.5, -8.5], tol)
    burn.assert_close(
        burn.float([-7.5, -2.5, 2.5, 7.5]).remainder_scalar(3.0),
        [1.5, 0.5, 2.5, 1.5],
        tol,
    )


def test_burn_gather_scatter(burn):
    t = burn.float([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    burn.assert_close(
        t.gather(0, burn.int([[0, 1, 0], [1, 0, 1]])), [[0.0, 4.0, 2.0], [3.0, 1.0, 5.0]]
    )
    burn.assert_close(
        t.gather(1, burn.int([[2, 1, 0, 0], [2, 0, 1, 2]])),
        [[2.0, 1.0, 0.0, 0.0], [5.0, 3.0, 4.0, 5.0]],
    )
    burn.assert_equal(
        burn.int([5, 6, 7]).gather(0, burn.int([1, 1, 0, 1, 2])), np.array([6, 6, 5, 6, 7])
    )
    z = burn.float(np.zeros((2, 3)))
    vals = burn.float([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    burn.assert_close(
        z.scatter(0, burn.int([[1, 0, 1], [1, 1, 0]]), vals), [[0.0, 2.0, 6.0], [5.0, 5.0, 3.0]]
    )
    burn.assert_close(
        z.scatter(1, burn.int([[1, 0, 2], [1, 2, 0]]), vals), [[2.0, 1.0, 3.0], [6.0, 4.0, 5.0]]
    )
    t3 = burn.float(np.arange(12.0).reshape(2, 2, 3))
    v3 = burn.float(np.arange(12.0, 24.0).reshape(2, 2, 3))
    idx3 = burn.int([[[1, 0, 0], [0, 1, 0]], [[0, 0, 1], [0, 1, 1]]])
    burn.assert_close(
        t3.scatter(1, idx3, v3),
        [[[15.0, 14.0, 33.0], [15.0, 20.0, 5.0]], [[45.0, 26.0, 8.0], [9.0, 32.0, 54.0]]],
    )
    burn.assert_close(
        z.scatter(1, burn.int([[1], [2]]), burn.float([[1.0], [4.0]])),
        [[0.0, 1.0, 0.0], [0.0, 0.0, 4.0]],
    )
    # gather through a permuted view (Burn's "indices broadcasted" case)
    x = Tensor.arange(0, 24, burn.device).reshape([3, 4, 2])
    perm = burn.int([0, 2, 1, 3]).reshape([1, 1, 4]).repeat_dim(0, 3).repeat_dim(1, 2)
    out = x.permute([0, 2, 1]).gather(2, perm).permute([0, 2, 1])
    burn.assert_equal(out, np.arange(24).reshape(3, 4, 2)[:, [0, 2, 1, 3]])


def test_burn_select(burn):
    t = burn.float([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    burn.assert_close(
        t.select(1, burn.int([1, 1, 0, 1, 2])),
        [[1.0, 1.0, 0.0, 1.0, 2.0], [4.0, 4.0, 3.0, 4.0, 5.0]],
    )
    burn.assert_close(
        burn.float([0.0, 1.0, 2.0]).select_assign(
            0, burn.int([1, 1, 0, 1, 2]), burn.float([5.0, 4.0, 3.0, 2.0, 1.0])
        ),
        [3.0, 12.0, 3.0],
    )
    burn.assert_equal(
        burn.int([7, 8, 9]).select_assign(0, burn.int([1, 1, 0, 1, 2]), burn.int([5, 4, 3, 2, 1])),
        np.array([10, 19, 10]),
    )
    vals = burn.float([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    burn.assert_close(
        t.select_assign(0, burn.int([1, 0]), vals), [[4.0, 6.0, 8.0], [4.0, 6.0, 8.0]]
    )
    burn.assert_close(
        t.select_assign(1, burn.int([1, 0, 2]), vals), [[2.0, 2.0, 5.0], [8.0, 8.0, 11.0]]
    )
    burn.assert_equal(
        burn.bool([True, False, True]).select(0, burn.int([0, 2, 1, 0])),
        np.array([True, True, False, True]),
    )


def test_burn_chunk_pad_topk(burn):
    dev = burn.device
    parts = Tensor.arange(0, 11, dev).chunk(6, 0)
    assert [p.tolist() for p in parts] == [[0, 1], [2, 3], [4, 5], [6, 7], [8, 9], [10]]
    assert [p.dims()[0] for p in Tensor.arange(0, 100, dev).chunk(8, 0)] == [13] * 7 + [9]
    assert len(Tensor.arange(0, 6, dev).chunk(7, 0)) == 6
    t = burn.float([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])
    e = np.full((6, 7), 1.1)
    e[2:4, 2:5] = [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    burn.assert_close(t.pad((2, 2, 2, 2), 1.1), e)
    ti = burn.int([[[[0, 1], [2, 3], [4, 5]]]])
    ei = np.full((1, 1, 10, 5), 6)
    ei[0, 0, 4:7, 2:4] = [[0, 1], [2, 3], [4, 5]]
    burn.assert_equal(ti.pad((2, 1, 4, 3), 6), ei)
    tk = burn.float([[[1.0, 4.0, 7.0], [2.0, 5.0, 6.0]], [[3.0, 0.0, 9.0], [8.0, 2.0, 7.0]]])
    v, i = tk.topk_with_indices(2, 2)
    burn.assert_close(v, [[[7.0, 4.0], [6.0, 5.0]], [[9.0, 3.0], [8.0, 7.0]]])
    burn.assert_equal(i, np.array([[[2, 1], [2, 1]], [[2, 0], [0, 2]]]))
    burn.assert_equal(burn.int([1, 2, 3, 4, 5]).topk(3, 0), np.array([5, 4, 3]))


def test_burn_var(burn):
    tol = burn.literal_tol(_T)
    t = burn.float([[0.5, 1.8, 0.2, -2.0], [3.0, -4.0, 5.0, 0.0]])
    burn.assert_close(t.var(1), [[2.4892], [15.3333]], tol)
    v, m = t.var_mean_bias(1)
    burn.assert_close(v, [[1.86688], [11.5]], tol)
    burn.assert_close(m, [[0.125], [1.0]], tol)


def test_burn_activations(burn):
    tol = burn.literal_tol(_T)
    x = burn.float([[1.0, 7.0], [13.0, -3.0]])
    burn.assert_close(act.softmax(x, 1), [[2.47e-03, 9.975e-01], [1.0, 1.1254e-07]], tol)
    burn.assert_close(act.quiet_softmax(x, 1), [[2.47e-03, 9.975e-01], [1.0, 1.1254e-07]], tol)
    burn.assert_close(act.sigmoid(x), [[0.7311, 0.9991], [1.0, 0.0474]], tol)
    burn.assert_close(
        act.log_sigmoid(x),
        [[-3.132617e-1, -9.114665e-4], [-2.260327e-6, -3.0485873]],
        tol,
    )
    burn.assert_close(
        act.relu(burn.float([[0.0, -1.0, 2.0], [3.0, -4.0, 5.0]])),
        [[0.0, 0.0, 2.0], [3.0, 0.0, 5.0]],
    )
    burn.assert_close(
        act.leaky_relu(burn.float([[0.0, -1.0, 2.0], [3.0, -4.0, 5.0]]), 0.01),
        [[0.0, -0.01, 2.0], [3.0, -0.04, 5.0]],
    )
    burn.assert_close(
        act.silu(burn.float([[1.0, 2.0], [3.0, 4.0]])),
        [[0.7311, 1.7616], [2.8577, 3.9281]],
        tol,
    )
    m = burn.float([[-0.4240, -0.9574, -0.2215], [-0.5767, 0.7218, -0.1620]])
    burn.assert_close(act.mish(m), [[-0.1971, -0.3006, -0.1172], [-0.2413, 0.5823, -0.0888]], tol)
    burn.assert_close(act.softplus(m), [[0.5034, 0.3249, 0.5885], [0.4458, 1.1178, 0.6154]], tol)
    g = burn.float([[0.5447, 0.9809, 0.4114, 0.1398, 0.8045]])
    burn.assert_close(act.gelu(g), [[0.3851, 0.8207, 0.2714, 0.0777, 0.6351]], tol)
    burn.assert_close(
        burn.float([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]).erf(),
        [[0.0, 0.8427, 0.9953], [1.0, 1.0, 1.0]],
        tol,
    )


def test_burn_creation_literals(burn):
    dev = burn.device
    burn.assert_equal(Tensor.arange_step(5, 10, 2, dev), np.array([5, 7, 9]))
    burn.assert_close(Tensor.one_hot(2, 10, dev), np.eye(10)[2])
    burn.assert_equal(Tensor.arange(range(5, 10), dev), np.arange(5, 10))
    t = Tensor.full([2, 3], 5, dev, kind=Int)
    burn.assert_equal(t, np.full((2, 3), 5))


def test_burn_maxmin_argmax(burn):
    t = burn.float([[0.0, 1.0, 2.0], [5.0, 4.0, 3.0]])
    v, i = t.max_dim_with_indices(1)
    burn.assert_close(v, [[2.0], [5.0]])
    burn.assert_equal(i, np.array([[2], [0]]))
    v, i = t.min_dim_with_indices(1)
    burn.assert_close(v, [[0.0], [3.0]])
    burn.assert_equal(i, np.array([[0], [2]]))
    burn.assert_close(t.cumsum(1), [[0.0, 1.0, 3.0], [5.0, 9.0, 12.0]])
    burn.assert_close(
        t.max_pair(burn.float([[1.0, 0.0, 3.0], [4.0, 6.0, 0.0]])),
        [[1.0, 1.0, 3.0], [5.0, 6.0, 3.0]],
    )


def test_burn_mask(burn):
    t = burn.float([[1.0, 7.0], [2.0, 3.0]])
    mask = burn.bool([[True, False], [False, True]])
    burn.assert_close(
        t.mask_where(mask, burn.float([[1.8, 2.8], [3.8, 4.8]])), [[1.8, 7.0], [2.0, 4.8]]
    )
    burn.assert_close(t.mask_fill(mask, 2.0), [[2.0, 7.0], [2.0, 2.0]])
    burn.assert_equal(burn.int([[1, 7], [2, 3]]).mask_fill(mask, 9), np.array([[9, 7], [2, 9]]))
