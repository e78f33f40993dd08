"""AdamW: Adam with decoupled weight decay (Burn's `optim::adamw`)."""

from __future__ import annotations

from typing import Any

from burn_nn import config
from burn_tensor import Tensor

from ._adam import _betas_eps, update_moments
from ._clipping import GradientClipping
from ._optimizer import OptimizerAdaptor, SimpleOptimizer
from ._ranges import check


@config
class AdamWConfig:
    """AdamW (Loshchilov & Hutter 2019) with Burn's defaults.

    Step t: moments as Adam; `delta = m_hat / (sqrt(v_hat) + epsilon)`; then the parameter is
    decayed first and updated second: `param = param * (1 - lr*weight_decay) - lr * delta` (the
    decay uses the old parameter; PyTorch does the same, in place). With
    `cautious_weight_decay` the decay is skipped where the parameter's sign differs from the first
    moment's (arXiv 2510.12402).

    Differences from PyTorch, kept from Burn: **epsilon 1e-5** (PyTorch 1e-8) and **weight_decay
    1e-4** (PyTorch 1e-2).

    Example:
        >>> AdamWConfig().weight_decay, AdamWConfig().with_weight_decay(0.01).weight_decay
        (0.0001, 0.01)
    """

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    weight_decay: float = 1e-4
    cautious_weight_decay: bool = False
    amsgrad: bool = False
    grad_clipping: GradientClipping | None = None

    def build(self) -> AdamW:
        _betas_eps("AdamWConfig", self)
        check("AdamWConfig", "weight_decay", self.weight_decay, 0.0)
        return AdamW(
            self.beta_1,
            self.beta_2,
            self.epsilon,
            self.weight_decay,
            self.cautious_weight_decay,
            self.amsgrad,
        )

    def init(self) -> OptimizerAdaptor:
        return OptimizerAdaptor(self.build(), self.grad_clipping)


class AdamW(SimpleOptimizer):
    """AdamW rule. State: `{"momentum": {"time", "moment_1", "moment_2", "max_moment_2"}}`."""

    def __init__(
        self,
        beta_1=0.9,
        beta_2=0.999,
        epsilon=1e-5,
        weight_decay=1e-4,
        cautious_weight_decay=False,
        amsgrad=False,
    ):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.weight_decay = float(weight_decay)
        self.cautious_weight_decay = bool(cautious_weight_decay)
        self.amsgrad = bool(amsgrad)

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        mom = update_moments(
            self.beta_1, self.beta_2, self.amsgrad, grad, state["momentum"] if state else None
        )
        t = mom["time"]
        m_hat = mom["moment_1"] / (1.0 - self.beta_1**t)
        v = mom["max_moment_2"] if self.amsgrad else mom["moment_2"]
        v_hat = v / (1.0 - self.beta_2**t)
        delta = m_hat / (v_hat.sqrt() + self.epsilon)

        decay_rate = lr * self.weight_decay
        if decay_rate == 0.0:
            decayed = tensor
        elif self.cautious_weight_decay:
            differ = tensor.greater_equal_elem(0.0).not_equal(
                mom["moment_1"].greater_equal_elem(0.0)
            )
            decayed = tensor - (tensor * decay_rate).mask_fill(differ, 0.0)
        else:
            decayed = tensor * (1.0 - decay_rate)
        return decayed - delta * lr, {"momentum": mom}
