"""The book's custom training loop: no Learner, metrics printed to stdout."""

from __future__ import annotations

from dataclasses import dataclass

from burn_dataset import DataLoaderBuilder
from burn_nn import CrossEntropyLoss, CrossEntropyLossConfig, config
from burn_optim import AdamConfig, GradientsParams, MixedPrecision
from burn_tensor import Tensor

from .data import DigitsBatcher
from .model import Model, ModelConfig


@config
class TrainingConfig:
    """The book's `MnistTrainingConfig` (10 epochs, batch 64, seed 42); lr 1e-3 suits the MLP."""

    model: ModelConfig
    optimizer: AdamConfig
    num_epochs: int = 10
    batch_size: int = 64
    num_workers: int = 0
    seed: int = 42
    lr: float = 1.0e-3


@dataclass(frozen=True)
class EpochMetrics:
    """Epoch means (weighted by batch size) of one split: loss, accuracy in percent."""

    epoch: int
    split: str  # "Train" or "Valid"
    loss: float
    accuracy: float

    def __str__(self) -> str:
        return f"[{self.split} - Epoch {self.epoch}] Loss {self.loss:.3f} | Accuracy {self.accuracy:.3f} %"


def accuracy(output: Tensor, targets: Tensor) -> float:
    """Percentage of rows of `output` `[batch, classes]` whose argmax equals `targets` `[batch]`."""
    predictions = output.argmax(1).flatten(0, 1)
    num_correct = predictions.equal(targets).int().sum().into_scalar()
    return 100.0 * num_correct / targets.dims()[0]


class _Mean:
    """Running mean of (loss, accuracy) weighted by batch size."""

    def __init__(self) -> None:
        self.loss = self.acc = 0.0
        self.n = 0

    def add(self, loss: float, acc: float, n: int) -> None:
        self.loss, self.acc, self.n = self.loss + loss * n, self.acc + acc * n, self.n + n

    def result(self, epoch: int, split: str) -> EpochMetrics:
        return EpochMetrics(epoch, split, self.loss / self.n, self.acc / self.n)


def _step(model: Model, loss_fn: CrossEntropyLoss, batch) -> tuple[Tensor, float]:
    output = model.forward(batch.images)
    loss = loss_fn.forward(output, batch.targets)
    return loss, accuracy(output, batch.targets)


def train_step(model: Model, optim, loss_fn: CrossEntropyLoss, batch, lr: float):
    """One whole training step -> `(model, loss, output)`: forward, backward, Adam update. A
    function of its arguments, so `burn.capture(train_step)` can record and replay it."""
    output = model.forward(batch.images)
    loss = loss_fn.forward(output, batch.targets)
    grads = GradientsParams.from_grads(loss.backward(), model)
    return optim.step(lr, model, grads), loss, output


def _captured(fn):
    try:
        from burn_fusion import capture
    except ImportError as exc:
        raise SystemExit(
            "--capture needs burn-fusion (pip install 'burn-py[fusion]') and a fusion backend "
            "(--backend fusion-opencl or fusion-cuda)"
        ) from exc
    return capture(fn)


def run(
    config: TrainingConfig,
    device,
    train_set,
    valid_set,
    log=print,
    log_every: int = 0,
    precision: MixedPrecision | None = None,
    capture: bool = False,
) -> tuple[Model, list[EpochMetrics]]:
    """Train with the book's loop on `device` (an autodiff device).

    Args:
        log: called with each printed line.
        log_every: also log every N training iterations (0: epoch summaries only).
        precision: train mixed-precision (`MixedPrecision("bf16")` or `("f16")`): the forward
            under `precision.autocast()`, `precision.backward` (scaled for f16) and
            `precision.step` (skips a step whose gradients overflow); the parameters and Adam's
            state stay float32.
        capture: run each step as `burn.capture(train_step)` (a Fusion backend: recorded on
            its first calls, then replayed without its per-op Python).

    Returns:
        The trained model (on `device`) and the per-epoch train and valid metrics.
    """
    device.seed(config.seed)
    # Create the model and optimizer.
    model = config.model.init(device)
    optim = config.optimizer.init()
    # Create the dataloaders: validation batches live on the inner backend (no autodiff).
    dataloader_train = (
        DataLoaderBuilder(DigitsBatcher())
        .batch_size(config.batch_size)
        .shuffle(config.seed)
        .num_workers(config.num_workers)
        .set_device(device)
        .build(train_set)
    )
    dataloader_valid = (
        DataLoaderBuilder(DigitsBatcher())
        .batch_size(config.batch_size)
        .num_workers(config.num_workers)
        .set_device(device.inner())
        .build(valid_set)
    )
    loss_fn = CrossEntropyLossConfig().init(device)
    history: list[EpochMetrics] = []

    step = _captured(train_step) if capture else None
    for epoch in range(1, config.num_epochs + 1):
        train_mean = _Mean()
        for iteration, batch in enumerate(dataloader_train):
            if step is not None:  # the whole step replayed; the metrics read outside it
                model, loss, output = step(model, optim, loss_fn, batch, config.lr)
                acc = accuracy(output, batch.targets)
                train_mean.add(float(loss.into_scalar()), acc, batch.targets.dims()[0])
                continue
            if precision is None:
                loss, acc = _step(model, loss_fn, batch)
            else:  # matmuls in half inside the context; the loss comes out float32
                with precision.autocast():
                    loss, acc = _step(model, loss_fn, batch)
            train_mean.add(float(loss.into_scalar()), acc, batch.targets.dims()[0])
            if log_every and iteration % log_every == 0:
                log(
                    f"[Train - Epoch {epoch} - Iteration {iteration}] "
                    f"Loss {float(loss.into_scalar()):.3f} | Accuracy {acc:.3f} %"
                )
            if precision is not None:
                # Scaled backward (f16), unscaled f32 gradients, the step skipped on overflow.
                grads = precision.backward(loss, model)
                model = precision.step(optim, config.lr, model, grads)
                continue
            # Gradients for the current backward pass, linked to each parameter of the model.
            grads = GradientsParams.from_grads(loss.backward(), model)
            # Update the model using the optimizer (no zero_grad: the grads are consumed).
            model = optim.step(config.lr, model, grads)

        # Get the model without autodiff (Dropout off) and run the validation loop.
        model_valid = model.valid()
        valid_mean = _Mean()
        for batch in dataloader_valid:
            loss, acc = _step(model_valid, loss_fn, batch)
            valid_mean.add(float(loss.into_scalar()), acc, batch.targets.dims()[0])

        for metrics in (train_mean.result(epoch, "Train"), valid_mean.result(epoch, "Valid")):
            history.append(metrics)
            log(str(metrics))
        if precision is not None and precision.scaler is not None:
            log(f"[Mixed precision - Epoch {epoch}] loss scale {precision.scale:g} | "
                f"skipped steps {precision.skipped_steps}")  # fmt: skip
    if step is not None:
        log(f"[Capture] {step.stats()}")
    return model, history
