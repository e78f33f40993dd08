"""The Guide's model (both book editions): two convs, adaptive avg pool, dropout, two linears, relu."""

import numpy as np
import pytest
from burn_record import CompactRecorder
from burn_tensor import Tensor

from burn_nn import (
    Dropout,
    DropoutConfig,
    Linear,
    LinearConfig,
    Module,
    Relu,
    config,
)
from burn_nn.conv import Conv2d, Conv2dConfig
from burn_nn.loss import CrossEntropyLossConfig
from burn_nn.pool import AdaptiveAvgPool2d, AdaptiveAvgPool2dConfig


class Model(Module):
    conv1: Conv2d
    conv2: Conv2d
    pool: AdaptiveAvgPool2d
    dropout: Dropout
    linear1: Linear
    linear2: Linear
    activation: Relu

    def forward(self, images: Tensor) -> Tensor:
        """Shapes: images [batch, height, width] -> [batch, num_classes]."""
        batch, height, width = images.dims()
        x = images.reshape([batch, 1, height, width])
        x = self.conv1.forward(x)
        x = self.dropout.forward(x)
        x = self.conv2.forward(x)
        x = self.dropout.forward(x)
        x = self.activation.forward(x)
        x = self.pool.forward(x)
        x = x.reshape([batch, 16 * 8 * 8])
        x = self.linear1.forward(x)
        x = self.dropout.forward(x)
        x = self.activation.forward(x)
        return self.linear2.forward(x)


@config
class ModelConfig:
    num_classes: int
    hidden_size: int
    dropout: float = 0.5

    def init(self, device) -> Model:
        return Model(
            conv1=Conv2dConfig([1, 8], [3, 3]).init(device),
            conv2=Conv2dConfig([8, 16], [3, 3]).init(device),
            pool=AdaptiveAvgPool2dConfig([8, 8]).init(),
            activation=Relu.new(),
            linear1=LinearConfig(16 * 8 * 8, self.hidden_size).init(device),
            linear2=LinearConfig(self.hidden_size, self.num_classes).init(device),
            dropout=DropoutConfig(self.dropout).init(),
        )


def test_guide_model_forward(device):
    model = ModelConfig(10, 512).init(device)
    out = model.forward(Tensor.random([64, 28, 28], device=device))
    assert out.dims() == [64, 10]
    assert model.num_params() == (8 * 9 + 8) + (16 * 8 * 9 + 16) + (1024 * 512 + 512) + (
        512 * 10 + 10
    )
    assert "Model {" in repr(model) and "conv1: Conv2d" in repr(model)


def test_guide_training_step_and_inference_reload(autodiff, tmp_path):
    model = ModelConfig(10, 32).init(autodiff)
    images = Tensor.random([4, 28, 28], device=autodiff)
    targets = Tensor.from_ints([1, 2, 3, 4], autodiff)
    loss = CrossEntropyLossConfig().init(autodiff).forward(model.forward(images), targets)
    grads = loss.backward()
    for name, p in model.named_parameters():
        g = p.val().grad(grads)
        assert g is not None and g.dims() == p.dims(), name
    path = model.save_file(tmp_path / "model", CompactRecorder())
    valid = (
        ModelConfig(10, 32)
        .init(autodiff.inner())
        .load_file(path, CompactRecorder(), autodiff.inner())
    )
    ref = model.valid().forward(images.inner()).numpy()
    np.testing.assert_allclose(valid.forward(images.inner()).numpy(), ref, atol=5e-2)


def test_model_config_save_load(tmp_path):
    c = ModelConfig(10, 512).with_dropout(0.2)
    assert ModelConfig.load(c.save(tmp_path / "config.json")) == c
    with pytest.raises(Exception, match="hidden_size"):
        ModelConfig.from_json('{"num_classes": 10}')
