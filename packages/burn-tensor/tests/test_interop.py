"""numpy / __array__ / DLPack interop and pickling."""

import pickle

import numpy as np
import pytest
from burn_tensor import DType, Float, Int, Tensor, TensorCheckError


def test_array_protocol(device):
    t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], device)
    a = np.asarray(t)
    assert a.dtype == np.float32 and a.shape == (2, 2)
    assert np.asarray(t, dtype=np.float64).dtype == np.float64
    # copies by default: writing to the result never changes the tensor
    b = np.array(t)
    b[0, 0] = 100
    assert t.tolist()[0][0] == 1.0
    # numpy functions accept tensors
    np.testing.assert_allclose(np.exp(t), np.exp([[1.0, 2.0], [3.0, 4.0]]), rtol=1e-6)
    assert t.numpy().flags.writeable


def test_numpy_round_trip_keeps_kind_and_dtype(device64):
    for arr in (np.arange(6.0).reshape(2, 3), np.arange(6).reshape(3, 2), np.array([True, False])):
        t = Tensor.from_data(arr, device64)
        out = t.numpy()
        np.testing.assert_array_equal(out, arr)
        assert out.dtype == arr.dtype


def test_dlpack_export(device):
    t = Tensor.from_data([[1.0, 2.0]], device)
    assert t.__dlpack_device__() == (1, 0)
    a = np.from_dlpack(t)
    np.testing.assert_array_equal(a, [[1.0, 2.0]])
    assert a.dtype == np.float32


def test_dlpack_import(device, device64):
    t = Tensor.from_dlpack(np.arange(4, dtype=np.int32), device)
    assert t.kind is Int and t.dtype is DType.I32 and t.tolist() == [0, 1, 2, 3]
    f = Tensor.from_dlpack(np.ones((2, 2), np.float64), device64)
    assert f.kind is Float and f.dtype is DType.F64
    # tensor -> tensor through DLPack
    g = Tensor.from_dlpack(f, device64)
    assert g.tolist() == [[1.0, 1.0], [1.0, 1.0]]


@pytest.mark.parametrize("data", [[[1.5, -2.0]], [[1, 2], [3, 4]], [True, False]])
def test_pickle_round_trip(device, device64, data):
    for dev in (device, device64):
        t = Tensor.from_data(data, dev)
        back = pickle.loads(pickle.dumps(t))
        assert back.kind is t.kind and back.dtype is t.dtype and back.device is t.device
        back.to_data().assert_eq(t.to_data(), strict=True)


def test_backend_and_device_pickle_interned(device64):
    b = device64.backend
    assert pickle.loads(pickle.dumps(b)) is b
    assert pickle.loads(pickle.dumps(device64)) is device64


def test_python_scalar_protocols(device):
    t = Tensor.from_data([[3.0]], device)
    assert float(t) == 3.0 and int(t) == 3 and bool(t)
    assert [10, 20, 30, 40][Tensor.from_data([2], device)] == 30  # __index__ for Int
    with pytest.raises(TensorCheckError, match="ambiguous"):
        bool(Tensor.ones([2], device))
    with pytest.raises(TypeError, match="immutable"):
        t[0] = 1.0
    assert hash(t) == hash(t) and hash(t) != hash(t.clone())
