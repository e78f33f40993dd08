"""The book's custom training loop on a small subset of the bundled digits."""

from __future__ import annotations

import subprocess
import sys

from burn_autodiff import Autodiff
from burn_dataset import PartialDataset
from burn_dataset.vision import DigitsDataset
from burn_ndarray import NdArray
from burn_optim import AdamConfig
from burn_tensor import Tensor
from custom_training_loop import ModelConfig, TrainingConfig, accuracy, run


def test_accuracy():
    device = NdArray().device()
    output = Tensor.from_data([[0.1, 0.9], [0.8, 0.2], [0.3, 0.7], [0.6, 0.4]], device)
    targets = Tensor.from_data([1, 0, 0, 0], device)
    assert accuracy(output, targets) == 75.0


def test_run_improves_and_validates_each_epoch():
    device = Autodiff(NdArray()).device()
    train_set = PartialDataset(DigitsDataset.train(), 0, 384)
    valid_set = PartialDataset(DigitsDataset.test(), 0, 128)
    config = TrainingConfig(ModelConfig(10, 64), AdamConfig(), num_epochs=3, batch_size=32)
    lines: list[str] = []
    model, history = run(config, device, train_set, valid_set, log=lines.append, log_every=5)
    train = [m for m in history if m.split == "Train"]
    valid = [m for m in history if m.split == "Valid"]
    assert [m.epoch for m in train] == [m.epoch for m in valid] == [1, 2, 3]
    assert train[-1].loss < train[0].loss
    assert train[-1].accuracy > train[0].accuracy
    assert valid[-1].accuracy > 50.0  # chance is 10 %
    assert any(line.startswith("[Train - Epoch 1 - Iteration 0]") for line in lines)
    assert "[Valid - Epoch 3] Loss" in lines[-1]
    # The returned model is still on the autodiff device; .valid() moves it to the inner one.
    assert model.valid().devices() == [device.inner()]


def test_console_script_in_subprocess():
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "custom_training_loop.cli",
            "--epochs",
            "1",
            "--limit",
            "128",
            "--hidden-size",
            "32",
        ],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    lines = proc.stdout.splitlines()
    assert lines[0].startswith("backend: ")  # every run says what it runs on
    assert lines[1].startswith("[Train - Epoch 1] Loss")
    assert lines[2].startswith("[Valid - Epoch 1] Loss")


def test_data_parallel_variant_matches_one_device():
    """Two devices, each with half of every batch and gradients all-reduced, train the model
    (dropout off) to the parameters one device reaches on the whole batches."""
    import numpy as np

    from custom_training_loop import run_data_parallel

    train_set = PartialDataset(DigitsDataset.train(), 0, 200)
    valid_set = PartialDataset(DigitsDataset.test(), 0, 64)
    config = TrainingConfig(ModelConfig(10, 32, dropout=0.0), AdamConfig(), num_epochs=2)
    config = config.with_batch_size(32)
    backend = Autodiff(NdArray(num_devices=2))
    one, _ = run(config, backend.device(0), train_set, valid_set, log=lambda s: None)
    two, history = run_data_parallel(
        config, [backend.device(0), backend.device(1)], train_set, valid_set, log=lambda s: None
    )
    assert [m.epoch for m in history if m.split == "Train"] == [1, 2]
    a = dict((n, p.val().numpy()) for n, p in one.named_parameters())
    b = dict((n, p.val().numpy()) for n, p in two.named_parameters())
    assert a.keys() == b.keys()
    for name in a:
        np.testing.assert_allclose(b[name], a[name], atol=1e-6, err_msg=name)


def test_cli_trains_on_two_devices():
    result = subprocess.run(
        [sys.executable, "-m", "custom_training_loop", "--limit", "96", "--epochs", "1",
         "--devices", "2"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr[-2000:]
    assert "[Valid - Epoch 1] Loss" in result.stdout


def test_mixed_precision_flag_trains_with_f32_parameters():
    """`--mixed-precision f16`: conv/linear in float16, loss scaling, float32 parameters."""
    from burn_optim import MixedPrecision
    from burn_tensor import DType

    device = Autodiff(NdArray()).device()
    train_set = PartialDataset(DigitsDataset.train(), 0, 384)
    valid_set = PartialDataset(DigitsDataset.test(), 0, 128)
    config = TrainingConfig(ModelConfig(10, 64), AdamConfig(), num_epochs=3, batch_size=32)
    lines: list[str] = []
    mp = MixedPrecision("f16")
    model, history = run(config, device, train_set, valid_set, log=lines.append, precision=mp)
    valid = [m for m in history if m.split == "Valid"]
    assert valid[-1].accuracy > 50.0  # chance is 10 %
    assert all(p.val().dtype is DType.F32 for _, p in model.named_parameters())
    assert lines[-1] == f"[Mixed precision - Epoch 3] loss scale {mp.scale:g} | skipped steps {mp.skipped_steps}"
    proc = subprocess.run(
        [sys.executable, "-m", "custom_training_loop", "--limit", "64", "--epochs", "1",
         "--hidden-size", "32", "--mixed-precision", "bf16"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "[Valid - Epoch 1] Loss" in proc.stdout


def test_captured_loop_gives_the_eager_loops_metrics():
    # Autodiff(Fusion(OpenCl)) (PoCL in CI): each step replayed as burn.capture(train_step)
    # gives the eager loop's losses and accuracies exactly (the dropout masks included).
    from burn_fusion import Fusion
    from burn_opencl import OpenCl

    device = Autodiff(Fusion(OpenCl())).device()
    train_set = PartialDataset(DigitsDataset.train(), 0, 192)
    valid_set = PartialDataset(DigitsDataset.test(), 0, 64)
    config = TrainingConfig(ModelConfig(10, 32), AdamConfig(), num_epochs=3, batch_size=32)
    _, eager = run(config, device, train_set, valid_set, log=lambda _: None)
    lines: list[str] = []
    _, captured = run(config, device, train_set, valid_set, log=lines.append, capture=True)
    assert captured == eager
    assert lines[-1].startswith("[Capture]") and "'replays': 14" in lines[-1], lines[-1]
