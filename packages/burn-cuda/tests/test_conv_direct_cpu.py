"""Cuda's conv2d routing to burn_gpu's direct kernels, run on the CPU stand-in (`cpu_backend.py`:
the CUDA rendering compiled with g++, blocks as fibers): conv2d (bias in the kernel),
conv2d_x_backward and conv2d_weight_backward launch `dconv_fwd` / `dconv_dx` / `dconv_dw`
(+ the column sums) and no im2col, with TF32 allowed too (FMA kernels: full float32), against
numpy float64; `BURN_GPU_CONV_DIRECT=0` goes back to im2col. The CUDA text also compiles with
`nvcc --ptx -arch=sm_90` (what NVRTC compiles on the GPU machine)."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_backend_tests.reference import conv as ref
from burn_gpu import direct_plan, direct_program
from burn_tensor.ops import ConvOptions
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy


needs_gxx = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

CASES = {
    # name: (dtype, n, c_in, c_out, (h, w), (kh, kw), stride, padding, dilation, bias, tf32)
    "guide_conv2_tf32_allowed": ("float32", 2, 8, 16, (26, 26), (3, 3), (1, 1), (0, 0), (1, 1), True, True),
    "f64_odd_stride_pad_dil": ("float64", 2, 2, 3, (7, 8), (2, 3), (2, 1), (1, 2), (2, 1), False, False),
}


def _run(name):
    dt, n, ci, co, hw, k, stride, padding, dilation, has_bias, tf32 = CASES[name]
    rng = np.random.default_rng(9)
    x = rng.standard_normal((n, ci, *hw))
    w = rng.standard_normal((co, ci, *k))
    bias = rng.standard_normal(co)
    g = rng.standard_normal(ref.conv2d_passes(x, w, stride, padding, dilation, None)[0].shape)
    want, want_dx, want_dw = ref.conv2d_passes(x, w, stride, padding, dilation, g)
    if has_bias:
        want = want + bias[None, :, None, None]
    opts = dict(float_dtype=dt, int_dtype="int64" if dt == "float64" else "int32")
    with cuda_on_cpu_backend(FakeCupy(), allow_tf32=tf32, **opts) as (b, cp):
        xs, ws, gs = (cp.asarray(a.astype(dt)) for a in (x, w, g))
        bs = cp.asarray(bias.astype(dt)) if has_bias else None
        o = ConvOptions(stride, padding, dilation, 1)
        got = [cp.asnumpy(b.conv2d(xs, ws, bs, o)), cp.asnumpy(b.conv2d_x_backward(xs, ws, gs, o)),
               cp.asnumpy(b.conv2d_weight_backward(xs, ws, gs, o))]  # fmt: skip
        names = [launch.name for launch in cp.launches]
    tol = 1e-5 if dt == "float32" else 1e-12
    for a, exp in zip(got, (want, want_dx, want_dw), strict=True):
        np.testing.assert_allclose(a, exp, rtol=tol, atol=tol * max(1.0, float(np.abs(exp).max())))
    return names


@needs_gxx
@pytest.mark.parametrize("name", list(CASES))
def test_cuda_routes_eligible_convs_to_the_direct_kernels(name):
    names = _run(name)
    assert {"dconv_fwd", "dconv_dx", "dconv_dw"} <= set(names), names
    assert not any(n.startswith(("im2col", "col2im", "bias_add")) for n in names), names


@needs_gxx
def test_env_zero_keeps_im2col(monkeypatch):
    monkeypatch.setenv("BURN_GPU_CONV_DIRECT", "0")
    names = _run("f64_odd_stride_pad_dil")
    assert not any(n.startswith("dconv") for n in names) and "im2col" in names, names


@pytest.mark.parametrize("dtype, shape", [("float32", (16, 8, 3, 3)), ("float64", (32, 4, 5, 5))])
def test_cuda_text_compiles_with_nvcc(nvcc_ptx, dtype, shape):
    plan = direct_plan(*shape, np.dtype(dtype).itemsize, 1024)
    proc, ptx = nvcc_ptx(f"dconv_{dtype}", direct_program(dtype, plan, "cuda"))
    assert proc.returncode == 0, proc.stderr
    text = ptx.read_text()
    for kernel in ("dconv_fwd", "dconv_dx", "dconv_dw"):
        assert f".entry {kernel}(" in text
    assert ".local" not in text, "accumulators spilled to local memory"
