"""Column sums on Cuda (issues 34 / 36): burn's sum_dim / mean_dim over a dim other than the last
with few outputs and a long dim (Linear bias gradients), beside torch's `sum(dim)` on the same GPU.

    python benches/probes/colsum.py [--dtypes float32,bfloat16] [--reps 200] [--json FILE]
    python benches/probes/colsum.py --stand-in      # burn-cuda's CPU stand-in: checks the probe

Cases: [4096, 512] and [4096, 2048] over dim 0, [32, 128, 512] over dim 0, dim 1 and dims
(0, 1); float32 and bfloat16 (burn: `Cuda(float_dtype=...)`, torch: the same dtype). Per case and
side, in microseconds:
- `loop`: a loop of `--reps` calls between two CUDA events, divided by the calls (the op's
  throughput: host-bound when the host is slower than the kernels);
- `one`: one call between two events, the minimum over `--reps` (the GPU span of one call:
  its kernels and any gap between them).
A Linear bias gradient (burn's `linear_bias_backward` on [4096, 512]: one cuBLAS GEMM against a
ones vector in float32, the column kernels in bfloat16) and two conv2d bias gradients ([n, c, h,
w] summed over n, h, w: burn's `conv2d_bias_backward`, a block per channel) are timed the same
way beside torch's `sum(0)` / `sum((0, 2, 3))`.
burn's results are checked against numpy float64 first (a wrong sum is not timed). `--stand-in`
runs the same cases at 1/64 of the rows on the CPU stand-in of burn-cuda's tests (the kernels
compiled by g++, wall-clock times, no torch): it checks the probe and the routes, not speed.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]
#: (name, shape, dims)
CASES = [
    ("4096x512 dim0", (4096, 512), (0,)),
    ("4096x2048 dim0", (4096, 2048), (0,)),
    ("32x128x512 dim0", (32, 128, 512), (0,)),
    ("32x128x512 dim1", (32, 128, 512), (1,)),
    ("32x128x512 dims01", (32, 128, 512), (0, 1)),
    # a Linear bias gradient: burn's `linear_bias_backward` (float32: `_gemm.sum_rows`, one GEMM
    # against a ones vector at this size; half: the column kernels)
    ("linear bias 4096x512", (4096, 512), "linear"),
    # a conv2d bias gradient: burn's `conv2d_bias_backward` (sum_keep_mid, a block per channel)
    ("conv bias 128x64x32x32", (128, 64, 32, 32), (0, 2, 3)),
    ("conv bias 32x256x14x14", (32, 256, 14, 14), (0, 2, 3)),
]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--dtypes", default="float32,bfloat16", help="comma-separated float dtypes")
    ap.add_argument("--reps", type=int, default=200, help="calls per timing")
    ap.add_argument("--no-torch", action="store_true", help="burn only")
    ap.add_argument("--stand-in", action="store_true",
                    help="run on burn-cuda's CPU stand-in at 1/64 of the rows (no GPU needed)")  # fmt: skip
    ap.add_argument("--json", type=Path, default=None, help="also write the rows as JSON here")
    return ap


def _burn_op(backend, t, dims):
    """A call of burn's op for `dims` on tensor `t`: the conv bias gradient (the backend's
    `conv2d_bias_backward` on the primitive, a [c] result) for (0, 2, 3), else sum_dim(s)."""
    if dims == "linear":
        from burn_tensor import Float, Tensor

        g = t.primitive
        return lambda: Tensor.from_primitive(backend.linear_bias_backward(g), Float, t.device)
    if dims == (0, 2, 3):
        from burn_tensor import Float, Tensor

        g = t.primitive
        bias = t.sum_dims([0, 2, 3]).reshape([-1]).primitive  # only its shape is read
        return lambda: Tensor.from_primitive(
            backend.conv2d_bias_backward(None, None, bias, g), Float, t.device
        )
    if len(dims) == 1:
        return lambda: t.sum_dim(dims[0])
    return lambda: t.sum_dims(list(dims))


def _check(got, x64, dims, dtype) -> float:
    """Largest error of burn's result against numpy float64, relative to the column's sum of
    magnitudes; raises past the dtype's bound."""
    dims = (0,) if dims == "linear" else dims
    want = x64.sum(axis=dims, keepdims=True)
    got = np.asarray(got, np.float64).reshape(want.shape)
    scale = np.abs(x64).sum(axis=dims, keepdims=True)
    err = float(np.max(np.abs(got - want) / scale))
    bound = 1e-5 if dtype == "float32" else 2e-2
    if not err <= bound:
        raise AssertionError(f"burn's sum is off: relative error {err:.2e} > {bound:.0e}")
    return err


