"""Exercise 5 (Step 5, modules): a 3-layer MLP (10 -> 64 ReLU -> 32 ReLU -> 3 logits) with its
config; feed a random `[16, 10]` batch and verify the output shape is `[16, 3]`.

Burn's `#[derive(Module)] struct Mlp<B: Backend>` is a `Module` subclass with annotated fields;
the backend is not a type parameter but follows the device given to `init`.
"""

from __future__ import annotations

from burn_ndarray import NdArray
from burn_nn import Linear, LinearConfig, Module, Relu, config
from burn_tensor import Distribution, Tensor


class Mlp(Module):
    """Three linear layers with ReLU between them: `[batch, input] -> [batch, output]`."""

    linear1: Linear
    linear2: Linear
    linear3: Linear
    activation: Relu

    def forward(self, x: Tensor) -> Tensor:
        x = self.activation.forward(self.linear1.forward(x))  # [batch, hidden1]
        x = self.activation.forward(self.linear2.forward(x))  # [batch, hidden2]
        return self.linear3.forward(x)  # [batch, output], raw logits


@config
class MlpConfig:
    """Sizes of the MLP; the tutorial's exercise uses 10 -> 64 -> 32 -> 3."""

    input_dim: int
    hidden1_dim: int
    hidden2_dim: int
    output_dim: int

    def init(self, device=None) -> Mlp:
        return Mlp(
            linear1=LinearConfig(self.input_dim, self.hidden1_dim).init(device),
            linear2=LinearConfig(self.hidden1_dim, self.hidden2_dim).init(device),
            linear3=LinearConfig(self.hidden2_dim, self.output_dim).init(device),
            activation=Relu.new(),
        )


def run(device=None, seed: int = 5) -> tuple[Mlp, Tensor, Tensor]:
    """Print the output shape (and the number of parameters); return `(model, input, output)`."""
    device = device if device is not None else NdArray().device()
    device.seed(seed)

    model = MlpConfig(10, 64, 32, 3).init(device)
    batch = Tensor.random([16, 10], Distribution.Normal(0.0, 1.0), device)
    output = model.forward(batch)

    assert output.dims() == [16, 3], output.dims()
    print(f"Input shape: {batch.dims()}")
    print(f"Output shape: {output.dims()}")
    print(f"Parameters: {model.num_params()}")
    print(f"{output:.4}")  # Burn's println!("{:.4}", output): 4 decimals
    return model, batch, output


if __name__ == "__main__":
    run()
