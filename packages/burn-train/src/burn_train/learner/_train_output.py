"""`TrainOutput` and the duck-typed bridge to burn_optim (gradients, accumulation, schedulers)."""

from __future__ import annotations

import math
from typing import Any


def _optim_attr(name: str) -> Any:
    """`burn_optim.<name>` when burn_optim provides it, else None (it is optional here)."""
    try:
        import burn_optim
    except ImportError:
        return None
    return getattr(burn_optim, name, None)


def to_gradients_params(grads: Any, module: Any) -> Any:
    """`GradientsParams.from_grads(grads, module)` when burn_optim has it, `grads` is raw autodiff
    gradients and `module` a burn_nn Module; per-parameter dicts and custom types pass as is."""
    gp = _optim_attr("GradientsParams")
    if gp is None or grads is None or isinstance(grads, (gp, dict)):
        return grads
    if not callable(getattr(module, "visit", None)):  # not a Module: nothing to map grads onto
        return grads
    return gp.from_grads(grads, module)


class TrainOutput:
    """What `model.train_step(batch)` returns: the gradients and the item for the metrics.

    Args:
        module: the model (used to map autodiff gradients to its parameters).
        grads: `loss.backward()` (converted with `GradientsParams.from_grads` when available)
            or per-parameter gradients already.
        item: the output given to the metrics (e.g. `ClassificationOutput`).

    Example:
        >>> out = TrainOutput(None, {"w": 1.0}, "item")
        >>> out.grads, out.item
        ({'w': 1.0}, 'item')
    """

    def __init__(self, module: Any, grads: Any, item: Any) -> None:
        self.grads = to_gradients_params(grads, module)
        self.item = item

    @classmethod
    def new(cls, module: Any, grads: Any, item: Any) -> TrainOutput:
        return cls(module, grads, item)


class GradientsAccumulator:
    """Sums gradients over several steps (used when `grads_accumulation(n)` > 1).

    Delegates to `burn_optim.GradientsAccumulator` for `GradientsParams`; otherwise sums
    mapping-like gradients key by key (values support `+`) or objects with `__add__`.

    Example:
        >>> acc = GradientsAccumulator()
        >>> acc.accumulate(None, {"w": 1.0}); acc.accumulate(None, {"w": 2.0, "b": 1.0})
        >>> acc.grads()
        {'w': 3.0, 'b': 1.0}
    """

    def __init__(self) -> None:
        self._impl: Any = None
        self._sum: Any = None

    def accumulate(self, module: Any, grads: Any) -> None:
        gp = _optim_attr("GradientsParams")
        if self._impl is None and self._sum is None and gp is not None and isinstance(grads, gp):
            self._impl = _optim_attr("GradientsAccumulator")()
        if self._impl is not None:
            self._impl.accumulate(module, grads)
        elif self._sum is None:
            self._sum = dict(grads) if isinstance(grads, dict) else grads
        elif isinstance(grads, dict):
            for key, value in grads.items():
                self._sum[key] = self._sum[key] + value if key in self._sum else value
        else:
            self._sum = self._sum + grads

    def grads(self) -> Any:
        """The sum so far; the accumulator is empty afterwards."""
        if self._impl is not None:
            return self._impl.grads()
        out, self._sum = self._sum, None
        return out


class ConstantLr:
    """The scheduler used when `build` gets a float: always the same learning rate.

    Example:
        >>> s = ConstantLr(0.1)
        >>> s.step(), s.to_record()
        (0.1, None)
    """

    def __init__(self, lr: float) -> None:
        self.lr = _learning_rate(lr)

    def step(self) -> float:
        return self.lr

    def to_record(self) -> Any:
        return None

    def load_record(self, record: Any) -> ConstantLr:
        return self


def _learning_rate(lr: Any) -> float:
    v = float(lr)
    if not math.isfinite(v) or v < 0:
        # NaN trains a model of NaNs without a word; negative ascends the loss.
        raise ValueError(f"build(): the learning rate must be a finite number >= 0, got {v}")
    return v


def as_scheduler(lr_or_scheduler: Any) -> Any:
    """A float becomes a `ConstantLr`; anything else must be a scheduler with `step()`."""
    if isinstance(lr_or_scheduler, int | float):
        return ConstantLr(float(lr_or_scheduler))
    if not callable(getattr(lr_or_scheduler, "step", None)):
        raise TypeError(
            f"build() needs a learning rate (float) or an LR scheduler with step() -> float, "
            f"got {type(lr_or_scheduler).__name__}"
        )
    return lr_or_scheduler
