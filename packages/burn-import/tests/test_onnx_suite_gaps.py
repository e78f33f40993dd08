"""Cases ONNX's backend suite lacks, found by mutating the converters (issue 42).

Every Conv case of ONNX's node suite, light models and pytorch models pads each spatial axis by
the same amount at both ends, so swapping a Conv's begin and end pads changed no case's result.
These cases pad each axis unevenly -- explicit pads and auto_pad SAME_UPPER / SAME_LOWER with an
odd total -- through both converter paths (constant weights become a burn `Conv1d`/`Conv2d`
module with `PaddingConfig*d.Explicit`; weights fed at run time go through `ops.conv`), and
compare with a float64 numpy convolution written here.
"""

from __future__ import annotations

import numpy as np
import pytest
from _onnx_helpers import one_node
from burn_import.onnx import backend
from onnx import TensorProto as T
from onnx import numpy_helper as nh


def ref_conv(x, w, b, strides, pads):
    """Cross-correlation of `x [N, C, *S]` with `w [O, C, *K]` (group 1, no dilation), after
    zero-padding axis i by `pads[i]` at its start and `pads[i + spatial]` at its end; float64."""
    x, w = x.astype(np.float64), w.astype(np.float64)
    s = x.ndim - 2
    xp = np.pad(x, [(0, 0), (0, 0)] + [(pads[i], pads[i + s]) for i in range(s)])
    k = w.shape[2:]
    out = [(xp.shape[2 + i] - k[i]) // strides[i] + 1 for i in range(s)]
    y = np.zeros((x.shape[0], w.shape[0], *out))
    for off in np.ndindex(*k):
        window = tuple(
            slice(off[i], off[i] + (out[i] - 1) * strides[i] + 1, strides[i]) for i in range(s)
        )
        patch = xp[(slice(None), slice(None)) + window]  # [N, C, *out]
        y += np.einsum("nc...,oc->no...", patch, w[(slice(None), slice(None)) + off])
    return y + b.astype(np.float64).reshape(1, -1, *[1] * s)


def same_pads(size, kernel, strides, upper: bool) -> list[int]:
    """ONNX's auto_pad SAME_*: output ceil(size / stride), the odd pad at the end (UPPER) or the
    start (LOWER)."""
    begin, end = [], []
    for n, k, st in zip(size, kernel, strides):
        total = max((-(-n // st) - 1) * st + k - n, 0)
        small, big = total // 2, total - total // 2
        begin.append(small if upper else big)
        end.append(big if upper else small)
    return begin + end


CASES = {
    # name: (input spatial dims, kernel, strides, attrs)
    "2d-explicit": ([7, 6], [3, 2], [1, 2], {"pads": [1, 0, 2, 1]}),
    "2d-same-upper": ([6, 7], [2, 4], [1, 1], {"auto_pad": "SAME_UPPER"}),
    "2d-same-lower": ([6, 7], [2, 4], [1, 2], {"auto_pad": "SAME_LOWER"}),
    "1d-explicit": ([9], [3], [2], {"pads": [2, 0]}),
    "1d-same-lower": ([8], [2], [1], {"auto_pad": "SAME_LOWER"}),
}


# 1-D uneven pads with constant weights are refused at import (burn's Conv1d pads evenly)
PARAMS = [(c, "runtime") for c in CASES] + [(c, "constant") for c in CASES if "2d" in c]


@pytest.mark.parametrize(("case", "weights"), PARAMS)
def test_conv_uneven_pads_keep_begin_and_end(case, weights):
    size, kernel, strides, attrs = CASES[case]
    rng = np.random.default_rng(len(case))
    x = rng.standard_normal((2, 3, *size)).astype(np.float32)
    w = rng.standard_normal((4, 3, *kernel)).astype(np.float32)
    b = rng.standard_normal(4).astype(np.float32)
    pads = attrs.get("pads") or same_pads(size, kernel, strides, attrs["auto_pad"] == "SAME_UPPER")
    assert pads[: len(size)] != pads[len(size) :], "the case must pad some axis unevenly"
    want = ref_conv(x, w, b, strides, pads)
    out = [("y", T.FLOAT, list(want.shape))]
    if weights == "constant":
        inits = [nh.from_array(w, "w"), nh.from_array(b, "b")]
        m = one_node("Conv", [("x", T.FLOAT, list(x.shape))], out, inits=inits, strides=strides,
                     kernel_shape=kernel, **attrs)  # fmt: skip
        feeds = [x]
    else:
        ins = [("x", T.FLOAT, list(x.shape)), ("w", T.FLOAT, list(w.shape)), ("b", T.FLOAT, [4])]
        m = one_node("Conv", ins, out, strides=strides, kernel_shape=kernel, **attrs)
        feeds = [x, w, b]
    rep = backend.prepare(m)
    (y,) = rep.run(feeds)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-5)
