"""Module records read as the books write them: `init_with(record.conv1)`, `record.conv1.weight`."""

import numpy as np
import pytest
from burn_record import NamedMpkFileRecorder, ParamRecord, Record
from burn_tensor import Tensor

from burn_nn import Linear, LinearConfig, Module, Relu, config
from burn_nn.conv import Conv2d, Conv2dConfig
from burn_nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig


class Model(Module):
    conv1: Conv2d
    conv2: Conv2d
    pool: AdaptiveAvgPool2d
    linear1: Linear
    linear2: Linear
    activation: Relu


@config
class ModelConfig:
    num_classes: int
    hidden_size: int

    def init(self, device) -> Model:
        return Model(
            conv1=Conv2dConfig([1, 8], [3, 3]).init(device),
            conv2=Conv2dConfig([8, 16], [3, 3]).init(device),
            pool=AdaptiveAvgPool2dConfig([8, 8]).init(),
            activation=Relu.new(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
        )

    def init_with(self, record, device=None) -> Model:
        """First book, Inference: "Returns the initialized model using the recorded weights"."""
        return Model(
            conv1=Conv2dConfig([1, 8], [3, 3]).init_with(record.conv1, device),
            conv2=Conv2dConfig([8, 16], [3, 3]).init_with(record.conv2, device),
            pool=AdaptiveAvgPool2dConfig([8, 8]).init(),
            activation=Relu.new(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init_with(record.linear1, device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init_with(
                record.linear2, device
            ),
        )


def _params(model) -> dict[str, np.ndarray]:
    return {name: p.val().numpy() for name, p in model.named_parameters()}


def test_guide_init_with_reads_the_record_fields(device, tmp_path):
    model = ModelConfig(10, 32).init(device)
    path = model.save_file(tmp_path / "model", NamedMpkFileRecorder())
    record = NamedMpkFileRecorder().load(path, device)
    loaded = ModelConfig(10, 32).init_with(record, device)
    saved = _params(model)
    got = _params(loaded)
    assert sorted(got) == sorted(saved)
    for name, value in saved.items():
        np.testing.assert_array_equal(got[name], value, err_msg=name)
    # Nested fields: Burn's `record.conv1.weight` is the recorded parameter.
    assert record.conv1.weight.id == str(model.conv1.weight.id)
    np.testing.assert_array_equal(record.conv1.weight.value.array, saved["conv1.weight"])


class Net(Module):
    conv1: Conv2d
    conv2: Conv2d

    @staticmethod
    def new_with(record) -> "Net":
        """First book, PyTorch import: `Net::new_with(record: NetRecord<B>)`."""
        conv1 = Conv2dConfig([2, 2], [2, 2]).init_with(record.conv1)
        conv2 = Conv2dConfig([2, 2], [2, 2]).with_bias(False).init_with(record.conv2)
        return Net(conv1=conv1, conv2=conv2)


def test_net_new_with_a_hand_written_record(device):
    w1 = np.arange(16, dtype=np.float32).reshape(2, 2, 2, 2) / 10
    w2 = -np.ones((2, 2, 2, 2), np.float32)
    record = Record(
        conv1={
            "weight": ParamRecord("c1w", Tensor.from_data(w1, device).to_data()),
            "bias": ParamRecord("c1b", Tensor.from_data([0.5, -0.5], device).to_data()),
        },
        conv2={"weight": ParamRecord("c2w", Tensor.from_data(w2, device).to_data()), "bias": None},
    )
    net = Net.new_with(record)
    assert net.conv2.bias is None
    np.testing.assert_array_equal(net.conv1.weight.val().numpy(), w1)
    # Forward on ones [1, 2, 2, 2]: each output channel sums its 8 weights plus its bias.
    out = net.conv1.forward(Tensor.ones([1, 2, 2, 2], device)).numpy().reshape(2)
    expected = w1.reshape(2, 8).sum(axis=1) + np.array([0.5, -0.5])
    np.testing.assert_allclose(out, expected, rtol=1e-6)


class Stack(Module):
    layers: list[Linear]


def test_into_record_nests_records_through_lists(device):
    stack = Stack(layers=[LinearConfig(3, 2).init(device), LinearConfig(2, 1).init(device)])
    record = stack.into_record()
    assert type(record) is Record and type(record.layers[1]) is Record
    np.testing.assert_array_equal(
        record.layers[1].weight.value.array, stack.layers[1].weight.val().numpy()
    )
    assert record["layers"][0]["bias"] is record.layers[0].bias
    with pytest.raises(AttributeError, match=r"no field 'wieght' \(did you mean 'weight'\?\)"):
        _ = record.layers[0].wieght
    # A record edited through attributes loads like any other.
    record.layers[1].bias = ParamRecord("b", Tensor.from_data([4.0], device).to_data())
    assert stack.load_record(record).layers[1].bias.val().tolist() == [4.0]
