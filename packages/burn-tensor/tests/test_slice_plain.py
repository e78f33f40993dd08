"""`_slice.normalize`'s fast path for plain `a:b` items (`_plain`) against its general loop."""

from __future__ import annotations

import random

import pytest
from burn_tensor import Tensor
from burn_tensor._errors import TensorCheckError
from burn_tensor._slice import _plain, normalize


def test_plain_items_match_the_general_loop():
    """Items with step None take `_plain`; the same with step 1 take the general loop (a step
    is not plain): both give the same slices and shape, over random bounds in and out of range,
    None bounds, fewer items than dims, negative bounds."""
    rng = random.Random(0)
    for _ in range(2000):
        shape = tuple(rng.randint(0, 6) for _ in range(rng.randint(1, 4)))
        items = []
        for n in shape[: rng.randint(0, len(shape))] if rng.random() < 0.2 else shape:
            a = rng.choice([None, rng.randint(-8, 8)])
            b = rng.choice([None, rng.randint(-8, 8)])
            items.append((a, b))
        fast = tuple(slice(a, b) for a, b in items)
        slow = tuple(slice(a, b, 1) for a, b in items)
        try:
            want = normalize("slice", slow, shape)
        except TensorCheckError:
            with pytest.raises(TensorCheckError):
                normalize("slice", fast, shape)
            continue
        assert normalize("slice", fast, shape) == want


def test_plain_path_is_taken_only_for_plain_items():
    assert _plain((slice(0, 2), slice(None)), (3, 4)) == ((slice(0, 2, 1), slice(0, 4, 1)), (2, 4))
    for items in (
        (slice(0, 2, 1), slice(None)),  # a step
        (slice(-1, 2), slice(None)),  # negative bound
        (slice(0, 9), slice(None)),  # past the end (clamped by the general loop)
        (slice(2, 1), slice(None)),  # descending (an error there)
        (slice(True, 2), slice(None)),  # a bool bound
        (0, slice(None)),  # an index
        (slice(None),),  # fewer items than dims
    ):
        assert _plain(items, (3, 4)) is None
    t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert t.slice(slice(1, 3), slice(None)).tolist() == [[3.0, 4.0], [5.0, 6.0]]
    assert t.narrow(0, 1, 2).tolist() == [[3.0, 4.0], [5.0, 6.0]]
