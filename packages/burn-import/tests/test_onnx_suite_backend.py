"""The ONNX suite builds its backend through the backend registry (`get_backend(name)`), so any
installed backend runs it by name and burn_import imports no backend package itself."""

from __future__ import annotations

import pytest
from _opencl_device import opencl_cpu_device
from burn_import.onnx.suite import build_parser, main, suite_backend
from burn_tensor import available_backends, get_backend


def test_a_name_is_resolved_by_the_registry():
    assert suite_backend("ndarray") is get_backend("ndarray")  # backends are interned values


def test_opencl_runs_on_the_cpu_device_its_list_was_recorded_on():
    opencl_cpu_device()  # skips only where this machine has no OpenCL at all
    backend = suite_backend("opencl")
    assert type(backend) is type(get_backend("opencl"))
    assert backend.options()["device_type"] == "cpu"
    assert repr(backend) == "OpenCl(device_type='cpu')"  # the label of the committed list


def test_every_registered_backend_is_accepted_by_name():
    for name in available_backends():  # cuda, fusion-* included, usable here or not
        assert build_parser().parse_args(["--device", name]).device == name


def test_an_unknown_backend_names_the_installed_ones(capsys):
    with pytest.raises(SystemExit) as exc:
        main(["--device", "no-such-backend", "-k", "test_abs"])
    message = str(exc.value)
    assert "no-such-backend" in message and "installed backends:" in message
    assert "ndarray" in message.split("installed backends:")[1]
