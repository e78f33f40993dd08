"""One training step of the Burn Book guide model: forward + cross-entropy + backward + Adam step.

The model is the guide's (`examples/guide`): conv 1->8 3x3, conv 8->16 3x3, dropout 0.5, relu,
adaptive avg pool 8x8, linear 1024->512, dropout, relu, linear 512->10; batch 64 of 28x28 float32
images, 10 classes. burn runs it on `Autodiff(NdArray())` through the public API (the guide's
`Model`, `CrossEntropyLoss`, `GradientsParams.from_grads`, `AdamConfig().init().step`); PyTorch CPU
eager runs the same architecture, initialised with burn's initial weights (transposed to torch's
layouts), with `torch.optim.Adam` (epsilon 1e-5, Burn's default) and `set_to_none` zero-grad.

Each call is one full step that updates the model, so both sides keep training across calls (the
loss only changes the data flowing through, not the work done). There is no raw-numpy reference.
"""

from __future__ import annotations

import numpy as np

from .._harness import Case, Suite, Target
from ..training_step._torch import guide_model

NUM_CLASSES = 10
HIDDEN = 512
LR = 1e-4


def _data(batch: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    images = rng.standard_normal((batch, 28, 28)).astype(np.float32)
    targets = rng.integers(0, NUM_CLASSES, size=batch).astype(np.int64)
    return images, targets


def _burn_step(device, images: np.ndarray, targets: np.ndarray):
    from burn_nn import CrossEntropyLossConfig
    from burn_optim import AdamConfig, GradientsParams
    from burn_tensor import Tensor
    from guide.model import ModelConfig

    device.seed(0)
    model = ModelConfig(NUM_CLASSES, HIDDEN).init(device)
    initial = _weights(model)
    x = Tensor.from_data(images, device)
    y = Tensor.from_data(targets, device)
    loss_fn = CrossEntropyLossConfig().init(device)
    optim = AdamConfig().init()
    state = {"model": model}

    def step():
        m = state["model"]
        loss = loss_fn.forward(m.forward(x), y)
        grads = GradientsParams.from_grads(loss.backward(), m)
        state["model"] = optim.step(LR, m, grads)
        return loss

    return step, initial


def _weights(model) -> dict[str, np.ndarray]:
    """Initial parameters as numpy arrays in torch's layouts (Linear weights transposed)."""
    w = {}
    for name in ("conv1", "conv2"):
        conv = getattr(model, name)
        w[f"{name}.weight"] = conv.weight.val().numpy()
        w[f"{name}.bias"] = conv.bias.val().numpy()
    for name in ("linear1", "linear2"):
        lin = getattr(model, name)
        w[f"{name}.weight"] = np.ascontiguousarray(lin.weight.val().numpy().T)  # [out, in]
        w[f"{name}.bias"] = lin.bias.val().numpy()
    return w


def _torch_step(
    torch, images: np.ndarray, targets: np.ndarray, initial: dict[str, np.ndarray], dev: str
):
    model = guide_model(torch, None)  # seeded, as the training_step bench builds it
    with torch.no_grad():
        for name, p in model.named_parameters():
            assert tuple(p.shape) == initial[name].shape, (name, p.shape, initial[name].shape)
            p.copy_(torch.from_numpy(initial[name]))
    model.to(dev).train()
    x = torch.from_numpy(images.copy()).to(dev)
    y = torch.from_numpy(targets.copy()).to(dev)
    optim = torch.optim.Adam(model.parameters(), lr=LR, eps=1e-5)
    cross_entropy = torch.nn.functional.cross_entropy

    def step():
        optim.zero_grad(set_to_none=True)
        loss = cross_entropy(model(x), y)
        loss.backward()
        optim.step()
        return loss

    return step


def build(ctx: dict, quick: bool) -> list[Case]:
    batch = 4 if quick else 64
    torch = ctx.get("torch")
    images, targets = _data(batch)
    device = ctx["ad_device"]
    burn, initial = _burn_step(device, images, targets)
    tdev = ctx.get("torch_device", "cpu")
    ref = None if torch is None else _torch_step(torch, images, targets, initial, tdev)
    return [
        Case(
            f"guide model batch {batch}",
            {
                "batch": batch,
                "image": [28, 28],
                "classes": NUM_CLASSES,
                "hidden": HIDDEN,
                "dropout": 0.5,
                "optimizer": "adam",
                "learning_rate": LR,
                "backend": repr(device.backend),
                "torch_device": tdev,
            },
            {"burn": burn, "numpy": None, "torch": ref},
        )
    ]


SUITE = Suite(
    "training_step",
    "guide model: forward + cross-entropy + backward + Adam step (batch 64, 28x28, 10 classes)",
    build,
    [Target("training step within 2x of PyTorch CPU", "burn/torch", 2.0)],
    gpu_targets=[Target("guide step <= 1.5x torch CUDA eager", "burn/torch", 1.5)],
    env={"OMP_WAIT_POLICY": "PASSIVE"},
)
