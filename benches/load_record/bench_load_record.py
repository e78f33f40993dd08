"""load_record: save and load a ~100M-parameter nested record with every burn-record recorder.

Compares, in the same run and on the same arrays, against `numpy.savez`/`numpy.load` (uncompressed
and
`savez_compressed`) and, when importable, `torch.save`/`torch.load(weights_only=True)`. Prints a
table
and writes JSON to benches/results/load_record.json.

    uv run python benches/load_record/bench_load_record.py               # 100M parameters
    uv run python benches/load_record/bench_load_record.py --params 10M  # scaled down

Throughput (MB/s) is the model's in-memory f32 size divided by the wall time, so recorders that
store
half precision are credited with the bytes they represent, not the bytes they write. Every save is a
burn-record atomic write (temp file + fsync + rename); numpy and torch do not fsync, which this
table
does not hide. Loads read a file that the save just wrote, so all of them hit a warm page cache.

A second case re-runs the compressed recorders (and `savez_compressed`) on bf16-rounded weights,
once each: random normal f32 is nearly incompressible, so the zstd-vs-gzip comparison only means
something on weights like these. The run ends with issue 5's targets, met or MISSED.
The safetensors case (burn-import vs `safetensors.numpy`) is `bench_safetensors.py` beside this.
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import burn_record as br

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
D_MODEL = 512
# Recorders re-run on bf16-rounded weights, where compression has something to find.
COMPRESSED = {
    br.NamedMpkGzFileRecorder,
    br.NamedMpkZstFileRecorder,
    br.BinGzFileRecorder,
    br.BinZstFileRecorder,
    br.CompactRecorder,
}


def parse_count(text: str) -> int:
    """'100M' / '2.5m' / '500k' / '1000' -> int."""
    text = text.strip().lower()
    scale = {"k": 10**3, "m": 10**6, "g": 10**9}.get(text[-1:], 1)
    return int(float(text[:-1] if scale > 1 else text) * scale)


def build_item(n_params: int, seed: int = 0, weights: str = "normal") -> dict:
    """A transformer-like module record of exactly `n_params` f32 parameters.

    Blocks of attention (4 x [d, d] + biases), MLP ([d, 4d], [4d, d] + biases) and two norms, plus
    an
    embedding table that absorbs the remainder, and a few constants like a real record.

    `weights="normal"`: i.i.d. standard normal f32, incompressible apart from the exponent bytes (a
    worst case for gzip/zstd). `weights="bf16"`: the same values rounded to bfloat16 and stored as
    f32 (the low 16 mantissa bits are zero), as weights trained in bf16 and saved in f32 are; this
    is where the compressed formats differ.
    """
    rng = np.random.default_rng(seed)
    d = D_MODEL
    counter = iter(range(10**9))

    def param(*shape):
        data = rng.standard_normal(shape, dtype=np.float32)
        if weights == "bf16":  # round to nearest even on the upper 16 bits
            bits = data.view(np.uint32)
            bits += 0x7FFF + ((bits >> 16) & 1)
            bits &= 0xFFFF0000
        return br.ParamRecord(f"p{next(counter):08x}", br.TensorData(data))

    def linear(d_in, d_out):
        return {"weight": param(d_in, d_out), "bias": param(d_out)}

    per_block = 4 * (d * d + d) + (d * 4 * d + 4 * d) + (4 * d * d + d) + 4 * d
    n_blocks = max(0, (n_params - d) // per_block)
    blocks = [
        {
            "attn": {k: linear(d, d) for k in ("query", "key", "value", "output")},
            "mlp": {"linear_inner": linear(d, 4 * d), "linear_outer": linear(4 * d, d)},
            "norm_1": {"gamma": param(d), "beta": param(d)},
            "norm_2": {"gamma": param(d), "beta": param(d)},
            "dropout": 0.1,
        }
        for _ in range(n_blocks)
    ]
    rest = n_params - n_blocks * per_block
    rows, tail = divmod(rest, d)
    item = {
        "embedding": {"weight": param(rows, d)},
        "blocks": blocks,
        "head_bias": param(tail),
        "config": {"d_model": d, "n_blocks": n_blocks, "norm_first": True},
    }
    assert (
        sum(
            p.value.num_elements()
            for p in br.flatten(item).values()
            if isinstance(p, br.ParamRecord)
        )
        == n_params
    )
    return item


def arrays_of(item: dict) -> dict[str, np.ndarray]:
    return {k: v.value.array for k, v in br.flatten(item).items() if isinstance(v, br.ParamRecord)}


def timed(fn: Callable[[], object], repeats: int) -> dict:
    samples = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t0)
    return {
        "median_s": statistics.median(samples),
        "min_s": min(samples),
        "max_s": max(samples),
        "repeats": repeats,
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
    ap.add_argument("--params", default="100M", help="parameter count, e.g. 100M, 10M, 500k")
    ap.add_argument(
        "--repeats",
        type=int,
        default=3,
        help="timed saves and loads per recorder (default: %(default)s)",
    )
    ap.add_argument("--recorders", default="", help="comma-separated recorder names (default all)")
    ap.add_argument("--no-torch", action="store_true", help="do not compare with torch.save/load")
    ap.add_argument(
        "--no-bf16",
        action="store_true",
        help="skip the second case: the compressed recorders on bf16-rounded weights",
    )
    ap.add_argument(
        "--out",
        default=str(Path(__file__).resolve().parents[1] / "results"),
        help="folder for load_record.json (default: benches/results)",
    )
    ap.add_argument("--workdir", default=None, help="where files are written (default: a temp dir)")
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
        "environment": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "numpy": np.__version__,
            "torch": None if torch is None else torch.__version__,
            "repeats": args.repeats,
            "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        },
        "results": results,
    }
    report["targets"] = targets(rows)
    print(render(report))
    print(render_targets(report["targets"]))
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "load_record.json").write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {out / 'load_record.json'}")
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
