"""The gradient-check table: (op name, fn(B, *xs) on primitives, float inputs)."""

from __future__ import annotations

import numpy as np
from _autodiff_testlib import bools, distinct, ints, u
from burn_tensor import DType


def _unary(n):
    return lambda B, x: getattr(B, f"float_{n}")(x)


def _sum3(B, outs):
    a, b, c = outs
    return B.float_add(B.float_add(a, b), c)


def _adam_many(B, p, g, m1, m2, q, h, n1, n2):
    """Every output of a two-parameter `float_adam_update_many` (shapes differ), summed."""
    news, a, b = B.float_adam_update_many(
        [p, q], [g, h], [m1, n1], [m2, n2], 0.1, 0.9, 0.99, 1e-3, 3
    )
    total = None
    for out in (*news, *a, *b):
        s = B.float_sum(out)
        total = s if total is None else B.float_add(total, s)
    return total


def _rnn(kind, direction, lbr=0):
    """Every output of `rnn_sequence` (a whole ONNX RNN/GRU/LSTM layer), summed."""

    def fn(B, x, w, r, b, h0, *rest):
        c0, p = rest if rest else (None, None)
        acts = {"GRU": ("sigmoid", "tanh"), "LSTM": ("sigmoid", "tanh", "tanh")}[kind]
        dirs = 2 if direction == "bidirectional" else 1
        outs = B.rnn_sequence(x, w, r, b, h0, c0, p, kind, direction, acts * dirs, None, lbr, 0)
        total = None
        for out in outs:
            if out is not None:
                s = B.float_sum(out)
                total = s if total is None else B.float_add(total, s)
        return total

    return fn


S = (slice(0, 2, 1), slice(1, 4, 2))
NEG = (slice(0, 3, -1), slice(0, 4, 1))

