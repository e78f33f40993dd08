"""PyTorch habits either work as they do in torch or fail naming Burn's method (issue 32 item 2).

Expected values are numpy's (the same indexing rules torch follows), never the code under test.
"""

import numpy as np
import pytest

from burn_tensor import Tensor, TensorCheckError


def _t(device, shape=(2, 3)):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    return a, Tensor.from_data(a, device)


@pytest.mark.parametrize(
    "index",
    [
        (None,),
        (slice(None), None),
        (Ellipsis, None),
        (None, Ellipsis),
        (None, slice(None), None),
        (slice(0, 1), None, slice(1, 3)),
        (None, slice(None), None, slice(None), None),
        (Ellipsis, None, slice(0, 2)),
    ],
    ids=repr,
)
def test_none_inserts_a_dim_where_it_stands(device, index):
    a, t = _t(device)
    got = t[index if len(index) > 1 else index[0]]
    want = a[index]
    assert got.dims() == list(want.shape)
    np.testing.assert_array_equal(got.numpy(), want)


def test_none_with_an_int_keeps_burns_int_rule(device):
    # Burn's int index keeps its dim with size 1 (numpy drops it): the None goes where it stands.
    a, t = _t(device)
    got = t[1, None]
    assert got.dims() == [1, 1, 3]
    np.testing.assert_array_equal(got.numpy(), a[1:2, None])


def test_two_ellipses_are_refused(device):
    _, t = _t(device)
    with pytest.raises(TensorCheckError, match=r"at most one `\.\.\.`"):
        t[..., None, ...]


@pytest.mark.parametrize("name", ["sum", "mean", "max", "min", "prod"])
def test_reduction_with_a_dim_names_the_burn_method(device, name):
    _, t = _t(device)
    with pytest.raises(TensorCheckError, match=rf"{name}_dim\(dim\)") as e:
        getattr(t, name)(1)
    assert "squeeze_dim" in str(e.value)
    with pytest.raises(TensorCheckError, match=rf"{name}_dim"):
        getattr(t, name)(dim=1)


def test_reduction_without_a_dim_still_reduces_everything(device):
    a, t = _t(device)
    np.testing.assert_allclose(t.sum().numpy(), [a.sum()])


def test_transpose_with_two_dims_swaps_them(device):
    a, t = _t(device, (2, 3, 4))
    np.testing.assert_array_equal(t.transpose(0, 1).numpy(), a.transpose(1, 0, 2))
    np.testing.assert_array_equal(t.transpose(-1, 0).numpy(), np.swapaxes(a, -1, 0))
    np.testing.assert_array_equal(t.transpose().numpy(), np.swapaxes(a, -1, -2))
    with pytest.raises(TensorCheckError, match="swap_dims"):
        t.transpose(0)


def test_reshape_and_view_take_dims_as_arguments(device):
    a, t = _t(device)
    np.testing.assert_array_equal(t.reshape(3, 2).numpy(), a.reshape(3, 2))
    np.testing.assert_array_equal(t.view(3, -1).numpy(), a.reshape(3, -1))
    np.testing.assert_array_equal(t.reshape([6]).numpy(), a.reshape(6))


def test_permute_takes_dims_as_arguments(device):
    a, t = _t(device, (2, 3, 4))
    np.testing.assert_array_equal(t.permute(2, 0, 1).numpy(), a.transpose(2, 0, 1))
    np.testing.assert_array_equal(t.permute([2, 0, 1]).numpy(), a.transpose(2, 0, 1))


def test_unsqueeze_below_the_rank_names_unsqueeze_dim(device):
    _, t = _t(device)
    with pytest.raises(TensorCheckError, match=r"unsqueeze_dim\(0\)"):
        t.unsqueeze(0)
    assert t.unsqueeze_dim(0).dims() == [1, 2, 3]
    assert t.unsqueeze(3).dims() == [1, 2, 3]  # Burn's target rank


def test_size_with_and_without_a_dim(device):
    _, t = _t(device)
    assert t.size() == [2, 3]
    assert t.size(1) == 3 and t.size(-2) == 2
    with pytest.raises(TensorCheckError, match="size"):
        t.size(2)
