"""Issue 34: the host cost of the pure-bfloat16 and mixed-bf16 transformer steps on Cuda.

    python benches/probes/bf16_host.py                       # the GPU machine (cupy and a GPU)
    python benches/probes/bf16_host.py --stand-in [--src ROOT]   # no GPU: the CPU stand-in

GPU: issue 34's transformer (`benches/suites/transformer_precision.py`: d_model 512, 6 layers,
8 heads, batch 32 x 128 tokens, Adam) in three modes: `float32` and `bfloat16` on
`Autodiff(Cuda(float_dtype=...))`, and `mixed` (`Autodiff(Cuda())` under
`burn_optim.MixedPrecision("bf16")`: f32 parameters, matmul/linear in bf16): the wall time per
step and the host's issue time per step (the Python loop queueing 10 steps, before the final
sync: equal to the wall time when the GPU waits for Python) beside the host's CPU time per step
and its garbage collections, with the collector on and off, then a cProfile of 3 steps: the
top 20 functions by own time and by cumulative time, and who calls the conversions
(`_bf16.to_f32` / `to_bf16`: the float32 detour's in `bfloat16`, none is the goal there; the
autocast casts in `mixed`); last the mixed step's own ops at the Tensor level, host CPU us per
call (the `--stand-in` table below, on the GPU).

`--stand-in`: the same step at `--size` (default quick) on burn_cuda's CPU stand-in
(`packages/burn-cuda/tests/cpu_backend.py`) with no-op kernels and GEMMs
(`FakeCupy(execute=False)`): CPU ms per step (minimum of 7) and Python calls per step, then per
op of a transformer layer the Python calls and CPU us per call, float32 beside bfloat16, then
the mixed step's own ops at the Tensor level (the autocast casts, linear and matmul under
`autocast("bf16")` beside the same op in float32, autocast entered once as in the step). The
stand-in's allocation is slower than cupy's pool, so absolute us are not the GPU host's; calls
and the float32/bfloat16 ratio are what carries over. `--src ROOT` runs another checkout's
packages (e.g. an export of main) for a before/after.
"""

from __future__ import annotations

import argparse
import cProfile
import gc
import pstats
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DTYPES = ("float32", "bfloat16")
#: mode -> (the backend's float dtype, whether the step runs under MixedPrecision("bf16"))
MODES = {"float32": ("float32", False), "bfloat16": ("bfloat16", False), "mixed": ("float32", True)}


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


def gpu(size: dict, reps: int, dump: Path | None = None) -> None:
    import cupy as cp
    from burn_autodiff import Autodiff
    from burn_tensor import get_backend

    from benches.suites import transformer_precision as tp

    tokens, targets = tp._data(size)
    for dt, (float_dtype, mixed) in MODES.items():
        dev = Autodiff(tp.with_float_dtype(get_backend("cuda"), float_dtype)).device()
        step = tp._burn_step(dev, size, tokens, targets, mixed=mixed)
        for _ in range(3):
            step()
        for collect in (True, False):
            _timed_steps(cp, dt, step, collect)
        pr = cProfile.Profile()
        pr.enable()
        for _ in range(3):
            step()
        cp.cuda.Device().synchronize()
        pr.disable()
        st = pstats.Stats(pr)
        if dump is not None:  # the whole profile, for pstats / snakeviz on another machine
            dump.mkdir(parents=True, exist_ok=True)
            st.dump_stats(str(dump / f"{dt}.pstats"))
        print(f"{dt}: {sum(v[1] for v in st.stats.values())} calls in 3 steps")
        st.sort_stats("tottime").print_stats(20)
        st.sort_stats("cumtime").print_stats(20)
        _conversions(st)
    _print_mixed_ops(_mixed_ops(Autodiff(get_backend("cuda")), reps))


def _timed_steps(cp, mode: str, step, collect: bool) -> None:
    """10 steps: wall and host issue ms per step (as the module docstring says), the host's CPU
    ms per step (issue time well above it: the host waits inside a call, a sync or an
    allocation, rather than running Python) and the garbage collections per step with their
    ms; with `collect` False the same with the collector off (the benches' harness runs so)."""
    pauses = []
    start = [0.0]

    def watch(phase: str, info: dict) -> None:
        if phase == "start":
            start[0] = time.perf_counter()
        else:
            pauses.append((info["generation"], time.perf_counter() - start[0]))

    cp.cuda.Device().synchronize()
    gc.collect()
    was = gc.isenabled()
    if not collect:
        gc.disable()
    gc.callbacks.append(watch)
    try:
        t, c = time.perf_counter(), time.process_time()
        for _ in range(10):
            step()
        host, cpu = (time.perf_counter() - t) / 10, (time.process_time() - c) / 10
        cp.cuda.Device().synchronize()
        wall = (time.perf_counter() - t) / 10
    finally:
        gc.callbacks.remove(watch)
        if was:
            gc.enable()
    gens = {g: sum(1 for p in pauses if p[0] == g) / 10 for g in sorted({p[0] for p in pauses})}
    print(f"{mode} (gc {'on' if collect else 'off'}): wall {wall * 1e3:.1f} ms/step, host issue "
          f"{host * 1e3:.1f} ms/step, host CPU {cpu * 1e3:.1f} ms/step; collections per step "
          f"by generation {gens}, {sum(p[1] for p in pauses) / 10 * 1e3:.2f} ms/step",
          flush=True)  # fmt: skip


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
    return {name: _timed(fn, reps) for name, fn in cases.items()}


