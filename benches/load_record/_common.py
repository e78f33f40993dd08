"""What both load_record benches share: the ~100M-parameter record they time, the timer, their
common command-line options and the JSON report they write."""

from __future__ import annotations

import argparse
import gc
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import burn_record as br

D_MODEL = 512


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


def add_common_args(ap: argparse.ArgumentParser, repeats_help: str) -> None:
    """--params, --repeats, --out and --workdir, as both benches take them."""
    ap.add_argument("--params", default="100M", help="parameter count, e.g. 100M, 10M, 500k")
    ap.add_argument("--repeats", type=int, default=3, help=f"{repeats_help} (default: %(default)s)")
    ap.add_argument(
        "--out",
        default=str(Path(__file__).resolve().parents[1] / "results"),
        help="folder for the JSON result (default: benches/results)",
    )
    ap.add_argument("--workdir", default=None, help="where files are written (default: a temp dir)")


def environment(repeats: int, **extra) -> dict:
    """The machine and library versions a report was measured with, plus `extra`."""
    return {
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "numpy": np.__version__,
        **extra,
        "repeats": repeats,
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }


def write_report(report: dict, out: str) -> Path:
    """`report` as `<out>/<suite>.json`; prints where it went."""
    folder = Path(out)
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"{report['suite']}.json"
    path.write_text(json.dumps(report, indent=2) + "\n")
    print(f"wrote {path}")
    return path