CASES = [
    # -- binary, incl. broadcasting --
    ("float_add", lambda B, x, y: B.float_add(x, y), [u(2, 3), u(1, 3)]),
    ("float_sub", lambda B, x, y: B.float_sub(x, y), [u(2, 1), u(1, 3)]),
    ("float_mul", lambda B, x, y: B.float_mul(x, y), [u(2, 3), u(2, 1)]),
    ("float_div", lambda B, x, y: B.float_div(x, y), [u(2, 3), u(1, 3)]),
    (
        "float_remainder",
        lambda B, x, y: B.float_remainder(x, y),
        [np.array([[1.3, -2.2, 0.4]]), np.array([[0.7, 0.9, -1.1]])],
    ),
    ("float_powf", lambda B, x, y: B.float_powf(x, y), [u(2, 3, signed=False), u(2, 3)]),
    ("float_atan2", lambda B, x, y: B.float_atan2(x, y), [u(2, 3), u(2, 3)]),
    ("float_hypot", lambda B, x, y: B.float_hypot(x, y), [u(2, 3), u(1, 3)]),
    ("float_cross", lambda B, x, y: B.float_cross(x, y, 1), [u(2, 3), u(1, 3)]),
    ("float_cross", lambda B, x, y: B.float_cross(x, y, 0), [u(3, 2, 2), u(3, 2, 2)]),
    ("float_matmul", lambda B, x, y: B.float_matmul(x, y), [u(2, 3), u(3, 4)]),
    # ONNX recurrent layers: LSTM with peepholes and initial states; bidirectional GRU
    (
        "rnn_sequence",
        _rnn("LSTM", "forward"),
        [u(3, 2, 2), u(1, 8, 2), u(1, 8, 2), u(1, 16), u(1, 2, 2), u(1, 2, 2), u(1, 6)],
    ),
    (
        "rnn_sequence",
        _rnn("GRU", "bidirectional"),
        [u(2, 1, 2), u(2, 6, 2), u(2, 6, 2), u(2, 12), u(2, 1, 2)],
    ),
    # The fused Adam step (burn-optim's update): every output depends on param, grad and moments.
    (
        "float_adam_update",
        lambda B, p, g, m1, m2: _sum3(B, B.float_adam_update(p, g, m1, m2, 0.1, 0.9, 0.99, 1e-3, 3)),
        [u(2, 3), u(2, 3), u(2, 3), u(2, 3, signed=False)],
    ),
    (
        "float_adam_update_many",
        _adam_many,
        [u(2, 3), u(2, 3), u(2, 3), u(2, 3, signed=False), u(4), u(4), u(4), u(4, signed=False)],
    ),
    ("float_matmul", lambda B, x, y: B.float_matmul(x, y), [u(2, 1, 2, 3), u(1, 3, 3, 2)]),
    # -- with a scalar --
    ("float_add_scalar", lambda B, x: B.float_add_scalar(x, 2.5), [u(2, 3)]),
    ("float_sub_scalar", lambda B, x: B.float_sub_scalar(x, 2.5), [u(2, 3)]),
    ("float_mul_scalar", lambda B, x: B.float_mul_scalar(x, -1.5), [u(2, 3)]),
    ("float_div_scalar", lambda B, x: B.float_div_scalar(x, 4.0), [u(2, 3)]),
    (
        "float_remainder_scalar",
        lambda B, x: B.float_remainder_scalar(x, 0.7),
        [np.array([1.3, -2.2, 0.4])],
    ),
    ("float_powf_scalar", lambda B, x: B.float_powf_scalar(x, 2.5), [u(2, 3, signed=False)]),
    ("float_powi_scalar", lambda B, x: B.float_powi_scalar(x, 3), [u(2, 3)]),
    ("float_powi", lambda B, x: B.float_powi(x, ints(B, [[1, 2, 3]])), [u(2, 3)]),
    ("float_square", lambda B, x: B.float_square(x), [u(2, 3)]),
    # -- unary --
    *[
        (f"float_{n}", _unary(n), [u(2, 3)])
        for n in [
            "neg",
            "exp",
            "sin",
            "cos",
            "sinh",
            "cosh",
            "tanh",
            "atan",
            "asinh",
            "erf",
            "abs",
            "sign",
            "recip",
        ]
    ],
    *[(f"float_{n}", _unary(n), [u(2, 3, signed=False)]) for n in ["log", "log1p", "sqrt"]],
    ("float_tan", lambda B, x: B.float_tan(x), [u(2, 3, lo=0.1, hi=1.0)]),
    ("float_asin", lambda B, x: B.float_asin(x), [u(2, 3, lo=0.1, hi=0.8)]),
    ("float_acos", lambda B, x: B.float_acos(x), [u(2, 3, lo=0.1, hi=0.8)]),
    ("float_atanh", lambda B, x: B.float_atanh(x), [u(2, 3, lo=0.1, hi=0.8)]),
    ("float_acosh", lambda B, x: B.float_acosh(x), [u(2, 3, lo=1.2, hi=2.0, signed=False)]),
    *[
        (f"float_{n}", _unary(n), [np.array([[0.3, -1.7, 2.2], [1.1, -0.4, 3.6]])])
        for n in ["round", "floor", "ceil", "trunc"]
    ],
    # -- layout and indexing --
    ("float_reshape", lambda B, x: B.float_reshape(x, (3, 2)), [u(2, 3)]),
    ("float_swap_dims", lambda B, x: B.float_swap_dims(x, 0, 2), [u(2, 3, 4)]),
    ("float_transpose", lambda B, x: B.float_transpose(x), [u(2, 3, 4)]),
    ("float_permute", lambda B, x: B.float_permute(x, (2, 0, 1)), [u(2, 3, 4)]),
    ("float_flip", lambda B, x: B.float_flip(x, (0, 2)), [u(2, 3, 4)]),
    ("float_expand", lambda B, x: B.float_expand(x, (2, 3, 4)), [u(3, 1)]),
    ("float_repeat_dim", lambda B, x: B.float_repeat_dim(x, 1, 3), [u(2, 2)]),
    ("float_slice", lambda B, x: B.float_slice(x, S), [u(3, 4)]),
    ("float_slice", lambda B, x: B.float_slice(x, NEG), [u(3, 4)]),
    ("float_slice_assign", lambda B, x, v: B.float_slice_assign(x, S, v), [u(3, 4), u(2, 2)]),
    ("float_gather", lambda B, x: B.float_gather(1, x, ints(B, [[0, 2, 2], [1, 0, 1]])), [u(2, 3)]),
    (
        "float_scatter",
        lambda B, x, v: B.float_scatter(1, x, ints(B, [[0, 2], [1, 1]]), v),
        [u(2, 3), u(2, 2)],
    ),
    ("float_select", lambda B, x: B.float_select(x, 0, ints(B, [2, 0, 2])), [u(3, 2)]),
    (
        "float_select_assign",
        lambda B, x, v: B.float_select_assign(x, 0, ints(B, [1, 1]), v),
        [u(3, 2), u(2, 2)],
    ),
    (
        "float_mask_where",
        lambda B, x, y: B.float_mask_where(
            x, bools(B, [[True, False, True], [False, False, True]]), y
        ),
        [u(2, 3), u(1, 3)],
    ),
    (
        "float_mask_fill",
        lambda B, x: B.float_mask_fill(x, bools(B, [[True, False, True]]), 2.0),
        [u(2, 3)],
    ),
    ("float_cat", lambda B, x, y, z: B.float_cat([x, y, z], 1), [u(2, 1), u(2, 3), u(2, 2)]),
    ("float_cast", lambda B, x: B.float_cast(x, DType.F64), [u(2, 3)]),
    ("float_to_device", lambda B, x: B.float_to_device(x, B.device()), [u(2, 3)]),
    ("float_unfold", lambda B, x: B.float_unfold(x, 1, 2, 1), [u(2, 4)]),
    # -- reductions, cumulative, selections, sort, clamp --
    ("float_sum", lambda B, x: B.float_sum(x), [u(2, 3)]),
    ("float_mean", lambda B, x: B.float_mean(x), [u(2, 3)]),
    ("float_sum_dim", lambda B, x: B.float_sum_dim(x, 1), [u(2, 3)]),
    ("float_mean_dim", lambda B, x: B.float_mean_dim(x, 0), [u(2, 3)]),
    ("float_prod", lambda B, x: B.float_prod(x), [u(2, 3)]),
    ("float_prod_dim", lambda B, x: B.float_prod_dim(x, 1), [u(2, 3)]),
    ("float_cumsum", lambda B, x: B.float_cumsum(x, 1), [u(2, 4)]),
    ("float_cumprod", lambda B, x: B.float_cumprod(x, 1), [u(2, 4)]),
    ("float_cummax", lambda B, x: B.float_cummax(x, 1), [distinct(2, 5)]),
    ("float_cummin", lambda B, x: B.float_cummin(x, 0), [distinct(5, 2)]),
    ("float_max_dim", lambda B, x: B.float_max_dim(x, 1), [distinct(2, 4)]),
    ("float_min_dim", lambda B, x: B.float_min_dim(x, 0), [distinct(2, 4)]),
    (
        "float_max_dim_with_indices",
        lambda B, x: B.float_max_dim_with_indices(x, 1),
        [distinct(2, 4)],
    ),
    (
        "float_min_dim_with_indices",
        lambda B, x: B.float_min_dim_with_indices(x, 1),
        [distinct(2, 4)],
    ),
    ("float_max", lambda B, x: B.float_max(x), [distinct(2, 3)]),
    ("float_min", lambda B, x: B.float_min(x), [distinct(2, 3)]),
    ("float_max_abs", lambda B, x: B.float_max_abs(x), [distinct(2, 3)]),
    ("float_max_abs_dim", lambda B, x: B.float_max_abs_dim(x, 1), [distinct(2, 3)]),
    (
        "float_sort_with_indices",
        lambda B, x: B.float_sort_with_indices(x, 1, True),
        [distinct(2, 4)],
    ),
    ("float_sort", lambda B, x: B.float_sort(x, 0), [distinct(3, 2)]),
    ("float_topk_with_indices", lambda B, x: B.float_topk_with_indices(x, 2, 1), [distinct(2, 4)]),
    ("float_clamp", lambda B, x: B.float_clamp(x, -1.0, 1.0), [distinct(2, 4) * 0.5 + 0.05]),
    ("float_clamp_min", lambda B, x: B.float_clamp_min(x, 0.0), [distinct(2, 4) + 0.05]),
    ("float_clamp_max", lambda B, x: B.float_clamp_max(x, 0.0), [distinct(2, 4) + 0.05]),
    # -- activations --
    ("relu", lambda B, x: B.relu(x), [u(2, 3)]),
    ("gelu", lambda B, x: B.gelu(x), [u(2, 3)]),
    ("sigmoid", lambda B, x: B.sigmoid(x), [u(2, 3)]),
    ("log_sigmoid", lambda B, x: B.log_sigmoid(x), [u(2, 3)]),
    ("softmax", lambda B, x: B.softmax(x, 1), [u(2, 4)]),
    ("softmax_dim0", lambda B, x: B.softmax(x, 0), [u(3, 2)]),
    ("log_softmax", lambda B, x: B.log_softmax(x, 1), [u(2, 4)]),
    ("log_softmax_dim0", lambda B, x: B.log_softmax(x, 0), [u(3, 2)]),
    ("leaky_relu", lambda B, x: B.leaky_relu(x, 0.1), [u(2, 3)]),
    ("prelu", lambda B, x, a: B.prelu(x, a), [u(2, 3), u(2, 3)]),
    ("hard_sigmoid", lambda B, x: B.hard_sigmoid(x, 0.2, 0.5), [u(2, 3)]),
    ("silu", lambda B, x: B.silu(x), [u(2, 3)]),
    ("hard_swish", lambda B, x: B.hard_swish(x), [u(2, 3)]),
    ("embedding", lambda B, w: B.embedding(w, ints(B, [[0, 2], [2, 1]])), [u(3, 2)]),
]
