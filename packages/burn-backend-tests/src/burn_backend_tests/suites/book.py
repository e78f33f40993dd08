"""Conformance: the Burn Book's Tensor rows not exercised by the table-driven modules.

`BOOK_METHODS` / `BOOK_ACTIVATIONS` list every row of the book's tables (both editions); that each
exists is an API check of burn_tensor's own tests (`tests/test_book_api.py`), not a backend case."""

from __future__ import annotations

import numpy as np
from burn_tensor import DType, Float, Int, Shape, Tensor

BOOK_METHODS = [
    "empty",
    "dims",
    "shape",
    "reshape",
    "flatten",
    "squeeze",
    "unsqueeze",
    "unsqueeze_dim",
    "slice",
    "slice_assign",
    "narrow",
    "chunk",
    "device",
    "to_device",
    "repeat",
    "equal",
    "not_equal",
    "cat",
    "into_data",
    "to_data",
    "from_data",
    "into_primitive",
    "from_primitive",
    "stack",
    "into_scalar",
    "add",
    "add_scalar",
    "sub",
    "sub_scalar",
    "div",
    "div_scalar",
    "mul",
    "mul_scalar",
    "powf",
    "powi",
    "powf_scalar",
    "powi_scalar",
    "neg",
    "zeros",
    "ones",
    "full",
    "mean",
    "sum",
    "mean_dim",
    "sum_dim",
    "equal_elem",
    "greater",
    "greater_elem",
    "greater_equal",
    "greater_equal_elem",
    "lower",
    "lower_elem",
    "lower_equal",
    "lower_equal_elem",
    "mask_where",
    "mask_fill",
    "gather",
    "scatter",
    "select",
    "select_assign",
    "argmax",
    "max",
    "max_dim",
    "max_dim_with_indices",
    "argmin",
    "min",
    "min_dim",
    "min_dim_with_indices",
    "clamp",
    "clamp_min",
    "clamp_max",
    "abs",
    "triu",
    "tril",
    "eye",
    "all_close",
    "argsort_descending",
    "is_close",
    "pad",
    "prod_dim",
    "sort_descending",
    "sort_descending_with_indices",
    "topk",
    "topk_with_indices",
    "exp",
    "log",
    "log1p",
    "erf",
    "sqrt",
    "recip",
    "cos",
    "sin",
    "tanh",
    "from_floats",
    "int",
    "zeros_like",
    "ones_like",
    "random_like",
    "one_hot",
    "transpose",
    "swap_dims",
    "matmul",
    "var",
    "var_bias",
    "var_mean",
    "var_mean_bias",
    "random",
    "to_full_precision",
    "from_full_precision",
    "from_ints",
    "float",
    "arange",
    "arange_step",
    "int_random",
    "bool_not",
    "diag_mask",
    "tril_mask",
    "triu_mask",
]
BOOK_ACTIVATIONS = [
    "gelu",
    "log_sigmoid",
    "log_softmax",
    "mish",
    "quiet_softmax",
    "relu",
    "sigmoid",
    "silu",
    "softmax",
    "softplus",
    "tanh",
    "leaky_relu",
]


def test_book_metadata_rows(burn):
    t = burn.float(np.zeros((2, 3)))
    assert t.dims() == [2, 3] and t.shape() == Shape(2, 3) and t.shape == (2, 3)
    assert t.device() is burn.device and t.device is burn.device
    assert t.rank() == 2 and t.numel() == 6


def test_book_primitive_round_trip(burn):
    for kind, x in ((Float, [[1.5, 2.0]]), (Int, [[1, 2]])):
        t = burn.tensor(x, kind)
        p = t.into_primitive()
        back = Tensor.from_primitive(p, kind, burn.device)
        burn.assert_result(back, np.asarray(x), kind)


def test_book_full_precision(burn):
    t = burn.float([1.5, -2.25])
    full = t.to_full_precision()
    assert full.kind is Float and full.tolist() == [1.5, -2.25]
    assert full.dtype in (DType.F32, DType.F64)
    back = Tensor.from_full_precision(full)
    assert back.dtype is burn.fdt and back.tolist() == [1.5, -2.25]


def test_book_squeeze_dim_form(burn):
    t = burn.int(np.arange(6).reshape(1, 6, 1))
    burn.assert_equal(t.squeeze(0), np.arange(6).reshape(6, 1))
    burn.assert_equal(t.squeeze(-1), np.arange(6).reshape(1, 6))
