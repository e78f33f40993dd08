"""`rnn_sequence` (issue 37): a whole ONNX LSTM / GRU layer as one op, timed on one backend with
its own implementation (OpenCl / Cuda: burn_gpu's `rnn_steps` kernel after one projection
matmul; NdArray: its C loop) and with the contract's default (backend ops per time step), and
beside torch's `nn.LSTM` / `nn.GRU` (cuDNN on a CUDA device) when torch imports. Forward only,
float32; min and median of the timed calls (wall, after `device.sync()`), plus the largest
difference between the two burn paths.

    uv run python benches/rnn/bench_rnn_sequence.py [--backend opencl] [--sizes cpu|gpu]
        [--repeats 7] [--out benches/results]          # writes rnn_sequence.json

Sizes `cpu`: 2-layer LSTM(64, 128) and bidirectional GRU(64, 128), [seq 50, batch 1, 64] (the
ONNX report's models); `gpu` adds LSTM(256, 512) x 2 and GRU(256, 512) bidirectional at
[seq 100, batch 32].
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
_G = {"LSTM": 4, "GRU": 3}
# (name, kind, layers, bidirectional, in, hidden, seq, batch)
CPU = [
    ("lstm2_64_128", "LSTM", 2, False, 64, 128, 50, 1),
    ("gru_bi_64_128", "GRU", 1, True, 64, 128, 50, 1),
]
GPU = [
    ("lstm2_256_512_b32", "LSTM", 2, False, 256, 512, 100, 32),
    ("gru_bi_256_512_b32", "GRU", 1, True, 256, 512, 100, 32),
]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--backend", default="opencl", help="burn backend name (default opencl)")
    p.add_argument("--sizes", default="cpu", choices=("cpu", "gpu"), help="cases (default cpu)")
    p.add_argument("--repeats", type=int, default=7, help="timed calls (default 7)")
    p.add_argument("--no-default", action="store_true", help="skip the per-step default")
    p.add_argument(
        "--out", type=Path, default=ROOT / "benches" / "results", help="folder of the JSON"
    )
    return p


def _weights(case, rng):
    _, kind, layers, bi, n_in, hs, seq, batch = case
    dirs, g = 2 if bi else 1, _G[kind]
    out = []
    for k in range(layers):
        i = n_in if k == 0 else hs * dirs
        shapes = ((dirs, g * hs, i), (dirs, g * hs, hs), (dirs, 2 * g * hs))
        out.append([rng.standard_normal(s).astype(np.float32) / np.sqrt(hs) for s in shapes])
    return out, rng.standard_normal((seq, batch, n_in)).astype(np.float32)


def _time(fn, dev_sync, repeats):
    fn()
    dev_sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        dev_sync()
        times.append(time.perf_counter() - t0)
    return min(times), statistics.median(times)


def _burn_forward(dev, case, weights, x):
    from burn_tensor import Tensor, module

    _, kind, _layers, bi, _n_in, hs, seq, batch = case
    ws = [[Tensor.from_data(a, dev) for a in layer] for layer in weights]
    xt = Tensor.from_data(x, dev)
    direction = "bidirectional" if bi else "forward"

    def forward():
        h = xt
        for w, r, b in ws:
            y = module.rnn_sequence(kind, h, w, r, b, direction=direction)[0]
            # [seq, dirs, batch, H] -> the next layer's input (exact for one direction or batch 1,
            # the cases here)
            h = y.reshape([seq, batch, -1])
        return h

    return forward


def _torch_time(case, weights, x, repeats, cuda):
    try:
        import torch
    except ImportError:
        return None
    _, kind, layers, bi, n_in, hs, _seq, _batch = case
    dev = "cuda" if cuda and torch.cuda.is_available() else "cpu"
    net = getattr(torch.nn, kind)(n_in, hs, layers, bidirectional=bi).to(dev).eval()
    xt = torch.from_numpy(x).to(dev)
    sync = torch.cuda.synchronize if dev == "cuda" else (lambda: None)
    with torch.no_grad():
        return _time(lambda: net(xt), sync, repeats)


def main(argv=None) -> int:
    a = build_parser().parse_args(argv)
    from burn_tensor._ops_rnn import RnnOps
    from burn_tensor.backend import get_backend

    backend = get_backend(a.backend)
    dev = backend.device()
    cases = CPU + (GPU if a.sizes == "gpu" else [])
    rng = np.random.default_rng(0)
    rows = []
    own = type(backend).rnn_sequence
    for case in cases:
        weights, x = _weights(case, rng)
        fwd = _burn_forward(dev, case, weights, x)
        type(backend).rnn_sequence = own
        t_own = _time(fwd, dev.sync, a.repeats)
        y_own = np.asarray(fwd().into_data().array)
        t_def, diff = None, None
        if not a.no_default and "rnn_sequence" not in vars(backend):  # Fusion: per instance
            type(backend).rnn_sequence = RnnOps.rnn_sequence  # the per-step default
            try:
                t_def = _time(fwd, dev.sync, max(3, a.repeats // 2))
                diff = float(np.abs(np.asarray(fwd().into_data().array) - y_own).max())
            finally:
                type(backend).rnn_sequence = own
        t_torch = _torch_time(case, weights, x, a.repeats, cuda=a.backend.endswith("cuda"))
        row = {"case": case[0], "own_ms": [v * 1e3 for v in t_own],
               "default_ms": None if t_def is None else [v * 1e3 for v in t_def],
               "torch_ms": None if t_torch is None else [v * 1e3 for v in t_torch],
               "max_abs_diff": diff}  # fmt: skip
        rows.append(row)
        fmt = lambda t: "-" if t is None else f"{t[0] * 1e3:8.2f} / {t[1] * 1e3:8.2f}"  # noqa: E731
        print(f"{case[0]:22s} own {fmt(t_own)} ms  default {fmt(t_def)} ms  "
              f"torch {fmt(t_torch)} ms  diff {diff}")  # fmt: skip
    a.out.mkdir(parents=True, exist_ok=True)
    out = a.out / "rnn_sequence.json"
    out.write_text(json.dumps({"backend": a.backend, "device": str(dev), "rows": rows}, indent=1))
    print(f"(min / median ms) -> {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
