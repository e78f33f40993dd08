"""Regenerate the supported-ops table of the package README from the converter table.

    python -m burn_import.onnx.optable packages/burn-import/README.md [--results results.json]

Rewrites the text between `<!-- ops-table:start -->` and `<!-- ops-table:end -->`. With
`--results` (the suite's `--json` output) each op also shows its node test cases passed/total.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import defaultdict
from pathlib import Path

from ._registry import load_all

START, END = "<!-- ops-table:start -->", "<!-- ops-table:end -->"


def table(results: dict | None = None) -> str:
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    if results:
        for c in results["cases"]:
            if c["kind"] == "node":
                per[c["op"]][1] += 1
                per[c["op"]][0] += c["status"] == "pass"
    ops = load_all()
    by_family: dict[str, list[str]] = defaultdict(list)
    for name, spec in ops.items():
        by_family[spec.family].append(name)
    head = "| family | op | opsets | attributes |" + (" node tests |" if results else "")
    lines = [head, "|---|---|---|---|" + ("---|" if results else "")]
    for family in sorted(by_family):
        for name in sorted(by_family[family]):
            spec = ops[name]
            attrs = ", ".join(sorted(spec.attrs)) or "-"
            row = f"| {family} | {name} | {spec.since}-{spec.until} | {attrs} |"
            if results:
                p, t = per.get(name, [0, 0])
                row += f" {p}/{t} |" if t else " - |"
            lines.append(row)
    return "\n".join(lines)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="python -m burn_import.onnx.optable",
        description="Regenerate the supported-ops table in a README.",
    )
    ap.add_argument("readme", help="the README whose ops table is rewritten")
    ap.add_argument("--results", help="suite results JSON (pass counts per op)")
    return ap


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    results = json.loads(Path(args.results).read_text()) if args.results else None
    path = Path(args.readme)
    text = path.read_text()
    if START not in text:
        print(f"{path}: no {START} marker", file=sys.stderr)
        return 1
    new = re.sub(
        re.escape(START) + ".*?" + re.escape(END),
        lambda _: f"{START}\n{table(results)}\n{END}",
        text,
        flags=re.DOTALL,
    )
    path.write_text(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
