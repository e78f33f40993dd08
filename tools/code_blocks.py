"""The ```python blocks of a markdown file: found, and run (issue 32, items 7 and 8).

A block runs unless the line before its fence is `<!-- no-run: reason -->` (the reason is
required). The blocks of one file run in order in one namespace, as a reader runs them one after
the other; each file gets a fresh namespace and a fresh working directory.

Used by `tests/test_readme_code_blocks.py` (every README) and by the docs site's build hook
(`docs/hooks/run_blocks.py`: every page of the book). `python tools/code_blocks.py OUT.json
FILE...` runs the given files in this process (imports are paid once) and writes, per file, the
blocks that ran, the ones marked, and the first error.
"""

import json
import os
import re
import sys
import tempfile
import traceback
from pathlib import Path

FENCE = re.compile(r"^```python\s*$")
NO_RUN = re.compile(r"^<!--\s*no-run:\s*(\S.*?)\s*-->$")


def blocks(path: Path):
    """Yield (line number of the fence, source, no-run reason or None) for each ```python block."""
    yield from blocks_in(path.read_text(encoding="utf-8"), str(path))


def blocks_in(text: str, where: str):
    """`blocks` for markdown text; `where` names it in errors."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        if FENCE.match(lines[i]):
            start = i
            j = i + 1
            while j < len(lines) and lines[j].strip() != "```":
                j += 1
            if j == len(lines):
                raise ValueError(f"{where}:{start + 1}: ```python block is never closed")
            prev = next((lines[k].strip() for k in range(start - 1, -1, -1) if lines[k].strip()), "")
            marked = NO_RUN.match(prev)
            yield start + 1, "\n".join(lines[start + 1 : j]) + "\n", marked.group(1) if marked else None
            i = j + 1
        else:
            i += 1


def run_file(path: Path) -> dict:
    """Run one README's runnable blocks in order; stop at the first failure."""
    result = {"ran": 0, "marked": [], "error": None}
    namespace = {"__name__": "__main__"}
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        try:
            for line, source, reason in blocks(path):
                if reason is not None:
                    result["marked"].append([line, reason])
                    continue
                try:
                    exec(compile(source, f"{path}:{line}", "exec"), namespace)
                except BaseException:  # noqa: BLE001 - reported with its traceback
                    result["error"] = f"block at line {line}:\n{traceback.format_exc()}"
                    return result
                result["ran"] += 1
        finally:
            os.chdir(cwd)
    return result


if __name__ == "__main__":
    out, *files = sys.argv[1:]
    Path(out).write_text(json.dumps({f: run_file(Path(f).resolve()) for f in files}))
