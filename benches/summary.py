"""One compact table of every suite's JSON in a folder: `python -m benches.summary DIR`.

Columns: suite, case, burn and torch median times in ms, burn/torch, and the CPU seconds per
wall second of burn and of torch over their timed loops (about the number of busy cores,
spinning threads included).

Example:
    >>> rows = table_rows([{"suite": "s", "results": [{"name": "c", "status": "ok", "times": {}}]}])
    >>> rows[0][:2]
    ['s', 'c']
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def _ms(t: dict | None) -> str:
    return "-" if not t else f"{t['median_s'] * 1e3:.3f}"


def _cpu(t: dict | None) -> str:
    v = None if not t else t.get("cpu_per_wall")
    return "-" if v is None else f"{v:.1f}"


def table_rows(reports: list[dict]) -> list[list[str]]:
    rows = []
    for rep in reports:
        for r in rep["results"]:
            t = r.get("times", {})
            ratio = r.get("ratios", {}).get("burn/torch")
            rows.append(
                [
                    rep["suite"],
                    r["name"] if r["status"] == "ok" else f"{r['name']} ({r['status']})",
                    _ms(t.get("burn")),
                    _ms(t.get("torch")),
                    "-" if ratio is None else f"{ratio:.2f}x",
                    _cpu(t.get("burn")),
                    _cpu(t.get("torch")),
                ]
            )
    return rows


def render(rows: list[list[str]]) -> str:
    header = ["suite", "case", "burn ms", "torch ms", "burn/torch", "burn cpu/s", "torch cpu/s"]
    widths = [max(len(x) for x in col) for col in zip(header, *rows)]
    lines = []
    for i, row in enumerate([header, ["-" * w for w in widths], *rows]):
        cells = [c.ljust(w) if j < 2 else c.rjust(w) for j, (c, w) in enumerate(zip(row, widths))]
        lines.append("  ".join(cells).rstrip())
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    folder = Path(args[0] if args else "benches/results")
    order = args[1].split(",") if len(args) > 1 else None
    reports = [json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))]
    if order:
        rank = {name: i for i, name in enumerate(order)}
        reports.sort(key=lambda r: rank.get(r["suite"], len(rank)))
    print(render(table_rows(reports)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
