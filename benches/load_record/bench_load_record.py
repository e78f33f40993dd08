"""load_record: save and load a ~100M-parameter nested record with every burn-record recorder.

Compares, in the same run and on the same arrays, against `numpy.savez`/`numpy.load` (uncompressed
and `savez_compressed`) and, when importable, `torch.save`/`torch.load(weights_only=True)`. Prints
a table and writes JSON to benches/results/load_record.json.

    uv run python benches/load_record/bench_load_record.py               # 100M parameters
    uv run python benches/load_record/bench_load_record.py --params 10M  # scaled down

Throughput (MB/s) is the model's in-memory f32 size divided by the wall time, so recorders that
store half precision are credited with the bytes they represent, not the bytes they write. Every
save is a burn-record atomic write (temp file + fsync + rename); numpy and torch do not fsync, which
this table does not hide. Loads read a file that the save just wrote, so all of them hit a warm
page cache.

A second case re-runs the compressed recorders (and `savez_compressed`) on bf16-rounded weights,
once each: random normal f32 is nearly incompressible, so the zstd-vs-gzip comparison only means
something on weights like these. The run ends with issue 5's targets, met or MISSED.
The safetensors case (burn-import vs `safetensors.numpy`) is `bench_safetensors.py` beside this;
the record both time is built in `_common.py`.
"""

from __future__ import annotations

import argparse
import gc
import os
import sys
import tempfile
from pathlib import Path

import numpy as np

import burn_record as br

sys.path.insert(0, str(Path(__file__).resolve().parent))  # _common, when run as a script
from _common import add_common_args, arrays_of, build_item, environment, parse_count
from _common import timed, write_report

RECORDERS = [
    br.NamedMpkFileRecorder,
    br.NamedMpkGzFileRecorder,
    br.NamedMpkZstFileRecorder,
    br.BinFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.JsonGzFileRecorder,
    br.PrettyJsonFileRecorder,
    br.CompactRecorder,
    br.BinBytesRecorder,
    br.NamedMpkBytesRecorder,
]
# Recorders re-run on bf16-rounded weights, where compression has something to find.
COMPRESSED = {
    br.NamedMpkGzFileRecorder,
    br.NamedMpkZstFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.CompactRecorder,
}


def bench_recorder(cls, item, workdir: Path, repeats: int) -> dict:
    rec = cls()
    if isinstance(rec, br.FileRecorder):
        path = workdir / "model"
        save = timed(lambda: rec.record(item, path), repeats)
        final = rec.file_path(path)
        size = final.stat().st_size
        load = timed(lambda: rec.load(final), repeats)
        final.unlink()
    else:
        holder = {}
        save = timed(lambda: holder.__setitem__("b", rec.record(item)), repeats)
        size = len(holder["b"])
        load = timed(lambda: rec.load(holder["b"]), repeats)
    return {"save": save, "load": load, "file_bytes": size}


def bench_numpy(arrays, workdir: Path, repeats: int, compressed: bool) -> dict:
    path = workdir / ("ref_z.npz" if compressed else "ref.npz")
    saver = np.savez_compressed if compressed else np.savez
    save = timed(lambda: saver(path, **arrays), repeats)

    def load():
        with np.load(path) as f:
            return {k: f[k] for k in f.files}  # materialize every array, as a loader must

    out = {"save": save, "load": timed(load, repeats), "file_bytes": path.stat().st_size}
    path.unlink()
    return out


def bench_torch(torch, arrays, workdir: Path, repeats: int) -> dict:
    state = {k: torch.from_numpy(v) for k, v in arrays.items()}
    path = workdir / "ref.pt"
    save = timed(lambda: torch.save(state, path), repeats)
    load = timed(lambda: torch.load(path, weights_only=True), repeats)
    out = {"save": save, "load": load, "file_bytes": path.stat().st_size}
    path.unlink()
    return out


def load_torch(enabled: bool):
    if not enabled:
        return None
    try:
        import torch
    except Exception:  # noqa: BLE001 - any import failure means "compare without torch"
        return None
    torch.set_num_threads(os.cpu_count() or 1)
    return torch


