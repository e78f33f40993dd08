"""`TrainOutput`: what `train_step` returns, the gradients keyed by parameter and the item."""

from __future__ import annotations

from typing import Any

from burn_optim import GradientsParams


class TrainOutput:
    """What `model.train_step(batch)` returns: the gradients and the item for the metrics.

    Args:
        module: the model whose parameters the gradients belong to.
        grads: `loss.backward()` (linked to `module`'s parameters with
            `GradientsParams.from_grads`) or a `GradientsParams` already.
        item: the output given to the metrics (e.g. `ClassificationOutput`).

    Example:
        >>> from burn_optim import GradientsParams
        >>> out = TrainOutput(None, GradientsParams(), "item")
        >>> len(out.grads), out.item
        (0, 'item')
    """

    def __init__(self, module: Any, grads: Any, item: Any) -> None:
        if not isinstance(grads, GradientsParams):
            grads = GradientsParams.from_grads(grads, module)
        self.grads = grads
        self.item = item

    @classmethod
    def new(cls, module: Any, grads: Any, item: Any) -> TrainOutput:
        return cls(module, grads, item)
