"""mkdocs hook: runs every ```python block of every page while the site builds (issue 32, item 8).

The blocks of a page run in order in one namespace (a page reads as one script) in a fresh
working directory, with `tools/code_blocks.py`'s rules: a block is skipped only when the line
before its fence is `<!-- no-run: reason -->`. What a block prints is put under it on the page, so
the outputs shown are the ones this build produced. A block that raises fails the build, naming
the page and the line; the build ends by printing how many blocks ran.
"""

import contextlib
import importlib.util
import io
import logging
import os
import tempfile
import traceback
from pathlib import Path

from mkdocs.exceptions import PluginError

ROOT = Path(__file__).resolve().parents[2]
_spec = importlib.util.spec_from_file_location("code_blocks", ROOT / "tools" / "code_blocks.py")
code_blocks = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(code_blocks)

log = logging.getLogger("mkdocs.hooks.run_blocks")
COUNTS = {"ran": 0, "marked": 0, "pages": 0}


def on_config(config):
    COUNTS.update(ran=0, marked=0, pages=0)
    return config


def _run_page(markdown: str, where: str) -> list[tuple[int, str]]:
    """Run the page's blocks; return (line index after the closing fence, output) per block."""
    outputs = []
    namespace = {"__name__": "__main__"}
    lines = markdown.splitlines()
    cwd = os.getcwd()
    with tempfile.TemporaryDirectory() as work:
        os.chdir(work)
        try:
            for line, source, reason in code_blocks.blocks_in(markdown, where):
                if reason is not None:
                    COUNTS["marked"] += 1
                    continue
                buffer = io.StringIO()
                try:
                    with contextlib.redirect_stdout(buffer):
                        exec(compile(source, f"{where}:{line}", "exec"), namespace)
                except BaseException as exc:  # noqa: BLE001 - reported, and the build fails
                    raise PluginError(
                        f"{where}:{line}: the code block raised:\n{traceback.format_exc()}"
                    ) from exc
                COUNTS["ran"] += 1
                closing = line + len(source.splitlines())  # 0-based index of the closing fence
                assert lines[closing].strip() == "```", (where, line)
                outputs.append((closing + 1, buffer.getvalue()))
        finally:
            os.chdir(cwd)
    return outputs


def on_page_markdown(markdown, page, config, files):
    where = f"docs/{page.file.src_path}"
    outputs = _run_page(markdown, where)
    if outputs:
        COUNTS["pages"] += 1
    lines = markdown.splitlines()
    for index, text in reversed(outputs):
        if text.strip():
            lines[index:index] = ["", "Output:", "", "```text", *text.rstrip().splitlines(), "```"]
    return "\n".join(lines) + "\n"


def on_post_build(config):
    line = (
        f"docs code blocks: {COUNTS['ran']} ran on {COUNTS['pages']} pages, "
        f"{COUNTS['marked']} marked no-run"
    )
    log.info(line)
    print(line)
