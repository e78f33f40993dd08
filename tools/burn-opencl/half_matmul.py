"""OpenCl float16 / bfloat16 matmul 4096^2 beside torch's float16 matmul (issue 34: OpenCl
float16 matmul >= 50% of torch's on the same GPU), plus the float32 GEMM it runs through.

    python3 tools/burn-opencl/half_matmul.py [--n 4096] [--device-type gpu] [--quick]

OpenCl has no half GEMM kernel: a half matmul widens both operands to float32 (cast kernel),
runs the float32 GEMM and rounds the product once, so expect the float32 GEMM's speed minus the
three conversion passes. Times are medians of a loop closed by a device sync.
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np


def timeit(fn, sync, repeats: int) -> float:
    fn()
    sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def build_parser() -> argparse.ArgumentParser:
    """The tool's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    ap.add_argument("--n", type=int, default=4096, help="matrix size n (n x n @ n x n)")
    ap.add_argument("--device-type", default="gpu", help="OpenCL device type: gpu, cpu or all")
    ap.add_argument("--quick", action="store_true", help="n = 256, 2 repeats (a smoke test)")
    return ap


def main() -> None:
    args = build_parser().parse_args()
    n, repeats = (256, 2) if args.quick else (args.n, 10)
    from burn_opencl import OpenCl
    from burn_tensor import Tensor

    flop = 2.0 * n**3
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, n))
    rows = []
    for dt in ("float32", "float16", "bfloat16"):
        dev = OpenCl(args.device_type, float_dtype=dt).device()
        ta, tb = Tensor.from_data(a, dev), Tensor.from_data(b, dev)
        sec = timeit(lambda ta=ta, tb=tb: ta @ tb, dev.sync, repeats)
        rows.append((f"burn OpenCl {dt}", sec))
    try:
        import torch

        if torch.cuda.is_available():
            x = torch.randn(n, n, device="cuda", dtype=torch.float16)
            y = torch.randn(n, n, device="cuda", dtype=torch.float16)
            rows.append(
                ("torch cuda float16", timeit(lambda: x @ y, torch.cuda.synchronize, repeats))
            )
    except ImportError:
        pass
    ref = dict(rows).get("torch cuda float16")
    print(f"matmul {n}^2")
    for name, sec in rows:
        share = f"  {100 * ref / sec:5.1f}% of torch f16" if ref else ""
        print(f"{name:22s} {sec * 1e3:9.3f} ms  {flop / sec / 1e12:8.2f} TFLOP/s{share}")


if __name__ == "__main__":
    main()
