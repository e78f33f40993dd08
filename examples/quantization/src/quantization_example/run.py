"""Quantize a trained model's weights and compare it with the float model.

Quantization is post-training and weight-only (`model.quantize_weights(Quantizer(...))`):
Linear (so also attention projections and feed-forward layers), Conv2d and Embedding keep
their weights quantized and compute with float activations. Each model brings a `Task`: how to
measure its accuracy and one CPU batch to time. Given a `dynamic_device` (one of
`NdArray(quantize_activations=True)`), each 8-bit per-tensor model is also moved there
(`to_device` keeps it quantized) and run with int8 activations: the `+act8` rows.
"""

from __future__ import annotations

import dataclasses
import os
import tempfile
import time
from collections.abc import Callable

import numpy as np
from burn_nn import Quantizer
from burn_record import NamedMpkFileRecorder
from burn_tensor.quantization import Calibration, QuantLevel, QuantParam, QuantScheme, QuantValue

#: int4: blocks of 64 with f16 scales (4.25 bits a weight; GGUF's Q4_0 is blocks of 32 with f16
#: scales, 4.5 bits). 64 divides the last dim of every weight matrix of both models (512 in the
#: guide's hidden layer, 64 / 128 in the transformer), so nearly all weights quantize; f32
#: scales per 32 weights (1 bit a weight) left the guide's record just 6.00x smaller and the
#: transformer's, whose 26 quantized tensors each carry ~100 bytes of framing, under 6x.
SCHEMES = {
    "int8": QuantScheme(value=QuantValue.Q8S),
    "int4-block64": QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(64), param=QuantParam.F16),
}


@dataclasses.dataclass
class Task:
    """What the comparison needs of a model: its accuracy (percent) and one timed batch."""

    name: str
    accuracy: Callable  # model -> percent on the test split
    forward_batch: Callable  # model -> runs one CPU batch, returns a host array
    batch_size: int
    on: Callable | None = None  # device -> the same task with its inputs on that device


@dataclasses.dataclass
class Report:
    """One row of the comparison."""

    model: str
    name: str
    accuracy: float  # percent on the test split
    record_bytes: int  # NamedMpk file
    ms_per_batch: float  # CPU inference of one batch
    batch_size: int
    skipped: int = 0  # params the Quantizer kept float
    kept_float: dict = dataclasses.field(default_factory=dict)  # their paths -> why
    gpu_ms: float | None = None  # the same batch on the `gpu_device` given to `compare`

    def row(self) -> str:
        gpu = "" if self.gpu_ms is None else f"   GPU {self.gpu_ms:6.3f} ms"
        return (
            f"{self.model:<12} {self.name:<13} accuracy {self.accuracy:6.2f} %   record "
            f"{self.record_bytes / 1024:8.1f} KiB   {self.ms_per_batch:7.2f} ms / batch of "
            f"{self.batch_size}{gpu}   ({self.skipped} params kept float)"
        )


def record_bytes(model) -> int:
    """Size of the model's NamedMpk record (Burn's default file recorder), in bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        path = model.save_file(os.path.join(tmp, "model"), NamedMpkFileRecorder())
        return os.path.getsize(path)


def ms_per_batch(forward_batch, model, reps: int = 5) -> float:
    """Median wall time of `forward_batch(model)` in ms, after one warm-up call."""
    forward_batch(model)  # warm-up: kernels built, caches hot
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        forward_batch(model)
        times.append(time.perf_counter() - t0)
    return float(np.median(times) * 1e3)


def compare(model, task: Task, schemes=None, reps: int = 5, dynamic_device=None,
            gpu_device=None) -> list[Report]:  # fmt: skip
    """f32 first, then one row per scheme (post-training, weight-only, MinMax calibration).

    `dynamic_device` (a device of `NdArray(quantize_activations=True)`): after each 8-bit
    per-tensor scheme's row, a `<scheme>+act8` row: the same quantized model moved there, whose
    Linear and Conv2d layers also quantize their input on the fly (int8 x int8 -> int32).
    `gpu_device` (e.g. a Cuda or OpenCl device): each float32 / weight-only row also times the
    same batch with the model moved there (`to_device` keeps quantized weights quantized:
    Cuda's and OpenCl's `q_linear` kernels read the packed words), as `gpu_ms`.
    """

    def gpu_ms(m):
        if gpu_device is None:
            return None
        if task.on is None:
            raise ValueError(f"compare: task {task.name!r} has no `on` (device -> Task) for the GPU timing")
        return ms_per_batch(task.on(gpu_device).forward_batch, m.to_device(gpu_device), reps)

    rows = [
        Report(task.name, "float32", task.accuracy(model), record_bytes(model),
               ms_per_batch(task.forward_batch, model, reps), task.batch_size, gpu_ms=gpu_ms(model))
    ]  # fmt: skip
    for name, scheme in (schemes or SCHEMES).items():
        quantizer = Quantizer(calibration=Calibration.MinMax, scheme=scheme)
        q = model.quantize_weights(quantizer)
        rows.append(
            Report(task.name, name, task.accuracy(q), record_bytes(q),
                   ms_per_batch(task.forward_batch, q, reps), task.batch_size,
                   len(quantizer.skipped), dict(quantizer.kept_float), gpu_ms(q))
        )  # fmt: skip
        if dynamic_device is not None and scheme.value.bits == 8 and not scheme.level.is_block():
            rows.append(_act8_row(q, task, name, dynamic_device, rows[-1], reps))
    return rows


def _act8_row(q, task: Task, name: str, device, weight_only: Report, reps: int) -> Report:
    """The quantized model `q` moved to `device` (still quantized: same values, scales and
    record) and measured there."""
    if task.on is None:
        raise ValueError(f"compare: task {task.name!r} has no `on` (device -> Task) for the +act8 row")
    t, qd = task.on(device), q.to_device(device)
    return dataclasses.replace(
        weight_only, name=f"{name}+act8", accuracy=t.accuracy(qd), record_bytes=record_bytes(qd),
        ms_per_batch=ms_per_batch(t.forward_batch, qd, reps), kept_float=dict(weight_only.kept_float),
        gpu_ms=None,
    )  # fmt: skip
