"""AdaGrad (Burn's `optim::adagrad`)."""

from __future__ import annotations

from typing import Any

from burn_nn import config
from burn_tensor import Tensor

from ._clipping import GradientClipping
from ._decay import WeightDecayConfig
from ._optimizer import OptimizerAdaptor, SimpleOptimizer
from ._ranges import check


@config
class AdaGradConfig:
    """AdaGrad (Duchi et al. 2011) with learning-rate decay, Burn's defaults.

    Step t: `sum += g^2`; `clr = lr / (1 + (t-1) * lr_decay)`;
    `param -= clr * g / (sqrt(sum) + epsilon)`. Same rule as PyTorch except **epsilon defaults to
    1e-5** (PyTorch 1e-10) and the accumulator starts at 0 (no `initial_accumulator_value`).

    Example:
        >>> AdaGradConfig().lr_decay, AdaGradConfig().epsilon
        (0.0, 1e-05)
    """

    lr_decay: float = 0.0
    epsilon: float = 1e-5
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClipping | None = None

    def build(self) -> AdaGrad:
        check("AdaGradConfig", "lr_decay", self.lr_decay, 0.0)
        check("AdaGradConfig", "epsilon", self.epsilon, 0.0)
        if self.weight_decay is not None:
            self.weight_decay.validate("AdaGradConfig.weight_decay")
        return AdaGrad(self.lr_decay, self.epsilon, self.weight_decay)

    def init(self) -> OptimizerAdaptor:
        return OptimizerAdaptor(self.build(), self.grad_clipping)


class AdaGrad(SimpleOptimizer):
    """AdaGrad rule. State: `{"lr_decay": {"time": int, "sum": tensor}}`."""

    def __init__(self, lr_decay=0.0, epsilon=1e-5, weight_decay=None):
        self.lr_decay, self.epsilon = float(lr_decay), float(epsilon)
        self.weight_decay = weight_decay

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        if state is None:
            time, total = 1, grad.square()
        else:
            prev = state["lr_decay"]
            time, total = int(prev["time"]) + 1, prev["sum"] + grad.square()
        new_lr = lr / (1.0 + (time - 1) * self.lr_decay)
        delta = grad / (total.sqrt() + self.epsilon) * new_lr
        return tensor - delta, {"lr_decay": {"time": time, "sum": total}}
