"""Backend discovery: the three distinct errors, listing and default-device selection."""

import importlib.metadata

import burn_tensor._registry as reg
import pytest
from burn_tensor import (
    BackendError,
    BackendImportError,
    BackendNotInstalledError,
    BackendSpec,
    NoDeviceError,
    available_backends,
    backend_table,
    default_device,
    get_backend,
    set_default_device,
)


class FakeEntryPoint:
    def __init__(self, name, target=None, error=None):
        self.name, self.target, self.error = name, target, error

    def load(self):
        if self.error is not None:
            raise self.error
        return self.target


def _ndarray_spec():
    from burn_ndarray import NdArray

    return BackendSpec(name="ndarray", extra="ndarray", factory=NdArray)


@pytest.fixture
def fake_eps(monkeypatch):
    eps = {}
    monkeypatch.setattr(reg, "_entry_points", lambda: dict(eps))
    monkeypatch.delenv("BURN_BACKEND", raising=False)
    set_default_device(None)
    yield eps
    set_default_device(None)


def test_not_installed_names_the_extra(fake_eps):
    fake_eps.pop("ndarray", None)
    with pytest.raises(BackendNotInstalledError) as err:
        get_backend("ndarray")
    msg = str(err.value)
    assert "backend 'ndarray' is not installed" in msg and "pip install 'burn-py[ndarray]'" in msg
    assert isinstance(err.value, ImportError) and isinstance(err.value, BackendError)
    with pytest.raises(BackendNotInstalledError, match=r"pip install 'burn-py\[cuda\]'"):
        get_backend("cuda")
    with pytest.raises(BackendNotInstalledError, match=r"pip install 'burn-py\[opencl\]'"):
        get_backend("opencl")
    with pytest.raises(BackendNotInstalledError, match="'burn.backends' entry-point group"):
        get_backend("no-such-backend")


def test_failed_import_chains_the_cause(fake_eps):
    cause = ImportError("No module named 'pyopencl'")
    fake_eps["opencl"] = FakeEntryPoint("opencl", error=cause)
    with pytest.raises(BackendImportError) as err:
        get_backend("opencl")
    assert err.value.__cause__ is cause
    assert "installed but failed to import" in str(err.value) and "pyopencl" in str(err.value)
    assert not isinstance(err.value, BackendNotInstalledError)


def test_no_usable_device_says_what_was_probed(fake_eps):
    probed = "no OpenCL platform found (probed: pocl, nvidia)"
    spec = BackendSpec(name="opencl", extra="opencl", factory=lambda: None, probe=lambda: probed)
    fake_eps["opencl"] = FakeEntryPoint("opencl", spec)
    with pytest.raises(NoDeviceError) as err:
        get_backend("opencl")
    assert "backend 'opencl' has no usable device" in str(err.value) and probed in str(err.value)


def test_three_errors_are_distinct():
    kinds = {BackendNotInstalledError, BackendImportError, NoDeviceError}
    for a in kinds:
        for b in kinds - {a}:
            assert not issubclass(a, b)


def test_real_entry_points_through_importlib_metadata(monkeypatch):
    """The registry reads `importlib.metadata.entry_points(group="burn.backends")`."""
    monkeypatch.delenv("BURN_BACKEND", raising=False)
    broken = importlib.metadata.EntryPoint(
        "broken", "burn_no_such_module_xyz:SPEC", "burn.backends"
    )
    real = importlib.metadata.entry_points

    def fake(**kw):
        found = list(real(**kw))
        return found + [broken] if kw.get("group") == "burn.backends" else found

    monkeypatch.setattr(importlib.metadata, "entry_points", fake)
    assert "broken" in available_backends() and "ndarray" in available_backends()
    with pytest.raises(BackendImportError) as err:
        get_backend("broken")
    assert isinstance(err.value.__cause__, ModuleNotFoundError)
    rows = {name: (ok, detail) for name, ok, detail in backend_table()}
    assert rows["ndarray"] == (True, "ok")
    assert rows["broken"][0] is False and "failed to import" in rows["broken"][1]


def test_spec_factory_callable_is_accepted(fake_eps):
    fake_eps["ndarray"] = FakeEntryPoint("ndarray", _ndarray_spec)  # a callable returning the spec
    from burn_ndarray import NdArray

    assert get_backend("ndarray") is NdArray()


def test_default_device_priority_and_env(fake_eps, monkeypatch):
    from burn_ndarray import NdArray

    dead = BackendSpec(
        name="cuda", extra="cuda", factory=lambda: None, probe=lambda: "no CUDA driver"
    )
    fake_eps["cuda"] = FakeEntryPoint("cuda", dead)
    fake_eps["opencl"] = FakeEntryPoint("opencl", error=ImportError("pyopencl missing"))
    fake_eps["ndarray"] = FakeEntryPoint("ndarray", _ndarray_spec())
    # cuda (unusable) and opencl (broken) are skipped: ndarray wins
    assert default_device() is NdArray().device()
    set_default_device(None)
    monkeypatch.setenv("BURN_BACKEND", "cuda")
    with pytest.raises(NoDeviceError, match="no CUDA driver"):
        default_device()
    set_default_device(NdArray(float_dtype="float64").device())
    assert default_device().backend == NdArray(float_dtype="float64")


def _cpu_spec(name, backend):
    return BackendSpec(name=name, extra=name, factory=lambda: backend)


def test_default_device_ranks_gpu_above_ndarray_and_cpu_opencl_below(fake_eps):
    from burn_ndarray import NdArray

    gpu = NdArray(float_dtype="float64")  # stands for a GPU backend: what matters is its rank
    fake_eps["ndarray"] = FakeEntryPoint("ndarray", _ndarray_spec())
    # an OpenCL platform whose default device is a CPU (PoCL) ranks below NdArray
    fake_eps["opencl"] = FakeEntryPoint("opencl", _cpu_spec("opencl", gpu))
    assert default_device() is NdArray().device()
    set_default_device(None)
    # the same backend on a GPU ranks above NdArray
    on_gpu = BackendSpec(name="opencl", extra="opencl", factory=lambda: gpu, is_gpu=lambda: True)
    fake_eps["opencl"] = FakeEntryPoint("opencl", on_gpu)
    assert default_device() is gpu.device()
    set_default_device(None)
    # an unusable GPU backend is skipped
    dead = BackendSpec(
        name="opencl",
        extra="opencl",
        factory=lambda: gpu,
        probe=lambda: "no device",
        is_gpu=lambda: True,
    )
    fake_eps["opencl"] = FakeEntryPoint("opencl", dead)
    assert default_device() is NdArray().device()


def test_default_device_none_installed(fake_eps):
    with pytest.raises(BackendNotInstalledError, match=r"burn-py\[ndarray\]"):
        default_device()
