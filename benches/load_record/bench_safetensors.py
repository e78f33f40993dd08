"""load_record, safetensors case: load a ~100M-parameter safetensors file with burn-import vs
`safetensors.numpy`.

    uv run python benches/load_record/bench_safetensors.py                # 100M parameters
    uv run python benches/load_record/bench_safetensors.py --params 1M    # scaled down

The file holds the same transformer-like f32 tensors as `bench_load_record.py` (same builder),
written once by burn-import's writer. Timed, each on a warm page cache:

- `burn_import.load_safetensors`: memory-mapped read, validation, one copy per tensor;
- `SafetensorsFileRecorder().load`: the same plus key nesting and precision settings (the record
  a module's `load_record` accepts, without a target module);
- `safetensors.numpy.load_file` (the reference, when `pip install safetensors` is present);
- `numpy.fromfile` of the whole data buffer (a lower bound: one read, no per-tensor work).

The target (issue 17): burn-import's load takes at most 1.5x the time of `safetensors.numpy`.
Prints a table and writes JSON to benches/results/load_record_safetensors.json.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import add_common_args, arrays_of, build_item, environment, parse_count
from _common import timed, write_report
from burn_import import SafetensorsFileRecorder, load_safetensors, save_safetensors

TARGET = 1.5


def reference_loader():
    try:
        from safetensors.numpy import load_file
    except ImportError:
        return None
    return load_file


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, "timed loads per loader (median, min and max are reported)")
    return ap


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    n = parse_count(args.params)
    arrays = arrays_of(build_item(n))
    mb = n * 4 / 1e6
    reference = reference_loader()
    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        path = save_safetensors(arrays, Path(tmp) / "model.safetensors")
        del arrays
        header = 8 + int.from_bytes(path.read_bytes()[:8], "little")
        rows["burn_import.load_safetensors"] = timed(lambda: load_safetensors(path), args.repeats)
        recorder = SafetensorsFileRecorder()
        rows["SafetensorsFileRecorder.load"] = timed(lambda: recorder.load(path), args.repeats)
        if reference is not None:
            rows["safetensors.numpy.load_file"] = timed(lambda: reference(str(path)), args.repeats)
        rows["numpy.fromfile (bound)"] = timed(
            lambda: np.fromfile(path, dtype=np.float32, offset=header), args.repeats
        )
        size = path.stat().st_size
    ref = rows.get("safetensors.numpy.load_file")
    results = [
        {
            "name": name,
            "params": {"n_params": n, "model_mb": mb},
            "file_bytes": size,
            "times": {"load": t},
            "mb_per_s": mb / t["median_s"],
            "ratio_vs_safetensors": None if ref is None else t["median_s"] / ref["median_s"],
        }
        for name, t in rows.items()
    ]
    targets = []
    if ref is not None:
        for name in ("burn_import.load_safetensors", "SafetensorsFileRecorder.load"):
            ratio = rows[name]["median_s"] / ref["median_s"]
            targets.append(
                {
                    "target": f"{name} <= {TARGET}x safetensors.numpy.load_file",
                    "measured": f"{ratio:.2f}x",
                    "met": ratio <= TARGET,
                }
            )
    report = {
        "suite": "load_record_safetensors",
        "description": f"load of a {n / 1e6:g}M-parameter f32 safetensors file",
        "status": "ok",
        "environment": environment(
            args.repeats,
            safetensors=None if reference is None else _version("safetensors"),
            load_average=os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
        ),
        "results": results,
        "targets": targets,
    }
    print(render(report))
    write_report(report, args.out)
    return report


def _version(name: str) -> str:
    from importlib.metadata import version

    return version(name)


def render(report: dict) -> str:
    env = report["environment"]
    lines = [
        (
            f"== {report['suite']}: {report['description']} "
            f"[safetensors {env['safetensors'] or 'not installed'}; load avg {env['load_average']}]"
        ),
        f"{'loader':32s} {'load s':>8s} {'MB/s':>8s} {'vs safetensors':>15s}",
    ]
    for r in report["results"]:
        ratio = r["ratio_vs_safetensors"]
        lines.append(
            f"{r['name']:32s} {r['times']['load']['median_s']:8.3f} {r['mb_per_s']:8.0f} "
            f"{'-' if ratio is None else f'{ratio:.2f}x':>15s}"
        )
    for t in report["targets"]:
        lines.append(f"target: {t['target']}: {'met' if t['met'] else 'MISSED'} ({t['measured']})")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
