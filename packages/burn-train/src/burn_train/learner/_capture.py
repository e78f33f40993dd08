"""`CapturedSingleDevice`: the single-device strategy with the whole step -- `train_step`, the
optimizer update -- run as one `burn_fusion.capture`d step (`LearnerBuilder.capture()`).

The captured function is `(model, optim, batch, lr) -> (model, item)`: the optimizer is an
argument, so its state is carried from replay to replay, and the learning rate reaches Adam's
update as an input (a scheduler's new rate each step replays; an optimizer that bakes it into
its kernels records again, then runs eagerly, as `burn_fusion.capture` says). The metric item's
tensors are fresh each step, so the deferred read-back (`read_every`) reads each step's own
values. A non-finite loss is found after the update of its step (the update is inside the
captured step), so the model that error reports includes that update.
"""

from __future__ import annotations

from typing import Any

from ._steptimes import lap
from ._strategy import LossCheck, SingleDevice, optim_step


def _capture():
    try:
        from burn_fusion import capture
    except ImportError as exc:
        raise ImportError(
            "LearnerBuilder.capture() needs burn-fusion: pip install 'burn-train[capture]' "
            "(or 'burn-py[fusion]') and train on Autodiff(Fusion(...))"
        ) from exc
    return capture


def _train(model: Any, optim: Any, batch: Any, lr: float) -> tuple[Any, Any]:
    output = model.train_step(batch)
    return optim_step(optim, lr, model, output.grads), output.item


class CapturedSingleDevice(SingleDevice):
    """`SingleDevice` whose steps replay a recording (see the module docstring)."""

    def __init__(self, model: Any, optim: Any):
        super().__init__(model, optim, None)
        self.captured = _capture()(_train, name=f"{type(model).__name__}.train_step")

    def step(self, lr: float, batch: Any, check: LossCheck | None) -> list[Any]:
        self.model, item = self.captured(self.model, self.optim, batch, lr)
        lap(self.times, "forward")  # one replay: forward, backward and update are not split
        if check is not None:
            check(item)
            lap(self.times, "loss_check")
        return [item]
