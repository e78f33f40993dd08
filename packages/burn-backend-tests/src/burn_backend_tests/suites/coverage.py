"""Conformance: the suite reached every op of the backend contract on the backend under test.

The plugin counts op calls while suite tests run (`_coverage`), per test file, and orders this case
after all of them, so it sees its whole file's counts: the same verdict in one process and in a
pytest-xdist worker (`--dist loadfile`, the workspace default, runs a file in one worker). It takes
`burn_backend`, not `burn`, so it is not itself counted as a suite test.
"""

from __future__ import annotations

import pytest

from .. import plugin


def test_op_table_complete(burn_backend, request):
    cov, everything_ran = plugin.coverage_of(burn_backend, request.node.path)
    if not everything_ran:
        pytest.skip(
            "op-table coverage is measured over the whole suite; this process ran a subset of "
            f"{request.node.path.name} ({plugin.why_partial(request.node.path)})"
        )
    assert cov is not None, f"no suite test ran on {burn_backend!r}"
    cov.complete_run = True
    missing = cov.missing()
    assert not missing, (
        f"{len(missing)} op(s) of the backend contract have no conformance case that reaches them "
        f"on {burn_backend!r}: {', '.join(missing)}"
    )
