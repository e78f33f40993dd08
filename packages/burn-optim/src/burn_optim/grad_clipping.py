"""Gradient clipping (Burn's `burn::grad_clipping`): `GradientClippingConfig.Value(x)` / `.Norm(x)`.

Example:
    >>> from burn_optim.grad_clipping import GradientClippingConfig
    >>> GradientClippingConfig.Value(0.5).init()
    GradientClipping.Value(0.5)
"""

from ._clipping import GradientClipping, GradientClippingConfig

__all__ = ["GradientClipping", "GradientClippingConfig"]
