"""Adam and AMSGrad (Burn's `optim::adam`)."""

from __future__ import annotations

import math
from typing import Any

from burn_nn import config
from burn_tensor import Tensor, TensorCheckError
from burn_tensor.ops import adam_update, adam_update_many

from ._clipping import GradientClipping
from ._decay import WeightDecayConfig
from ._optimizer import OptimizerAdaptor, SimpleOptimizer
from ._ranges import check


@config
class AdamConfig:
    """Adam (Kingma & Ba 2015), optionally AMSGrad, with Burn's defaults.

    Update at step t: `m = b1 m + (1-b1) g`, `v = b2 v + (1-b2) g^2` (AMSGrad: `v_max = max(v_max,
    v)` is used instead of `v`), `param -= lr * m_hat / (sqrt(v_hat) + epsilon)` with
    `m_hat = m / (1-b1^t)`, `v_hat = v / (1-b2^t)`. Burn computes it as
    `m * sqrt(1-b2^t)/(1-b1^t) / (sqrt(v) + epsilon*sqrt(1-b2^t))`, the same value.

    Differences from PyTorch, kept from Burn: **epsilon defaults to 1e-5** (PyTorch 1e-8);
    `weight_decay` is a `WeightDecayConfig` (coupled L2 added to the gradient, like PyTorch's Adam
    `weight_decay`), default None. Hyper-parameters are Python floats (Burn stores f32).

    Example:
        >>> optim = AdamConfig().with_beta_1(0.9).with_beta_2(0.999).with_epsilon(1e-8).init()
        >>> AdamConfig().epsilon
        1e-05
    """

    beta_1: float = 0.9
    beta_2: float = 0.999
    epsilon: float = 1e-5
    amsgrad: bool = False
    weight_decay: WeightDecayConfig | None = None
    grad_clipping: GradientClipping | None = None

    def build(self) -> Adam:
        _betas_eps("AdamConfig", self)
        if self.weight_decay is not None:
            self.weight_decay.validate("AdamConfig.weight_decay")
        return Adam(self.beta_1, self.beta_2, self.epsilon, self.amsgrad, self.weight_decay)

    def init(self) -> OptimizerAdaptor:
        return OptimizerAdaptor(self.build(), self.grad_clipping)


def _betas_eps(owner: str, cfg) -> None:
    """The moment decays must be in [0, 1) (1 never forgets, > 1 diverges) and epsilon >= 0."""
    check(owner, "beta_1", cfg.beta_1, 0.0, 1.0, hi_open=True)
    check(owner, "beta_2", cfg.beta_2, 0.0, 1.0, hi_open=True)
    check(owner, "epsilon", cfg.epsilon, 0.0)


def update_moments(
    beta_1: float, beta_2: float, amsgrad: bool, grad: Tensor, state: dict | None
) -> dict:
    """Burn's `AdaptiveMomentumState` after one more gradient (moments start at zero)."""
    if state is None:
        m1 = grad * (1.0 - beta_1)
        m2 = grad.square() * (1.0 - beta_2)
        return {"time": 1, "moment_1": m1, "moment_2": m2, "max_moment_2": m2 if amsgrad else None}
    m1 = state["moment_1"] * beta_1 + grad * (1.0 - beta_1)
    m2 = state["moment_2"] * beta_2 + grad.square() * (1.0 - beta_2)
    max_m2 = None
    if amsgrad:
        prev = state.get("max_moment_2")
        max_m2 = (m2 if prev is None else prev).max_pair(m2)
    return {"time": int(state["time"]) + 1, "moment_1": m1, "moment_2": m2, "max_moment_2": max_m2}


