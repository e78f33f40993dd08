"""The tutorial's manual training loop (Step 10, with Exercise 10's validation and early stop)
and saving with `CompactRecorder` (Step 11)."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from burn_dataset import DataLoaderBuilder
from burn_nn import CrossEntropyLossConfig, config
from burn_optim import AdamConfig, GradientsParams
from burn_record import CompactRecorder

from .data import XorBatcher, make_xor_dataset
from .inference import accuracy, predict
from .model import XorModel, XorModelConfig


@config
class TrainingConfig:
    """Hyper-parameters of the tutorial (lr 1e-3, 50 epochs, batch 32, shuffle seed 42).

    `seed` also seeds parameter initialization, so a run is reproducible. With
    `early_stopping`, training stops once the validation accuracy is 100 % and the epoch's mean
    training loss is below `target_loss` (a margin, so half-precision saving cannot flip a
    prediction).
    """

    model: XorModelConfig
    optimizer: AdamConfig
    learning_rate: float = 1.0e-3
    num_epochs: int = 50
    batch_size: int = 32
    repeats: int = 200
    seed: int = 42
    early_stopping: bool = True
    target_loss: float = 0.05


@dataclass
class TrainingResult:
    """The trained model (inner backend), its predictions on `XOR_INPUTS` and the history."""

    model: XorModel
    predictions: list[int]
    accuracy: float
    losses: list[float] = field(default_factory=list)
    accuracies: list[float] = field(default_factory=list)

    @property
    def epochs(self) -> int:
        return len(self.losses)


def train(
    artifact_dir: str | None, training_config: TrainingConfig, device, log=print
) -> TrainingResult:
    """Train on `device` (an autodiff device); save config.json and model.mpk.gz in artifact_dir.

    Args:
        artifact_dir: where to save (None: do not save).
        training_config: the hyper-parameters.
        device: e.g. `Autodiff(NdArray()).device()`.
        log: called with one line per logged epoch.
    """
    device.seed(training_config.seed)
    model = training_config.model.init(device)
    optim = training_config.optimizer.init()
    dataloader = (
        DataLoaderBuilder(XorBatcher(device))
        .batch_size(training_config.batch_size)
        .shuffle(training_config.seed)
        .build(make_xor_dataset(training_config.repeats))
    )
    loss_fn = CrossEntropyLossConfig().init(device)
    result = TrainingResult(model.valid(), [], 0.0)

    for epoch in range(1, training_config.num_epochs + 1):
        epoch_loss, n_batches = 0.0, 0
        for batch in dataloader:
            logits = model.forward(batch.inputs)
            loss = loss_fn.forward(logits, batch.targets)
            # Backward + optimize: no zero_grad, the optimizer returns the updated model.
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(training_config.learning_rate, model, grads)
            epoch_loss += float(loss.into_scalar())
            n_batches += 1
        epoch_loss /= n_batches

        # Validation on the inner backend (no autodiff): the four XOR inputs.
        model_valid = model.valid()
        predictions = predict(model_valid, device.inner())
        acc = accuracy(predictions)
        result = TrainingResult(
            model_valid, predictions, acc, result.losses + [epoch_loss], result.accuracies + [acc]
        )
        if epoch % 10 == 0 or epoch == 1 or epoch == training_config.num_epochs:
            log(f"Epoch {epoch:>3} | Loss: {epoch_loss:.4f} | Accuracy: {acc:.1f} %")
        if (
            training_config.early_stopping
            and acc == 100.0
            and epoch_loss < training_config.target_loss
        ):
            log(f"Epoch {epoch:>3} | Loss: {epoch_loss:.4f} | Accuracy: {acc:.1f} % (early stop)")
            break

    if artifact_dir is not None:
        Path(artifact_dir).mkdir(parents=True, exist_ok=True)
        training_config.save(f"{artifact_dir}/config.json")
        result.model.save_file(f"{artifact_dir}/model", CompactRecorder())
    return result
