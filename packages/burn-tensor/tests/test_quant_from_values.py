"""`Tensor.from_quantized_values`: integers another rule produced (ONNX's QuantizeLinear, an
int8 weight file) wrapped as a quantized tensor on the device, checked against scale * q."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_tensor import DType, Tensor, TensorCheckError
from burn_tensor.quantization import QuantLevel, QuantScheme, QuantStore, QuantValue

DEV = NdArray().device()
Q = np.array([[-128, 5, 127, 0], [1, -2, 3, -4]], np.int8)


@pytest.mark.parametrize("store", [QuantStore.NATIVE, QuantStore.PACKED_U32])
def test_values_and_scales_are_kept(store):
    scheme = QuantScheme(value=QuantValue.Q8F, store=store)
    v = Tensor.from_data(Q, DEV, DType.I8)
    q = Tensor.from_quantized_values(v, Tensor.from_floats([0.5], DEV), scheme)
    assert q.is_quantized() and q.quantization_scheme() == scheme
    np.testing.assert_array_equal(q.quantized_data().dequantize(), Q.astype(np.float64) * 0.5)
    np.testing.assert_array_equal(np.asarray(q.dequantize().numpy()), Q * np.float32(0.5))


def test_block_scales():
    scheme = QuantScheme(value=QuantValue.Q8F, level=QuantLevel.block(2))
    s = Tensor.from_data(np.array([[1.0, 2.0], [0.5, 0.25]], np.float32), DEV)
    q = Tensor.from_quantized_values(Tensor.from_data(Q, DEV, DType.I8), s, scheme)
    want = Q.astype(np.float64) * np.repeat([[1.0, 2.0], [0.5, 0.25]], 2, 1)
    np.testing.assert_array_equal(q.quantized_data().dequantize(), want)


def test_bad_inputs_are_named():
    v = Tensor.from_data(Q, DEV, DType.I8)
    with pytest.raises(TensorCheckError, match="values must be an Int Tensor"):
        Tensor.from_quantized_values(v.float(), Tensor.from_floats([1.0], DEV), QuantScheme())
    with pytest.raises(TensorCheckError, match=r"scales must have shape \[2, 2\]"):
        Tensor.from_quantized_values(
            v, Tensor.from_floats([1.0], DEV), QuantScheme(level=QuantLevel.block(2))
        )
    with pytest.raises(TypeError, match="scheme must be a QuantScheme"):
        Tensor.from_quantized_values(v, Tensor.from_floats([1.0], DEV), "q8")
