"""Burn Book snippets through the facade's paths, written as the books write them (issue 12)."""

from __future__ import annotations

import subprocess
import sys

import pytest


def test_tensor_backend_path_holds_backend_and_autodiff_backend():
    # Both books: `use burn::tensor::backend::Backend;` (Module chapter, custom backends).
    import burn_tensor
    from burn.backend import Autodiff, NdArray
    from burn.tensor.backend import AutodiffBackend, Backend

    assert Backend is burn_tensor.Backend
    assert isinstance(NdArray(), Backend) and isinstance(Autodiff(NdArray()), Backend)
    # `fn calculate_gradients<B: AutodiffBackend>`: only autodiff backends pass the check.
    assert isinstance(Autodiff(NdArray()), AutodiffBackend)
    assert not isinstance(NdArray(), AutodiffBackend)
    assert issubclass(Autodiff, AutodiffBackend) and not issubclass(NdArray, AutodiffBackend)
    assert not isinstance("NdArray", AutodiffBackend) and not issubclass(int, AutodiffBackend)


def test_tensor_backend_path_in_a_fresh_interpreter():
    code = (
        "import burn.tensor.backend as b; import burn_tensor; "
        "print(b.Backend is burn_tensor.Backend, 'AutodiffBackend' in b.__all__, 'Device' in b.__all__)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True True True"


def test_custom_backend_trait_extends_burns_backend():
    # Later book, custom kernels: `pub trait Backend: burn::tensor::backend::Backend { .. }`.
    import burn.tensor.backend
    from burn.backend import NdArray

    class FusedBackend(NdArray):
        def fused_matmul_add_relu(self, lhs, rhs, bias):
            return self.float_matmul(lhs, rhs)

    assert issubclass(FusedBackend, burn.tensor.backend.Backend)
    assert not issubclass(FusedBackend, burn.tensor.backend.AutodiffBackend)


def test_prelude_has_burns_names():
    # Later book: `use burn::prelude::*;` "which is equal to: use burn::{backend::Backend, Bool,
    # Data, Device, ElementConversion, Float, Int, Shape, Tensor, ..}" (+ Config, Module, nn).
    import burn_nn
    import burn_tensor
    from burn import prelude

    expected = {
        "Backend": burn_tensor.Backend,
        "Bool": burn_tensor.Bool,
        "Data": burn_tensor.TensorData,
        "Device": burn_tensor.Device,
        "Float": burn_tensor.Float,
        "Int": burn_tensor.Int,
        "Shape": burn_tensor.Shape,
        "Tensor": burn_tensor.Tensor,
        "TensorData": burn_tensor.TensorData,
        "s": burn_tensor.s,
        "Config": burn_nn.Config,
        "Module": burn_nn.Module,
        "config": burn_nn.config,
        "nn": burn_nn,
    }
    for name, obj in expected.items():
        assert getattr(prelude, name) is obj, name
        assert name in prelude.__all__, name


def test_getting_started_prints_as_the_book(capsys):
    # Both books, Getting Started: tensor_1 + tensor_2 with ones_like, then println!("{}", ..).
    from burn.backend import NdArray
    from burn.prelude import Tensor

    device = NdArray().device()
    tensor_1 = Tensor.from_data([[2.0, 3.0], [4.0, 5.0]], device)
    tensor_2 = Tensor.ones_like(tensor_1)
    print(tensor_1 + tensor_2)
    out = capsys.readouterr().out
    assert out.startswith("Tensor {\n  data:\n[[3.0, 4.0],\n [5.0, 6.0]],\n  shape:  [2, 2],\n")


def test_first_book_data_and_value_through_burn_tensor():
    # First book: `Data::from([1.0, 2.0, 3.0]).convert()` and `loss.into_data().value[0]`.
    from burn.backend import NdArray
    from burn.tensor import Data, Tensor, TensorData

    assert Data is TensorData
    device = NdArray().device()
    tensor_2 = Tensor.from_data(Data([1.0, 2.0, 3.0]).convert(), device)
    loss = tensor_2.mean()
    assert loss.into_data().value[0] == 2.0


def test_all_close_and_is_close_with_none_through_burn_tensor():
    from burn.backend import NdArray
    from burn.tensor import Tensor

    t = Tensor.from_data([[1.0, -2.0, 3.0], [5.0, 9.0, 6.0]], NdArray().device())
    assert t.all_close(t, None, None) is True
    assert t.is_close(t + 1.0, None, None).tolist() == [[False] * 3] * 2


def test_record_fields_read_as_attributes_through_burn_paths(tmp_path):
    # First book: `Conv2dConfig::new([1, 8], [3, 3]).init_with(record.conv1)`.
    from burn.backend import NdArray
    from burn.module import Module
    from burn.nn.conv import Conv2d, Conv2dConfig
    from burn.record import CompactRecorder

    class Model(Module):
        conv1: Conv2d

    device = NdArray().device()
    model = Model(conv1=Conv2dConfig([1, 8], [3, 3]).init(device))
    record = CompactRecorder().load(model.save_file(tmp_path / "model", CompactRecorder()), device)
    conv1 = Conv2dConfig([1, 8], [3, 3]).init_with(record.conv1, device)
    assert conv1.weight.id == model.conv1.weight.id
    with pytest.raises(AttributeError, match="fields: conv1"):
        _ = record.conv2
