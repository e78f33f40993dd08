"""Conformance: the fused optimizer update ops (`float_adam_update` via `ops.adam_update`, and
`float_adam_update_many` via `ops.adam_update_many`)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import TensorCheckError
from burn_tensor.ops import adam_update, adam_update_many

from .._ctx import LAYOUTS, sample

B1, B2, EPS, LR = 0.9, 0.999, 1e-5, 0.01


def _adam_ref(p, g, m1, m2, t, b1=B1, b2=B2, eps=EPS, lr=LR):
    """Burn's Adam in float64 (moments start at zero)."""
    m1 = b1 * (0.0 if m1 is None else m1) + (1 - b1) * g
    m2 = b2 * (0.0 if m2 is None else m2) + (1 - b2) * g * g
    s = math.sqrt(1 - b2**t)
    c = s / (1 - b1**t)
    return p - lr * (m1 * c) / (np.sqrt(m2) + eps * s), m1, m2


@pytest.mark.parametrize("layout", LAYOUTS)
def test_adam_update_first_and_later_steps(burn, layout):
    shape = (3, 4, 5)
    p, pr = burn.view_input(sample(shape, "any", 1), layout=layout)
    g, gr = burn.view_input(sample(shape, "any", 2), layout=layout)
    new, m1, m2 = adam_update(p, g, None, None, lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=1)
    ep, e1, e2 = _adam_ref(pr, gr, None, None, 1)
    for got, want in ((new, ep), (m1, e1), (m2, e2)):
        burn.assert_close(got, want, burn.loose)
    # A later step from stored moments (rounded to the backend's type, as they are stored).
    g2, g2r = burn.view_input(sample(shape, "any", 3), layout=layout)
    m1r, m2r = burn.ref(m1.numpy()), burn.ref(m2.numpy())
    pn = burn.ref(new.numpy())
    new2, n1, n2 = adam_update(new, g2, m1, m2, lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=7)
    ep, e1, e2 = _adam_ref(pn, g2r, m1r, m2r, 7)
    for got, want in ((new2, ep), (n1, e1), (n2, e2)):
        burn.assert_close(got, want, burn.loose)


def test_adam_update_other_hyperparameters_and_zero_grad(burn):
    x = np.array([[1.5, -2.0, 0.0], [3.0, 0.25, -0.5]])
    g = np.array([[0.0, 1.0, -3.0], [2.5, 0.0, 1e-3]])
    m1, m2 = np.full_like(x, 0.1), np.full_like(x, 0.2)
    out = adam_update(
        burn.float(x), burn.float(g), burn.float(m1), burn.float(m2),
        lr=0.5, beta_1=0.5, beta_2=0.75, epsilon=0.1, time=3,
    )  # fmt: skip
    want = _adam_ref(burn.ref(x), burn.ref(g), burn.ref(m1), burn.ref(m2), 3, 0.5, 0.75, 0.1, 0.5)
    for got, w in zip(out, want):
        burn.assert_close(got, w, burn.loose)


def test_adam_update_refuses_mismatched_operands(burn):
    p = burn.float(np.ones((2, 3)))
    with pytest.raises(TensorCheckError, match="grad has shape"):
        adam_update(p, burn.float(np.ones((3, 2))), None, None,
                    lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=1)  # fmt: skip
    with pytest.raises(TensorCheckError, match="both"):
        adam_update(p, p, p, None, lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=2)
    with pytest.raises(TensorCheckError, match="Int, expected Float"):
        adam_update(p, burn.int(np.ones((2, 3))), None, None,
                    lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=1)  # fmt: skip
    with pytest.raises(TensorCheckError, match="time must be"):
        adam_update(p, p, None, None, lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=0)


def test_adam_update_many_matches_the_reference_per_parameter(burn):
    # Several shapes (a scalar-like [1], odd sizes, one larger than a GPU block) in one call,
    # then a later step from the stored moments, each against float64 Adam.
    shapes = [(1,), (3, 4, 5), (7,), (2, 300)]
    ps = [burn.view_input(sample(s, "any", 10 + i)) for i, s in enumerate(shapes)]
    # gradients away from 0: (1 - beta_2) g^2 must not underflow float16's moments
    gs = [burn.view_input(sample(s, "pos", 20 + i)) for i, s in enumerate(shapes)]
    new, m1, m2 = adam_update_many(
        [p for p, _ in ps], [g for g, _ in gs], None, None,
        lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=1,
    )  # fmt: skip
    assert len(new) == len(m1) == len(m2) == len(shapes)
    for i, ((_, pr), (_, gr)) in enumerate(zip(ps, gs)):
        want = _adam_ref(pr, gr, None, None, 1)
        for got, w in zip((new[i], m1[i], m2[i]), want):
            assert got.dims() == list(shapes[i])
            burn.assert_close(got, w, burn.loose)
    gs2 = [burn.view_input(sample(s, "pos", 30 + i)) for i, s in enumerate(shapes)]
    refs = [
        (burn.ref(a.numpy()), burn.ref(b.numpy()), burn.ref(c.numpy()))
        for a, b, c in zip(new, m1, m2)
    ]
    new2, n1, n2 = adam_update_many(
        new, [g for g, _ in gs2], m1, m2, lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS, time=4
    )
    for i, (pn, m1r, m2r) in enumerate(refs):
        want = _adam_ref(pn, gs2[i][1], m1r, m2r, 4)
        for got, w in zip((new2[i], n1[i], n2[i]), want):
            burn.assert_close(got, w, burn.loose)


def test_adam_update_many_refuses_mismatched_lists(burn):
    a, b = burn.float(np.ones((2, 3))), burn.float(np.ones((4,)))
    kw = dict(lr=LR, beta_1=B1, beta_2=B2, epsilon=EPS)
    with pytest.raises(TensorCheckError, match="params is empty"):
        adam_update_many([], [], None, None, time=1, **kw)
    with pytest.raises(TensorCheckError, match="1 grads for 2 params"):
        adam_update_many([a, b], [a], None, None, time=1, **kw)
    with pytest.raises(TensorCheckError, match="parameter 1: grad has shape"):
        adam_update_many([a, b], [a, a], None, None, time=1, **kw)
    with pytest.raises(TensorCheckError, match="must both be lists or both None"):
        adam_update_many([a], [a], [a], None, time=2, **kw)
    with pytest.raises(TensorCheckError, match="1 moments_1 and 1 moments_2 for 2 params"):
        adam_update_many([a, b], [a, b], [a], [a], time=2, **kw)
    with pytest.raises(TensorCheckError, match="params\\[1\\] is"):
        adam_update_many([a, burn.int(np.ones((4,)))], [a, b], None, None, time=1, **kw)
    with pytest.raises(TensorCheckError, match="parameter 0: time must be"):
        adam_update_many([a], [a], None, None, time=0, **kw)
