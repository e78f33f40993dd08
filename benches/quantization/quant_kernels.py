"""Quantized kernels vs float: int8 x int8 -> int32 matmul, and the weight-only packed linear
at batch 1 (memory-bound decoding). Prints one JSON object.

    uv run python benches/quantization/quant_kernels.py [--threads N] [--n 1024] [--d 4096]
    uv run python benches/quantization/quant_kernels.py --backend cuda --n 8192 --d 8192 --half

`--backend` picks NdArray (default), cuda or opencl; times wait for the device (`sync`).
`--half` also times the float16 linear (the issue's bar for int4 at batch 1 on a GPU).
When PyTorch with CUDA is importable (`--backend cuda`), the same process also times
`torch._int_mm` on int8 [n, n] operands and `F.linear` in float16 at batch 1, and the JSON has
the ratios the issue asks for: `int8_mm_vs_torch` (ours / torch throughput, bar >= 0.5) and
`int4_b1_vs_f16` / `int4_b1_vs_torch_f16` (f16 time / int4-block-32 time, ours and torch's f16;
bar > 1; `int8_b1_vs_*` likewise). `*_gbs`: the weight bytes (values and scales)
a batch-1 linear reads, per second. NdArray also times the batch-64 linear with int8
activations (`NdArray(quantize_activations=True)`) against float32.
"""

from __future__ import annotations

import argparse
import json
import time

import numpy as np
from burn_ndarray import NdArray
from burn_tensor import Tensor, module
from burn_tensor.quantization import QuantLevel, QuantScheme, QuantValue


def _median_ms(fn, reps: int) -> float:
    fn()
    ts = []
    for _ in range(reps):
        t0 = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t0)
    return float(np.median(ts) * 1e3)


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.strip().splitlines()[0])
    ap.add_argument("--threads", type=int, default=None, help="NdArray threads (default: all)")
    ap.add_argument("--n", type=int, default=1024, help="square matmul size")
    ap.add_argument("--d", type=int, default=4096, help="linear d_in = d_out")
    ap.add_argument("--reps", type=int, default=10, help="timed repeats")
    ap.add_argument("--backend", default="ndarray", choices=["ndarray", "cuda", "opencl"], help="backend to time")
    ap.add_argument("--half", action="store_true", help="also time the float16 linear")
    return ap


def main() -> None:
    a = build_parser().parse_args()
    if a.backend == "cuda":
        from burn_cuda import Cuda

        d = Cuda().device()
    elif a.backend == "opencl":
        from burn_opencl import OpenCl

        d = OpenCl().device()
    else:
        d = NdArray(num_threads=a.threads).device() if a.threads else NdArray().device()
    rng = np.random.default_rng(0)
    x = Tensor.from_data(rng.normal(size=(a.n, a.n)).astype(np.float32), d)
    y = Tensor.from_data(rng.normal(size=(a.n, a.n)).astype(np.float32), d)
    qx, qy = x.quantize_dynamic(QuantScheme()), y.quantize_dynamic(QuantScheme())
    out = {"backend": repr(d.backend), "threads": getattr(d.backend, "num_threads", None)}
    out.update(n=a.n, d=a.d)

    def timed(fn):
        return _median_ms(lambda: (fn(), d.sync()), a.reps)

    def tops(ms):
        return 2 * a.n**3 / (ms * 1e-3) / 1e12

    out["matmul_f32_ms"] = timed(lambda: x.matmul(y))
    calls = _cublas_calls() if a.backend == "cuda" else None
    out["matmul_int8_ms"] = timed(lambda: qx.matmul(qy))
    out["matmul_int8_tops"] = tops(out["matmul_int8_ms"])
    if calls is not None:  # Cuda: whether cuBLAS int8 ran (else burn_gpu's qmm_i8 kernel)
        out["matmul_int8_path"] = "cublas" if _cublas_calls() > calls else "qmm_i8 kernel"
    w = Tensor.from_data(rng.normal(size=(a.d, a.d)).astype(np.float32) * 0.02, d)
    v = Tensor.from_data(rng.normal(size=(1, a.d)).astype(np.float32), d)
    out["linear_b1_f32_ms"] = timed(lambda: module.linear(v, w))
    if a.half:
        wh, vh = w.cast("float16"), v.cast("float16")
        out["linear_b1_f16_ms"] = timed(lambda: module.linear(vh, wh))
    for name, scheme in (
        ("int8", QuantScheme()),
        ("int4_b32", QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32))),
        ("int4", QuantScheme(value=QuantValue.Q4S)),
    ):
        qw = w.quantize_dynamic(scheme)
        ms = timed(lambda qw=qw: module.linear(v, qw))
        qd = qw.quantized_data()
        out[f"linear_b1_{name}_ms"] = ms
        out[f"linear_b1_{name}_gbs"] = (qd.values.nbytes + qd.scales.nbytes) / (ms * 1e-3) / 1e9
    if a.backend == "ndarray":
        _ndarray_dynamic(a, rng, out)
    if a.backend == "cuda":
        _torch_rows(a, out)
    if "torch_int_mm_ms" in out:
        out["int8_mm_vs_torch"] = out["torch_int_mm_ms"] / out["matmul_int8_ms"]
    for f16 in ("linear_b1_f16_ms", "torch_linear_b1_f16_ms"):  # f16 time / quantized time
        if f16 in out:
            tag = "f16" if f16.startswith("linear") else "torch_f16"
            out[f"int4_b1_vs_{tag}"] = out[f16] / out["linear_b1_int4_b32_ms"]
            out[f"int8_b1_vs_{tag}"] = out[f16] / out["linear_b1_int8_ms"]
    print(json.dumps(out))


