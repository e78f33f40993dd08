"""NdArray conv2d paths side by side, with torch CPU when installed: forward, input gradient and
weight gradient of 3x3 padding-1 float32 convs, batch 32, 32x32 (the conv2d suite's shapes).

    python benches/probes/conv_native_micro.py [THREADS] [REPEATS]

Each path runs in its own process (`BURN_NDARRAY_NATIVE_CONV` is read when the backend is
built, and backends are interned by their options): `numpy` (=0: im2col / Winograd
over the Python pool), `chunked` (one big im2col and multi-threaded BLAS GEMM per 16 MB chunk,
the native path before the task path), `tasks` (default: per-thread im2col + one-thread GEMM
tasks in one OpenMP region; `tasks1M` with 1 MB instead of 256 KB of columns per task). Prints the best of REPEATS (default 5) runs of the median of a few
calls, in ms, and CPU seconds per wall second over the timed calls (threads busy without work
show up there). THREADS defaults to BURN_NUM_THREADS, else the cores this process may use.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time

import numpy as np

SHAPES = [(32, 3, 64, 32), (32, 64, 64, 32)]  # batch, c_in, c_out, height = width
# path -> BURN_NDARRAY_NATIVE_CONV; "tasks1M": the task path with 1 MB of columns per task
PATHS = {"numpy": "0", "chunked": "chunked", "tasks": "1", "tasks1M": "1"}


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
    """The NdArray backend of this process (its conv path was fixed by the environment when
    the process built it: backends are interned by their options, so one path per process)."""
    from burn_ndarray import NdArray
    from burn_tensor.ops import ConvOptions

    opt = ConvOptions((1, 1), (1, 1), (1, 1), 1)
    be = NdArray(num_threads=threads)
    yield {
        "fwd": lambda: be.conv2d(x, w, b, opt),
        "x-grad": lambda: be.conv2d_x_backward(x, w, g, opt),
        "w-grad": lambda: be.conv2d_weight_backward(x, w, g, opt),
    }


def torch_cases(threads: int, x, w, b, g):
    try:
        import torch
    except ImportError:
        return
    torch.set_num_threads(threads)
    tx, tw, tb, tg = (torch.from_numpy(a) for a in (x, w, b, g))
    F = torch.nn.functional
    yield {
        "fwd": lambda: F.conv2d(tx, tw, tb, 1, 1),
        "x-grad": lambda: torch.nn.grad.conv2d_input(tx.shape, tw, tg, 1, 1),
        "w-grad": lambda: torch.nn.grad.conv2d_weight(tx, tw.shape, tg, 1, 1),
    }


def rows(path: str, threads: int, repeats: int) -> None:
    """Time one path (`PATHS` or "torch") in this process and print its rows."""
    rng = np.random.default_rng(0)
    for n, ci, co, hw in SHAPES:
        x = rng.uniform(-1, 1, (n, ci, hw, hw)).astype(np.float32)
        w = rng.uniform(-0.1, 0.1, (co, ci, 3, 3)).astype(np.float32)
        b = rng.uniform(-1, 1, co).astype(np.float32)
        g = rng.uniform(-1, 1, (n, co, hw, hw)).astype(np.float32)
        flops = 2 * n * co * ci * 9 * hw * hw
        cases = torch_cases if path == "torch" else burn_cases
        if path == "tasks1M":  # read at call time
            from burn_ndarray import _native_conv

            _native_conv.TASK_BYTES = 1 << 20
        for fns in cases(threads, x, w, b, g):
            row = f"{ci}->{co} {n}x{hw}x{hw}".ljust(18) + path.ljust(9)
            fwd = None
            for op in ("fwd", "x-grad", "w-grad"):
                ms, load = timeit(fns[op], repeats)
                fwd = ms if op == "fwd" else fwd
                row += f"{ms:9.2f}{load:7.1f}"
            print(row + f"{flops / fwd / 1e9:13.3f}", flush=True)


def main() -> None:
    args = sys.argv[1:]
    if args and args[0] == "--path":  # a child: one path
        rows(args[1], int(args[2]), int(args[3]))
        return
    threads = int(args[0]) if args else None
    repeats = int(args[1]) if len(args) > 1 else 5
    if threads is None:
        threads = int(os.environ.get("BURN_NUM_THREADS", len(os.sched_getaffinity(0))))
    from burn_ndarray import _native

    print(f"threads {threads}, repeats {repeats}; {_native.status()}")
    print(f"{'case':<18}{'path':<9}{'fwd ms':>9}{'cpu/s':>7}{'x-grad':>9}{'cpu/s':>7}"
          f"{'w-grad':>9}{'cpu/s':>7}{'fwd TFLOP/s':>13}", flush=True)  # fmt: skip
    for path, env in [*PATHS.items(), ("torch", None)]:
        child = {**os.environ, "BURN_NUM_THREADS": str(threads)}
        if env is not None:
            child["BURN_NDARRAY_NATIVE_CONV"] = env
        cmd = [sys.executable, __file__, "--path", path, str(threads), str(repeats)]
        subprocess.run(cmd, env=child, check=True)


if __name__ == "__main__":
    main()
