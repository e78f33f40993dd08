"""Burn's custom-image-dataset example, quick mode (its README command): generated 32x32 images
in class folders, read by ImageFolderDataset, batched with CIFAR-10's normalization, and the
CIFAR-10 CNN trained by SupervisedTraining."""

from __future__ import annotations

from pathlib import Path

import numpy as np
from burn_dataset.vision import ImageFolderDataset
from burn_ndarray import NdArray
from custom_image_dataset import ClassificationBatcher, Cnn, generate_image_folder
from custom_image_dataset.cli import main


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
    assert main(["--generate", "8", "--epochs", "1", "--artifact-dir", str(art)]) == 0
    out = capsys.readouterr().out
    assert "80 train and 20 test images in 10 classes" in out and "epochs 1" in out
    for rel in ["model.mpk.gz", "checkpoint/model-1.mpk.gz", "valid/epoch-1/Accuracy.log"]:
        assert (art / rel).is_file(), rel
    assert main(["--epochs", "1"]) == 2
    assert "--root DIR" in capsys.readouterr().err
