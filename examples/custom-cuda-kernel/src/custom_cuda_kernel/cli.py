"""`custom-cuda-kernel` (or `python -m custom_cuda_kernel`): run the fused kernel and its backward
on `Autodiff(Cuda())` against the tensor-op reference and print the largest differences and the
time of each; without a GPU, the reference runs on NdArray and the reason is printed."""

from __future__ import annotations

import argparse
import time

import numpy as np


def _timed(fn, sync, n=50) -> float:
    fn()
    sync()
    t0 = time.perf_counter()
    for _ in range(n):
        fn()
    sync()
    return (time.perf_counter() - t0) / n * 1e3


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="custom-cuda-kernel", description=__doc__.splitlines()[0])
    p.add_argument("--batch", type=int, default=8, help="batch items (default: %(default)s)")
    p.add_argument("--size", type=int, default=256, help="m = k = n (default: %(default)s)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)

    from burn_autodiff import Autodiff
    from burn_cuda import Cuda, probe
    from burn_ndarray import NdArray
    from burn_tensor import Tensor

    from .ops import fused_matmul_add_relu, reference

    reason = probe()
    inner = Cuda() if reason is None else NdArray()
    if reason is not None:
        print(f"no usable CUDA GPU ({reason}): running the reference on NdArray")
    device = Autodiff(inner).device()
    rng = np.random.default_rng(0)
    b, s = args.batch, args.size
    data = [
        rng.standard_normal(shape).astype(np.float32) for shape in ((b, s, s), (b, s, s), (1, 1, s))
    ]

    def inputs():
        return [Tensor.from_data(a, device).require_grad() for a in data]

    def step(op):
        ts = inputs()
        out = op(*ts)
        grads = out.sum().backward()
        return out, [t.grad(grads) for t in ts]

    out_f, grads_f = step(fused_matmul_add_relu)
    out_r, grads_r = step(reference)
    print(f"inputs [{b}, {s}, {s}] @ [{b}, {s}, {s}] + [1, 1, {s}] on {device.backend!r}")
    print(f"forward  max |fused - reference| = {np.abs(out_f.numpy() - out_r.numpy()).max():.3g}")
    for name, gf, gr in zip(("lhs", "rhs", "bias"), grads_f, grads_r):
        print(
            f"grad {name:4s} max |fused - reference| = {np.abs(gf.numpy() - gr.numpy()).max():.3g}"
        )
    sync = device.sync
    fwd = [Tensor.from_data(a, device.inner()) for a in data]
    print(
        f"forward: fused {_timed(lambda: fused_matmul_add_relu(*fwd), sync):.3f} ms, "
        f"reference {_timed(lambda: reference(*fwd), sync):.3f} ms"
    )
    print(
        f"forward + backward: fused {_timed(lambda: step(fused_matmul_add_relu), sync):.3f} ms, "
        f"reference {_timed(lambda: step(reference), sync):.3f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
