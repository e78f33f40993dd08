"""RMSProp, optionally centered and with momentum (Burn's `optim::rmsprop`)."""

from __future__ import annotations

from typing import Any

from burn_nn import config
from burn_tensor import Tensor

from ._clipping import GradientClipping
from ._decay import WeightDecayConfig
from ._optimizer import OptimizerAdaptor, SimpleOptimizer
from ._ranges import check


@config
class RmsPropConfig:
    """RMSProp (Hinton's lecture 6e) with Burn's defaults.

    Step: `sq = alpha*sq + (1-alpha) g^2` (starts at 0); centered: `ga = alpha*ga + (1-alpha) g`,
    `avg = sq - ga^2`, else `avg = sq`; `d = g / (sqrt(avg) + epsilon)`; with momentum > 0:
    `buf = momentum*buf + d` (first step `buf = d`), `d = buf`; `param -= lr * d`.

    Differences from PyTorch, kept from Burn: **momentum defaults to 0.9** (PyTorch 0) and
    **epsilon to 1e-5** (PyTorch 1e-8).

    Example:
        >>> RmsPropConfig().momentum, RmsPropConfig().with_momentum(0.0).momentum
        (0.9, 0.0)
    """

    alpha: float = 0.99
    momentum: float = 0.9
    epsilon: float = 1e-5
    centered: bool = False
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClipping | None = None

    def build(self) -> RmsProp:
        check("RmsPropConfig", "alpha", self.alpha, 0.0, 1.0)
        check("RmsPropConfig", "momentum", self.momentum, 0.0)
        check("RmsPropConfig", "epsilon", self.epsilon, 0.0)
        if self.weight_decay is not None:
            self.weight_decay.validate("RmsPropConfig.weight_decay")
        return RmsProp(self.alpha, self.momentum, self.epsilon, self.centered, self.weight_decay)

    def init(self) -> OptimizerAdaptor:
        return OptimizerAdaptor(self.build(), self.grad_clipping)


class RmsProp(SimpleOptimizer):
    """RMSProp rule. State (Burn's field names): `{"square_avg": {"square_avg"},
    "centered": {"grad_avg", "avg"}, "momentum": {"buf"} | None}`."""

    def __init__(self, alpha=0.99, momentum=0.9, epsilon=1e-5, centered=False, weight_decay=None):
        self.alpha, self.momentum, self.epsilon = float(alpha), float(momentum), float(epsilon)
        self.centered = bool(centered)
        self.weight_decay = weight_decay

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        a = self.alpha
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        sq = grad.square() * (1.0 - a)
        if state is not None:
            sq = state["square_avg"]["square_avg"] * a + sq
        if self.centered:
            ga = grad * (1.0 - a)
            prev = state["centered"].get("grad_avg") if state is not None else None
            if prev is not None:
                ga = prev * a + ga
            avg = sq - ga.square()
        else:
            ga, avg = None, sq
        d = grad / (avg.sqrt() + self.epsilon)
        momentum_state = None
        if self.momentum > 0.0:
            if state is not None and state.get("momentum") is not None:
                d = state["momentum"]["buf"] * self.momentum + d
            momentum_state = {"buf": d}
        new_state = {
            "square_avg": {"square_avg": sq},
            "centered": {"grad_avg": ga, "avg": avg},
            "momentum": momentum_state,
        }
        return tensor - d * lr, new_state
