"""What the Learner needs from the objects it is given, as `Protocol`s (structural: no base class
to inherit). `LearnerBuilder.build` checks them with `isinstance` and names what is missing.

- `TrainStep`: the model during training, `train_step(batch) -> TrainOutput`.
- `ValidStep`: the model during validation, `valid_step(batch) -> item for the metrics`.
- `Optimizer`: `step(lr, module, grads) -> module` plus its record (burn_optim's optimizers).
- `LrScheduler`: `step() -> float` plus its record (burn_optim's schedulers, `ConstantLr`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from burn_optim import GradientsParams

    from ._train_output import TrainOutput


@runtime_checkable
class TrainStep(Protocol):
    """A model that trains: one forward and backward pass on a batch."""

    def train_step(self, batch: Any) -> TrainOutput: ...


@runtime_checkable
class ValidStep(Protocol):
    """A model that validates: one forward pass, giving the item the metrics adapt."""

    def valid_step(self, batch: Any) -> Any: ...


@runtime_checkable
class Optimizer(Protocol):
    """Updates a module from its gradients; its state round-trips through a record."""

    def step(self, lr: float, module: Any, grads: GradientsParams) -> Any: ...

    def to_record(self) -> Any: ...

    def load_record(self, record: Any) -> Any: ...


@runtime_checkable
class LrScheduler(Protocol):
    """The learning rate of each iteration, called once before it."""

    def step(self) -> float: ...

    def to_record(self) -> Any: ...

    def load_record(self, record: Any) -> Any: ...
