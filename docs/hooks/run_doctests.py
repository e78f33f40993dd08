"""mkdocs hook: runs the doctests of every object the API reference shows (issue 32, item 8).

The API pages (`::: dotted.path` lines, rendered by mkdocstrings) show the docstrings' `>>>`
examples; this runs them before the build, each object's examples in the globals of the module
that defines it, and fails the build on the first one that fails, naming it.
"""

import doctest
import importlib
import logging
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

log = logging.getLogger("mkdocs.hooks.run_doctests")
_DIRECTIVE = re.compile(r"^::: ([\w.]+)", re.MULTILINE)
COUNTS = {"objects": 0, "examples": 0}


def _resolve(path: str):
    try:
        return importlib.import_module(path)
    except ImportError:
        module, _, name = path.rpartition(".")
        return getattr(importlib.import_module(module), name)


def on_pre_build(config):
    COUNTS.update(objects=0, examples=0)
    paths = []
    for page in sorted(Path(config["docs_dir"]).rglob("*.md")):
        paths += _DIRECTIVE.findall(page.read_text(encoding="utf-8"))
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    for path in paths:
        obj = _resolve(path)
        COUNTS["objects"] += 1
        for test in doctest.DocTestFinder(recurse=True).find(obj, path):
            if not test.examples:
                continue
            home = getattr(obj, "__module__", None) or path
            test.globs = dict(vars(importlib.import_module(home)))
            report = []
            result = doctest.DocTestRunner(optionflags=flags).run(test, out=report.append)
            if result.failed:
                raise PluginError(f"doctest of {test.name} failed:\n{''.join(report)}")
            COUNTS["examples"] += result.attempted


def on_post_build(config):
    line = f"docs doctests: {COUNTS['examples']} examples of {COUNTS['objects']} API objects ran"
    log.info(line)
    print(line)
