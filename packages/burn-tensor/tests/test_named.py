"""Named tensors: Burn's `named-tensor` example, with its two non-compiling lines raising here."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import Distribution, NamedDim, NamedTensor, Tensor, TensorCheckError

DEV = NdArray(float_dtype="float64").device()
Batch, SeqLength, DModel = NamedDim("Batch"), NamedDim("SeqLength"), NamedDim("DModel")


def test_burn_named_tensor_example():
    batch_size, seq_length, d_model = 4, 6, 3
    weights = NamedTensor.random(
        [1, d_model, d_model], Distribution.default(), DEV, (Batch, DModel, DModel)
    )
    inp = NamedTensor.random(
        [batch_size, seq_length, d_model], Distribution.default(), DEV, (Batch, SeqLength, DModel)
    )
    # "Doesn't compile" in Burn: (Batch, DModel, DModel) @ (Batch, SeqLength, DModel)
    with pytest.raises(TensorCheckError, match=r"\[Batch, DModel, DModel\] @ \[Batch, SeqLength"):
        weights.matmul(inp)
    output = inp.matmul(weights)
    assert output.dims == (Batch, SeqLength, DModel)
    # "Doesn't compile" in Burn: mul of (Batch, SeqLength, DModel) and (Batch, DModel, DModel)
    with pytest.raises(TensorCheckError, match="dim names differ"):
        output.mul(weights)
    output = output.mul(inp)
    want = (inp.tensor.numpy() @ weights.tensor.numpy()) * inp.tensor.numpy()
    np.testing.assert_allclose(output.tensor.numpy(), want, rtol=1e-12)
    permute = output.swap_dims(1, 2)
    assert str(permute) == "NamedTensor[shape=[4, 3, 6], dims=[Batch, DModel, SeqLength]]"
    assert str(weights) == "NamedTensor[shape=[1, 3, 3], dims=[Batch, DModel, DModel]]"


def test_named_checks():
    t = Tensor.zeros([2, 3], DEV)
    with pytest.raises(TensorCheckError, match="2 names .* rank-1"):
        NamedTensor(t.reshape([6]), (Batch, DModel))
    with pytest.raises(TensorCheckError, match="NamedDim values"):
        NamedTensor(t, ("Batch", DModel))
    with pytest.raises(ValueError, match="identifier"):
        NamedDim("two words")
    named = NamedTensor.from_tensor(t, (Batch, DModel)).reshape([3, 2], (DModel, Batch))
    assert named.dims == (DModel, Batch) and named.shape().dims == [3, 2]
    assert named.into_tensor().dims() == [3, 2]
