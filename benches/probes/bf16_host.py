"""Issue 34: the host cost of the pure-bfloat16 transformer step on Cuda, against float32.

    python benches/probes/bf16_host.py                       # the GPU machine (cupy and a GPU)
    python benches/probes/bf16_host.py --stand-in [--src ROOT]   # no GPU: the CPU stand-in

GPU: issue 34's transformer (`benches/suites/transformer_precision.py`: d_model 512, 6 layers,
8 heads, batch 32 x 128 tokens, Adam) on `Autodiff(Cuda(float_dtype=...))` for float32 and
bfloat16: the wall time per step and the host's issue time per step (the Python loop queueing
10 steps, before the final sync: equal to the wall time when the GPU waits for Python), then a
cProfile of 3 steps: the top 20 functions by own time and by cumulative time, and who calls the
float32 detour's conversions (`_bf16.to_f32` / `to_bf16`; none is the goal).

`--stand-in`: the same step at `--size` (default quick) on burn_cuda's CPU stand-in
(`packages/burn-cuda/tests/cpu_backend.py`) with no-op kernels and GEMMs
(`FakeCupy(execute=False)`): CPU ms per step (minimum of 7) and Python calls per step, then per
op of a transformer layer the Python calls and CPU us per call, float32 beside bfloat16. The
stand-in's allocation is slower than cupy's pool, so absolute us are not the GPU host's; calls
and the float32/bfloat16 ratio are what carries over. `--src ROOT` runs another checkout's
packages (e.g. an export of main) for a before/after.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ("float32", "bfloat16")


def _use_sources(src: Path | None) -> Path:
    """Put `src`'s package sources (or this tree's) first on sys.path; returns the root."""
    root = (src or ROOT).resolve()
    paths = sorted(str(p) for p in (root / "packages").glob("*/src"))
    sys.path[:0] = [str(root), *paths, str(root / "packages" / "burn-cuda" / "tests")]
    return root


def _conversions(st: pstats.Stats) -> None:
    """The float32 detour's conversion calls and their callers."""
    for key, v in st.stats.items():
        if key[2] in ("to_f32", "to_bf16") and key[0].endswith("_bf16.py"):
            print(f"  {key[2]}: {v[1]} calls; callers:")
            for caller, cv in sorted(v[4].items(), key=lambda i: -i[1][1])[:8]:
                print(f"    {cv[1]:6d}  {Path(caller[0]).name}:{caller[1]}({caller[2]})")


def gpu(size: dict) -> None:
    import cupy as cp
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    from benches.suites import transformer_precision as tp

    tokens, targets = tp._data(size)
    for dt in DTYPES:
        dev = Autodiff(tp.with_float_dtype(get_backend("cuda"), dt)).device()
        step = tp._burn_step(dev, size, tokens, targets, mixed=False)
        for _ in range(3):
            step()
        cp.cuda.Device().synchronize()
        t = time.perf_counter()
        for _ in range(10):
            step()
        host = (time.perf_counter() - t) / 10
        cp.cuda.Device().synchronize()
        wall = (time.perf_counter() - t) / 10
        print(f"{dt}: wall {wall * 1e3:.1f} ms/step, host issue {host * 1e3:.1f} ms/step",
              flush=True)  # fmt: skip
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(3):
            step()
        cp.cuda.Device().synchronize()
        pr.disable()
        st = pstats.Stats(pr)
        print(f"{dt}: {sum(v[1] for v in st.stats.values())} calls in 3 steps")
        st.sort_stats("tottime").print_stats(20)
        st.sort_stats("cumtime").print_stats(20)
        _conversions(st)


