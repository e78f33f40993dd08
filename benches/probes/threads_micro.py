"""How to thread NdArray: numpy alone vs our pool vs numexpr vs a ThreadPoolExecutor vs torch.

`python benches/probes/threads_micro.py [THREADS]` prints the best-of-N time per call (us) of a few ops
at a few sizes, and the bare dispatch cost of a parallel region. Used for burn-ndarray's README
(threading choice and the `PARALLEL_MIN` threshold); not a suite of `python -m benches`.
"""

# ruff: noqa: B023 - each lambda is timed at once, inside its loop iteration
from __future__ import annotations

import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np


def best(fn, budget=0.3, reps=7):
    fn()
    n, t = 1, 0.0
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        t = time.perf_counter() - t0
        if t > budget / reps:
            break
        n *= 2
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        times.append((time.perf_counter() - t0) / n)
    return min(times) * 1e6


def main() -> None:
    threads = int(sys.argv[1]) if len(sys.argv) > 1 else len(os.sched_getaffinity(0))
    os.environ["BURN_NUM_THREADS"] = str(threads)
    from burn_ndarray import NdArray, _native, _parallel
    from burn_ndarray._threads import GRAIN, run_chunks

    b = NdArray(num_threads=threads)
    try:
        import numexpr as ne

        ne.set_num_threads(threads)
    except ImportError:
        ne = None
    try:
        import torch

        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    ex = ThreadPoolExecutor(threads)

    def tpe(fn, x, y, out):
        n = x.shape[0]
        step = -(-n // threads)
        futs = [
            ex.submit(fn, x[i : i + step], y[i : i + step], out[i : i + step])
            for i in range(0, n, step)
        ]
        for f in futs:
            f.result()

    print(f"threads {threads}; times in us (best of 7); NdArray: {_native.status()}")
    print("'ours' is NdArray's op (native kernels when built), 'pool' the Python pool over numpy")
    print(
        "dispatch of one region, no-op chunks:",
        f"{best(lambda: run_chunks(len, [((),)] * threads)):.1f}",
    )
    rows = []
    for n in (1 << 15, 1 << 16, 1 << 17, 1 << 18, 1 << 20, 1 << 22):
        x = np.random.default_rng(0).uniform(-1, 1, n).astype(np.float32)
        y = np.random.default_rng(1).uniform(-1, 1, n).astype(np.float32)
        out = np.empty_like(x)
        r = {"n": n}
        r["add np"] = best(lambda: np.add(x, y))
        r["add ours"] = best(lambda: b.float_add(x, y))
        r["add pool"] = best(lambda: _parallel.elementwise(np.add, threads, GRAIN, x, y))
        r["add tpe"] = best(lambda: tpe(np.add, x, y, out))
        r["exp np"] = best(lambda: np.exp(x))
        r["exp ours"] = best(lambda: b.float_exp(x))
        r["exp pool"] = best(lambda: _parallel.elementwise(np.exp, threads, GRAIN, x))
        r["erf ours"] = best(lambda: b.float_erf(x))
        r["sum np"] = best(lambda: np.add.reduce(x))
        r["sum ours"] = best(lambda: b.float_sum(x))
        if ne is not None:
            r["add ne"] = best(lambda: ne.evaluate("x + y", local_dict={"x": x, "y": y}))
            r["exp ne"] = best(lambda: ne.evaluate("exp(x)", local_dict={"x": x}))
        if torch is not None:
            tx, ty = torch.from_numpy(x), torch.from_numpy(y)
            r["add torch"] = best(lambda: tx + ty)
            r["exp torch"] = best(lambda: tx.exp())
            r["sum torch"] = best(lambda: tx.sum())
            r["erf torch"] = best(lambda: tx.erf())
        rows.append(r)
    keys = list(rows[0])
    for r in rows[1:]:
        keys += [k for k in r if k not in keys]
    print("  ".join(f"{k:>9}" for k in keys))
    for r in rows:
        print("  ".join(f"{r.get(k, float('nan')):9.1f}" for k in keys))


if __name__ == "__main__":
    main()
