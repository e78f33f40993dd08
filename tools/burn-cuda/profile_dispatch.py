"""Where the time of a small op goes on Cuda: Python layers vs kernel launch vs GPU work.

    python tools/burn-cuda/profile_dispatch.py            # on the GPU machine
    python tools/burn-cuda/profile_dispatch.py --fake     # here: Python of the hot path only

On a GPU it prints, per op on 16 float32 elements, the microseconds per call of each layer
(allocation alone, a bare kernel launch, the hot-path op, the backend op, the Tensor method,
cupy's ufunc, torch) and the GPU time per kernel (CUDA events); then a cProfile of one guide
training step on Autodiff(Cuda()) (wall vs GPU time, Python time by package, the top
functions); then which cupy operations accept bfloat16 arrays. With `--fake` (no GPU, no cupy)
it times the hot path's Python with no-op launches on a numpy stand-in, and the Tensor layer on
NdArray, which is what our layers add on top of a launch.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
N = 20000


def per_call(fn, n=N, sync=None) -> float:
    """Median over 5 runs of n calls, in microseconds per call (sync after each run)."""
    fn()
    if sync:
        sync()
    runs = []
    for _ in range(5):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        if sync:
            sync()
        runs.append((time.perf_counter() - t0) / n * 1e6)
    return sorted(runs)[2]


def fake() -> None:
    sys.path.insert(0, str(HERE.parent.parent / "packages" / "burn-cuda" / "tests"))
    from burn_cuda import _fast
    from burn_ndarray import NdArray
    from burn_tensor import Tensor
    from fake_cupy import FakeCupy, asfake

    cp = FakeCupy(execute=False)
    table = {
        "float_add": lambda self, x, y: x + y,
        "float_exp": lambda self, x: np.exp(x),
        "float_sum": lambda self, x: x.sum().reshape(1),
        "float_mul_scalar": lambda self, x, s: x * s,
    }
    ops = _fast.ops(cp, table)
    a = asfake(np.ones(16, np.float32))
    b = asfake(np.ones(16, np.float32))
    na, nb = np.ones(16, np.float32), np.ones(16, np.float32)
    ta = Tensor.from_data(na, NdArray().device())
    tb = Tensor.from_data(nb, NdArray().device())
    B = NdArray()
    rows = [
        ("add", lambda: ops["float_add"](None, a, b), lambda: ta + tb, lambda: B.float_add(na, nb)),
        ("exp", lambda: ops["float_exp"](None, a), lambda: ta.exp(), lambda: B.float_exp(na)),
        ("sum", lambda: ops["float_sum"](None, a), lambda: ta.sum(), lambda: B.float_sum(na)),
        (
            "mul_scalar",
            lambda: ops["float_mul_scalar"](None, a, 2.0),
            lambda: ta * 2.0,
            lambda: B.float_mul_scalar(na, 2.0),
        ),
    ]
    # the stand-in's own costs, to subtract: its allocation and its `_c_contiguous` property
    # are slower than cupy's Cython ones
    alloc = per_call(lambda: cp.ndarray((16,), np.float32))
    attr = per_call(lambda: a._c_contiguous)
    print("Python cost per op, no GPU (us per call; launches are no-ops):")
    print(f"  stand-in allocation {alloc:.2f} us, stand-in _c_contiguous {attr:.2f} us")
    print(f"{'op':12s} {'hot path':>9s} {'minus stand-in':>15s} {'Tensor layer':>13s}")
    for name, hot, tensor, op in rows:
        h = per_call(hot)
        n_attr = 2 if name == "add" else 1
        own = h - alloc - n_attr * attr
        layer = per_call(tensor) - per_call(op)
        print(f"{name:12s} {h:9.2f} {own:15.2f} {layer:13.2f}")
    print("(Tensor layer: `t + t` minus the backend op, measured on NdArray)")
    print(
        "On the GPU add the kernel launch (cuLaunchKernel through cupy, ~3-5 us) and cupy's "
        "ndarray allocation from its pool (~1-2 us) to the hot path."
    )


def gpu(args) -> None:
    import cupy as cp
    from burn_cuda import Cuda, _fast
    from burn_tensor import Tensor

    B = Cuda()
    dev = B.device()
    sync = dev.sync
    try:
        import torch

        has_torch = torch.cuda.is_available()
    except Exception:  # noqa: BLE001 - torch is optional
        has_torch = False
    x = cp.arange(16, dtype=cp.float32) + 1
    y = cp.ones(16, dtype=cp.float32)
    out = cp.empty(16, dtype=cp.float32)
    ta, tb = Tensor.from_data(x.get(), dev), Tensor.from_data(y.get(), dev)
    k_add = _fast._Kernels(cp).get("binary", "add", np.dtype(np.float32))
    k_add((1,), (256,), (x, y, out, 16))
    tt = torch.arange(16, device="cuda", dtype=torch.float32) if has_torch else None
    tsync = torch.cuda.synchronize if has_torch else None
    print("Per call on 16 float32 elements (us), each layer of `a + b` and friends:")
    lines = [
        ("cupy ndarray alloc", per_call(lambda: cp.ndarray((16,), np.float32), sync=sync)),
        (
            "bare RawKernel launch",
            per_call(lambda: k_add((1,), (256,), (x, y, out, 16)), sync=sync),
        ),
        ("backend float_add", per_call(lambda: B.float_add(x, y), sync=sync)),
        ("Tensor a + b", per_call(lambda: ta + tb, sync=sync)),
        ("cupy x + y (ufunc)", per_call(lambda: x + y, sync=sync)),
        ("Tensor a.exp()", per_call(lambda: ta.exp(), sync=sync)),
        ("cupy exp", per_call(lambda: cp.exp(x), sync=sync)),
        ("Tensor a.sum()", per_call(lambda: ta.sum(), sync=sync)),
        ("cupy x.sum()", per_call(lambda: x.sum(), sync=sync)),
        ("Tensor a * 2.0", per_call(lambda: ta * 2.0, sync=sync)),
    ]
    if has_torch:
        lines += [
            ("torch a + b", per_call(lambda: tt + tt, sync=tsync)),
            ("torch exp", per_call(lambda: tt.exp(), sync=tsync)),
            ("torch sum", per_call(lambda: tt.sum(), sync=tsync)),
        ]
    for name, us in lines:
        print(f"  {name:24s} {us:8.2f}")
    # GPU time per launch: events around 1000 back-to-back launches
    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(1000):
        k_add((1,), (256,), (x, y, out, 16))
    end.record()
    end.synchronize()
    print(
        f"  GPU time per 16-element add kernel (events, 1000 launches): "
        f"{cp.cuda.get_elapsed_time(start, end):.3f} us per launch (x1000 ms)"
    )
    guide_profile(dev)
    bf16_probe(cp)
    print(
        f"\nhot-path kernels compiled so far: {len(_fast.COMPILED)}; failed to compile: "
        f"{len(_fast.FAILED)}"
    )
    for key, msg in _fast.FAILED.items():
        print(f"  {key}: {msg[:300]}")


def guide_profile(dev) -> None:
    sys.path.insert(0, str(HERE.parent.parent))
    from burn_autodiff import Autodiff

    from benches.suites.training_step import _burn_step, _data

    ad = Autodiff(dev.backend).device(dev.index)
    step, _ = _burn_step(ad, *_data(64))
    for _ in range(3):
        step()
    dev.sync()
    t0 = time.perf_counter()
    for _ in range(20):
        step()
    cpu_side = (time.perf_counter() - t0) / 20
    dev.sync()
    wall = (time.perf_counter() - t0) / 20
    import cupy as cp

    start, end = cp.cuda.Event(), cp.cuda.Event()
    start.record()
    for _ in range(20):
        step()
    end.record()
    end.synchronize()
    gpu_span = cp.cuda.get_elapsed_time(start, end) / 20
    print(
        f"\nGuide step (batch 64): {wall * 1e3:.2f} ms wall, {cpu_side * 1e3:.2f} ms until the "
        f"Python returns (queue not drained), {gpu_span:.2f} ms between GPU events (the GPU is "
        "idle whenever Python is the bottleneck)"
    )
    print(
        f"GPU work alone: {gpu_only(step, dev.sync):.3f} ms per step (the kernels back to back; "
        "well below the wall time: the host is the bottleneck)"
    )
    op_counts(dev)
    pr = cProfile.Profile()
    pr.enable()
    for _ in range(5):
        step()
    dev.sync()
    pr.disable()
    st = pstats.Stats(pr)
    by_pkg: dict = {}
    for (f, _line, _name), (_cc, _nc, tt, _ct, _callers) in st.stats.items():
        key = "other"
        for pkg in (
            "burn_cuda",
            "burn_autodiff",
            "burn_tensor",
            "burn_nn",
            "burn_optim",
            "burn_ndarray",
            "cupy",
        ):
            if pkg in f:
                key = pkg
                break
        if f == "~":
            key = "builtins (C calls: launches, allocations, syncs)"
        by_pkg[key] = by_pkg.get(key, 0.0) + tt
    total = sum(by_pkg.values())
    print("Python time per step by package (cProfile tottime, 5 steps; profiling inflates it):")
    for k, v in sorted(by_pkg.items(), key=lambda kv: -kv[1]):
        print(f"  {k:50s} {v / 5 * 1e3:7.2f} ms  {100 * v / total:5.1f}%")
    print("Top functions by own time (per step):")
    st.sort_stats("tottime")
    rows = sorted(st.stats.items(), key=lambda kv: -kv[1][2])[:25]
    for (f, line, name), (_cc, nc, tt, ct, _) in rows:
        print(f"  {tt / 5 * 1e3:7.3f} ms  {nc // 5:5d} calls  {name}  ({Path(f).name}:{line})")


def gpu_only(step, sync, n: int = 10) -> float:
    """Milliseconds of GPU work per call of `step`, without the host's gaps: a spin kernel holds
    the GPU (~0.2 s) while the host queues `n` steps behind it, so CUDA events around the steps
    time their kernels back to back. Valid while the host queues the n steps faster than the
    spin lasts and no step waits for the GPU (a read of a value would)."""
    import cupy as cp

    spin = cp.RawKernel(
        'extern "C" __global__ void spin(long long cycles) {\n'
        "  long long t0 = clock64(); while (clock64() - t0 < cycles) {}\n}",
        "spin",
    )
    for _ in range(3):
        step()
    sync()
    start, end = cp.cuda.Event(), cp.cuda.Event()
    spin((1,), (1,), (np.int64(400_000_000),))
    start.record()
    for _ in range(n):
        step()
    end.record()
    end.synchronize()
    return cp.cuda.get_elapsed_time(start, end) / n


def op_counts(dev) -> None:
    """Backend ops one guide step calls (nested defaults included), counted on a fresh Cuda
    instance whose class methods are wrapped for the count (and restored after)."""
    import collections
    import inspect

    from burn_autodiff import Autodiff
    from burn_cuda import Cuda

    sys.path.insert(0, str(HERE.parent.parent))
    from benches.suites.training_step import _burn_step, _data

    counts: collections.Counter = collections.Counter()
    saved = {}
    for name in Cuda.op_table():
        raw = inspect.getattr_static(Cuda, name, None)
        if raw is None or not callable(raw):
            continue
        saved[name] = raw

        def counted(self, *a, _n=name, _f=raw, **k):
            counts[_n] += 1
            return _f(self, *a, **k)

        setattr(Cuda, name, counted)
    try:
        inner = Cuda(int_dtype="int64")  # a new instance: its views take the counting methods
        ad = Autodiff(inner).device(dev.index)
        step, _ = _burn_step(ad, *_data(64))
        step()
        counts.clear()
        step()
        dev.sync()
    finally:
        for name, raw in saved.items():
            setattr(Cuda, name, raw)
    from burn_cuda import _fast

    print(f"Backend ops per guide step: {sum(counts.values())} (nested calls included)")
    print("  " + ", ".join(f"{n} {c}" for n, c in counts.most_common()))
    print(f"  hot-path kernels compiled so far: {len(_fast.COMPILED)}")


BF16_OPS = {
    "add": lambda cp, a: a + a,
    "mul": lambda cp, a: a * a,
    "div": lambda cp, a: a / a,
    "exp": lambda cp, a: cp.exp(a),
    "log": lambda cp, a: cp.log(a),
    "sqrt": lambda cp, a: cp.sqrt(a),
    "tanh": lambda cp, a: cp.tanh(a),
    "sum": lambda cp, a: a.sum(),
    "sum(axis=1)": lambda cp, a: a.sum(axis=1),
    "max(axis=1)": lambda cp, a: a.max(axis=1),
    "matmul": lambda cp, a: a @ a,
    "astype(float32)": lambda cp, a: a.astype(np.float32),
    "float32.astype(bf16)": lambda cp, a: a.astype(np.float32).astype(a.dtype),
    "where": lambda cp, a: cp.where(a > 0, a, a),
    "comparison": lambda cp, a: a > 0,
    "maximum": lambda cp, a: cp.maximum(a, a),
    "copy/transpose": lambda cp, a: cp.ascontiguousarray(a.T),
    "get()": lambda cp, a: a.get(),
    "asarray(host)": lambda cp, a: cp.asarray(a.get()),
}


def bf16_probe(cp) -> None:
    try:
        import ml_dtypes
    except ImportError:
        print("\nbfloat16 probe: ml_dtypes is not installed")
        return
    host = np.ones((4, 4), np.float32).astype(ml_dtypes.bfloat16)
    print(f"\nbfloat16 on cupy {cp.__version__} (ml_dtypes {ml_dtypes.__version__}):")
    try:
        a = cp.asarray(host)
    except Exception as exc:  # noqa: BLE001
        print(f"  cupy.asarray(bf16 host) FAILS: {type(exc).__name__}: {exc}; through uint16:")
        try:
            a = cp.asarray(host.view(np.uint16)).view(host.dtype)
        except Exception as exc2:  # noqa: BLE001
            print(f"  uint16 view FAILS too: {type(exc2).__name__}: {exc2}")
            return
    for name, fn in BF16_OPS.items():
        try:
            r = fn(cp, a)
            cp.cuda.Device().synchronize()
            print(f"  {name:22s} ok ({getattr(r, 'dtype', type(r))})")
        except Exception as exc:  # noqa: BLE001 - the point is to list what fails
            print(f"  {name:22s} FAILS: {type(exc).__name__}: {str(exc)[:90]}")


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fake", action="store_true", help="no GPU: time the hot path's Python")
    return p


def main() -> None:
    args = build_parser().parse_args()
    if args.fake:
        fake()
    else:
        gpu(args)


if __name__ == "__main__":
    main()