def _cublas_calls():
    """burn_cuda's count of cuBLAS int8 GEMMs (None without burn_cuda)."""
    try:
        from burn_cuda import _quant_gemm
    except ImportError:
        return None
    return _quant_gemm.CALLS[0]


def _ndarray_dynamic(a, rng, out) -> None:
    """Batch-64 linear [d, d]: float32 vs int8 weight with int8 activations (quantized on the fly)."""
    threads = {"num_threads": a.threads} if a.threads else {}
    d = NdArray(**threads).device()
    dq = NdArray(**threads, quantize_activations=True).device()
    wf = rng.normal(size=(a.d, a.d)).astype(np.float32) * 0.02
    xf = rng.normal(size=(64, a.d)).astype(np.float32)
    w, x = Tensor.from_data(wf, d), Tensor.from_data(xf, d)
    qw = Tensor.from_data(wf, dq).quantize_dynamic(QuantScheme())
    xq = Tensor.from_data(xf, dq)
    out["linear_b64_f32_ms"] = _median_ms(lambda: module.linear(x, w).numpy(), a.reps)
    out["linear_b64_int8_act8_ms"] = _median_ms(lambda: module.linear(xq, qw).numpy(), a.reps)


def _torch_rows(a, out) -> None:
    """torch._int_mm and F.linear (float16, batch 1) in this process, when torch has CUDA."""
    try:
        import torch
    except ImportError:
        out["torch"] = "not installed"
        return
    if not torch.cuda.is_available():
        out["torch"] = "no CUDA"
        return
    import torch.nn.functional as tf

    def tt(fn):
        return _median_ms(lambda: (fn(), torch.cuda.synchronize()), a.reps)

    dev = torch.device("cuda")
    ia = torch.randint(-128, 128, (a.n, a.n), dtype=torch.int8, device=dev)
    ib = torch.randint(-128, 128, (a.n, a.n), dtype=torch.int8, device=dev)
    out["torch_int_mm_ms"] = tt(lambda: torch._int_mm(ia, ib))
    out["torch_int_mm_tops"] = 2 * a.n**3 / (out["torch_int_mm_ms"] * 1e-3) / 1e12
    wt = torch.randn(a.d, a.d, dtype=torch.float16, device=dev) * 0.02
    vt = torch.randn(1, a.d, dtype=torch.float16, device=dev)
    out["torch_linear_b1_f16_ms"] = tt(lambda: tf.linear(vt, wt))
    out["torch_version"] = torch.__version__


if __name__ == "__main__":
    main()
