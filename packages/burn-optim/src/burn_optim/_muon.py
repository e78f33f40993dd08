"""Muon: SGD momentum whose update is orthogonalized by Newton-Schulz (Burn's `optim::muon`).

Muon is for the 2-D weight matrices of hidden layers. As in Burn, a parameter of any other rank
is refused (Burn panics; here a `ValueError` naming the parameter's shape): give biases, norms and
embeddings to another optimizer (freeze them here, or train them with a second optimizer).
"""

from __future__ import annotations

import math
from typing import Any

from burn_nn import ConfigError, config
from burn_tensor import Tensor

from ._clipping import GradientClipping
from ._decay import MomentumConfig, WeightDecayConfig
from ._optimizer import OptimizerAdaptor, SimpleOptimizer
from ._ranges import check

ADJUST_LR_FNS = ("Original", "MatchRmsAdamW")


def adjustment_ratio(adjust_lr_fn: str, shape: list[int]) -> float:
    """The factor Muon multiplies the learning rate by for a parameter of `shape` (rows, cols).

    `"Original"` (Keller Jordan): `sqrt(max(1, rows / cols))`; `"MatchRmsAdamW"` (Moonshot):
    `0.2 * sqrt(max(rows, cols))`, so AdamW's learning rate and weight decay carry over.

    Example:
        >>> adjustment_ratio("Original", [8, 2]), adjustment_ratio("MatchRmsAdamW", [4, 100])
        (2.0, 2.0)
    """
    rows, cols = float(shape[0]), float(shape[1])
    if adjust_lr_fn == "Original":
        return math.sqrt(max(1.0, rows / cols))
    return 0.2 * math.sqrt(max(rows, cols))


@config
class MuonConfig:
    """Muon with Burn's defaults (Burn's `MuonConfig`).

    One step on a 2-D parameter `W` with gradient `G`: `M` = momentum transform of `G` (Burn's
    `MomentumConfig` rule; Muon's default is momentum 0.95, dampening 0, Nesterov); `O` =
    Newton-Schulz orthogonalization of `M` (below); then
    `W = W * (1 - lr * penalty) - lr * adjustment_ratio(adjust_lr_fn, W.shape) * O`: weight decay
    uses the plain `lr`, the update the shape-adjusted one (Burn's order).

    Newton-Schulz (`ns_steps` rounds, coefficients `(a, b, c)`): transpose `M` if it has more rows
    than columns; `X = M / max(||M||_F, epsilon)`; each round `A = X X^T`,
    `X = a X + (b A + c A A) X`; transpose back.

    Args:
        weight_decay: `WeightDecayConfig(penalty)` (decoupled, applied as above), default None.
        momentum: default `MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)`.
        ns_coefficients: `(3.4445, -4.775, 2.0315)`.
        epsilon: `1e-7` (a floor on the Frobenius norm, not added to it).
        ns_steps: `5`.
        adjust_lr_fn: `"Original"` (default) or `"MatchRmsAdamW"` (Burn's `AdjustLrFn`).
        grad_clipping: as on every optimizer config, default None.

    Example:
        >>> MuonConfig().momentum.momentum, MuonConfig().ns_steps
        (0.95, 5)
    """

    weight_decay: WeightDecayConfig | None = None
    momentum: MomentumConfig = MomentumConfig(momentum=0.95, dampening=0.0, nesterov=True)
    ns_coefficients: tuple = (3.4445, -4.775, 2.0315)
    epsilon: float = 1e-7
    ns_steps: int = 5
    adjust_lr_fn: str = "Original"
    grad_clipping: GradientClipping | None = None

    def build(self) -> Muon:
        """The per-tensor rule; raises `ConfigError` on an out-of-range setting."""
        self.momentum.validate("MuonConfig.momentum")
        if self.weight_decay is not None:
            self.weight_decay.validate("MuonConfig.weight_decay")
        check("MuonConfig", "epsilon", self.epsilon, 0.0, lo_open=True)
        if isinstance(self.ns_steps, bool) or not isinstance(self.ns_steps, int):
            raise ConfigError(f"MuonConfig: ns_steps must be an int, got {self.ns_steps!r}")
        check("MuonConfig", "ns_steps", self.ns_steps, 0.0)
        coefs = tuple(self.ns_coefficients)
        if len(coefs) != 3:
            raise ConfigError(
                f"MuonConfig: ns_coefficients must be three numbers (a, b, c), got {coefs!r}"
            )
        coefs = tuple(check("MuonConfig", f"ns_coefficients[{i}]", c) for i, c in enumerate(coefs))
        if self.adjust_lr_fn not in ADJUST_LR_FNS:
            raise ConfigError(
                f"MuonConfig: adjust_lr_fn must be one of {ADJUST_LR_FNS}, "
                f"got {self.adjust_lr_fn!r}"
            )
        return Muon(
            self.momentum, coefs, float(self.epsilon), self.ns_steps, self.adjust_lr_fn,
            self.weight_decay,
        )

    def init(self) -> OptimizerAdaptor:
        """The module optimizer (`optim.step(lr, module, grads)`)."""
        return OptimizerAdaptor(self.build(), self.grad_clipping)


class Muon(SimpleOptimizer):
    """Muon rule. State per parameter: `{"momentum": {"velocity": tensor}}` (Burn's `MuonState`)."""

    def __init__(
        self,
        momentum: MomentumConfig,
        ns_coefficients: tuple = (3.4445, -4.775, 2.0315),
        epsilon: float = 1e-7,
        ns_steps: int = 5,
        adjust_lr_fn: str = "Original",
        weight_decay: WeightDecayConfig | None = None,
    ):
        self.momentum = momentum
        self.ns_coefficients = tuple(float(c) for c in ns_coefficients)
        self.epsilon = float(epsilon)
        self.ns_steps = int(ns_steps)
        self.adjust_lr_fn = adjust_lr_fn
        self.weight_decay = weight_decay

    def orthogonalize(self, g: Tensor) -> Tensor:
        """The Newton-Schulz approximation of the orthogonal factor of the 2-D tensor `g`."""
        rows, cols = g.dims()
        tall = rows > cols
        x = g.swap_dims(0, 1) if tall else g
        norm = (x * x).sum().sqrt().clamp_min(self.epsilon).reshape([1, 1])
        x = x / norm
        a, b, c = self.ns_coefficients
        for _ in range(self.ns_steps):
            gram = x.matmul(x.swap_dims(0, 1))
            poly = gram * b + gram.matmul(gram) * c
            x = x * a + poly.matmul(x)
        return x.swap_dims(0, 1) if tall else x

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        shape = tensor.dims()
        if len(shape) != 2:
            raise ValueError(
                f"Muon: Newton-Schulz orthogonalization needs a 2-D parameter, got shape {shape} "
                f"({len(shape)}-D); train biases, norms and other non-matrix parameters with "
                "another optimizer (e.g. AdamW) or freeze them in this one"
            )
        direction, velocity = self.momentum.transform(grad, state["momentum"] if state else None)
        update = self.orthogonalize(direction)
        if self.weight_decay is not None and self.weight_decay.penalty != 0.0:
            tensor = tensor * (1.0 - lr * self.weight_decay.penalty)
        adjusted = lr * adjustment_ratio(self.adjust_lr_fn, shape)
        return tensor - update * adjusted, {"momentum": velocity}
