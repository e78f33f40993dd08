"""The regression model of Burn's example: Linear(8, 64), ReLU, Linear(64, 1); MSE loss."""

from __future__ import annotations

from burn_nn import Linear, LinearConfig, Module, MseLoss, Reduction, Relu, config
from burn_tensor import Tensor
from burn_train import RegressionOutput, TrainOutput

from .dataset import NUM_FEATURES, HousingBatch


class RegressionModel(Module):
    """Shapes: inputs `[batch, 8]` -> predictions `[batch, 1]`."""

    input_layer: Linear
    output_layer: Linear
    activation: Relu

    def forward(self, inputs: Tensor) -> Tensor:
        x = self.activation.forward(self.input_layer.forward(inputs))
        return self.output_layer.forward(x)

    def forward_step(self, item: HousingBatch) -> RegressionOutput:
        targets = item.targets.unsqueeze_dim(1)  # [batch, 1]
        output = self.forward(item.inputs)
        loss = MseLoss().forward(output, targets, Reduction.Mean)
        return RegressionOutput(loss, output, targets)

    def train_step(self, item: HousingBatch) -> TrainOutput:
        out = self.forward_step(item)
        return TrainOutput(self, out.loss.backward(), out)

    def valid_step(self, item: HousingBatch) -> RegressionOutput:
        return self.forward_step(item)


@config
class RegressionModelConfig:
    """`RegressionModelConfig(num_features)`, hidden size 64 as in Burn."""

    num_features: int = NUM_FEATURES
    hidden_size: int = 64

    def init(self, device) -> RegressionModel:
        return RegressionModel(
            input_layer=LinearConfig(self.num_features, self.hidden_size).init(device),
            output_layer=LinearConfig(self.hidden_size, 1).init(device),
            activation=Relu(),
        )
