"""1-D convolutions (through the base-class defaults onto the 2-D kernels) and unfold4d.

Pooling, interpolation and embedding are checked by the conformance suite (test_conformance.py).
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_tensor import module
from burn_tensor._options import UnfoldOptions


def ref_conv1d(x, w, b, s, p, d, g):
    n, _, length = x.shape
    co, cg, k = w.shape
    lo = (length + 2 * p - d * (k - 1) - 1) // s + 1
    out = np.zeros((n, co, lo))
    for o in range(co):
        grp = o // (co // g)
        for t in range(lo):
            acc = np.zeros(n) if b is None else np.full(n, b[o])
            for c in range(cg):
                for i in range(k):
                    src = t * s + i * d - p
                    if 0 <= src < length:
                        acc = acc + x[:, grp * cg + c, src] * w[o, c, i]
            out[:, o, t] = acc
    return out


def ref_conv_transpose1d(x, w, b, s, p, po, d, g):
    n, cin, length = x.shape
    _, cog, k = w.shape
    lo = (length - 1) * s - 2 * p + d * (k - 1) + po + 1
    out = np.zeros((n, cog * g, lo))
    for ci in range(cin):
        grp = ci // (cin // g)
        for t in range(length):
            for c in range(cog):
                for i in range(k):
                    dst = t * s + i * d - p
                    if 0 <= dst < lo:
                        out[:, grp * cog + c, dst] += x[:, ci, t] * w[ci, c, i]
    return out + (0 if b is None else b.reshape(1, -1, 1))


def test_conv1d(env, rng):
    x = rng.standard_normal((2, 4, 11))
    w = rng.standard_normal((6, 2, 3))
    b = rng.standard_normal(6)
    out = module.conv1d(env.t(x), env.t(w), env.t(b), stride=2, padding=1, dilation=2, groups=2)
    env.close(out, ref_conv1d(x, w, b, 2, 1, 2, 2))


def test_conv_transpose1d(env, rng):
    x = rng.standard_normal((2, 4, 5))
    w = rng.standard_normal((4, 3, 3))
    b = rng.standard_normal(6)
    out = module.conv_transpose1d(
        env.t(x), env.t(w), env.t(b), stride=2, padding=1, padding_out=1, dilation=1, groups=2
    )
    env.close(out, ref_conv_transpose1d(x, w, b, 2, 1, 1, 1, 2))


@pytest.mark.parametrize(
    "k, s, p, d",
    [
        ((2, 2), (1, 1), (0, 0), (1, 1)),
        ((3, 2), (2, 1), (1, 0), (1, 2)),
        ((1, 1), (2, 3), (0, 1), (1, 1)),
    ],
)
def test_unfold4d(env, rng, k, s, p, d):
    x = rng.standard_normal((2, 3, 6, 5))
    out = module.unfold4d(env.t(x), list(k), list(s), list(p), list(d))
    oh = (6 + 2 * p[0] - d[0] * (k[0] - 1) - 1) // s[0] + 1
    ow = (5 + 2 * p[1] - d[1] * (k[1] - 1) - 1) // s[1] + 1
    ref = np.zeros((2, 3 * k[0] * k[1], oh * ow))
    for c in range(3):
        for i in range(k[0]):
            for j in range(k[1]):
                for y in range(oh):
                    for xx in range(ow):
                        r, q = y * s[0] + i * d[0] - p[0], xx * s[1] + j * d[1] - p[1]
                        if 0 <= r < 6 and 0 <= q < 5:
                            ref[:, (c * k[0] + i) * k[1] + j, y * ow + xx] = x[:, c, r, q]
    env.close(out, ref)
    # Burn's unfold4d test: ones [2, 3, 4, 4], kernel 2 -> ones [2, 12, 9]
    env.close(
        env.backend.unfold4d(env.p(np.ones((2, 3, 4, 4))), (2, 2), UnfoldOptions()),
        np.ones((2, 12, 9)),
    )
