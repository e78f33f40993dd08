"""Conformance: `dropout` (through `burn_tensor.module.dropout`, the user path, and the backend
op's (out, mask) on primitives) against numpy float64: the op is the device's bernoulli(1 - p)
draw times 1 / (1 - p) and x times that, so after `device.seed(s)` its mask is the one
`Tensor.random(shape, Distribution.bernoulli(1 - p))` draws after the same seed; inputs of
several ranks and layouts, an empty one; the fraction kept over a large tensor, two calls
drawing different masks, p = 0 and 1, bad probabilities.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import Distribution, Float, Tensor, TensorCheckError, module

from .._ctx import sample
from .._prim import wrap

# (id, shape, p)
CASES = [
    ("rank1", (37,), 0.1),
    ("rank2", (13, 29), 0.5),
    ("rank3", (3, 7, 11), 1.0 / 3.0),
    ("rank4", (2, 3, 4, 5), 0.9),
]
LAYOUTS = ["contiguous", "permuted", "strided"]


def _drawn_mask(burn, shape, p):
    """float64 [shape]: the device's bernoulli(1 - p) draw after `seed(5)`, 0 or 1."""
    burn.device.seed(5)
    keep = Tensor.random(shape, Distribution.bernoulli(1.0 - p), burn.device)
    return keep.numpy().astype(np.float64)


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("cid", [c[0] for c in CASES])
def test_dropout_is_the_seeded_bernoulli_mask_scaled(burn, cid, layout):
    shape, p = next(c[1:] for c in CASES if c[0] == cid)
    keep = _drawn_mask(burn, shape, p)
    assert set(np.unique(keep)) <= {0.0, 1.0}
    x_t, x = burn.view_input(sample(shape, "unit", 3), Float, layout)
    burn.device.seed(5)
    y = module.dropout(x_t, p)
    assert y.dtype is burn.fdt and y.dims() == list(shape)
    burn.assert_close(y, x * keep / (1.0 - p))
    # the primitive's second output: the mask the gradient multiplies by
    burn.device.seed(5)
    out, mask = burn.backend.dropout(x_t.into_primitive(), p)
    burn.assert_close(wrap(burn, mask), keep / (1.0 - p))
    burn.assert_close(wrap(burn, out), x * keep / (1.0 - p))


def test_dropout_keeps_one_minus_p_and_each_call_draws_anew(burn):
    x = Tensor.ones([200, 100], burn.device)
    burn.device.seed(9)
    a = module.dropout(x, 0.3).numpy().astype(np.float64)
    b = module.dropout(x, 0.3).numpy().astype(np.float64)
    kept = (a != 0).mean()
    # 20000 draws: 4 standard deviations of the kept fraction are 0.013
    assert abs(kept - 0.7) < 0.013, kept
    assert not np.array_equal(a != 0, b != 0)
    # every kept 1 became one value: 1 / 0.7 rounded to the float type (bfloat16: 8 bits)
    vals = np.unique(a[a != 0])
    assert len(vals) == 1 and abs(vals[0] * 0.7 - 1.0) < 2.0**-7, vals


def test_dropout_edges(burn):
    x_t = burn.float(sample((3, 4), "unit", 1))
    assert module.dropout(x_t, 0.0) is x_t
    burn.assert_close(module.dropout(x_t, 1.0), np.zeros((3, 4)))
    # a numpy scalar is a number too (a config read from an array)
    assert module.dropout(x_t, np.float32(0.25)).dims() == [3, 4]
    empty = module.dropout(Tensor.zeros([0, 4], burn.device), 0.5)
    assert empty.dims() == [0, 4]
    for bad in (-0.1, 1.5, float("nan"), "0.5", True):
        with pytest.raises(TensorCheckError, match="dropout"):
            module.dropout(x_t, bad)
    with pytest.raises(TensorCheckError, match="dropout"):
        module.dropout(Tensor.from_ints([1, 2], burn.device), 0.5)
