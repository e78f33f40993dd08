"""The READMEs and CONTRIBUTING.md stand on their own: no path outside the repository or of one
machine, no pointer to a design document the repository does not ship."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

FORBIDDEN = {
    r"\.\./shared": "a folder outside the repository",
    r"(?<![\w.])/work/": "a path of one machine",
    r"(?<![\w.])/opt/": "a path of one machine",
    # The README's wheelhouse is `dist`, built from the checkout (`uv build --all-packages -o dist`);
    # any other folder would be one machine's.
    r"PIP_FIND_LINKS|--find-links(?! dist\b)": "a local wheel folder",
    r"DESIGN(\.md| §)": "a design document outside the repository (see README's design section)",
    r"burn-inventory": "a reference file outside the repository",
    r"this machine has": "a statement about one machine",
}


def _docs() -> list[Path]:
    out = subprocess.run(
        ["git", "ls-files", "*README.md", "CONTRIBUTING.md"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return [ROOT / f for f in out]


DOCS = _docs()


def test_the_docs_are_found():
    names = {str(p.relative_to(ROOT)) for p in DOCS}
    assert {"README.md", "CONTRIBUTING.md", "examples/guide/README.md"} <= names
    assert len([n for n in names if n.startswith("packages/")]) >= 9


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(ROOT)))
def test_no_machine_specific_or_outside_paths(path):
    text = path.read_text(encoding="utf-8")
    found = [
        f"line {text.count(chr(10), 0, m.start()) + 1}: {m.group(0)!r} ({why})"
        for pattern, why in FORBIDDEN.items()
        for m in re.finditer(pattern, text)
    ]
    assert found == []


def test_the_readme_summarises_the_design():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Design decisions" in text
    for topic in ("Backends are immutable", "op table", "Autodiff is a backend decorator"):
        assert topic in text, topic
