"""pytest plugin of the conformance suite, opt-in: `pytest_plugins = ["burn_backend_tests.plugin"]`
in the top-level conftest (or `-p burn_backend_tests.plugin`). `--burn-backend NAME` selects the
backend the suite runs on.

Fixtures:
- `burn_backend`: the backend under test (`--burn-backend`, else `ndarray`); a backend package's
  conftest overrides it (optionally parametrized over several dtype configurations).
- `burn`: a `burn_backend_tests.Ctx` for `burn_backend` (device, dtypes, tolerance, input builders
  and numpy-reference assertions). Every suite test takes it.
- `burn_checks_on`: sets `BURN_CHECKS=1` for the test (data-dependent checks on every backend).
"""

from __future__ import annotations

from pathlib import Path

import pytest


def pytest_addoption(parser):
    group = parser.getgroup("burn")
    group.addoption(
        "--burn-backend",
        action="store",
        default=None,
        help="backend entry-point name for the burn conformance suite (default: ndarray)",
    )


@pytest.fixture(scope="session")
def burn_backend(request):
    """The backend under test: `--burn-backend`, else overridden by a package's conftest."""
    from burn_tensor import get_backend

    name = request.config.getoption("--burn-backend") or "ndarray"
    return get_backend(name)


@pytest.fixture
def burn(burn_backend, request):
    """Suite context for the backend under test (see `burn_backend_tests.Ctx`).

    While the test runs, every op of the backend's table is counted (see `_coverage`) under the
    test's file, which is what that file's completeness case and the session summary report.
    """
    from ._coverage import OpCoverage
    from ._ctx import Ctx

    key = burn_backend if _hashable(burn_backend) else id(burn_backend)
    ctx = _CTX.get(key)
    if ctx is None:
        ctx = _CTX[key] = Ctx(burn_backend)
    file = str(request.node.path)
    cov = _COVERAGE.get((file, key))
    if cov is None:
        cov = _COVERAGE[file, key] = OpCoverage(burn_backend)
    _file_state(file)["run"] += 1
    with cov.recording():
        yield ctx


@pytest.fixture
def burn_checks_on(monkeypatch):
    """`BURN_CHECKS=1` for one test: data-dependent checks (index bounds, integer division by
    zero, float -> int casts) run on every backend, asynchronous GPU ones included."""
    monkeypatch.setenv("BURN_CHECKS", "1")


_CTX: dict = {}
#: (test file, backend) -> OpCoverage, filled while that file's suite tests run
_COVERAGE: dict = {}
#: test file -> its suite tests collected (the completeness cases excluded) and run so far, and
#: why the file's run is partial ("partial", absent when it is not)
_FILES: dict[str, dict] = {}
#: summary lines that pytest-xdist workers sent back (the controller runs no test itself)
_FORWARDED: list[str] = []
_COMPLETENESS = "test_op_table_complete"


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def _file_state(file: str) -> dict:
    return _FILES.setdefault(file, {"collected": 0, "run": 0})


def _is_suite(item) -> bool:
    return "burn" in getattr(item, "fixturenames", ())


def coverage_of(backend, path):
    """The `OpCoverage` of `backend` from the suite tests of the test file `path`, and whether
    every suite test collected in that file ran in this process.

    Counting per file keeps the completeness case right under pytest-xdist's `--dist loadfile`
    (a worker runs whole files, but only some of them) and makes its verdict depend on its own
    file only, never on which other files shared the process.
    """
    key = backend if _hashable(backend) else id(backend)
    return _COVERAGE.get((str(path), key)), _whole_file(str(path))


def why_partial(path) -> str | None:
    """Why the suite tests of the test file `path` did not all run in this process (None when
    they did): some were deselected or not selected, or fewer ran than were collected."""
    state = _file_state(str(path))
    if "partial" in state:
        return state["partial"]
    if state["run"] < state["collected"]:
        return f"{state['run']} of {state['collected']} suite tests ran"
    return None


def _whole_file(file: str) -> bool:
    return why_partial(file) is None


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Count each file's suite tests that will run and move the completeness cases last (after
    -k/-m): last in the session, so also last in their file when pytest-xdist hands out files."""
    suite, last = [], []
    for item in items:
        (last if getattr(item, "originalname", item.name) == _COMPLETENESS else suite).append(item)
    for state in _FILES.values():
        state["collected"] = 0
    for item in suite:
        if _is_suite(item):
            _file_state(str(item.path))["collected"] += 1
    if last:
        # Coverage is only meaningful when every suite function of the file is in the session.
        from . import conformance

        wanted = set(conformance.__all__) - {_COMPLETENESS}
        present: dict[str, set] = {}
        for item in suite:
            present.setdefault(str(item.path), set()).add(getattr(item, "originalname", item.name))
        for file in {str(i.path) for i in last}:
            absent = wanted - present.get(file, set())
            if absent:
                _file_state(file)["partial"] = f"{len(absent)} suite test function(s) not selected"
    items[:] = suite + last


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A suite test skipped while setting up (its backend is not usable here, e.g. Cuda without
    a GPU) tests no backend: it is not owed to the completeness count. (On a usable backend a
    case that skips leaves its ops unreached, which the completeness case reports itself.)"""
    outcome = yield
    report = outcome.get_result()
    if call.when == "setup" and report.skipped and _is_suite(item):
        _file_state(str(item.path))["collected"] -= 1


def pytest_deselected(items):
    for item in items:
        if _is_suite(item):
            _file_state(str(item.path))["partial"] = "suite tests deselected"


def _summary_lines(config) -> list[str]:
    lines = []
    for (file, _key), cov in _COVERAGE.items():
        try:
            name = str(Path(file).relative_to(config.rootpath))
        except ValueError:
            name = file
        lines.append(f"{name}: {cov.summary(_whole_file(file))}")
    return lines


def pytest_sessionfinish(session):
    """In a pytest-xdist worker, hand this worker's summary lines to the controller."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["burn_coverage"] = _summary_lines(session.config)


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node, error):
    """On the pytest-xdist controller: keep what a finished worker sent (its summary lines)."""
    _FORWARDED.extend(getattr(node, "workeroutput", {}).get("burn_coverage", ()))


def pytest_terminal_summary(terminalreporter, config):
    lines = sorted(_summary_lines(config) + _FORWARDED)
    if not lines:
        return
    terminalreporter.write_sep("-", "burn conformance: op-table coverage")
    for line in lines:
        terminalreporter.write_line(line)
