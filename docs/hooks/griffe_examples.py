"""griffe extension: read the workspace's `Example:` docstring sections as examples.

The packages' docstrings say `Example:` (singular) above their doctests; griffe's Google parser
knows only `Examples:`, and would render the doctest as prose, where `[[0, 1], [2, 3]]` reads as a
markdown link (a warning, so a failed strict build). Renaming the section title at load time
keeps the sources as they are.
"""

import re

import griffe

_TITLE = re.compile(r"^(\s*)Example:\s*$", re.MULTILINE)


class ExampleSections(griffe.Extension):
    def on_instance(self, *, obj, **kwargs):
        doc = getattr(obj, "docstring", None)
        if doc is not None and "Example:" in doc.value:
            doc.value = _TITLE.sub(r"\1Examples:", doc.value)
