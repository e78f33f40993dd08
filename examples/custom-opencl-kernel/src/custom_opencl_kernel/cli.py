"""`custom-opencl-kernel`: run the fused kernel beside the reference, forward and backward.

uv run custom-opencl-kernel                 # the first OpenCL device (a GPU if present)
uv run custom-opencl-kernel --device-type cpu --float64
"""

from __future__ import annotations

import argparse
import time

import numpy as np
from burn_autodiff import Autodiff
from burn_opencl import OpenCl
from burn_tensor import Distribution, Tensor

from .backward import matmul_add_relu_custom, matmul_add_relu_reference


def _inputs(device, shapes, seed):
    device.seed(seed)
    return [Tensor.random(s, Distribution.normal(0, 1), device).require_grad() for s in shapes]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument(
        "--device-type", default="all", choices=["all", "gpu", "cpu"],
        help="OpenCL device type to run on (default: %(default)s)",
    )  # fmt: skip
    p.add_argument("--float64", action="store_true", help="run in float64 instead of float32")
    p.add_argument("--size", type=int, default=64, help="m = k = n of each batch item")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    backend = OpenCl(args.device_type, float_dtype="float64" if args.float64 else "float32")
    device = Autodiff(backend).device()
    n = args.size
    shapes = ([8, n, n], [8, n, n], [1, n, n])  # bias broadcast over the batch
    print(f"device: {backend.device_info()}, {backend.float_dtype.value}, shapes {shapes}")

    results = {}
    for name, fn in (("custom", matmul_add_relu_custom), ("reference", matmul_add_relu_reference)):
        lhs, rhs, bias = _inputs(device, shapes, seed=7)
        out = fn(lhs, rhs, bias)
        grads = out.sum().backward()
        results[name] = [out.numpy()] + [t.grad(grads).numpy() for t in (lhs, rhs, bias)]
        device.sync()
        t0 = time.perf_counter()
        for _ in range(10):
            fn(lhs.detach(), rhs.detach(), bias.detach())
        device.sync()
        print(f"{name:9}: forward {(time.perf_counter() - t0) / 10 * 1e3:.3f} ms")
    for label, a, b in zip(("output", "grad lhs", "grad rhs", "grad bias"), *results.values()):
        err = float(np.max(np.abs(a - b)) / max(1.0, float(np.max(np.abs(b)))))
        print(f"{label:9}: max relative difference custom vs reference {err:.2e}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
