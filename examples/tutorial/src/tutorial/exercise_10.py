"""Exercise 10 (Step 10, the manual training loop): the tutorial's XOR loop extended with a
validation step after each epoch (`model.valid()` on the four XOR inputs, accuracy in %), early
stopping at 100 % validation accuracy, and the hidden-size experiment (4, 16, 64).

As in the tutorial: an MLP `XorModel` (fc1, fc2, fc3, ReLU), the truth table repeated 200 times
in an `InMemDataset`, batch size 32 shuffled with seed 42, Adam with lr 1e-3, up to 50 epochs.
`model.valid()` gives the same model on the inner backend (NdArray), without autodiff.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from burn_autodiff import Autodiff
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_nn.loss import CrossEntropyLossConfig
from burn_optim import AdamConfig, GradientsParams
from burn_tensor import Tensor
from xor.model import XorModel, XorModelConfig  # the capstone's model (examples/xor)

from .exercise_08 import XorBatcher, XorSample

XOR_INPUTS: list[list[float]] = [[0.0, 0.0], [0.0, 1.0], [1.0, 0.0], [1.0, 1.0]]
XOR_LABELS: list[int] = [0, 1, 1, 0]
HIDDEN_SIZES: tuple[int, ...] = (4, 16, 64)


def make_xor_dataset(repeats: int = 200) -> InMemDataset:
    """The four XOR patterns repeated `repeats` times, in order (the loader shuffles)."""
    table = [XorSample((x1, x2), int(x1) ^ int(x2)) for x1, x2 in XOR_INPUTS]
    return InMemDataset([sample for _ in range(repeats) for sample in table])


def predict(model: XorModel, device) -> list[int]:
    """Predicted classes (`argmax(1)`) of the four XOR inputs."""
    inputs = Tensor.from_data(XOR_INPUTS, device)
    return model.forward(inputs).argmax(1).flatten(0, 1).tolist()


def accuracy(predictions: list[int]) -> float:
    """Percentage of predictions equal to `XOR_LABELS`."""
    return 100.0 * sum(p == y for p, y in zip(predictions, XOR_LABELS)) / len(XOR_LABELS)


@dataclass
class TrainResult:
    model: XorModel  # model.valid(): on the inner backend
    predictions: list[int]
    losses: list[float] = field(default_factory=list)  # mean training loss per epoch
    accuracies: list[float] = field(default_factory=list)  # validation accuracy per epoch
    stopped_early: bool = False

    @property
    def epochs(self) -> int:
        return len(self.losses)


def train(
    hidden: int = 16,
    num_epochs: int = 50,
    lr: float = 1e-3,
    batch_size: int = 32,
    seed: int = 42,
    target_loss: float | None = None,
    device=None,
    log=print,
) -> TrainResult:
    """The tutorial's loop with validation and early stopping.

    Stops after the first epoch whose validation accuracy is 100 % (and, when `target_loss` is
    given, whose mean training loss is below it: Exercise 11 trains "until it converges").
    `seed` seeds parameter initialization and the shuffle.
    """
    device = device if device is not None else Autodiff(NdArray()).device()
    device.seed(seed)
    model = XorModelConfig(hidden=hidden).init(device)
    optim = AdamConfig().init()
    dataloader = (
        DataLoaderBuilder(XorBatcher(device))
        .batch_size(batch_size)
        .shuffle(seed)
        .build(make_xor_dataset())
    )
    loss_fn = CrossEntropyLossConfig().init(device)
    result = TrainResult(model.valid(), [])

    for epoch in range(1, num_epochs + 1):
        epoch_loss, n_batches = 0.0, 0
        for batch in dataloader.iter():
            logits = model.forward(batch.inputs)
            loss = loss_fn.forward(logits, batch.targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(lr, model, grads)
            epoch_loss += float(loss.into_scalar())
            n_batches += 1
        epoch_loss /= n_batches

        # Validation: drop autodiff, run the four XOR inputs on the inner backend.
        model_valid = model.valid()
        result.model = model_valid
        result.predictions = predict(model_valid, device.inner())
        acc = accuracy(result.predictions)
        result.losses.append(epoch_loss)
        result.accuracies.append(acc)
        converged = acc == 100.0 and (target_loss is None or epoch_loss < target_loss)
        if epoch % 10 == 0 or epoch == 1 or converged:
            log(f"Epoch {epoch:>3} | Loss: {epoch_loss:.4f} | Val accuracy: {acc:.1f} %")
        if converged:
            why = "" if target_loss is None else f" and loss < {target_loss}"
            log(f"Early stop at epoch {epoch}: validation accuracy 100 %{why}")
            result.stopped_early = True
            break

    log(f"Predictions (should be 0, 1, 1, 0): {result.predictions}")
    return result


def run(hidden_sizes: tuple[int, ...] = HIDDEN_SIZES, device=None) -> dict[int, TrainResult]:
    """Train once per hidden size and print the log and a summary; return `{hidden: result}`."""
    results: dict[int, TrainResult] = {}
    for hidden in hidden_sizes:
        print(f"--- hidden size {hidden} ---")
        results[hidden] = train(hidden=hidden, device=device)
    print("Summary (hidden size: epochs run, final validation accuracy):")
    for hidden, result in results.items():
        status = "reached 100 %" if result.stopped_early else "did not reach 100 %"
        print(
            f"  hidden {hidden:>2}: {result.epochs:>2} epochs, "
            f"{result.accuracies[-1]:.1f} % ({status})"
        )
    return results


if __name__ == "__main__":
    run()
