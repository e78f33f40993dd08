"""No workspace distribution is named like a project already on PyPI (issue 32 item 1).

`pip install 'burn[ndarray]'` used to install PyPI's unrelated `burn` (a 2009 optical-media
tool). Every distribution name must be in `pypi_names.json`'s `free` list, which records what
PyPI answered on the date given; a new package means checking its name there first (the
`how` entry says how) and adding it. `BURN_TEST_PYPI=1` re-asks PyPI for every name now.
"""

from __future__ import annotations

import json
import os
import re
import tomllib
import urllib.error
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NAMES = json.loads((ROOT / "tests/pypi_names.json").read_text())


def _norm(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()  # PEP 503


def _distributions() -> dict[str, str]:
    out = {}
    for path in [ROOT / "pyproject.toml", *sorted(ROOT.glob("packages/*/pyproject.toml")),
                 *sorted(ROOT.glob("examples/*/pyproject.toml"))]:
        name = tomllib.loads(path.read_text())["project"]["name"]
        out[_norm(name)] = str(path.relative_to(ROOT))
    return out


DISTS = _distributions()


@pytest.mark.parametrize("name", sorted(DISTS))
def test_name_is_recorded_free(name):
    taken = {_norm(n) for n in NAMES["taken"]}
    free = {_norm(n) for n in NAMES["free"]}
    assert name not in taken, f"{DISTS[name]}: '{name}' is taken on PyPI by another project"
    assert name in free, (
        f"{DISTS[name]}: '{name}' was never checked against PyPI: {NAMES['how']}, then add it "
        "to tests/pypi_names.json"
    )


def test_hints_name_the_facade_distribution():
    """Install hints say `burn-py[...]`; `burn[...]` would install the unrelated project."""
    bad = []
    for path in ROOT.glob("packages/*/src/**/*.py"):
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if re.search(r"""(pip install|uv pip install)\s+['"]?burn\[""", line):
                bad.append(f"{path.relative_to(ROOT)}:{i}")
    assert not bad, bad


@pytest.mark.skipif(os.environ.get("BURN_TEST_PYPI") != "1", reason="asks PyPI: BURN_TEST_PYPI=1")
@pytest.mark.parametrize("name", sorted(DISTS))
def test_pypi_still_says_free(name):
    try:
        urllib.request.urlopen(f"https://pypi.org/pypi/{name}/json", timeout=20)
    except urllib.error.HTTPError as e:
        assert e.code == 404, e
        return
    pytest.fail(f"'{name}' is now taken on PyPI")
