"""Shared fixtures: the fixture directory, torch's expected values, a device, hypothesis profiles.

Hypothesis profiles for the fuzz tests: `burn-import-ci` (the default: 200 derandomized examples
per property, so CI is deterministic) and `long` (2,500 per property). Select one with
`HYPOTHESIS_PROFILE=long uv run pytest packages/burn-import/tests/test_fuzz.py`.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np
import pytest
from burn_ndarray import NdArray
from hypothesis import HealthCheck, settings

FIXTURES = Path(__file__).resolve().parent / "fixtures"
sys.path.insert(0, str(Path(__file__).resolve().parent))  # the _onnx_helpers test module

_COMMON = {
    "deadline": None,  # a loaded CI machine must not fail on time; hangs would still show
    "suppress_health_check": [HealthCheck.too_slow, HealthCheck.data_too_large],
    "database": None,
}
settings.register_profile("burn-import-ci", max_examples=200, derandomize=True, **_COMMON)
settings.register_profile("long", max_examples=2500, derandomize=True, **_COMMON)


@pytest.fixture(scope="session")
def expected() -> dict[str, np.ndarray]:
    with np.load(FIXTURES / "expected.npz") as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="session")
def manifest() -> dict:
    return json.loads((FIXTURES / "expected.json").read_text())["fixtures"]


@pytest.fixture
def device():
    return NdArray().device()


@pytest.fixture(scope="session")
def fixture_path():
    """`fixture_path("mlp.pt")` -> the committed file."""

    def path(name: str) -> Path:
        return FIXTURES / ("pt" if name.endswith(".pt") else "safetensors") / name

    return path


_SECTION = "ONNX backend suite"


def _onnx_summary() -> list[str]:
    mod = sys.modules.get("test_onnx_suite")
    if mod is None:
        mod = next((m for n, m in sys.modules.items() if n.endswith("test_onnx_suite")), None)
    return list(getattr(mod, "SUMMARY", None) or ())


def pytest_sessionfinish(session):
    """In a pytest-xdist worker, send the ONNX suite's summary to the controller (the workspace's
    root conftest prints it there)."""
    out = getattr(session.config, "workeroutput", None)
    lines = _onnx_summary()
    if out is not None and lines:
        out.setdefault("summary_sections", {})[_SECTION] = lines


def pytest_terminal_summary(terminalreporter):
    """The ONNX suite's summary (node pass rate, light models, OpenCL) at the end of the session
    (in one process; under pytest-xdist the root conftest prints what the worker sent)."""
    lines = _onnx_summary()
    if lines:
        terminalreporter.section(_SECTION)
        for line in lines:
            terminalreporter.write_line(line)
