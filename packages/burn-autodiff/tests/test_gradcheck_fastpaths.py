"""Finite-difference gradient checks (float64) through every fast path of NdArray's module ops.

The rows (`_autodiff_fastpath_cases.py`) pick shapes and options that send the forward and the
backward primitives down NdArray's specialised kernels: Winograd, the flipped-kernel conv2d input
gradient with asymmetric padding, transposed-conv canvas and crop branches, im2col batch chunks,
padded pools. `test_row_reaches_its_paths` proves each row still reaches the branches it names.
"""

from __future__ import annotations

import numpy as np
import pytest
from _autodiff_fastpath_cases import FAST_PATH_CASES
from _autodiff_testlib import F64, check_grads
from _pathspy import spy_paths
from burn_autodiff import Autodiff
from burn_tensor import TensorData

IDS = [c[0] for c in FAST_PATH_CASES]


def _patch(monkeypatch, patches):
    for (module, name), value in patches.items():
        monkeypatch.setattr(module, name, value)


@pytest.mark.parametrize("row", FAST_PATH_CASES, ids=IDS)
def test_gradcheck_fast_path(ad64, monkeypatch, row):
    _, fn, inputs, _, sample, patches = row
    _patch(monkeypatch, patches)
    check_grads(ad64, fn, [np.array(a, dtype=np.float64) for a in inputs], sample=sample)


@pytest.mark.parametrize("row", FAST_PATH_CASES, ids=IDS)
def test_row_reaches_its_paths(monkeypatch, row):
    _, fn, inputs, paths, _, patches = row
    _patch(monkeypatch, patches)
    hits = spy_paths(monkeypatch)
    B = Autodiff(F64)
    xs = [
        B.float_set_require_grad(B.float_from_data(TensorData(np.asarray(a)), B.device()), True)
        for a in inputs
    ]
    out = fn(B, *xs)
    out = out[0] if type(out) is tuple else out
    grads = B.backward(B.float_sum(out))
    assert all(B.grad(x, grads) is not None for x in xs)
    missed = {p: (n, hits[p]) for p, n in paths.items() if hits[p] < n}
    assert not missed, f"branch: (wanted hits, got) {missed}; all hits {dict(hits)}"
