"""The facade maps Burn's module paths onto the implementing packages."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

import burn
from burn import _alias


def test_burn_paths_resolve_to_the_implementing_objects():
    import burn_dataset
    import burn_nn
    import burn_optim
    import burn_record
    import burn_tensor
    import burn_train
    from burn.config import config
    from burn.data.dataloader import DataLoaderBuilder
    from burn.data.dataset.vision import DigitsDataset
    from burn.lr_scheduler import LinearLrSchedulerConfig
    from burn.module import Module
    from burn.nn.conv import Conv2dConfig
    from burn.optim import AdamConfig
    from burn.record import CompactRecorder
    from burn.tensor import Tensor
    from burn.tensor.activation import relu
    from burn.train import LearnerBuilder
    from burn.train.metric import AccuracyMetric

    assert Tensor is burn_tensor.Tensor and relu is burn_tensor.activation.relu
    assert Conv2dConfig is burn_nn.Conv2dConfig and Module is burn_nn.Module
    assert config is burn_nn.config and AdamConfig is burn_optim.AdamConfig
    assert LinearLrSchedulerConfig is burn_optim.lr_scheduler.LinearLrSchedulerConfig
    assert CompactRecorder is burn_record.CompactRecorder
    assert DataLoaderBuilder is burn_dataset.DataLoaderBuilder
    assert DigitsDataset is burn_dataset.vision.DigitsDataset
    assert LearnerBuilder is burn_train.LearnerBuilder
    assert AccuracyMetric is burn_train.metric.AccuracyMetric
    assert burn.nn is burn_nn and burn.tensor is burn_tensor


def test_store_path_is_burn_store():
    """Burn 0.20's `burn::store` (burn-store re-exported under the `store` feature)."""
    import burn.store
    import burn_store

    assert burn.store.BurnpackStore is burn_store.BurnpackStore
    from burn.store import PathFilter, load_from, save_into

    assert (PathFilter, load_from, save_into) == (
        burn_store.PathFilter, burn_store.load_from, burn_store.save_into
    )


def test_import_paths_mirror_burn_import():
    # Burn: `use burn_import::pytorch::{LoadArgs, PyTorchFileRecorder}`; `import` is a Python
    # keyword, so the facade path is `burn.import_`, beside the package's own `burn_import`.
    import burn_import
    from burn.import_.pytorch import LoadArgs, PyTorchFileRecorder
    from burn.import_.safetensors import SafetensorsFileRecorder

    assert PyTorchFileRecorder is burn_import.PyTorchFileRecorder
    assert LoadArgs is burn_import.LoadArgs
    assert SafetensorsFileRecorder is burn_import.SafetensorsFileRecorder
    assert burn.import_.pytorch.PyTorchFileRecorder is PyTorchFileRecorder


def test_aliasing_keeps_the_real_module_intact():
    from importlib import resources

    import burn.data.dataset.vision as vision
    import burn_dataset.vision

    assert vision is burn_dataset.vision
    assert vision.__spec__.name == "burn_dataset.vision"
    assert vision.__spec__.submodule_search_locations  # still a package
    assert resources.files("burn_dataset.vision").joinpath("data/digits.csv.gz").is_file()


def test_backend_classes_are_found_lazily():
    from burn.backend import Autodiff, NdArray

    device = Autodiff(NdArray()).device()
    assert device.inner() is NdArray().device()
    from burn.backend import Cuda
    from burn_cuda import Cuda as CudaClass

    assert Cuda is CudaClass  # importable without cupy: cupy is needed only to build it
    from burn.backend import Fusion
    from burn_fusion import Fusion as FusionClass

    assert Fusion is FusionClass


def test_missing_package_names_the_extra(monkeypatch):
    monkeypatch.setitem(_alias.ALIASES, "burn.fusion", ("burn_fusion_not_installed", "fusion"))
    with pytest.raises(ImportError, match=r"pip install 'burn-py\[fusion\]'"):
        _alias.load("burn.fusion")
    with pytest.raises(ImportError, match="no burn facade path"):
        _alias.load("burn.unknown")


def test_prelude_exports_the_common_names():
    from burn import prelude

    for name in (
        "Tensor",
        "Int",
        "Bool",
        "Float",
        "Shape",
        "TensorData",
        "Distribution",
        "Module",
        "config",
    ):
        assert hasattr(prelude, name), name


def test_python_m_burn_backend_prints_the_table():
    out = subprocess.run(
        [sys.executable, "-m", "burn.backend"], capture_output=True, text=True, check=True
    ).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["backend", "usable", "detail"]
    ndarray = next(line for line in lines if line.startswith("ndarray"))
    assert ndarray.split()[1] == "yes"
    cuda = next(line for line in lines if line.startswith("cuda"))
    if importlib.util.find_spec("cupy") is None:
        assert "cupy is not installed" in cuda and "burn-cuda[cuda13]" in cuda
        assert cuda.split()[1] == "no"
    # OpenCL lists each device of every platform under its row (PoCL's CPU in the dev env)
    at = next(i for i, line in enumerate(lines) if line.startswith("opencl"))
    if lines[at].split()[1] == "yes":
        device = lines[at + 1].split()
        assert device[0] == "device" and device[1] == "0:0" and "usable" in lines[at + 1]


def test_a_missing_decorator_is_named_with_its_extra_not_as_planned():
    # Every decorator package is released: one that is not installed (burn-fusion taken off
    # sys.path in a real child interpreter) is named with the extra that installs it.
    code = (
        "import sys; sys.path = [p for p in sys.path if 'burn-fusion' not in p]; "
        "from burn.backend.__main__ import main; main()"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout
    line = next(line for line in out.splitlines() if line.startswith("decorators:"))
    assert "not installed: Fusion (pip install 'burn-py[fusion]')" in line, line
    assert "planned" not in line and "Autodiff" in line


def test_capture_is_burn_fusions(monkeypatch):
    import burn_fusion

    assert burn.capture is burn_fusion.capture
    assert burn.CaptureWarning is burn_fusion.CaptureWarning
    monkeypatch.setitem(burn._FUNCTIONS, "capture", ("burn_fusion_not_installed", "fusion"))
    with pytest.raises(ImportError, match=r"burn.capture needs .*pip install 'burn-py\[fusion\]'"):
        burn.capture  # noqa: B018


def test_explain_is_reachable_from_the_facade():
    from burn.backend import NdArray, Spec, explain

    device = NdArray(num_threads=1).device()
    e = explain(device, "float_add", Spec((2,), "float32"), Spec((2,), "float32"))
    assert (e.final.how, e.final.impl) == ("kernel", "numpy.add")
    assert device.backend.explain("float_add").op == "float_add"
