"""Weight decay (L2 penalty) and SGD momentum (Burn's `optim::decay` and `optim::momentum`)."""

from __future__ import annotations

from burn_nn import config
from burn_tensor import Tensor

from ._ranges import check


@config
class WeightDecayConfig:
    """Coupled L2 weight decay: the gradient becomes `grad + penalty * param` before the update.

    Used by Sgd, Adam, AdaGrad and RmsProp (AdamW has its own decoupled decay).

    Example:
        >>> WeightDecayConfig(1e-4).penalty
        0.0001
    """

    penalty: float

    def validate(self, where: str = "WeightDecayConfig") -> None:
        """Raise `ConfigError` unless the penalty is finite and >= 0."""
        check(where, "penalty", self.penalty, 0.0)

    def transform(self, grad: Tensor, param: Tensor) -> Tensor:
        return param * self.penalty + grad


@config
class MomentumConfig:
    """SGD momentum (Burn's defaults: momentum 0.9, **dampening 0.1**, nesterov off).

    The first step uses the raw gradient as velocity; later steps
    `v = momentum * v + (1 - dampening) * grad`; the update direction is `v`, or
    `grad + momentum * v` with Nesterov. Same rule as PyTorch, whose dampening default is 0.

    Example:
        >>> MomentumConfig(momentum=0.9, dampening=0.0, nesterov=False).dampening
        0.0
    """

    momentum: float = 0.9
    dampening: float = 0.1
    nesterov: bool = False

    def validate(self, where: str = "MomentumConfig") -> None:
        """Raise `ConfigError` unless momentum is finite and >= 0, dampening in [0, 1]."""
        check(where, "momentum", self.momentum, 0.0)
        check(where, "dampening", self.dampening, 0.0, 1.0)

    def transform(self, grad: Tensor, state: dict | None) -> tuple[Tensor, dict]:
        """`(direction, {"velocity": v})` given the previous `{"velocity": v}` or None."""
        if state is None:
            velocity = grad
        else:
            velocity = grad * (1.0 - self.dampening) + state["velocity"] * self.momentum
        out = velocity * self.momentum + grad if self.nesterov else velocity
        return out, {"velocity": velocity}