def _timed(fn, reps: int) -> tuple:
    """(Python calls of one `fn()`, CPU us per call: the minimum of 7 runs of `reps` calls)."""
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
    return calls, best * 1e6


def mixed_ops(device) -> dict:
    """name -> (the float32 op, the same op as the mixed step runs it) at the Tensor level on
    `device` (an Autodiff device of a float32 backend): the autocast casts, linear (bias added
    in float32) and matmul; each under `autocast("bf16")` entered once, as the step does.
    Tracked inputs: the casts are recorded as in the step."""
    import numpy as np
    from burn_tensor import Tensor, autocast
    from burn_tensor import module as fn

    rng = np.random.default_rng(0)

    def arr(*shape):
        return Tensor.from_data(rng.standard_normal(shape).astype(np.float32), device)

    x3, w, bias = arr(8, 32, 64).require_grad(), arr(64, 64).require_grad(), arr(64)
    q, k = arr(2, 4, 32, 16).require_grad(), arr(2, 4, 16, 32).require_grad()
    xh = x3.cast("bfloat16")

    def under(f):  # autocast entered once per call
        def run():
            with autocast("bf16"):
                return f()

        return run

    def loop(f):  # autocast entered once around 8 calls: the step enters it once per forward
        def run():
            with autocast("bf16"):
                for _ in range(8):
                    f()

        return run

    def plain(f):
        def run():
            for _ in range(8):
                f()

        return run

    def fwd_bwd(f):
        return lambda: f().sum().backward()

    # the float32 column of a cast is an elementwise op of the same size (f32 has no cast)
    return {
        "cast f32->bf16 (f32: x*0.5)": (plain(lambda: x3 * 0.5), plain(lambda: x3.cast("bf16"))),
        "cast bf16->f32 (f32: x*0.5)": (plain(lambda: x3 * 0.5), plain(lambda: xh.cast("f32"))),
        "linear": (plain(lambda: fn.linear(x3, w, bias)), loop(lambda: fn.linear(x3, w, bias))),
        "matmul (batched)": (plain(lambda: q @ k), loop(lambda: q @ k)),
        "linear fwd+bwd": (
            fwd_bwd(lambda: fn.linear(x3, w, bias)),
            fwd_bwd(under(lambda: fn.linear(x3, w, bias))),
        ),
    }


def _mixed_ops(backend, reps: int) -> dict:
    """name -> ((f32 calls, f32 us), (mixed calls, mixed us)) per op call (`mixed_ops`; the
    8-call loops divided by 8)."""
    out = {}
    for name, (f32, mixed) in mixed_ops(backend.device()).items():
        per = 1 if name.endswith("bwd") else 8
        n = max(reps // per, 1)
        (c32, u32), (c16, u16) = _timed(f32, n), _timed(mixed, n)
        out[name] = ((c32 // per, u32 / per), (c16 // per, u16 / per))
    return out


def stand_in(size: dict, reps: int) -> None:
    from burn_autodiff import Autodiff
    from cpu_backend import cuda_on_cpu_backend
    from fake_cupy import FakeCupy

    from benches.suites import transformer_precision as tp

    tokens, targets = tp._data(size)
    ops, mixed_ops = {}, {}
    for dt, (float_dtype, mixed) in MODES.items():
        fake = FakeCupy(execute=False)
        with cuda_on_cpu_backend(fake=fake, float_dtype=float_dtype) as (be, _):
            step = tp._burn_step(Autodiff(be).device(), size, tokens, targets, mixed=mixed)
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
            if mixed:
                mixed_ops = _mixed_ops(Autodiff(be), reps)
            else:
                ops[dt] = _per_op(be, dt, reps)
    print(f"\n{'op':24s} {'f32 calls':>9s} {'bf16 calls':>10s} {'f32 us':>8s} {'bf16 us':>8s}")
    for name, (c32, u32) in ops["float32"].items():
        c16, u16 = ops["bfloat16"][name]
        print(f"{name:24s} {c32:9d} {c16:10d} {u32:8.1f} {u16:8.1f}")
    _print_mixed_ops(mixed_ops)


def _print_mixed_ops(table: dict) -> None:
    """The `_mixed_ops` table: Python calls and CPU us per op, float32 beside mixed."""
    print(f"\nmixed, Tensor level on Autodiff  {'f32 calls':>9s} {'mixed calls':>11s} "
          f"{'f32 us':>8s} {'mixed us':>8s}")  # fmt: skip
    for name, ((c32, u32), (c16, u16)) in table.items():
        print(f"{name:32s} {c32:9d} {c16:11d} {u32:8.1f} {u16:8.1f}")


def build_parser() -> argparse.ArgumentParser:
    """The probe's command line (tests/test_cli_help.py checks every option has help)."""
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--stand-in", action="store_true", help="the CPU stand-in (no GPU)")
    ap.add_argument("--size", default=None, help="transformer_precision size (gpu/cpu/quick)")
    ap.add_argument("--reps", type=int, default=200, help="calls per op timing (stand-in)")
    ap.add_argument("--src", type=Path, default=None, help="checkout whose packages run")
    ap.add_argument("--dump", type=Path, default=None,
                    help="GPU: write each mode's 3-step cProfile as DIR/MODE.pstats")
    return ap


def main(argv=None) -> None:
    ap = build_parser()
    args = ap.parse_args(argv)
    _use_sources(args.src)
    from benches.suites import transformer_precision as tp

    if args.stand_in:
        stand_in(tp.SIZES[args.size or "quick"], args.reps)
    else:
        gpu(tp.SIZES[args.size or "gpu"], args.reps, args.dump)


if __name__ == "__main__":
    main()
