"""Gradient clipping by value or by norm (Burn's `burn::grad_clipping`)."""

from __future__ import annotations

from typing import Any

import numpy as np
from burn_nn import ConfigError
from burn_tensor import Tensor

from ._ranges import check

_VARIANTS = ("Value", "Norm")


class GradientClipping:
    """A clipping rule applied to each parameter's gradient before the optimizer update.

    `Value(t)` clamps every element to `[-t, t]`. `Norm(t)` rescales **each parameter tensor**
    separately so that its own L2 norm is at most `t`: `g * min(1, t / (||g||_2 + tiny))`, where
    `tiny` is the dtype's smallest positive normal. This follows Burn; PyTorch's
    `clip_grad_norm_` instead uses one global norm over all parameters.

    Example:
        >>> from burn_ndarray import NdArray
        >>> g = Tensor.from_data([3.0, -4.0], NdArray().device())
        >>> GradientClipping.Value(1.0).clip_gradient(g).tolist()
        [1.0, -1.0]
        >>> [round(v, 4) for v in GradientClipping.Norm(1.0).clip_gradient(g).tolist()]
        [0.6, -0.8]
    """

    __slots__ = ("threshold", "variant")

    def __init__(self, variant: str, threshold: float):
        if variant not in _VARIANTS:
            raise ValueError(
                f"{type(self).__name__}: variant must be one of {_VARIANTS}, got {variant!r}"
            )
        object.__setattr__(self, "variant", variant)
        # NaN or a threshold <= 0 would zero or NaN every gradient.
        object.__setattr__(
            self,
            "threshold",
            check(f"GradientClipping.{variant}", "threshold", threshold, 0.0, lo_open=True),
        )

    @classmethod
    def Value(cls, threshold: float):
        """Clamp each gradient element to `[-threshold, threshold]`."""
        return cls("Value", threshold)

    @classmethod
    def Norm(cls, max_norm: float):
        """Rescale each gradient tensor to an L2 norm of at most `max_norm`."""
        return cls("Norm", max_norm)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, GradientClipping) and (self.variant, self.threshold) == (
            other.variant,
            other.threshold,
        )

    def __hash__(self) -> int:
        return hash((self.variant, self.threshold))

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.variant}({self.threshold})"

    def __reduce__(self):
        return (type(self), (self.variant, self.threshold))

    # -- config plumbing (Burn serializes the enum as {"Value": 1.0}) ------------------------------
    def _to_json_value(self) -> Any:
        return {self.variant: self.threshold}

    @classmethod
    def _from_json_value(cls, value: Any, where: str = "grad_clipping"):
        if isinstance(value, dict) and len(value) == 1:
            ((variant, threshold),) = value.items()
            if variant in _VARIANTS and isinstance(threshold, int | float):
                return cls(variant, threshold)
        raise ConfigError(f'{where}: expected {{"Value": x}} or {{"Norm": x}}, got {value!r}')

    def init(self) -> GradientClipping:
        """The clipping itself (Burn's `GradientClippingConfig::init`): configs are values here."""
        return GradientClipping(self.variant, self.threshold)

    # -- the rule ----------------------------------------------------------------------------------
    def clip_gradient(self, grad: Tensor) -> Tensor:
        """The clipped gradient (same shape, device and dtype)."""
        t = self.threshold
        if self.variant == "Value":
            # mask_fill rather than clamp: NaN gradients stay NaN, as in Burn.
            return grad.mask_fill(grad.greater_elem(t), t).mask_fill(grad.lower_elem(-t), -t)
        # Stays on the device (no host sync): the coefficient is a one-element tensor.
        norm = grad.square().sum().sqrt()
        tiny = _min_positive(grad)
        coef = (t / (norm + tiny)).clamp_max(1.0)
        return grad * coef.reshape([1] * len(grad.dims()))


class GradientClippingConfig(GradientClipping):
    """Burn's `GradientClippingConfig` enum: `GradientClippingConfig.Value(x)` or `.Norm(x)`.

    Attach it to any optimizer config with `with_grad_clipping(...)`; `init()` gives the
    `GradientClipping` the optimizer applies (see there for the per-tensor norm rule).

    Example:
        >>> from burn_optim import AdamConfig
        >>> AdamConfig().with_grad_clipping(GradientClippingConfig.Norm(1.0)).grad_clipping
        GradientClippingConfig.Norm(1.0)
    """

    __slots__ = ()


def _min_positive(grad: Tensor) -> float:
    """The dtype's smallest positive normal; f32's when numpy has no finfo for it (as Burn)."""
    try:
        return float(np.finfo(grad.dtype.np).tiny)
    except (TypeError, ValueError):
        return float(np.finfo(np.float32).tiny)
