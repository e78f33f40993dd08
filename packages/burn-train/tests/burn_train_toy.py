"""A tiny softmax-regression classifier written against the Tensor API, with hand-derived
gradients, a momentum SGD and a step LR scheduler, all following the protocols burn_train
expects from burn_nn modules, burn_optim optimizers and schedulers. Used until burn_nn /
burn_autodiff / burn_optim provide the real ones."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
from burn_dataset import DataLoaderBuilder, InMemDataset
from burn_ndarray import NdArray
from burn_record import ParamRecord, TensorData
from burn_tensor import Tensor
from burn_train import ClassificationOutput, TrainOutput

DEVICE = NdArray().device()
N_CLASSES, D_IN = 3, 4


def make_items(n: int, seed: int) -> list[tuple[np.ndarray, int]]:
    rng = np.random.default_rng(seed)
    centers = np.array([[2, 0, 0, 1], [0, 2, 0, -1], [0, 0, 2, 0]], dtype=np.float32)
    labels = rng.integers(0, N_CLASSES, n)
    xs = centers[labels] + rng.normal(0, 1.0, (n, D_IN)).astype(np.float32)
    return [(xs[i], int(labels[i])) for i in range(n)]


@dataclass
class Batch:
    inputs: Tensor  # [batch, d_in]
    targets: Tensor  # [batch] int


def batcher(items, device):
    x = np.stack([i[0] for i in items]).astype(np.float32)
    y = np.array([i[1] for i in items], dtype=np.int64)
    return Batch(Tensor.from_data(x, DEVICE), Tensor.from_data(y, DEVICE))


def loaders(n_train=96, n_valid=48, batch_size=16, shuffle=None):
    train = DataLoaderBuilder(batcher).batch_size(batch_size)
    if shuffle is not None:
        train = train.shuffle(shuffle)
    valid = DataLoaderBuilder(batcher).batch_size(batch_size)
    return (
        train.build(InMemDataset(make_items(n_train, 0))),
        valid.build(InMemDataset(make_items(n_valid, 1))),
    )


class ToyClassifier:
    """logits = x @ weight + bias; cross-entropy loss; gradients computed by hand."""

    def __init__(self, weight: Tensor, bias: Tensor, delay: float = 0.0):
        self.weight, self.bias, self.delay = weight, bias, delay
        self.valid_calls = 0

    @classmethod
    def init(cls, seed: int = 0, delay: float = 0.0) -> ToyClassifier:
        rng = np.random.default_rng(seed)
        w = rng.normal(0, 0.1, (D_IN, N_CLASSES)).astype(np.float32)
        return cls(Tensor.from_data(w, DEVICE), Tensor.zeros([1, N_CLASSES], DEVICE), delay)

    def forward(self, x: Tensor) -> Tensor:
        return x.matmul(self.weight) + self.bias

    def _classify(self, batch: Batch):
        logits = self.forward(batch.inputs)
        z = logits.numpy().astype(np.float64)
        p = np.exp(z - z.max(1, keepdims=True))
        p /= p.sum(1, keepdims=True)
        y = batch.targets.numpy()
        loss = float(-np.log(p[np.arange(len(y)), y]).mean())
        return logits, p, y, Tensor.from_data(np.array([loss], dtype=np.float32), DEVICE)

    def train_step(self, batch: Batch) -> TrainOutput:
        if self.delay:
            time.sleep(self.delay)
        logits, p, y, loss = self._classify(batch)
        d = p.copy()
        d[np.arange(len(y)), y] -= 1.0
        d /= len(y)
        x = batch.inputs.numpy().astype(np.float64)
        grads = {
            "weight": Tensor.from_data((x.T @ d).astype(np.float32), DEVICE),
            "bias": Tensor.from_data(d.sum(0, keepdims=True).astype(np.float32), DEVICE),
        }
        return TrainOutput(self, grads, ClassificationOutput(loss, logits, batch.targets))

    def valid_step(self, batch: Batch) -> ClassificationOutput:
        logits, _, _, loss = self._classify(batch)
        return ClassificationOutput(loss, logits, batch.targets)

    def valid(self) -> ToyClassifier:
        self.valid_calls += 1
        return self

    def into_record(self) -> dict:
        return {
            "weight": ParamRecord("w", self.weight.to_data()),
            "bias": ParamRecord("b", self.bias.to_data()),
        }

    def load_record(self, record: dict) -> ToyClassifier:
        as_tensor = lambda r: Tensor.from_data(r.value, DEVICE)  # noqa: E731
        return ToyClassifier(as_tensor(record["weight"]), as_tensor(record["bias"]), self.delay)

    def params(self) -> dict:
        return {"weight": self.weight.numpy(), "bias": self.bias.numpy()}


class MomentumSgd:
    """step(lr, module, grads) -> module; state: one velocity per parameter."""

    def __init__(self, momentum: float = 0.9):
        self.momentum = momentum
        self.velocity: dict[str, Tensor] = {}
        self.steps = 0

    def step(self, lr: float, module: ToyClassifier, grads: dict) -> ToyClassifier:
        self.steps += 1
        new = {}
        for name in ("weight", "bias"):
            v = (
                grads[name]
                if name not in self.velocity
                else self.velocity[name] * self.momentum + grads[name]
            )
            self.velocity[name] = v
            new[name] = getattr(module, name) - v * lr
        return ToyClassifier(new["weight"], new["bias"], module.delay)

    def to_record(self) -> dict:
        return {"velocity": {k: v.to_data() for k, v in self.velocity.items()}, "steps": self.steps}

    def load_record(self, record: dict) -> MomentumSgd:
        out = MomentumSgd(self.momentum)
        out.velocity = {k: Tensor.from_data(v, DEVICE) for k, v in record["velocity"].items()}
        out.steps = record["steps"]
        return out


class StepLr:
    """lr = initial * gamma ** (iteration // step_size); the iteration is its recorded state."""

    def __init__(self, initial: float, gamma: float = 0.5, step_size: int = 4):
        self.initial, self.gamma, self.step_size = initial, gamma, step_size
        self.iteration = 0

    def step(self) -> float:
        lr = self.initial * self.gamma ** (self.iteration // self.step_size)
        self.iteration += 1
        return lr

    def to_record(self) -> dict:
        return {"iteration": self.iteration}

    def load_record(self, record: dict) -> StepLr:
        self.iteration = record["iteration"]
        return self


def to_data(x) -> TensorData:
    return TensorData(x)
