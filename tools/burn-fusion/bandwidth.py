"""Memory bandwidth of the fused custom GELU, scalar vs vector kernels, beside torch's copy.

GELU written from primitives (x * 0.5 * (erf(x / sqrt 2) + 1)) reads and writes each element
once, as a copy does, so its bandwidth is comparable with `x.clone()`'s: bytes moved per call =
2 * n * itemsize. For each variant the script times
- `call`: the whole Python call (record 5 ops, flush: plan-cache hit, launch), back to back;
- `kernel`: the compiled kernel relaunched with the same arguments (no Python planning), at
  several grid caps (blocks of the grid-stride launch; CUDA's default is 32 per SM);
- `host`: the Python side of a call alone (launch stubbed out): when it exceeds the kernel's
  time, `call` measures the host rather than the GPU.

Usage (on the GPU machine, from the repo root, package src dirs on PYTHONPATH):
    python tools/burn-fusion/bandwidth.py --backend cuda --log2n 26
    python tools/burn-fusion/bandwidth.py --backend opencl --device-type cpu --log2n 20
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from functools import partial

import numpy as np

SQRT2 = math.sqrt(2.0)


def gelu(x):
    return x * 0.5 * ((x / SQRT2).erf() + 1.0)


def _timed(fn, sync, reps: int, rounds: int = 5) -> float:
    """Median seconds per call of `fn` over `rounds` batches of `reps` calls."""
    fn()
    sync()
    out = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        for _ in range(reps):
            fn()
        sync()
        out.append((time.perf_counter() - t0) / reps)
    return statistics.median(out)


def _last_launch(rt, call):
    """The (args, kwargs) of the launch `call()` makes."""
    seen = {}
    real = rt.launch

    def record(*la, **kw):
        seen["args"] = (la, kw)
        return real(*la, **kw)

    rt.launch = record
    try:
        call()
    finally:
        del rt.launch  # back to the class's method
    return seen["args"]


def _backend(name: str, device_type: str):
    from burn_fusion import Fusion

    if name == "cuda":
        from burn_cuda import Cuda

        return Fusion(Cuda())
    from burn_opencl import OpenCl

    return Fusion(OpenCl(device_type))


def _torch_copy(n: int, reps: int):
    """(seconds per x.clone(), seconds per eager GELU) on CUDA, or None without torch CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x = torch.randn(n, device="cuda", dtype=torch.float32)
    sync = torch.cuda.synchronize
    return _timed(lambda: x.clone(), sync, reps), _timed(lambda: gelu(x), sync, reps)


def build_parser() -> argparse.ArgumentParser:
    """The command line (every option with its help)."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--backend",
        choices=("cuda", "opencl"),
        default="cuda",
        help="inner backend of Fusion (default: cuda)",
    )
    ap.add_argument("--device-type", default="gpu", help="OpenCL device type (gpu, cpu, all)")
    ap.add_argument(
        "--log2n", type=int, default=26, help="log2 of the element count (default 26)"
    )
    ap.add_argument("--reps", type=int, default=50, help="timed calls per variant (default 50)")
    return ap


def main() -> None:
    args = build_parser().parse_args()

    from burn_tensor import Tensor

    backend = _backend(args.backend, args.device_type)
    device = backend.device()
    stream = backend.stream(device.index)
    rt = stream.rt
    n = 1 << args.log2n
    a = np.random.default_rng(0).uniform(-4.0, 4.0, n).astype(np.float32)
    x = Tensor.from_data(a, device)
    nbytes = 2 * n * a.itemsize
    sync = device.sync
    print(f"device: {backend!r}  n = 2^{args.log2n} float32  bytes per call: {nbytes / 1e6:.0f} MB")

    rows = []
    default_cap = rt.max_groups
    for width in (0, 4, 8):
        stream.vector_width = width
        label = f"vector x{width}" if width else "scalar"

        def call():
            y = gelu(x)
            backend.flush(device)
            return y

        y = call()
        sync()
        got = y.numpy()[:4096]
        want = np.array([v * 0.5 * (1.0 + math.erf(v / SQRT2)) for v in a[:4096].tolist()])
        assert np.allclose(got, want, rtol=1e-5, atol=1e-6), "fused GELU is wrong"
        assert stream.last_program.vec == width, (stream.last_program.vec, width)
        rows.append((label, "call", default_cap, _timed(call, sync, args.reps)))
        # the kernel alone, relaunched with the arguments of the last launch
        la, kw = _last_launch(rt, call)
        # the grid cap is the hooks' own on CUDA; OpenCL's elementwise grid is burn_opencl's
        caps = [default_cap]
        if args.backend == "cuda":
            caps = sorted({default_cap, default_cap // 8, default_cap // 4, default_cap * 4})
        for cap in caps:
            rt.max_groups = cap
            rows.append(
                (label, "kernel", cap, _timed(partial(rt.launch, *la, **kw), sync, args.reps))
            )
        rt.max_groups = default_cap
        # the Python side of a call alone (launch stubbed): if it exceeds the kernel's time,
        # the `call` row measures the host, not the GPU
        rt.launch = lambda *la, **kw: None
        try:
            host = _timed(call, lambda: None, args.reps)
        finally:
            del rt.launch
        rows.append((label, "host", 0, host))
    stream.vector_width = 4

    torch_t = _torch_copy(n, args.reps) if args.backend == "cuda" else None
    copy_bw = None if torch_t is None else nbytes / torch_t[0] / 1e9
    print(f"{'variant':<10} {'timed':<7} {'grid cap':>8} {'ms':>8} {'GB/s':>8} {'% copy':>7}")
    for label, what, cap, sec in rows:
        if what == "host":  # no bytes move: Python time per call only
            print(f"{label:<10} {what:<7} {'':>8} {sec * 1e3:8.3f} {'-':>8} {'':>7}")
            continue
        bw = nbytes / sec / 1e9
        pct = "" if copy_bw is None else f"{100 * bw / copy_bw:6.1f}%"
        print(f"{label:<10} {what:<7} {cap:>8} {sec * 1e3:8.3f} {bw:8.1f} {pct:>7}")
    if torch_t is not None:
        print(f"{'torch':<10} {'clone':<7} {'':>8} {torch_t[0] * 1e3:8.3f} {copy_bw:8.1f}  100.0%")
        gbw = nbytes / torch_t[1] / 1e9
        print(f"{'torch':<10} {'gelu':<7} {'':>8} {torch_t[1] * 1e3:8.3f} {gbw:8.1f}")
    else:
        print("torch CUDA not available: no copy baseline")


if __name__ == "__main__":
    main()
