"""`MixedPrecision`: half-precision compute with f32 master parameters and optimizer state.

The policy has two parts, as torch's autocast + GradScaler:
- `burn_tensor.autocast(dtype)`: matmul / linear / conv run in bfloat16 or float16; reductions,
  softmax, norms and losses stay f32 (they get the f32 tensors the half ops hand back);
  parameters, gradients and optimizer state stay f32.
- for float16, a `burn_optim.DynamicLossScaler`: the loss is scaled before backward, the
  gradients unscaled before the optimizer step, and a step whose gradients overflow is skipped
  (the scale halves; it doubles after `growth_interval` good steps). bfloat16 has f32's exponent
  range and needs no scaling (default: none).

Lives in burn-optim (it needs only the tensor API and the optimizer step), re-exported by
burn_train. The Learner uses it through `LearnerBuilder.mixed_precision(MixedPrecision("bf16"))`;
a custom loop uses `autocast()`, `backward()` and `step()` (see examples/custom-training-loop).
"""

from __future__ import annotations

import logging
from contextlib import AbstractContextManager
from typing import Any

from burn_tensor import DType, autocast, half_dtype

from ._grads import GradientsParams
from ._loss_scale import DynamicLossScaler

# the Learner's logger: a skipped step lands in its experiment.log
log = logging.getLogger("burn_train")


class MixedPrecision:
    """A mixed-precision policy: half compute, f32 master weights, optional loss scaling.

    Args:
        dtype: "bf16" / "bfloat16" or "f16" / "float16".
        loss_scaler: a `DynamicLossScaler`, None (no scaling), or "auto" (default): a
            `DynamicLossScaler()` for float16, none for bfloat16.

    Example (a custom loop):
        >>> mp = MixedPrecision("f16")
        >>> # with mp.autocast():
        >>> #     loss = model.forward_classification(images, targets).loss
        >>> # grads = mp.backward(loss, model)           # scaled backward, f32 grads
        >>> # model = mp.step(optim, lr, model, grads)   # unscale; skipped on overflow
        >>> mp.dtype, mp.scale
        (DType.F16, 65536.0)
    """

    def __init__(self, dtype: Any = "bf16", loss_scaler: Any = "auto") -> None:
        self.dtype: DType = half_dtype(dtype)
        if isinstance(loss_scaler, str):
            if loss_scaler != "auto":
                raise ValueError(
                    f"MixedPrecision: loss_scaler must be a DynamicLossScaler, None or 'auto', "
                    f"got {loss_scaler!r}"
                )
            loss_scaler = DynamicLossScaler() if self.dtype is DType.F16 else None
        elif loss_scaler is not None and not isinstance(loss_scaler, DynamicLossScaler):
            raise TypeError(
                "MixedPrecision: loss_scaler must be a DynamicLossScaler, None or 'auto', got "
                f"{type(loss_scaler).__name__}"
            )
        self.scaler: DynamicLossScaler | None = loss_scaler
        self.last_step_skipped = False

    def __repr__(self) -> str:
        return f"MixedPrecision({self.dtype.value!r}, loss_scaler={self.scaler!r})"

    @property
    def scale(self) -> float | None:
        """The current loss scale (None without a scaler)."""
        return None if self.scaler is None else self.scaler.scale

    @property
    def skipped_steps(self) -> int:
        """Optimizer steps skipped because their gradients overflowed."""
        return 0 if self.scaler is None else self.scaler.skipped_steps

    def autocast(self) -> AbstractContextManager:
        """The forward (and, with a scaler, backward) context: matmul/linear/conv in half; a
        `loss.backward()` inside it backpropagates `loss * scale`."""
        return autocast(self.dtype, loss_scale=self.scale)

    def backward(self, loss: Any, module: Any) -> GradientsParams:
        """`loss.backward()` (scaled when there is a scaler) linked to `module`'s parameters.

        The gradients stay scaled until `step` (or `unscale`) divides them.
        """
        with self.autocast():
            grads = loss.backward()
        return GradientsParams.from_grads(grads, module)

    def unscale(self, grads: GradientsParams) -> tuple[GradientsParams, bool]:
        """`grads / scale` and whether they are finite (always True without a scaler)."""
        if self.scaler is None:
            return grads, True
        return self.scaler.unscale(grads)

    def step(self, optim: Any, lr: float, model: Any, grads: GradientsParams) -> Any:
        """Unscale `grads`, then `optim.step(lr, model, grads)`; on overflow skip the step
        (return `model` unchanged), lower the scale and log it."""
        grads, finite = self.unscale(grads)
        self.last_step_skipped = not finite
        if self.scaler is not None:
            old = self.scaler.scale
            self.scaler.update(found_inf=not finite)
            if not finite:
                log.warning(
                    "mixed precision: gradients overflowed at loss scale %g, step skipped "
                    "(%d skipped so far); scale -> %g",
                    old, self.scaler.skipped_steps, self.scaler.scale,
                )  # fmt: skip
                return model
        new_model = optim.step(lr, model, grads)
        return model if new_model is None else new_model