def _events_us(sync, event, fn, reps: int) -> tuple[float, float]:
    """(loop, one) microseconds per call of `fn` timed by `event()` pairs."""
    for _ in range(5):
        fn()
    sync()
    a, b = event(), event()
    a.record()
    for _ in range(reps):
        fn()
    b.record()
    b.synchronize()
    loop = a.elapsed(b) * 1e3 / reps
    one = float("inf")
    for _ in range(reps):
        a.record()
        fn()
        b.record()
        b.synchronize()
        one = min(one, a.elapsed(b) * 1e3)
    return loop, one


class _CupyEvent:
    def __init__(self):
        import cupy as cp

        self.e = cp.cuda.Event()

    def record(self):
        self.e.record()

    def synchronize(self):
        self.e.synchronize()

    def elapsed(self, end) -> float:
        import cupy as cp

        return cp.cuda.get_elapsed_time(self.e, end.e)


class _TorchEvent:
    def __init__(self):
        import torch

        self.e = torch.cuda.Event(enable_timing=True)

    def record(self):
        self.e.record()

    def synchronize(self):
        self.e.synchronize()

    def elapsed(self, end) -> float:
        return self.e.elapsed_time(end.e)


def _wall_us(fn, reps: int) -> tuple[float, float]:
    fn()
    t0 = time.perf_counter()
    for _ in range(reps):
        fn()
    loop = (time.perf_counter() - t0) * 1e6 / reps
    one = float("inf")
    for _ in range(min(reps, 5)):
        t = time.perf_counter()
        fn()
        one = min(one, (time.perf_counter() - t) * 1e6)
    return loop, one


def _rows(backend, dtype, args, sync, event, torch) -> list[dict]:
    from burn_tensor import Tensor

    rows = []
    rng = np.random.default_rng(0)
    for name, shape, dims in CASES:
        if args.stand_in:
            shape = (max(shape[0] // 64, 2), *shape[1:])
            if dims == (0, 2, 3):  # conv bias: fewer pixels too
                shape = (*shape[:2], 4, 4)
        x64 = rng.standard_normal(shape)
        t = Tensor.from_data(x64, backend.device())
        x64 = np.asarray(t.into_data().array, np.float64)  # the values as stored (rounded)
        fn = _burn_op(backend, t, dims)
        err = _check(fn().into_data().array, x64, dims, dtype)
        reps = min(args.reps, 3) if args.stand_in else args.reps
        if args.stand_in:
            loop, one = _wall_us(fn, reps)
        else:
            loop, one = _events_us(sync, event, fn, reps)
        row = {"case": name, "dtype": dtype, "burn_loop_us": loop, "burn_one_us": one,
               "rel_err": err}  # fmt: skip
        if torch is not None:
            tx = torch.tensor(x64, device="cuda", dtype=getattr(torch, dtype))
            tdims = (0,) if dims == "linear" else dims
            tfn = lambda tx=tx, d=tdims: tx.sum(dim=d, keepdim=True)  # noqa: E731
            row["torch_loop_us"], row["torch_one_us"] = _events_us(
                torch.cuda.synchronize, _TorchEvent, tfn, args.reps
            )
        rows.append(row)
    return rows


def _print(rows) -> None:
    head = ["case", "dtype", "burn loop us", "burn one us", "torch loop us", "torch one us",
            "one vs torch"]  # fmt: skip
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    for r in rows:
        t1 = r.get("torch_one_us")
        vals = [r["case"], r["dtype"], f"{r['burn_loop_us']:.1f}", f"{r['burn_one_us']:.1f}",
                f"{r['torch_loop_us']:.1f}" if t1 else "-", f"{t1:.1f}" if t1 else "-",
                f"{r['burn_one_us'] / t1:.2f}x" if t1 else "-"]  # fmt: skip
        print("| " + " | ".join(vals) + " |")


def main(argv=None) -> None:
    args = build_parser().parse_args(argv)
    dtypes = [d for d in args.dtypes.split(",") if d]
    rows = []
    if args.stand_in:
        sys.path.insert(0, str(ROOT / "packages" / "burn-cuda" / "tests"))
        from cpu_backend import cuda_on_cpu_backend

        for dt in dtypes:
            with cuda_on_cpu_backend(float_dtype=dt) as (backend, fake):
                rows += _rows(backend, dt, args, None, None, None)
                names = sorted({k.name for k in fake.launches if "_cols" in k.name})
                print(f"{dt}: column kernels launched: {names}")
    else:
        import cupy as cp
        from burn_cuda import Cuda

        torch = None
        if not args.no_torch:
            try:
                import torch
            except ImportError:
                print("torch is not importable: burn only")
        for dt in dtypes:
            backend = Cuda(float_dtype=dt)
            rows += _rows(backend, dt, args, cp.cuda.Device().synchronize, _CupyEvent, torch)
    _print(rows)
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
