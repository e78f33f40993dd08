"""pytest plugin: `--burn-backend NAME` selects the backend the conformance suite runs on."""

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
