"""A suite's report as text (the table and target verdicts) and as a JSON file."""

from __future__ import annotations

import json
import os
from pathlib import Path

IMPLS = ("burn", "numpy", "torch")


def fmt_time(s: float | None) -> str:
    if s is None:
        return "-"
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}" if s / scale < 100 else f"{s / scale:.0f} {unit}"
    return f"{s * 1e9:.0f} ns"


def fmt_ratio(r: float | None) -> str:
    return "-" if r is None else f"{r:.2f}x"


def _fmt_cpu(v: float | None) -> str:
    return "-" if v is None else f"{v:.2f}"


def throughput(r: dict) -> str | None:
    """'burn 2.41 TB/s, torch 2.95 TB/s (burn at 82% of torch)' for a case whose params give the
    bytes it moves (`bytes`) or the floating-point operations it does (`flops`)."""
    if r.get("status") != "ok":
        return None
    p, t = r["params"], r["times"]
    if p.get("bytes"):
        amount, unit, scale = p["bytes"], "GB/s", 1e9
    elif p.get("flops"):
        amount, unit, scale = p["flops"], "TFLOP/s", 1e12
    else:
        return None
    rates = {k: amount / t[k]["median_s"] / scale for k in IMPLS if k in t}
    parts = [f"{k} {v:.4g} {unit}" for k, v in rates.items()]
    if "burn" in rates and "torch" in rates:
        parts.append(f"(burn at {100 * rates['burn'] / rates['torch']:.0f}% of torch)")
    return ", ".join(parts)


def render(report: dict) -> str:
    """The suite's table and target verdicts as text."""
    env = report["environment"]
    torch_note = (
        f"torch {env['torch']} ({env['torch_threads']} threads)"
        if env["torch"]
        else "torch: not installed"
    )
    load = env.get("load_average")
    load_note = f"; load {load[0]:.1f} on {env['cpu_count']} cpus" if load else ""
    lines = [
        f"== {report['suite']}: {report['description']} [{report['status']}; {torch_note}{load_note}]"
    ]
    header = ["case", "burn", "numpy", "torch", "burn/numpy", "burn/torch", "burn cpu/wall"]
    rows = []
    for r in report["results"]:
        if r["status"] != "ok":
            rows.append([r["name"], r["status"], "", "", "", "", ""])
            continue
        t = r["times"]
        rows.append(
            [
                r["name"],
                *(fmt_time(t[k]["median_s"]) if k in t else "-" for k in IMPLS),
                fmt_ratio(r["ratios"].get("burn/numpy")),
                fmt_ratio(r["ratios"].get("burn/torch")),
                _fmt_cpu(t.get("burn", {}).get("cpu_per_wall")),
            ]
        )
    widths = [max(len(str(x)) for x in col) for col in zip(header, *rows)]
    sep = "  "
    lines.append(
        sep.join(
            h.ljust(w) if i == 0 else h.rjust(w) for i, (h, w) in enumerate(zip(header, widths))
        )
    )
    lines.append(sep.join("-" * w for w in widths))
    for row in rows:
        lines.append(
            sep.join(
                str(x).ljust(w) if i == 0 else str(x).rjust(w)
                for i, (x, w) in enumerate(zip(row, widths))
            )
        )
    for r in report["results"]:
        if r.get("error"):
            lines.append(f"  {r['name']}: {r['error']}")
        rate = throughput(r)
        if rate:
            lines.append(f"  {r['name']}: {rate}")
    for tg in report["targets"]:
        unit = " us" if tg["metric"] == "burn_us" else "x"
        v = "" if tg["value"] is None else f" = {tg['value']:.2f}{unit}"
        lines.append(
            f"  target: {tg['description']} [{tg['case']}] "
            f"{tg['metric']}{v} (limit {tg['limit']:g}{unit}): {tg['verdict'].upper()}"
        )
    return "\n".join(lines)


def write_json(report: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{report['suite']}.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    os.replace(tmp, path)
    return path
