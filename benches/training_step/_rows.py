"""The four rows of the `training_step` suite, as zero-argument step callables.

Each builder returns a `Row`: `step()` runs one whole step on the burn side (forward, loss,
backward, Adam update; or forward + argmax + read for inference) and `torch_model` the same
architecture for the torch columns. The guide model is `examples/guide`'s; the transformer is
`benches/collective/seq_task.SeqClassifier` (embedding 1000 -> d_model, 8 heads, d_ff 4 d_model,
pre-norm layers, no dropout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

NUM_CLASSES = 10
HIDDEN = 512
LR = 1e-4
VOCAB = 1000

#: transformer sizes: (d_model, layers, batch, seq)
TRANSFORMER = {"full": (512, 6, 32, 128), "small": (64, 6, 4, 16)}


@dataclass
class Row:
    name: str
    params: dict
    step: Callable[[], Any]
    #: the state the step reads (model, optimizer, batch), for torch's copy and capture
    state: dict = field(default_factory=dict)


def guide_data(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch, 28, 28)).astype(np.float32)
    targets = rng.integers(0, NUM_CLASSES, size=batch).astype(np.int64)
    return images, targets


def guide_train(device, batch: int, capture: bool = False) -> Row:
    """The guide model's step: forward, cross-entropy, backward, Adam (`capture`: as a
    `burn_fusion.capture`d step)."""
    from burn_nn import CrossEntropyLossConfig
    from burn_optim import AdamConfig, GradientsParams
    from burn_tensor import Tensor
    from guide.model import ModelConfig

    device.seed(0)
    images, targets = guide_data(batch)
    model = ModelConfig(NUM_CLASSES, HIDDEN).init(device)
    x = Tensor.from_data(images, device)
    y = Tensor.from_data(targets, device)
    loss_fn = CrossEntropyLossConfig().init(device)
    optim = AdamConfig().init()
    state = {"model": model, "x": x, "y": y, "images": images, "targets": targets}

    def train(m, optim, x, y, lr):
        loss = loss_fn.forward(m.forward(x), y)
        grads = GradientsParams.from_grads(loss.backward(), m)
        return optim.step(lr, m, grads), loss

    return Row(f"guide batch {batch}", {"batch": batch, "hidden": HIDDEN},
               _stepper(train, state, optim, x, y, capture), state)


def _stepper(train, state, optim, x, y, capture: bool):
    """`step()` running `train(model, optim, x, y, lr)` on `state["model"]`, eagerly or as a
    captured step (`burn_fusion.capture`: replays after its first calls)."""
    if capture:
        from burn_fusion import capture as capture_step

        train = capture_step(train, name="training_step")
        state["captured"] = train

    def step():
        state["model"], loss = train(state["model"], optim, x, y, LR)
        return loss

    return step


def guide_infer(device, capture: bool = False) -> Row:
    """Guide inference at batch 1: forward, argmax, read the class to the host. Captured
    (`burn_fusion.capture`): the forward and argmax replay as recorded device work, the read
    follows outside (a host read inside a captured step would make it run eagerly)."""
    from burn_tensor import Tensor
    from guide.model import ModelConfig

    device.seed(0)
    images, _ = guide_data(1)
    model = ModelConfig(NUM_CLASSES, HIDDEN).init(device).valid()
    x = Tensor.from_data(images, device)
    state = {"model": model, "images": images}

    def classify(m, x):
        return m.forward(x).argmax(1)

    if capture:
        from burn_fusion import capture as capture_step

        classify = capture_step(classify, name="guide_inference")
        state["captured"] = classify

    def step():
        return classify(model, x).flatten(0, 1).into_scalar()

    return Row("guide inference batch 1", {"batch": 1}, step, state)


def transformer_train(device, size: str, capture: bool = False) -> Row:
    """The seq_task transformer's step (tokens [batch, seq] -> 10 classes), Adam."""
    import sys
    from pathlib import Path

    from burn_nn import CrossEntropyLossConfig
    from burn_optim import AdamConfig, GradientsParams
    from burn_tensor import Tensor

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "collective"))
    from seq_task import seq_classifier

    d_model, layers, batch, seq = TRANSFORMER[size]
    device.seed(0)
    rng = np.random.default_rng(0)
    tokens = rng.integers(0, VOCAB, size=(batch, seq)).astype(np.int64)
    targets = rng.integers(0, NUM_CLASSES, size=batch).astype(np.int64)
    model = seq_classifier(device, VOCAB, NUM_CLASSES, d_model, layers, norm_first=True)
    x = Tensor.from_data(tokens, device)
    y = Tensor.from_data(targets, device)
    loss_fn = CrossEntropyLossConfig().init(device)
    optim = AdamConfig().init()
    state = {"model": model, "x": x, "y": y, "tokens": tokens, "targets": targets}

    def train(m, optim, x, y, lr):
        loss = loss_fn.forward(m.forward(x), y)
        grads = GradientsParams.from_grads(loss.backward(), m)
        return optim.step(lr, m, grads), loss

    step = _stepper(train, state, optim, x, y, capture)
    params = {"d_model": d_model, "heads": 8 if d_model >= 64 else 1, "layers": layers,
              "batch": batch, "seq": seq, "vocab": VOCAB, "size": size}
    return Row(f"transformer f32 {size}", params, step, state)
