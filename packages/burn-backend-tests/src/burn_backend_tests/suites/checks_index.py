"""Conformance: every indexing op refuses negative and out-of-range indices.

Burn panics on them; numpy would wrap a negative index silently (a cross-entropy target of -1
trains the last class) or fail with an `IndexError` that names no op. Each case runs with
`BURN_CHECKS=1`, so backends that skip data-dependent checks by default (asynchronous GPU ones,
`checks_force_sync`) must still raise a `TensorCheckError` naming the op, the dim, the bad value
and the valid range when asked to check.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from burn_tensor import TensorCheckError, module


def _raises(op, bad, dim, size):
    valid = re.escape(f"(valid: 0..{size - 1})")
    return pytest.raises(
        TensorCheckError,
        match=rf"(?s)'{op}'.* {bad} out of range for dim {dim} of size {size} {valid}",
    )


def _add_at(x, idx, v=1.0):
    y = x.copy()
    np.add.at(y, idx, v)
    return y


X = np.arange(6.0).reshape(2, 3)
# op -> (call(burn, x, i), dim checked, size of that dim, numpy result for a valid i) on X [2, 3]
INDEX_OPS = {
    "select": (lambda b, x, i: x.select(1, b.int([i])), 1, 3, lambda i: X[:, [i]]),
    "select_dim0": (lambda b, x, i: x.select(0, b.int([0, i])), 0, 2, lambda i: X[[0, i]]),
    "select_assign": (
        lambda b, x, i: x.select_assign(1, b.int([i]), b.float(np.ones((2, 1)))),
        1,
        3,
        lambda i: _add_at(X, (slice(None), i)),
    ),
    "gather": (
        lambda b, x, i: x.gather(1, b.int([[0], [i]])),
        1,
        3,
        lambda i: np.array([[X[0, 0]], [X[1, i]]]),
    ),
    "scatter": (
        lambda b, x, i: x.scatter(1, b.int([[i], [0]]), b.float(np.ones((2, 1)))),
        1,
        3,
        lambda i: _add_at(_add_at(X, (0, i)), (1, 0)),
    ),
    "getitem": (lambda b, x, i: x[b.int([i])], 0, 2, lambda i: X[[i]]),
}
_OP_NAME = {"select_dim0": "select", "getitem": "select"}


@pytest.mark.parametrize("bad_kind", ["negative", "too_large"])
@pytest.mark.parametrize("name", list(INDEX_OPS))
def test_index_ops_refuse_bad_indices(burn, burn_checks_on, name, bad_kind):
    call, dim, size, _ = INDEX_OPS[name]
    bad = -1 if bad_kind == "negative" else size
    with _raises(_OP_NAME.get(name, name), bad, dim, size):
        call(burn, burn.float(X), bad)


@pytest.mark.parametrize("name", list(INDEX_OPS))
def test_index_ops_accept_the_edges_of_the_range(burn, burn_checks_on, name):
    call, _, size, ref = INDEX_OPS[name]
    for i in (0, size - 1):
        burn.assert_close(call(burn, burn.float(X), i), ref(i))


def test_int_tensor_select_refuses_bad_indices(burn, burn_checks_on):
    t = burn.int(np.arange(4))
    with _raises("select", -3, 0, 4):
        t.select(0, burn.int([1, -3]))
    with _raises("gather", 9, 0, 4):
        t.gather(0, burn.int([9]))


def test_bool_select_assign_refuses_bad_indices(burn, burn_checks_on):
    t = burn.bool(np.array([True, False]))
    with _raises("select_assign", 2, 0, 2):
        t.select_assign(0, burn.int([2]), burn.bool(np.array([True])))


def test_empty_index_tensors_need_no_check(burn, burn_checks_on):
    x = burn.float(X)
    burn.assert_close(x.select(1, burn.int(np.zeros(0, np.int64))), np.zeros((2, 0)))


def test_index_into_an_empty_dim_names_the_empty_range(burn, burn_checks_on):
    x = burn.float(np.zeros((2, 0)))
    with pytest.raises(TensorCheckError, match="(?s)'select'.*dim 1 of size 0.*no index is valid"):
        x.select(1, burn.int([0]))


@pytest.mark.parametrize("bad", [-1, 4])
def test_embedding_refuses_bad_token_indices(burn, burn_checks_on, bad):
    w = burn.float(np.arange(12.0).reshape(4, 3))
    with pytest.raises(
        TensorCheckError,
        match=rf"(?s)'embedding'.*token index {bad} out of range for dim 0 of size 4",
    ):
        module.embedding(w, burn.int([[0, bad]]))


@pytest.mark.parametrize("bad", [-1, 3])
def test_one_hot_refuses_bad_class_indices(burn, burn_checks_on, bad):
    with pytest.raises(
        TensorCheckError, match=rf"(?s)'one_hot'.*class index {bad} out of range .* size 3"
    ):
        burn.int([0, bad]).one_hot(3)