class Adam(SimpleOptimizer):
    """Adam rule. State: `{"momentum": {"time", "moment_1", "moment_2", "max_moment_2"}}`."""

    def __init__(self, beta_1=0.9, beta_2=0.999, epsilon=1e-5, amsgrad=False, weight_decay=None):
        self.beta_1, self.beta_2, self.epsilon = float(beta_1), float(beta_2), float(epsilon)
        self.amsgrad = bool(amsgrad)
        self.weight_decay = weight_decay

    def step(self, lr: float, tensor: Tensor, grad: Tensor, state: Any) -> tuple[Tensor, Any]:
        if self.weight_decay is not None:
            grad = self.weight_decay.transform(grad, tensor)
        if not self.amsgrad:
            # One backend op per parameter (one kernel on GPU backends), same formulas.
            prev, t = _previous(state)
            new, m1, m2 = adam_update(
                tensor,
                grad,
                None if prev is None else prev["moment_1"],
                None if prev is None else prev["moment_2"],
                lr=lr,
                beta_1=self.beta_1,
                beta_2=self.beta_2,
                epsilon=self.epsilon,
                time=t,
            )
            return new, _state(t, m1, m2)
        mom = update_moments(
            self.beta_1, self.beta_2, self.amsgrad, grad, state["momentum"] if state else None
        )
        t = mom["time"]
        bias_correction2_sqrt = math.sqrt(1.0 - self.beta_2**t)
        factor = bias_correction2_sqrt / (1.0 - self.beta_1**t)
        v = mom["max_moment_2"] if self.amsgrad else mom["moment_2"]
        update = (mom["moment_1"] * factor) / (v.sqrt() + self.epsilon * bias_correction2_sqrt)
        return tensor - update * lr, {"momentum": mom}

    def step_many(self, lr, tensors, grads, states):
        """All parameters of a step: one `adam_update_many` per (step count, first step or not,
        dtype, device) group, i.e. usually one for the whole model (one kernel launch on CUDA).
        Results equal `step` per parameter. AMSGrad, and a group whose batched call refuses its
        operands, take the per-parameter path (which names the parameter in its error)."""
        if self.amsgrad:
            return super().step_many(lr, tensors, grads, states)
        raw_grads = grads  # the per-parameter fallback applies the weight decay itself
        if self.weight_decay is not None:
            grads = [self.weight_decay.transform(g, t) for g, t in zip(grads, tensors, strict=True)]
        groups: dict = {}
        key = idx = None  # the last group: consecutive parameters usually share it
        for i, (tensor, state) in enumerate(zip(tensors, states, strict=True)):
            prev, t = _previous(state)
            dt, dev = tensor.dtype, tensor.device
            if key is None or t != key[0] or (prev is None) is not key[1] or dt is not key[2] or (
                dev is not key[3]
            ):  # a new group, or an earlier one (the dict hashes the key only here)
                key = (t, prev is None, dt, dev)
                idx = groups.setdefault(key, [])
            idx.append(i)
        news: list = [None] * len(tensors)
        out: list = [None] * len(tensors)
        for (t, first, _, _), idx in groups.items():
            ps = [tensors[i] for i in idx]
            gs = [grads[i] for i in idx]
            moms = None if first else [states[i]["momentum"] for i in idx]
            try:
                new, m1, m2 = adam_update_many(
                    ps,
                    gs,
                    None if first else [m["moment_1"] for m in moms],
                    None if first else [m["moment_2"] for m in moms],
                    lr=lr,
                    beta_1=self.beta_1,
                    beta_2=self.beta_2,
                    epsilon=self.epsilon,
                    time=t,
                )
            except TensorCheckError:  # operands it refuses: one by one, which names the parameter
                sub = [states[i] for i in idx]
                raw = [raw_grads[i] for i in idx]
                try:
                    new, sts = SimpleOptimizer.step_many(self, lr, ps, raw, sub)
                except Exception as e:
                    if getattr(e, "burn_param_index", None) is not None:
                        e.burn_param_index = idx[e.burn_param_index]
                    raise
                for k, i in enumerate(idx):
                    news[i], out[i] = new[k], sts[k]
                continue
            for k, i in enumerate(idx):
                news[i] = new[k]
                out[i] = _state(t, m1[k], m2[k])
        return news, out


def _previous(state: dict | None) -> tuple[dict | None, int]:
    """(the momentum state before this step or None, this step's count)."""
    prev = state["momentum"] if state else None
    return prev, 1 if prev is None else int(prev["time"]) + 1


def _state(t: int, m1: Tensor, m2: Tensor) -> dict:
    """Adam's state after step `t` (no AMSGrad maximum)."""
    return {"momentum": {"time": t, "moment_1": m1, "moment_2": m2, "max_moment_2": None}}
