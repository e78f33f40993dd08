"""The Burn Book guide's model (two convs, two linears) on the bundled digits."""

from __future__ import annotations

from burn_dataset import DataLoaderBuilder
from burn_nn import CrossEntropyLossConfig
from burn_optim import AdamConfig, GradientsParams
from guide.data import MnistBatcher
from guide.model import ModelConfig

from .run import Task, compare


def train_quick(device, train_set, epochs: int, batch_size: int = 32, lr: float = 2e-3, seed: int = 42):
    """A few epochs of the guide model on an autodiff `device`; returns the inner-backend model."""
    device.seed(seed)
    model = ModelConfig(10, 512).init(device)
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)
    loader = DataLoaderBuilder(MnistBatcher()).batch_size(batch_size).shuffle(seed).set_device(device).build(train_set)
    for _ in range(epochs):
        for batch in loader:
            loss = loss_fn.forward(model.forward(batch.images), batch.targets)
            grads = GradientsParams.from_grads(loss.backward(), model)
            model = optim.step(lr, model, grads)
    return model.valid()


def evaluate(model, device, test_set, batch_size: int = 64) -> float:
    """Test accuracy in percent."""
    loader = DataLoaderBuilder(MnistBatcher()).batch_size(batch_size).set_device(device).build(test_set)
    correct = total = 0
    for batch in loader:
        pred = model.forward(batch.images).argmax(1).flatten(0, 1)
        correct += int(pred.equal(batch.targets).int().sum().into_scalar())
        total += batch.targets.dims()[0]
    return 100.0 * correct / total


def guide_task(device, test_set, batch_size: int = 64) -> Task:
    """Accuracy on `test_set`; the timed batch is its first `batch_size` images."""
    items = [test_set.get(i) for i in range(min(batch_size, len(test_set)))]
    images = MnistBatcher().batch(items, device).images
    return Task("guide", lambda m: evaluate(m, device, test_set),
                lambda m: m.forward(images).numpy(), len(items),
                lambda d: guide_task(d, test_set, batch_size))  # fmt: skip


def quantize_and_compare(model, device, test_set, schemes=None, reps: int = 5, dynamic_device=None,
                         gpu_device=None):  # fmt: skip
    """The guide's rows: float32, then one per scheme (and `+act8` rows on `dynamic_device`, GPU
    times on `gpu_device`)."""
    return compare(model, guide_task(device, test_set), schemes, reps, dynamic_device, gpu_device)
