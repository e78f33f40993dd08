"""The committed lists of ONNX backend-suite cases expected to pass, one file per backend.

A pass *rate* lets any one case break unnoticed while others start passing; a list does not.
Each line of a list is `<kind> <case>` (kind as in `suite.KINDS`), sorted, with `#` comments:

    # ONNX backend suite: cases expected to pass on NdArray
    node test_abs
    light test_squeezenet

`check_expected` compares a run with a list: a listed case that did not pass (failed, skipped or
is gone from the installed onnx) is a regression; an unlisted case that passed is a new pass,
reported with the command that refreshes the list (`regenerate_command`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

#: where the committed lists live, relative to the repository root (the README's commands use it)
LIST_DIR = "packages/burn-import/tests/onnx_suite_expected"


class ExpectedListError(ValueError):
    """A malformed expected-pass list: the message names the file, the line and what is wrong."""


@dataclass
class Verdict:
    """How a run compares with its expected-pass list."""

    regressions: list[str] = field(default_factory=list)  # "name: status message", listed cases
    new_passes: list[str] = field(default_factory=list)  # unlisted cases that passed
    listed: int = 0
    checked: int = 0  # listed cases that ran

    def report(self, label: str, regenerate: str) -> list[str]:
        """Lines for the session summary: the counts, then every new pass with the hint."""
        lines = [
            f"{label}: {self.checked - len(self.regressions)}/{self.listed} expected passes"
            f" still pass, {len(self.regressions)} regressed, {len(self.new_passes)} new passes"
        ]
        if self.new_passes:
            lines.append(
                f"  {len(self.new_passes)} cases pass but are not in the list (add them: "
                f"{regenerate}): " + ", ".join(self.new_passes)
            )
        return lines


def regenerate_command(device: str) -> str:
    """The documented command that rewrites `<device>.txt` from a fresh run of every kind."""
    return (
        f"uv run python -m burn_import.onnx.suite --device {device} --workers 2"
        f" --write-expected {LIST_DIR}/{device}.txt"
    )


def read_expected(path: str | Path, kinds=None) -> dict[str, str]:
    """`{case name: kind}` of a list file; `kinds` (the known kind names) checks each line's."""
    out: dict[str, str] = {}
    for no, raw in enumerate(Path(path).read_text().splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = line.split()
        if len(parts) != 2 or not parts[1].startswith("test_"):
            raise ExpectedListError(f"{path}:{no}: expected '<kind> test_<case>', got {raw!r}")
        kind, name = parts
        if kinds is not None and kind not in kinds:
            raise ExpectedListError(f"{path}:{no}: unknown kind {kind!r} (one of {sorted(kinds)})")
        if name in out:
            raise ExpectedListError(f"{path}:{no}: {name} is listed twice")
        out[name] = kind
    return out


def format_expected(cases, header: list[str]) -> str:
    """The list file's text for the passing cases of `cases` (CaseResult-like objects)."""
    rows = sorted((c.kind, c.name) for c in cases if c.status == "pass")
    head = [f"# {h}" for h in header]
    return "\n".join(head + [f"{k} {n}" for k, n in rows]) + "\n"


def check_expected(cases, expected: dict[str, str], ran_kinds) -> Verdict:
    """Compare `cases` (the results of a run over `ran_kinds`) with `expected`.

    Only listed cases of the kinds that ran are checked, so a run of the node kind alone checks
    the node lines of a list that also has model lines.
    """
    by_name = {c.name: c for c in cases}
    wanted = {n for n, k in expected.items() if k in ran_kinds}
    v = Verdict(listed=len(wanted))
    for name in sorted(wanted):
        c = by_name.get(name)
        if c is None:
            v.regressions.append(f"{name}: did not run (not in the installed onnx's suite?)")
            continue
        v.checked += 1
        if c.status != "pass":
            v.regressions.append(f"{name}: {c.status} {c.message}".rstrip())
    v.new_passes = sorted(c.name for c in cases if c.status == "pass" and c.name not in wanted)
    return v
