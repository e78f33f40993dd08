"""Modules refuse bad indices instead of wrapping them (issue 21: a cross-entropy target of -1
trained class 2; an embedding index past the vocabulary failed with numpy's IndexError)."""

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import EmbeddingConfig
from burn_nn.loss import CrossEntropyLossConfig
from burn_tensor import Tensor, TensorCheckError

DEVICES = [NdArray().device(), Autodiff(NdArray()).device()]


@pytest.mark.parametrize("device", DEVICES, ids=["ndarray", "autodiff"])
@pytest.mark.parametrize("bad", [-1, 3])
def test_cross_entropy_refuses_targets_outside_the_classes(device, bad):
    logits = Tensor.from_data(np.arange(6.0).reshape(2, 3), device)
    loss = CrossEntropyLossConfig().init(device)
    with pytest.raises(
        TensorCheckError,
        match=rf"(?s)'CrossEntropyLoss'.*target class {bad} out of range for dim 1 of size 3 "
        r"\(valid: 0..2\)",
    ):
        loss.forward(logits, Tensor.from_ints([0, bad], device))


def test_cross_entropy_with_valid_targets_is_unchanged():
    d = NdArray(float_dtype="float64").device()
    x = np.array([[0.5, -1.0, 2.0], [1.0, 0.0, -0.5]])
    got = (
        CrossEntropyLossConfig()
        .init(d)
        .forward(Tensor.from_data(x, d), Tensor.from_ints([2, 0], d))
    )
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    assert abs(got.into_scalar() - -(logp[0, 2] + logp[1, 0]) / 2) < 1e-12


def test_cross_entropy_targets_must_be_int():
    d = NdArray().device()
    with pytest.raises(TensorCheckError, match="targets must be an Int tensor"):
        CrossEntropyLossConfig().init(d).forward(Tensor.zeros([2, 3], d), Tensor.zeros([2], d))


@pytest.mark.parametrize("device", DEVICES, ids=["ndarray", "autodiff"])
@pytest.mark.parametrize("bad", [-1, 10])
def test_embedding_refuses_token_indices_outside_the_vocabulary(device, bad):
    emb = EmbeddingConfig(10, 4).init(device)
    with pytest.raises(
        TensorCheckError,
        match=rf"(?s)'embedding'.*token index {bad} out of range for dim 0 of size 10",
    ):
        emb.forward(Tensor.from_ints([[1, bad]], device))
