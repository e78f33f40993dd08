"""Train the guide model briefly (or load a trained one), quantize its weights, compare.

Quantization is post-training and weight-only (`model.quantize_weights(Quantizer(...))`):
Linear and Conv2d keep their weights quantized and compute with float activations.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time

import numpy as np
from burn_dataset import DataLoaderBuilder
from burn_nn import CrossEntropyLossConfig, Quantizer
from burn_optim import AdamConfig, GradientsParams
from burn_record import NamedMpkFileRecorder
from burn_tensor.quantization import Calibration, QuantLevel, QuantScheme, QuantValue
from guide.data import MnistBatcher
from guide.model import ModelConfig

SCHEMES = {
    "int8": QuantScheme(value=QuantValue.Q8S),
    "int4-block32": QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32)),
}


@dataclasses.dataclass
class Report:
    """One row of the comparison."""

    name: str
    accuracy: float  # percent on the test split
    record_bytes: int
    ms_per_batch: float  # CPU inference of one batch of 64
    skipped: int = 0  # params the scheme could not hold (kept float)

    def row(self) -> str:
        return (
            f"{self.name:<13} accuracy {self.accuracy:6.2f} %   record {self.record_bytes / 1024:8.1f} KiB"
            f"   {self.ms_per_batch:7.2f} ms / batch of 64   ({self.skipped} params kept float)"
        )


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


def _record_bytes(model) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        path = model.save_file(os.path.join(tmp, "model"), NamedMpkFileRecorder())
        return os.path.getsize(path)


def _ms_per_batch(model, device, test_set, reps: int = 5) -> float:
    items = [test_set.get(i) for i in range(min(64, len(test_set)))]
    batch = MnistBatcher().batch(items, device)
    model.forward(batch.images).numpy()  # warm-up: kernels built, caches hot
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        model.forward(batch.images).numpy()
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e3)


def quantize_and_compare(
    model, device, test_set, schemes=None, reps: int = 5, dynamic_device=None
) -> list[Report]:
    """f32 first, then one row per scheme (post-training, weight-only, MinMax calibration).
    `dynamic_device` (an `NdArray(quantize_activations=True)` device): one more row per 8-bit
    per-tensor scheme, its model moved there (int8 activations quantized on the fly)."""
    rows = [
        Report("float32", evaluate(model, device, test_set), _record_bytes(model),
               _ms_per_batch(model, device, test_set, reps))
    ]  # fmt: skip
    for name, scheme in (schemes or SCHEMES).items():
        quantizer = Quantizer(calibration=Calibration.MinMax, scheme=scheme)
        q = model.quantize_weights(quantizer)
        rows.append(
            Report(name, evaluate(q, device, test_set), _record_bytes(q),
                   _ms_per_batch(q, device, test_set, reps), len(quantizer.skipped))
        )  # fmt: skip
        if dynamic_device is not None and scheme.value.bits == 8 and not scheme.level.is_block():
            qd = model.to_device(dynamic_device).quantize_weights(
                Quantizer(calibration=Calibration.MinMax, scheme=scheme)
            )
            rows.append(
                Report(f"{name}+act8", evaluate(qd, dynamic_device, test_set), _record_bytes(qd),
                       _ms_per_batch(qd, dynamic_device, test_set, reps), len(quantizer.skipped))
            )  # fmt: skip
    return rows