def layer_ops(be, x, w, bias, x3, q, k) -> dict:
    """name -> a call of a transformer layer's backend op on `be` (x [r, d], w [d, d], bias [d],
    x3 [b, s, d], q [.., s, e] and k [.., e, s] of its float dtype); burn-cuda's
    `tests/test_half_host_cpu.py` counts the same calls on the CPU stand-in."""
    return {
        "add": lambda: be.float_add(x, x),
        "add (broadcast)": lambda: be.float_add(x, bias),
        "mul_scalar": lambda: be.float_mul_scalar(x, 0.5),
        "sum_dim": lambda: be.float_sum_dim(x, 1),
        "swap_dims": lambda: be.float_swap_dims(x, 0, 1),
        "reshape": lambda: be.float_reshape(x, (x.shape[1], x.shape[0])),
        "matmul": lambda: be.float_matmul(x, w),
        "matmul (batched)": lambda: be.float_matmul(q, k),
        "linear": lambda: be.linear(x3, w, bias),
        "linear_x_backward": lambda: be.linear_x_backward(w, x3),
        "linear_weight_backward": lambda: be.linear_weight_backward(x3, x3),
        "linear_bias_backward": lambda: be.linear_bias_backward(x3),
    }


def _per_op(be, dt: str, reps: int) -> dict:
    """op -> (Python calls per call, CPU us per call) of a transformer layer's backend ops."""
    import numpy as np
    from burn_tensor import TensorData

    dev = be.device()
    rng = np.random.default_rng(0)

    def arr(*shape):  # of the backend's float dtype (from_data keeps the data's dtype)
        data = rng.standard_normal(shape).astype(be.float_dtype.np)
        return be.float_from_data(TensorData(data), dev)

    x, bias = arr(256, 64), arr(64)
    w = arr(64, 64)
    q, k = arr(2, 4, 32, 16), arr(2, 4, 16, 32)
    x3 = arr(8, 32, 64)
    cases = layer_ops(be, x, w, bias, x3, q, k)
    cases["gelu"] = lambda: be.gelu(x)
    cases["softmax"] = lambda: be.softmax(x, 1)
    out = {}
    for name, fn in cases.items():
        fn()
        pr = cProfile.Profile()
        pr.enable()
        fn()
        pr.disable()
        calls = sum(v[1] for v in pstats.Stats(pr).stats.values())
        best = float("inf")
        for _ in range(7):
            t = time.process_time()
            for _ in range(reps):
                fn()
            best = min(best, (time.process_time() - t) / reps)
        out[name] = (calls, best * 1e6)
    return out


def stand_in(size: dict, reps: int) -> None:
    from burn_autodiff import Autodiff
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    from benches.suites import transformer_precision as tp

    tokens, targets = tp._data(size)
    ops = {}
    for dt in DTYPES:
        with cuda_on_cpu_backend(fake=FakeCupy(execute=False), float_dtype=dt) as (be, _):
            step = tp._burn_step(Autodiff(be).device(), size, tokens, targets, mixed=False)
            for _ in range(2):
                step()
            times = []
            for _ in range(7):
                t = time.process_time()
                step()
                times.append(time.process_time() - t)
            pr = cProfile.Profile()
            pr.enable()
            step()
            pr.disable()
            st = pstats.Stats(pr)
            calls = sum(v[1] for v in st.stats.values())
            print(f"{dt}: step {min(times) * 1e3:.2f} ms CPU (min of 7), {calls} Python calls")
            _conversions(st)
            ops[dt] = _per_op(be, dt, reps)
    print(f"\n{'op':24s} {'f32 calls':>9s} {'bf16 calls':>10s} {'f32 us':>8s} {'bf16 us':>8s}")
    for name, (c32, u32) in ops["float32"].items():
        c16, u16 = ops["bfloat16"][name]
        print(f"{name:24s} {c32:9d} {c16:10d} {u32:8.1f} {u16:8.1f}")


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stand-in", action="store_true", help="the CPU stand-in (no GPU)")
    ap.add_argument("--size", default=None, help="transformer_precision size (gpu/cpu/quick)")
    ap.add_argument("--reps", type=int, default=200, help="calls per op timing (stand-in)")
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    return ap


def main(argv=None) -> None:
    ap = build_parser()
    args = ap.parse_args(argv)
    _use_sources(args.src)
    from benches.suites import transformer_precision as tp

    if args.stand_in:
        stand_in(tp.SIZES[args.size or "quick"], args.reps)
    else:
        gpu(tp.SIZES[args.size or "gpu"])


if __name__ == "__main__":
    main()
