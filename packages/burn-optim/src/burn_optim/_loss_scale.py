"""`DynamicLossScaler`: float16 loss scaling with overflow skips, as torch's GradScaler.

float16 has 5 exponent bits: gradients below ~6e-8 flush to zero. The loss is multiplied by
`scale` before backward (see `burn_tensor.autocast(loss_scale=...)`), the gradients are divided
by it before the optimizer step; a step whose gradients hold an inf or NaN is skipped and the
scale multiplied by `backoff_factor`; after `growth_interval` good steps in a row the scale is
multiplied by `growth_factor`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from burn_tensor import Tensor

from ._grads import GradientsParams


@dataclass
class DynamicLossScaler:
    """Dynamic loss scale (torch GradScaler's defaults).

    Args:
        init_scale: the first scale.
        growth_factor: multiplies the scale after `growth_interval` good steps (> 1).
        backoff_factor: multiplies the scale after an overflow (in (0, 1)).
        growth_interval: good steps in a row before the scale grows (>= 1).

    Example:
        >>> s = DynamicLossScaler(init_scale=8.0, growth_interval=2)
        >>> s.update(found_inf=True); s.scale, s.skipped_steps
        (4.0, 1)
        >>> s.update(False); s.update(False); s.scale
        8.0
    """

    init_scale: float = 2.0**16
    growth_factor: float = 2.0
    backoff_factor: float = 0.5
    growth_interval: int = 2000

    def __post_init__(self) -> None:
        problems = []
        if not (math.isfinite(self.init_scale) and self.init_scale > 0):
            problems.append(f"init_scale must be finite and > 0, got {self.init_scale!r}")
        if not self.growth_factor > 1:
            problems.append(f"growth_factor must be > 1, got {self.growth_factor!r}")
        if not 0 < self.backoff_factor < 1:
            problems.append(f"backoff_factor must be in (0, 1), got {self.backoff_factor!r}")
        if int(self.growth_interval) != self.growth_interval or self.growth_interval < 1:
            problems.append(f"growth_interval must be an integer >= 1, got {self.growth_interval!r}")
        if problems:
            raise ValueError("DynamicLossScaler: " + "; ".join(problems))
        self.scale = float(self.init_scale)
        self.good_steps = 0  # good steps in a row since the last change of scale
        self.skipped_steps = 0  # steps skipped for an overflow, over the scaler's life

    def unscale(self, grads: GradientsParams) -> tuple[GradientsParams, bool]:
        """`grads / scale` and whether every value is finite (one read from the device).

        Per gradient: the division and a probe `sum(0 * g)` (0 for finite values, NaN as soon
        as one is inf or NaN, never an overflow of a large finite sum); the probes are gathered
        into one vector and summed once, where adding them pairwise cost a launch and an op per
        parameter (~100 per step of issue 34's transformer).

        Returns:
            (the unscaled gradients, True when none holds an inf or NaN).
        """
        out = GradientsParams()
        probes = []
        inv = 1.0 / self.scale
        for pid, g in grads.items():
            g = g.mul_scalar(inv)
            out.register(pid, g)
            z = g.mul_scalar(0.0).sum().cast("float32")
            probes.append(z if not probes else z.to_device(probes[0].device()))
        if not probes:
            return out, True
        total = probes[0] if len(probes) == 1 else Tensor.cat(probes, 0).sum()
        return out, math.isfinite(float(total.into_scalar()))

    def update(self, found_inf: bool) -> None:
        """After a step: lower the scale on overflow (the step was skipped), else count it."""
        if found_inf:
            self.scale *= self.backoff_factor
            self.good_steps = 0
            self.skipped_steps += 1
            return
        self.good_steps += 1
        if self.good_steps >= self.growth_interval:
            self.scale *= self.growth_factor
            self.good_steps = 0

    def state_dict(self) -> dict[str, Any]:
        """The scaler's state (scale, counters), for checkpoints."""
        return {
            "scale": self.scale,
            "good_steps": self.good_steps,
            "skipped_steps": self.skipped_steps,
        }

    def load_state_dict(self, state: dict[str, Any]) -> None:
        self.scale = float(state["scale"])
        self.good_steps = int(state["good_steps"])
        self.skipped_steps = int(state["skipped_steps"])
