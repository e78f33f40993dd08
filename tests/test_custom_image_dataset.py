"""Burn's custom-image-dataset example, quick mode (its README command): generated 32x32 images
in class folders, read by ImageFolderDataset, batched with CIFAR-10's normalization, and the
CIFAR-10 CNN trained by SupervisedTraining."""

from __future__ import annotations

import inspect
from pathlib import Path

import numpy as np
from burn_dataset.vision import ImageFolderDataset
from burn_ndarray import NdArray
from burn_optim import MomentumConfig, SgdConfig
from custom_image_dataset import ClassificationBatcher, Cnn, generate_image_folder
from custom_image_dataset.cli import learning_rate, main
from custom_image_dataset.training import run


def test_generated_folder_batches_and_cnn_shapes(tmp_path: Path):
    generate_image_folder(tmp_path, per_class=2, classes=3)
    ds = ImageFolderDataset.new_classification(tmp_path)
    assert ds.classes == ["class0", "class1", "class2"] and len(ds) == 6
    device = NdArray().device()
    batch = ClassificationBatcher().batch([ds.get(i) for i in range(6)], device)
    assert batch.images.dims() == [6, 3, 32, 32] and batch.targets.numpy().tolist() == [0, 0, 1, 1, 2, 2]
    # channel 0 of item 0, normalized with CIFAR-10's red mean and std
    raw = ds.get(0).image[..., 0].astype(np.float32) / 255.0
    np.testing.assert_allclose(batch.images.numpy()[0, 0], (raw - 0.4914) / 0.24703, rtol=1e-5)
    logits = Cnn.new(3, device).valid().forward(batch.images)
    assert logits.dims() == [6, 3]


def test_quick_mode(tmp_path: Path, capsys):
    art = tmp_path / "cid"
    assert main(["--generate", "8", "--epochs", "1", "--batch-size", "32", "--lr", "0.01",
                 "--cosine", "--artifact-dir", str(art)]) == 0  # fmt: skip
    out = capsys.readouterr().out
    assert "80 train and 20 test images in 10 classes" in out and "epochs 1" in out
    for rel in ["model.mpk.gz", "checkpoint/model-1.mpk.gz", "valid/epoch-1/Accuracy.log"]:
        assert (art / rel).is_file(), rel
    assert main(["--epochs", "1"]) == 2
    assert "--root DIR" in capsys.readouterr().err


def test_optimizer_is_burns_sgd_with_momentum():
    """Burn's launcher trains with SGD momentum 0.9, dampening 0, no Nesterov; the port used
    plain `SgdConfig()` (no momentum), which left the CNN near chance on the generated set."""
    default = inspect.signature(run).parameters["optimizer"].default
    assert default == SgdConfig(momentum=MomentumConfig(momentum=0.9, dampening=0.0, nesterov=False))
    assert default.weight_decay is None and default.gradient_clipping is None


def test_cosine_learning_rate_spans_the_run():
    assert learning_rate(0.02, False, 30, 8) == 0.02  # Burn's constant rate
    sched = learning_rate(0.01, True, 2, 3)  # 6 iterations, from 0.01 down toward 0
    lrs = [sched.step() for _ in range(6)]
    want = [0.005 * (1 + np.cos(np.pi * i / 6)) for i in range(6)]
    np.testing.assert_allclose(lrs, want, atol=1e-15)
    assert lrs[0] == 0.01 and lrs[-1] < 0.001
