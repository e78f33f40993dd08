"""Quantized kernels vs float: int8 x int8 -> int32 matmul, and the weight-only packed linear
at batch 1 (memory-bound decoding). Prints one JSON object.

    uv run python benches/quantization/quant_kernels.py [--threads N] [--n 1024] [--d 4096]
    uv run python benches/quantization/quant_kernels.py --backend cuda --n 8192 --d 8192 --half

`--backend` picks NdArray (default), cuda or opencl; times wait for the device (`sync`).
`--half` also times the float16 linear (the issue's bar for int4 at batch 1 on a GPU).
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
    ap.add_argument("--backend", default="ndarray", choices=["ndarray", "cuda", "opencl"])
    ap.add_argument("--half", action="store_true", help="also time the float16 linear")
    a = ap.parse_args()
    if a.backend == "cuda":
        from burn_cuda import Cuda

        d = Cuda().device()
    elif a.backend == "opencl":
        from burn_opencl import OpenCl

        d = OpenCl().device()
    else:
        d = NdArray(num_threads=a.threads).device() if a.threads else NdArray().device()
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.normal(size=(a.n, a.n)).astype(np.float32), d)
    y = Tensor.from_data(rng.normal(size=(a.n, a.n)).astype(np.float32), d)
    qx, qy = x.quantize_dynamic(QuantScheme()), y.quantize_dynamic(QuantScheme())
    out = {"backend": repr(d.backend), "threads": getattr(d.backend, "num_threads", None)}
    out.update(n=a.n, d=a.d)

    def timed(fn):
        return _median_ms(lambda: (fn(), d.sync()), a.reps)

    out["matmul_f32_ms"] = timed(lambda: x.matmul(y))
    out["matmul_int8_ms"] = timed(lambda: qx.matmul(qy))
    out["matmul_int8_tops"] = 2 * a.n**3 / (out["matmul_int8_ms"] * 1e-3) / 1e12
    w = Tensor.from_data(rng.normal(size=(a.d, a.d)).astype(np.float32) * 0.02, d)
    v = Tensor.from_data(rng.normal(size=(1, a.d)).astype(np.float32), d)
    out["linear_b1_f32_ms"] = timed(lambda: module.linear(v, w))
    if a.half:
        wh, vh = w.cast("float16"), v.cast("float16")
        out["linear_b1_f16_ms"] = timed(lambda: module.linear(vh, wh))
    for name, scheme in (
        ("int8", QuantScheme()),
        ("int4_b32", QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32))),
    ):
        qw = w.quantize_dynamic(scheme)
        out[f"linear_b1_{name}_ms"] = timed(lambda qw=qw: module.linear(v, qw))
    print(json.dumps(out))


if __name__ == "__main__":
    main()
