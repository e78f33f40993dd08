"""No workspace distribution is named like a project already on PyPI (issue 32 item 1).

`pip install 'burn-py[ndarray]'` used to install PyPI's unrelated `burn` (a 2009 optical-media
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
    """Install hints say `burn-py[...]`; `burn-py[...]` would install the unrelated project."""
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


def _cupy_major_of_extras() -> dict[tuple[str, str], str]:
    """(distribution, extra) -> the cupy wheel it installs, following workspace extras."""
    projects = {}
    for path in [*ROOT.glob("packages/*/pyproject.toml"), *ROOT.glob("examples/*/pyproject.toml")]:
        meta = tomllib.loads(path.read_text())["project"]
        projects[_norm(meta["name"])] = meta.get("optional-dependencies", {})

    def wheels(dist: str, extra: str, seen=()) -> set[str]:
        out = set()
        for req in projects.get(dist, {}).get(extra, []):
            m = re.match(r"([A-Za-z0-9_.-]+)(?:\[([^\]]+)\])?", req)
            name = _norm(m.group(1))
            if name.startswith("cupy-"):
                out.add(name)
            for sub in (m.group(2) or "").split(","):
                if sub and (name, sub) not in seen:
                    out |= wheels(name, sub.strip(), (*seen, (name, sub)))
        return out

    found = {}
    for dist, extras in projects.items():
        for extra in extras:
            w = wheels(dist, extra)
            if len(w) == 1:
                found[(dist, extra)] = w.pop()
    return found


def test_extras_of_two_cuda_majors_are_declared_conflicting():
    """cupy-cuda12x and cupy-cuda13x together make cupy warn on import: every pair of extras
    that would install both must be in `[tool.uv] conflicts`, so `uv sync --all-extras` refuses."""
    conflicts = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["uv"]["conflicts"]
    declared = {
        frozenset((_norm(i["package"]), i["extra"]) for i in group)
        for group in conflicts
        if len(group) == 2
    }
    majors = _cupy_major_of_extras()
    assert {"cupy-cuda12x", "cupy-cuda13x"} <= set(majors.values()), majors
    missing = [
        f"{a[0]}[{a[1]}] ({wa}) with {b[0]}[{b[1]}] ({wb})"
        for a, wa in majors.items()
        for b, wb in majors.items()
        if a < b and wa != wb and frozenset((a, b)) not in declared
    ]
    assert not missing, "add to [tool.uv] conflicts: " + "; ".join(missing)
