"""`LstmNetwork` of Burn's modern-lstm example, built from burn-nn's `Lstm`/`BiLstm`.

Burn's example writes its own LSTM cell (input and hidden weights in one matrix); burn-py uses
burn-nn's cell and keeps the network around it: `num_layers` stacked layers, each bidirectional
or not, dropout between layers, layer norm on the last step's features, then a linear head.
"""

from __future__ import annotations

from burn_nn import (
    BiLstmConfig, Dropout, DropoutConfig, LayerNorm, LayerNormConfig, Linear, LinearConfig,
    LstmConfig, Module, config,
)  # fmt: skip
from burn_tensor import Tensor


class LstmNetwork(Module):
    """Shapes: `[batch, seq, input_size]` -> `[batch, output_size]` (the prediction after the
    last step)."""

    layers: list
    dropout: Dropout
    norm: LayerNorm
    fc: Linear

    def forward(self, x: Tensor) -> Tensor:
        for i, layer in enumerate(self.layers):
            x, _ = layer.forward(x)
            if i + 1 < len(self.layers):
                x = self.dropout.forward(x)
        last = x.narrow(1, x.dims()[1] - 1, 1).squeeze_dim(1)  # [batch, features]
        return self.fc.forward(self.dropout.forward(self.norm.forward(last)))


@config
class LstmNetworkConfig:
    """Burn's defaults: 1 input feature, hidden 32, 2 layers, 1 output, dropout 0.1,
    bidirectional."""

    input_size: int = 1
    hidden_size: int = 32
    num_layers: int = 2
    output_size: int = 1
    dropout: float = 0.1
    bidirectional: bool = True

    def init(self, device) -> LstmNetwork:
        if self.num_layers < 1 or self.hidden_size < 1:
            raise ValueError(f"LstmNetworkConfig: num_layers and hidden_size must be >= 1, "
                             f"got {self.num_layers}, {self.hidden_size}")  # fmt: skip
        width = self.hidden_size * (2 if self.bidirectional else 1)
        layers = []
        for i in range(self.num_layers):
            d_in = self.input_size if i == 0 else width
            cfg = BiLstmConfig if self.bidirectional else LstmConfig
            layers.append(cfg(d_in, self.hidden_size, True).init(device))
        return LstmNetwork(
            layers=layers,
            dropout=DropoutConfig(self.dropout).init(),
            norm=LayerNormConfig(width).init(device),
            fc=LinearConfig(width, self.output_size).init(device),
        )
