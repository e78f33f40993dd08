"""Conformance: the suite reached every op of the backend contract on the backend under test.

The plugin counts op calls while suite tests run (`_coverage`) and orders this case after all of
them, so it sees the whole session's counts. It takes `burn_backend`, not `burn`, so it is not itself
counted as a suite test.
"""

from __future__ import annotations

import pytest

from .. import plugin


def test_op_table_complete(burn_backend):
    cov, everything_ran = plugin.coverage_of(burn_backend)
    if not everything_ran:
        pytest.skip(
            "op-table coverage is measured over the whole suite; this session ran a subset "
            f"({plugin._STATE['run']} of {plugin._STATE['collected']} suite tests)"
        )
    assert cov is not None, f"no suite test ran on {burn_backend!r}"
    cov.complete_run = True
    missing = cov.missing()
    assert not missing, (
        f"{len(missing)} op(s) of the backend contract have no conformance case that reaches them "
        f"on {burn_backend!r}: {', '.join(missing)}"
    )