def build_parser() -> argparse.ArgumentParser:
    """The command line of `benches/load_record/bench_load_record.py`."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    add_common_args(ap, "timed saves and loads per recorder")
    ap.add_argument("--recorders", default="", help="comma-separated recorder names (default all)")
    ap.add_argument("--no-torch", action="store_true", help="do not compare with torch.save/load")
    ap.add_argument(
        "--no-bf16",
        action="store_true",
        help="skip the second case: the compressed recorders on bf16-rounded weights",
    )
    return ap


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)

    n = parse_count(args.params)
    wanted = {s.strip() for s in args.recorders.split(",") if s.strip()}
    recorders = [c for c in RECORDERS if not wanted or c.__name__ in wanted]
    torch = load_torch(not args.no_torch)
    item = build_item(n)
    arrays = arrays_of(item)
    mb = n * 4 / 1e6

    rows: dict[str, dict] = {}
    with tempfile.TemporaryDirectory(dir=args.workdir) as tmp:
        work = Path(tmp)
        for cls in recorders:
            print(f"  {cls.__name__} ...", file=sys.stderr, flush=True)
            rows[cls.__name__] = bench_recorder(cls, item, work, args.repeats)
        rows["numpy.savez"] = bench_numpy(arrays, work, args.repeats, compressed=False)
        rows["numpy.savez_compressed"] = bench_numpy(arrays, work, args.repeats, compressed=True)
        if torch is not None:
            rows["torch.save"] = bench_torch(torch, arrays, work, args.repeats)
        if not args.no_bf16:
            del item, arrays
            gc.collect()
            item = build_item(n, weights="bf16")
            arrays = arrays_of(item)
            for cls in recorders:
                if cls in COMPRESSED:
                    print(f"  {cls.__name__} (bf16 weights) ...", file=sys.stderr, flush=True)
                    rows[f"{cls.__name__} [bf16]"] = bench_recorder(cls, item, work, 1)
            # One repeat: gzip finds many matches here and runs at a few MB/s.
            rows["numpy.savez_compressed [bf16]"] = bench_numpy(arrays, work, 1, compressed=True)

    results = []
    np_ref, torch_ref = rows["numpy.savez"], rows.get("torch.save")
    for name, r in rows.items():
        entry = {
            "name": name,
            "params": {"n_params": n, "model_mb": mb},
            "status": "ok",
            "file_bytes": r["file_bytes"],
            "times": {"save": r["save"], "load": r["load"]},
            "mb_per_s": {op: mb / r[op]["median_s"] for op in ("save", "load")},
            "ratios": {},
        }
        for ref_name, ref in (("numpy", np_ref), ("torch", torch_ref)):
            if ref is not None:
                for op in ("save", "load"):
                    entry["ratios"][f"{op} burn/{ref_name}"] = (
                        r[op]["median_s"] / ref[op]["median_s"]
                    )
        results.append(entry)
    report = {
        "suite": "load_record",
        "description": f"save + load of a {n / 1e6:g}M-parameter f32 nested record",
        "status": "ok",
        "environment": environment(
            args.repeats, torch=None if torch is None else torch.__version__
        ),
        "results": results,
    }
    report["targets"] = targets(rows)
    print(render(report))
    print(render_targets(report["targets"]))
    write_report(report, args.out)
    return report


def targets(rows: dict[str, dict]) -> list[dict]:
    """Issue 5's targets, each with its measured value and whether it is met."""
    out = []

    def load_s(name):
        return rows[name]["load"]["median_s"]

    if "NamedMpkFileRecorder" in rows:
        ratio = load_s("numpy.savez") / load_s("NamedMpkFileRecorder")
        out.append(
            {
                "target": "NamedMpkFileRecorder load >= 50% of numpy.load throughput",
                "measured": f"{ratio:.0%} of numpy.load",
                "met": ratio >= 0.5,
            }
        )
    for suffix in ("", " [bf16]"):
        for zst, gz in (
            ("NamedMpkZstFileRecorder", "NamedMpkGzFileRecorder"),
            ("BinZstFileRecorder", "BinGzFileRecorder"),
        ):
            z, g = rows.get(zst + suffix), rows.get(gz + suffix)
            if z is None or g is None:
                continue
            size = z["file_bytes"] / g["file_bytes"]
            save = g["save"]["median_s"] / z["save"]["median_s"]
            load = g["load"]["median_s"] / z["load"]["median_s"]
            out.append(
                {
                    "target": f"{zst}{suffix} smaller than {gz} at >= its speed",
                    "measured": f"size {size:.3f}x, save {save:.1f}x, load {load:.1f}x faster",
                    "met": size < 1 and save >= 1 and load >= 1,
                }
            )
    return out


def render_targets(rows: list[dict]) -> str:
    if not rows:
        return ""
    width = max(len(r["target"]) for r in rows)
    lines = ["== targets (issue 5)"]
    for r in rows:
        status = "met   " if r["met"] else "MISSED"
        lines.append(f"{r['target'].ljust(width)}  {status}  {r['measured']}")
    return "\n".join(lines)


def render(report: dict) -> str:
    head = [
        "format",
        "file MB",
        "save s",
        "save MB/s",
        "load s",
        "load MB/s",
        "save/np",
        "load/np",
        "save/torch",
        "load/torch",
    ]
    rows = []
    for r in report["results"]:
        ratio = r["ratios"]
        rows.append(
            [
                r["name"],
                f"{r['file_bytes'] / 1e6:.1f}",
                f"{r['times']['save']['median_s']:.3f}",
                f"{r['mb_per_s']['save']:.0f}",
                f"{r['times']['load']['median_s']:.3f}",
                f"{r['mb_per_s']['load']:.0f}",
                *(
                    f"{ratio[k]:.2f}x" if k in ratio else "-"
                    for k in (
                        "save burn/numpy",
                        "load burn/numpy",
                        "save burn/torch",
                        "load burn/torch",
                    )
                ),
            ]
        )
    widths = [max(len(x) for x in col) for col in zip(head, *rows, strict=True)]

    def line(cells: list[str]) -> str:
        pairs = enumerate(zip(cells, widths, strict=True))
        return "  ".join(c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in pairs)

    env = report["environment"]
    title = (
        f"== load_record: {report['description']} "
        f"[torch {env['torch'] or 'not installed'}; {env['cpu_count']} CPUs]"
    )
    return "\n".join([title, line(head), "  ".join("-" * w for w in widths), *map(line, rows)])


if __name__ == "__main__":
    main()
