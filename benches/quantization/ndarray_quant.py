"""Quantized kernels on NdArray vs float32: int8 x int8 -> int32 matmul, and the weight-only
packed linear at batch 1 (memory-bound decoding). Prints one JSON object.

    uv run python benches/quantization/ndarray_quant.py [--threads N] [--n 1024] [--d 4096]
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from burn_ndarray import NdArray
from burn_tensor import Tensor, module
from burn_tensor.quantization import QuantLevel, QuantScheme, QuantValue


def _median_ms(fn, reps: int) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--threads", type=int, default=None)
    ap.add_argument("--n", type=int, default=1024, help="square matmul size")
    ap.add_argument("--d", type=int, default=4096, help="linear d_in = d_out")
    ap.add_argument("--reps", type=int, default=10)
    a = ap.parse_args()
    d = NdArray(num_threads=a.threads).device() if a.threads else NdArray().device()
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.normal(size=(a.n, a.n)).astype(np.float32), d)
    y = Tensor.from_data(rng.normal(size=(a.n, a.n)).astype(np.float32), d)
    qx, qy = x.quantize_dynamic(QuantScheme()), y.quantize_dynamic(QuantScheme())
    out = {"threads": d.backend.num_threads, "n": a.n, "d": a.d}
    out["matmul_f32_ms"] = _median_ms(lambda: x.matmul(y).numpy(), a.reps)
    out["matmul_int8_ms"] = _median_ms(lambda: qx.matmul(qy).numpy(), a.reps)
    w = Tensor.from_data(rng.normal(size=(a.d, a.d)).astype(np.float32) * 0.02, d)
    v = Tensor.from_data(rng.normal(size=(1, a.d)).astype(np.float32), d)
    out["linear_b1_f32_ms"] = _median_ms(lambda: module.linear(v, w).numpy(), a.reps)
    for name, scheme in (
        ("int8", QuantScheme()),
        ("int4_b32", QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32))),
    ):
        qw = w.quantize_dynamic(scheme)
        out[f"linear_b1_{name}_ms"] = _median_ms(lambda qw=qw: module.linear(v, qw).numpy(), a.reps)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
