"""NdArray conv2d paths side by side, with torch CPU when installed: forward, input gradient and
weight gradient of 3x3 padding-1 float32 convs, batch 32, 32x32 (the conv2d suite's shapes).

    python benches/conv_native_micro.py [THREADS] [REPEATS]

Paths (`BURN_NDARRAY_NATIVE_CONV` when each backend is built): `numpy` (=0: im2col / Winograd
over the Python pool), `chunked` (one big im2col and multi-threaded BLAS GEMM per 16 MB chunk,
the native path before the task path), `tasks` (default: per-thread im2col + one-thread GEMM
tasks in one OpenMP region). Prints the best of REPEATS (default 5) runs of the median of a few
calls, in ms, and CPU seconds per wall second over the timed calls (threads busy without work
show up there). THREADS defaults to BURN_NUM_THREADS, else the cores this process may use.
"""

from __future__ import annotations

import os
import statistics
import sys
import time

import numpy as np

SHAPES = [(32, 3, 64, 32), (32, 64, 64, 32)]  # batch, c_in, c_out, height = width
PATHS = {"numpy": "0", "chunked": "chunked", "tasks": "1"}


def timeit(fn, repeats: int, calls: int = 5) -> tuple[float, float]:
    """(best over repeats of the median call time in ms, CPU seconds per wall second)."""
    fn()  # warm: buffers, BLAS and OpenMP threads
    best, cpu, wall = float("inf"), 0.0, 0.0
    for _ in range(repeats):
        c0, w0 = time.process_time(), time.perf_counter()
        ts = []
        for _ in range(calls):
            t = time.perf_counter()
            fn()
            ts.append(time.perf_counter() - t)
        cpu += time.process_time() - c0
        wall += time.perf_counter() - w0
        best = min(best, statistics.median(ts))
    return best * 1e3, cpu / wall


def burn_cases(threads: int, x, w, b, g):
    from burn_ndarray import NdArray
    from burn_tensor.ops import ConvOptions

    opt = ConvOptions((1, 1), (1, 1), (1, 1), 1)
    for name, env in PATHS.items():
        os.environ["BURN_NDARRAY_NATIVE_CONV"] = env  # read when the backend installs its ops
        be = NdArray(num_threads=threads)
        yield (
            name,
            {
                "fwd": lambda be=be: be.conv2d(x, w, b, opt),
                "x-grad": lambda be=be: be.conv2d_x_backward(x, w, g, opt),
                "w-grad": lambda be=be: be.conv2d_weight_backward(x, w, g, opt),
            },
        )
    os.environ.pop("BURN_NDARRAY_NATIVE_CONV")


def torch_cases(threads: int, x, w, b, g):
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)
    tx, tw, tb, tg = (torch.from_numpy(a) for a in (x, w, b, g))
    F = torch.nn.functional
    yield (
        "torch",
        {
            "fwd": lambda: F.conv2d(tx, tw, tb, 1, 1),
            "x-grad": lambda: torch.nn.grad.conv2d_input(tx.shape, tw, tg, 1, 1),
            "w-grad": lambda: torch.nn.grad.conv2d_weight(tx, tw.shape, tg, 1, 1),
        },
    )


def main() -> None:
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else None
    repeats = int(sys.argv[2]) if len(sys.argv) > 2 else 5
    if threads is None:
        threads = int(os.environ.get("BURN_NUM_THREADS", len(os.sched_getaffinity(0))))
    from burn_ndarray import _native

    print(f"threads {threads}, repeats {repeats}; {_native.status()}")
    rng = np.random.default_rng(0)
    print(f"{'case':<18}{'path':<9}{'fwd ms':>9}{'cpu/s':>7}{'x-grad':>9}{'cpu/s':>7}"
          f"{'w-grad':>9}{'cpu/s':>7}{'fwd TFLOP/s':>13}")  # fmt: skip
    for n, ci, co, hw in SHAPES:
        x = rng.uniform(-1, 1, (n, ci, hw, hw)).astype(np.float32)
        w = rng.uniform(-0.1, 0.1, (co, ci, 3, 3)).astype(np.float32)
        b = rng.uniform(-1, 1, co).astype(np.float32)
        g = rng.uniform(-1, 1, (n, co, hw, hw)).astype(np.float32)
        flops = 2 * n * co * ci * 9 * hw * hw
        for name, fns in [*burn_cases(threads, x, w, b, g), *torch_cases(threads, x, w, b, g)]:
            row = f"{ci}->{co} {n}x{hw}x{hw}"[:17].ljust(18) + name.ljust(9)
            fwd = None
            for op in ("fwd", "x-grad", "w-grad"):
                ms, load = timeit(fns[op], repeats)
                fwd = ms if op == "fwd" else fwd
                row += f"{ms:9.2f}{load:7.1f}"
            print(row + f"{flops / fwd / 1e9:13.3f}", flush=True)


if __name__ == "__main__":
    main()
