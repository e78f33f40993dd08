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
def burn(burn_backend):
    """Suite context for the backend under test (see `burn_backend_tests.Ctx`).

    While the test runs, every op of the backend's table is counted (see `_coverage`), which is what
    the completeness case and the session summary report.
    """
    from ._coverage import OpCoverage
    from ._ctx import Ctx

    key = burn_backend if _hashable(burn_backend) else id(burn_backend)
    ctx = _CTX.get(key)
    if ctx is None:
        ctx = _CTX[key] = Ctx(burn_backend)
        _COVERAGE[key] = OpCoverage(burn_backend)
    cov = _COVERAGE[key]
    _STATE["run"] += 1
    with cov.recording():
        yield ctx


@pytest.fixture
def burn_checks_on(monkeypatch):
    """`BURN_CHECKS=1` for one test: data-dependent checks (index bounds, integer division by
    zero, float -> int casts) run on every backend, asynchronous GPU ones included."""
    monkeypatch.setenv("BURN_CHECKS", "1")


_CTX: dict = {}
#: backend -> OpCoverage, filled while suite tests run
_COVERAGE: dict = {}
#: suite tests collected (the completeness cases excluded) and run so far in this session
_STATE = {"collected": 0, "run": 0}
_COMPLETENESS = "test_op_table_complete"


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True


def coverage_of(backend):
    """The `OpCoverage` of `backend` in this session, and whether every collected suite test ran."""
    key = backend if _hashable(backend) else id(backend)
    return _COVERAGE.get(key), _whole_suite()


def _whole_suite() -> bool:
    return "partial" not in _STATE and _STATE["run"] >= _STATE["collected"]


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Count the suite tests that will run and move the completeness cases last (after -k/-m)."""
    suite, last = [], []
    for item in items:
        (last if getattr(item, "originalname", item.name) == _COMPLETENESS else suite).append(item)
    _STATE["collected"] = sum(1 for i in suite if "burn" in getattr(i, "fixturenames", ()))
    if last:
        # Coverage is only meaningful when every suite function is in the session.
        from . import conformance

        present = {getattr(i, "originalname", i.name) for i in suite}
        absent = sorted(set(conformance.__all__) - present - {_COMPLETENESS})
        if absent:
            _STATE["partial"] = f"{len(absent)} suite test function(s) not selected"
    items[:] = suite + last


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    """A suite test skipped while setting up (its backend is not usable here, e.g. Cuda without
    a GPU) tests no backend: it is not owed to the completeness count. (On a usable backend a
    case that skips leaves its ops unreached, which the completeness case reports itself.)"""
    outcome = yield
    report = outcome.get_result()
    if call.when == "setup" and report.skipped and "burn" in getattr(item, "fixturenames", ()):
        _STATE["collected"] -= 1


def pytest_deselected(items):
    if any("burn" in getattr(i, "fixturenames", ()) for i in items):
        _STATE["partial"] = "suite tests deselected"


def pytest_terminal_summary(terminalreporter):
    if not _COVERAGE:
        return
    terminalreporter.write_sep("-", "burn conformance: op-table coverage")
    whole = _whole_suite()
    for cov in _COVERAGE.values():
        terminalreporter.write_line(cov.summary(whole))
