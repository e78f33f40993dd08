"""Batch-1 weight-only quantized linear on a GPU: `qlin_gemv` variants, the full Python path
and its host overhead, against the float16 linear (issue 39). One JSON line per measurement.

    uv run python benches/probes/qgemv_probe.py                       # Cuda, 4096 and 8192
    uv run python benches/probes/qgemv_probe.py --backend opencl --sizes 256 --reps 5  # smoke

Lines (`"kind"`):
- `variant`: one `GemvVariant` (`tag`, the resolved one as `ran`) on one (size, scheme):
  `kernel_ms` = CUDA-event time of `--launches` back-to-back launches / launches (OpenCL: wall
  time with a final sync), `gbs` the weight bytes (values + scales) a launch reads per second,
  `max_abs_diff` against numpy float64 of the dequantized weight (`ok`: within 1e-3 * scale).
- `path`: `module.linear(x, qweight)` as the bench times it (`wall_ms`: median of one call +
  sync), `bias_*` the same with a float32 bias (added in the kernel's store), `pipelined_ms` (launches calls then one sync, / launches: the host cost per call when
  the GPU keeps up), and the host time of each piece of `GpuQuantOps.q_linear` (us, median per
  call, no sync): `tensor_layer_us` (module.linear minus backend.q_linear), `q_linear_us`,
  `kernels_of_us`, `c_offset_us` (three arrays), `plan_for_us`, `empty_us`, `launch_us`.
- `reference`: torch `F.linear` float16 and cupy float16 matmul at batch 1 (events and wall),
  burn-py's own float16 linear, and each side's sync with nothing queued (`*_sync_us`).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np
from burn_gpu import _quant, _quant_gemv
from burn_gpu._quant_gemv import BASELINE, DEFAULT_CUDA, GemvVariant
from burn_tensor import Tensor, module
from burn_tensor.quantization import QuantLevel, QuantScheme, QuantValue, dequantize_ref

V = GemvVariant
VARIANTS = [
    BASELINE,
    DEFAULT_CUDA,
    V(256, 2, 4, True),
    V(1024, 2, 4, True),
    V(128, 2, 4, True),
    V(512, 4, 4, True),
    V(512, 1, 4, True),
    V(256, 1, 4, True),
    V(512, 8, 1, True),
    V(512, 2, 2, True),
    V(512, 2, 4, False),  # tree reduction
    V(512, 2, 4, True, True),  # x staged
    V(512, 2, 4, True, False, 8),  # unroll 8
]
SCHEMES = {
    "int4": QuantScheme(value=QuantValue.Q4S),
    "int4_b32": QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32)),
    "int8": QuantScheme(),
}


def emit(**row) -> None:
    print(json.dumps(row), flush=True)


def med_us(fn, n: int) -> float:
    """Median per-call host time of `fn` in us (no device sync)."""
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return statistics.median(ts) * 1e6


class Timer:
    """Device time of `n` back-to-back launches: CUDA events on cupy, else wall + sync."""

    def __init__(self, backend, dev):
        self.dev = dev
        try:
            import cupy as cp

            self.cp = cp if backend == "cuda" else None
        except ImportError:
            self.cp = None

    def per_launch_ms(self, fn, n: int) -> float:
        fn()
        self.dev.sync()
        if self.cp is not None:
            a, b = self.cp.cuda.Event(), self.cp.cuda.Event()
            a.record()
            for _ in range(n):
                fn()
            b.record()
            b.synchronize()
            return self.cp.cuda.get_elapsed_time(a, b) / n
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        self.dev.sync()
        return (time.perf_counter() - t0) * 1e3 / n


def probe_size(a, dev, be, timer, d: int, rng) -> None:
    w = Tensor.from_data((rng.normal(size=(d, d)) * 0.02).astype(np.float32), dev)
    xf = rng.normal(size=(1, d)).astype(np.float32)
    x = Tensor.from_data(xf, dev)
    for name, scheme in SCHEMES.items():
        if name not in a.schemes:
            continue
        qw = w.quantize_dynamic(scheme)
        qp, xp = qw._p, x._p
        qd = qw.quantized_data()
        want = xf.astype(np.float64) @ dequantize_ref(qd.values, qd.scales, scheme, (d, d))
        tol = 1e-3 * float(np.abs(want).max())
        nbytes = qd.values.nbytes + qd.scales.nbytes
        rt = be.kernels_of(xp)
        offs = [_quant._c_offset(rt, p) for p in (xp, qp.values, qp.scales)]
        words, block = qp.values.shape[-1], scheme.level.block_size or 0
        for v in VARIANTS:
            try:
                plan = _quant_gemv.plan_for(rt, qp.values, 1, d, d, words, scheme.value.bits, block, offs, v)
                out = rt.empty((1, d), np.dtype(np.float32))

                def go(plan=plan, out=out):
                    plan(rt, out, xp, qp.values, qp.scales)

                ms = timer.per_launch_ms(go, a.launches)
                got = x._like(out).numpy()
                diff = float(np.abs(got.astype(np.float64) - want).max())
                emit(kind="variant", d=d, scheme=name, tag=v.tag, ran=plan.variant.tag, kernel_ms=ms,
                     gbs=nbytes / (ms * 1e-3) / 1e9, max_abs_diff=diff, ok=diff <= tol)  # fmt: skip
            except Exception as e:  # noqa: BLE001 - a probe reports a failing variant and goes on
                emit(kind="variant", d=d, scheme=name, tag=v.tag, error=f"{type(e).__name__}: {e}")
        probe_path(a, dev, be, x, qw, xp, qp, rt, offs, d, name, scheme, want, tol)


def probe_path(a, dev, be, x, qw, xp, qp, rt, offs, d, name, scheme, want, tol) -> None:
    """The full Python path (the default variant) and its host pieces."""

    def one():
        module.linear(x, qw)
        dev.sync()

    one()
    wall = statistics.median([med_us(one, 1) for _ in range(a.reps)]) / 1e3
    t0 = time.perf_counter()
    for _ in range(a.launches):
        module.linear(x, qw)
    dev.sync()
    piped = (time.perf_counter() - t0) * 1e3 / a.launches
    got = module.linear(x, qw).numpy().astype(np.float64)
    bf = np.linspace(-1, 1, d, dtype=np.float32)
    b = Tensor.from_data(bf, dev)
    got_b = module.linear(x, qw, b).numpy().astype(np.float64)
    n = a.launches
    words, block, bits = qp.values.shape[-1], scheme.level.block_size or 0, scheme.value.bits
    plan = _quant_gemv.plan_for(rt, qp.values, 1, d, d, words, bits, block, offs)
    out = rt.empty((1, d), np.dtype(np.float32))
    row = dict(
        kind="path", d=d, scheme=name, variant=plan.variant.tag, wall_ms=wall, pipelined_ms=piped,
        max_abs_diff=float(np.abs(got - want).max()),
        bias_max_abs_diff=float(np.abs(got_b - want - bf).max()),
        bias_module_linear_us=med_us(lambda: module.linear(x, qw, b), n),
        module_linear_us=med_us(lambda: module.linear(x, qw), n),
        q_linear_us=med_us(lambda: be.q_linear(xp, qp, None), n),
        kernels_of_us=med_us(lambda: be.kernels_of(xp), n),
        c_offset_us=med_us(lambda: [_quant._c_offset(rt, p) for p in (xp, qp.values, qp.scales)], n),
        plan_for_us=med_us(lambda: _quant_gemv.plan_for(rt, qp.values, 1, d, d, words, bits, block, offs), n),
        empty_us=med_us(lambda: rt.empty((1, d), np.dtype(np.float32)), n),
        launch_us=med_us(lambda: plan(rt, out, xp, qp.values, qp.scales), n),
    )  # fmt: skip
    row["tensor_layer_us"] = row["module_linear_us"] - row["q_linear_us"]
    row["ok"] = max(row["max_abs_diff"], row["bias_max_abs_diff"]) <= tol
    dev.sync()
    emit(**row)


def references(a, dev, timer, d: int) -> None:
    """torch F.linear / cupy matmul in float16 and burn-py's own float16 linear at batch 1."""
    rng = np.random.default_rng(1)
    row = dict(kind="reference", d=d)
    w = Tensor.from_data((rng.normal(size=(d, d)) * 0.02).astype(np.float32), dev).cast("float16")
    x = Tensor.from_data(rng.normal(size=(1, d)).astype(np.float32), dev).cast("float16")

    def burn():
        module.linear(x, w)
        dev.sync()

    burn()
    dev.sync()
    row["burn_sync_us"] = med_us(dev.sync, 200)  # nothing queued: the sync's own cost
    row["burn_f16_wall_ms"] = statistics.median([med_us(burn, 1) for _ in range(a.reps)]) / 1e3
    if timer.cp is not None:
        cp = timer.cp
        wc = cp.asarray(rng.normal(size=(d, d)) * 0.02, dtype=cp.float16)
        xc = cp.asarray(rng.normal(size=(1, d)), dtype=cp.float16)
        row["cupy_f16_kernel_ms"] = timer.per_launch_ms(lambda: xc @ wc, a.launches)
    try:
        import torch
        import torch.nn.functional as tf

        if torch.cuda.is_available():
            wt = torch.randn(d, d, dtype=torch.float16, device="cuda") * 0.02
            xt = torch.randn(1, d, dtype=torch.float16, device="cuda")

            def tw():
                tf.linear(xt, wt)
                torch.cuda.synchronize()

            tw()
            row["torch_sync_us"] = med_us(torch.cuda.synchronize, 200)
            row["torch_f16_wall_ms"] = statistics.median([med_us(tw, 1) for _ in range(a.reps)]) / 1e3
            s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            s.record()
            for _ in range(a.launches):
                tf.linear(xt, wt)
            e.record()
            e.synchronize()
            row["torch_f16_kernel_ms"] = s.elapsed_time(e) / a.launches
        else:
            row["torch"] = "no CUDA"
    except ImportError:
        row["torch"] = "not installed"
    emit(**row)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--backend", default="cuda", choices=["cuda", "opencl"], help="GPU backend to probe")
    ap.add_argument("--sizes", type=int, nargs="+", default=[4096, 8192], help="K = N")
    ap.add_argument("--schemes", nargs="+", default=list(SCHEMES), choices=list(SCHEMES), help="weight schemes to time")
    ap.add_argument("--launches", type=int, default=200, help="launches a kernel timing averages")
    ap.add_argument("--reps", type=int, default=30, help="repeats of a synced wall timing")
    return ap


def main() -> None:
    a = build_parser().parse_args()
    if a.backend == "cuda":
        from burn_cuda import Cuda

        dev = Cuda().device()
    else:
        from burn_opencl import OpenCl

        dev = OpenCl().device()
    be = dev.backend
    timer = Timer(a.backend, dev)
    t0 = time.perf_counter()
    rng = np.random.default_rng(0)
    for d in a.sizes:
        references(a, dev, timer, d)
        probe_size(a, dev, be, timer, d, rng)
    emit(kind="done", seconds=time.perf_counter() - t0)


if __name__ == "__main__":
    main()
