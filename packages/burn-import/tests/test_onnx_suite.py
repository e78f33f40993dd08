"""ONNX's official backend suite through `burn_import.onnx.backend`, against committed lists.

`onnx_suite_expected/<backend>.txt` lists every case (node, light model zoo, simple and pytorch
models) that passes on that backend. Each listed case that no longer passes fails
`test_<backend>_expected_passes`, which names it; a case that passes but is not listed is
reported at the end of the session with the command that adds it (CONTRIBUTING.md, "Add an ONNX
operator"). The pass rates are a printed report, not a threshold: a rate lets a case break while
another starts passing.

NdArray runs the whole suite in this process (`<basetemp>/onnx_suite_report.md` or
`$BURN_ONNX_REPORT` gets the per-op report). OpenCl (PoCL, `device_type="cpu"`) runs the whole
suite too -- every case of its list, not only those NdArray passes -- in `BURN_ONNX_WORKERS`
worker processes (default: 2, or 1 on a 1-core machine); a cold PoCL kernel cache makes it the
slow part, and two workers let compiles run on both cores.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _opencl_device import opencl_cpu_device
from burn_import.onnx.suite import (
    KINDS,
    LIGHT_MODELS,
    CaseResult,
    ExpectedListError,
    check_expected,
    read_expected,
    regenerate_command,
    report_markdown,
    run_suite,
    summary,
)

SUMMARY: list[str] = []  # printed by conftest's pytest_terminal_summary
EXPECTED = Path(__file__).resolve().parent / "onnx_suite_expected"


@pytest.fixture(scope="session")
def ndarray_suite(tmp_path_factory):
    from burn_ndarray import NdArray

    res = run_suite(device=NdArray().device())
    report = Path(
        os.environ.get("BURN_ONNX_REPORT")
        or tmp_path_factory.getbasetemp() / "onnx_suite_report.md"
    )
    report.write_text(report_markdown(res, "NdArray"))
    SUMMARY.append(summary(res, "NdArray"))
    SUMMARY.append("failing node op types: " + ", ".join(res.failing_ops("node")))
    SUMMARY.append(f"report: {report}")
    return res


def _check_against_list(cases, backend: str, label: str) -> None:
    """Fail naming every listed case of `backend` that did not pass; report the new passes."""
    verdict = check_expected(cases, read_expected(EXPECTED / f"{backend}.txt", KINDS), KINDS)
    SUMMARY.extend(verdict.report(label, regenerate_command(backend)))
    assert verdict.listed > 0, f"{backend}.txt lists no case"
    if verdict.regressions:  # pytest.fail: one list of the cases, not assert's repr of it too
        pytest.fail(
            f"{len(verdict.regressions)} of the {verdict.listed} cases expected to pass on {label}"
            f" do not (onnx_suite_expected/{backend}.txt):\n  " + "\n  ".join(verdict.regressions)
        )


def test_ndarray_expected_passes(ndarray_suite):
    assert len(ndarray_suite.of("node")) >= 1800, "the onnx wheel's node cases were not all found"
    _check_against_list(ndarray_suite.cases, "ndarray", "NdArray")


def test_light_model_zoo_matches(ndarray_suite):
    # squeezenet's light model has every weight 0.02: its 1000 logits are equal at ~9.5e9, where
    # float32 steps are 1024 apart, so its expected softmax is exactly uniform. It matches only
    # because equal filters give bit-identical channels (burn_ndarray._filter_classes; one BLAS
    # sgemm rounds its rows differently).
    light = {c.name[len("test_") :]: c for c in ndarray_suite.of("light")}
    assert sorted(light) == sorted(LIGHT_MODELS)
    failing = {k: c.message for k, c in light.items() if c.status != "pass"}
    assert not failing, failing


def _workers() -> int:
    default = min(2, os.cpu_count() or 1)
    return max(1, int(os.environ.get("BURN_ONNX_WORKERS", default)))


def test_opencl_expected_passes():
    device = opencl_cpu_device()  # skips only when this machine has no OpenCL at all
    label = "OpenCl(device_type='cpu')"
    workers = _workers()
    if workers > 1:
        from burn_import.onnx._suite_parallel import run_parallel

        res = run_parallel(tuple(KINDS), "opencl", workers)
    else:
        res = run_suite(device=device)
    # a case the device cannot hold (PoCL has no f16) is refused in prepare: a skip, unlisted
    SUMMARY.append(summary(res, f"{label}, {workers} worker(s)"))
    _check_against_list(res.cases, "opencl", label)


def test_list_check_names_each_regression_and_new_pass(tmp_path):
    """The comparison itself: a listed failure, skip or missing case is a regression (by name);
    an unlisted pass is a new pass; a listed case of a kind that did not run is not checked."""
    listed = tmp_path / "x.txt"
    listed.write_text(
        "# header\nnode test_a\nnode test_b\nnode test_c\nnode test_gone\nlight test_m\n"
    )
    cases = [
        CaseResult("test_a", "node", "A", "pass"),
        CaseResult("test_b", "node", "B", "fail", "AssertionError: Mismatched elements: 1 / 4"),
        CaseResult("test_c", "node", "C", "skip", "DeviceDtypeError: float16"),
        CaseResult("test_new", "node", "N", "pass"),
    ]
    v = check_expected(cases, read_expected(listed, KINDS), ("node",))
    assert [r.split(":")[0] for r in v.regressions] == ["test_b", "test_c", "test_gone"]
    assert "Mismatched elements" in v.regressions[0]
    assert v.new_passes == ["test_new"] and (v.listed, v.checked) == (4, 3)
    assert "add them" in "\n".join(v.report("X", "CMD")) and "CMD" in v.report("X", "CMD")[1]
    for bad, why in [
        ("node\n", "expected '<kind> test_<case>'"),
        ("nodes test_a\n", "unknown kind 'nodes'"),
        ("node test_a\nnode test_a\n", "listed twice"),
    ]:
        listed.write_text(bad)
        with pytest.raises(ExpectedListError, match=why):
            read_expected(listed, KINDS)


def test_a_broken_opencl_setup_fails_instead_of_skipping(monkeypatch):
    """Only a missing OpenCL platform or CPU device skips the OpenCL tests; a driver error
    (here: the platform query itself failing) propagates and fails them."""
    pytest.importorskip("pyopencl")  # absent: nothing to check, opencl_cpu_device skips anyway
    import burn_opencl._backend as backend
    import burn_opencl._platform as platform
    import pyopencl as cl
    from burn_tensor import NoDeviceError

    monkeypatch.setattr(backend, "_SELECTIONS", {})  # forget the cached device selection
    monkeypatch.delenv("BURN_OPENCL_DEVICE", raising=False)

    def broken():
        raise cl.RuntimeError("clGetPlatformIDs failed: OUT_OF_HOST_MEMORY")

    monkeypatch.setattr(platform, "_platforms", broken)
    try:
        opencl_cpu_device()
    except pytest.skip.Exception as skip:  # a skip here would hide the broken driver
        pytest.fail(f"a broken OpenCL driver was turned into a skip: {skip}")
    except cl.RuntimeError as err:
        assert "OUT_OF_HOST_MEMORY" in str(err)
    else:
        pytest.fail("a broken OpenCL driver gave a device")

    def none():
        raise platform.NoOpenClDevice("no OpenCL platform found (PLATFORM_NOT_FOUND_KHR)")

    monkeypatch.setattr(platform, "_platforms", none)
    with pytest.raises(pytest.skip.Exception, match="no OpenCL platform/driver"):
        opencl_cpu_device()
    monkeypatch.setenv("BURN_OPENCL_DEVICE", "0:0")  # asked for by index: absence is an error
    with pytest.raises(NoDeviceError, match="no usable device"):
        opencl_cpu_device()
