"""pytest plugin: `--burn-backend NAME` selects the backend the conformance suite runs on.

Fixtures:
- `burn_backend`: the backend under test (`--burn-backend`, else `ndarray`); a backend package's
  conftest overrides it (optionally parametrized over several dtype configurations).
- `burn`: a `burn_tensor.testing.Ctx` for `burn_backend` (device, dtypes, tolerance, input builders
  and numpy-reference assertions). Every suite test takes it.
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
    """Suite context for the backend under test (see `burn_tensor.testing.Ctx`)."""
    from ._ctx import Ctx

    return (
        _CTX.setdefault(burn_backend, Ctx(burn_backend))
        if _hashable(burn_backend)
        else Ctx(burn_backend)
    )


_CTX: dict = {}


def _hashable(obj) -> bool:
    try:
        hash(obj)
    except TypeError:
        return False
    return True
