"""Every ```python block of every README runs (issue 32, item 7), so none can go stale.

All READMEs run in one child process (`tools/code_blocks.py`: imports paid once, a fresh
namespace and working directory per README); a block that is not meant to run says so on the line
before its fence, `<!-- no-run: reason -->`. The counts (ran / marked) are printed.
"""

import json
import subprocess
import sys
from pathlib import Path

import importlib.util

import pytest

ROOT = Path(__file__).resolve().parents[1]
# Loaded by path: pytest's importlib mode puts no test folder on sys.path.
_spec = importlib.util.spec_from_file_location("code_blocks", ROOT / "tools" / "code_blocks.py")
_mod = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_mod)
blocks = _mod.blocks
READMES = sorted(
    [ROOT / "README.md", *ROOT.glob("packages/*/README.md"), *ROOT.glob("examples/*/README.md")]
)


@pytest.fixture(scope="module")
def results(tmp_path_factory):
    out = tmp_path_factory.mktemp("readmes") / "results.json"
    files = [str(p) for p in READMES]
    proc = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "code_blocks.py"), str(out), *files],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(out.read_text())


@pytest.mark.parametrize("readme", READMES, ids=lambda p: str(p.relative_to(ROOT)))
def test_readme_python_blocks_run(readme, results):
    got = results[str(readme)]
    if got["error"] is not None:
        pytest.fail(f"{readme.relative_to(ROOT)}: {got['error']}", pytrace=False)


def test_readme_block_counts(results, capsys):
    ran = sum(r["ran"] for r in results.values())
    marked = [(f, line, why) for f, r in results.items() for line, why in r["marked"]]
    total = sum(1 for p in READMES for _ in blocks(p))
    assert ran + len(marked) == total
    assert ran > 0
    with capsys.disabled():  # shown in CI's log, even under -q
        print(f"\nREADME python blocks: {ran} ran, {len(marked)} marked no-run, of {total}")


def test_no_run_marker_needs_a_reason_and_applies_to_the_next_block_only(tmp_path):
    md = tmp_path / "x.md"
    md.write_text(
        "<!-- no-run: needs a GPU -->\n```python\nraise SystemExit(1)\n```\n\n"
        "<!-- no-run: -->\n```python\nx = 1\n```\n```python\nprint(x + 1)\n```\n",
        encoding="utf-8",
    )
    found = list(blocks(md))
    assert [(line, reason) for line, _, reason in found] == [(2, "needs a GPU"), (7, None), (10, None)]
    result = _mod.run_file(md)
    assert result == {"ran": 2, "marked": [[2, "needs a GPU"]], "error": None}


def test_a_failing_block_is_reported_with_its_line(tmp_path):
    md = tmp_path / "bad.md"
    md.write_text("text\n\n```python\nimport math\nmath.sqrt(-1)\n```\n", encoding="utf-8")
    result = _mod.run_file(md)
    assert result["ran"] == 0
    assert "block at line 3" in result["error"] and "ValueError: math domain error" in result["error"]


def test_an_unclosed_block_is_an_error(tmp_path):
    md = tmp_path / "open.md"
    md.write_text("```python\nx = 1\n", encoding="utf-8")
    with pytest.raises(ValueError, match="open.md:1: ```python block is never closed"):
        list(blocks(md))
