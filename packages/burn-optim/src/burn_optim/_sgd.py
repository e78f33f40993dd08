"""Stochastic gradient descent with optional momentum and weight decay (Burn's `optim::sgd`)."""

from __future__ import annotations

from typing import Any

from burn_nn import config
from burn_tensor import Tensor

from ._clipping import GradientClipping
from ._decay import MomentumConfig, WeightDecayConfig
from ._optimizer import OptimizerAdaptor, SimpleOptimizer


@config
class SgdConfig:
    """SGD: `param -= lr * d`, where `d` is the gradient after weight decay and momentum.

    Args:
        weight_decay: coupled L2 penalty (`WeightDecayConfig(penalty)`), default None.
        momentum: `MomentumConfig` (Burn's default dampening is 0.1, PyTorch's 0), default None.
        gradient_clipping: `GradientClippingConfig.Value(x)` / `.Norm(x)`, default None
            (Burn's field name; `with_grad_clipping` works too, as on every optimizer config).

    Example:
        >>> optim = SgdConfig().with_momentum(MomentumConfig(momentum=0.9, dampening=0.0)).init()
        >>> type(optim).__name__
        'OptimizerAdaptor'
    """

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig | None = None
    gradient_clipping: GradientClipping | None = None

    def with_grad_clipping(self, clipping: GradientClipping | None) -> SgdConfig:
        return self.replace(gradient_clipping=clipping)

    @property
    def grad_clipping(self) -> GradientClipping | None:
        return self.gradient_clipping

    def build(self) -> Sgd:
        """The per-tensor rule."""
        if self.momentum is not None:
            self.momentum.validate("SgdConfig.momentum")
        if self.weight_decay is not None:
            self.weight_decay.validate("SgdConfig.weight_decay")
        return Sgd(self.momentum, self.weight_decay)

    def init(self) -> OptimizerAdaptor:
        """The module optimizer (`optim.step(lr, module, grads)`)."""
        return OptimizerAdaptor(self.build(), self.gradient_clipping)


class Sgd(SimpleOptimizer):
    """SGD rule. State per parameter: `{"momentum": {"velocity": tensor} | None}`."""

    def __init__(
        self, momentum: MomentumConfig | None = None, weight_decay: WeightDecayConfig | None = None
    ):
        self.momentum = momentum
        self.weight_decay = weight_decay

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        momentum_state = state["momentum"] if state else None
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        if self.momentum is not None:
            grad, momentum_state = self.momentum.transform(grad, momentum_state)
        return tensor - grad * lr, {"momentum": momentum_state}
