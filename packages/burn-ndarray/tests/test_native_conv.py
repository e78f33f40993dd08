"""The native conv2d task path (`_native_conv`, `_native/conv.c`) against float64 references.

Forward, input gradient (col2im, or for stride 1 a flipped-kernel conv of the output gradient
through the forward path) and weight gradient; odd shapes, strides, paddings, dilations, batch
1 and many, float32/float64; bitwise-identical results for 1, 2 and 4 threads; shapes the path
leaves to the numpy convs (groups); the chunked fallback; clear errors. Winograd shapes take
the task path here too (the autouse fixture); `test_native_winograd.py` tests Winograd.
"""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_conv, _native_conv_grad, _native_winograd
from burn_tensor.ops import ConvOptions

pytestmark = pytest.mark.skipif(_native.lib() is None, reason="no native kernels (no compiler)")
RNG = np.random.default_rng(7)


def out_hw(x_shape, w_shape, s, p, d) -> tuple[int, int]:
    return tuple(
        (x_shape[2 + a] + 2 * p[a] - d[a] * (w_shape[2 + a] - 1) - 1) // s[a] + 1 for a in (0, 1)
    )


def patches(x, w_shape, s, p, d, hw) -> np.ndarray:
    """float64 windows of x [n, c, h, w]: [n, c, kh, kw, oh, ow] (zeros outside the input)."""
    kh, kw = w_shape[2:]
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (p[0], p[0]), (p[1], p[1])))
    oh, ow = hw
    rows = [
        [
            xp[:, :, i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
               j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]]
            for j in range(kw)
        ]
        for i in range(kh)
    ]  # fmt: skip
    return np.stack([np.stack(r, axis=2) for r in rows], axis=2)


def ref_conv(x, w, bias, s, p, d) -> np.ndarray:
    hw = out_hw(x.shape, w.shape, s, p, d)
    out = np.einsum("ncijyx,ocij->noyx", patches(x, w.shape, s, p, d, hw), w.astype(np.float64))
    return out if bias is None else out + bias.astype(np.float64).reshape(1, -1, 1, 1)


def ref_weight_grad(x, g, w_shape, s, p, d) -> np.ndarray:
    pt = patches(x, w_shape, s, p, d, g.shape[2:])
    return np.einsum("ncijyx,noyx->ocij", pt, g.astype(np.float64))


def ref_x_grad(x_shape, w, g, s, p, d) -> np.ndarray:
    """dL/dx: each window's share of grad, scattered back (float64)."""
    n, c, h, wd = x_shape
    kh, kw = w.shape[2:]
    oh, ow = g.shape[2:]
    dxp = np.zeros((n, c, h + 2 * p[0], wd + 2 * p[1]))
    for i in range(kh):
        for j in range(kw):
            part = np.einsum(
                "noyx,oc->ncyx", g.astype(np.float64), w[:, :, i, j].astype(np.float64)
            )
            dxp[:, :, i * d[0] : i * d[0] + s[0] * (oh - 1) + 1 : s[0],
                j * d[1] : j * d[1] + s[1] * (ow - 1) + 1 : s[1]] += part  # fmt: skip
    return dxp[:, :, p[0] : p[0] + h, p[1] : p[1] + wd]


CASES = [  # x shape, weight shape, stride, padding, dilation
    ((3, 3, 17, 23), (8, 3, 3, 3), (1, 1), (1, 1), (1, 1)),  # odd sizes, RGB-like input
    ((1, 5, 16, 16), (4, 5, 3, 2), (2, 1), (0, 2), (1, 1)),  # batch 1, non-square kernel
    ((2, 4, 19, 15), (6, 4, 3, 3), (1, 2), (2, 1), (2, 3)),  # dilation, mixed strides
    ((9, 2, 9, 9), (3, 2, 1, 1), (1, 1), (0, 0), (1, 1)),  # 1x1, many images
    ((2, 40, 24, 20), (16, 40, 3, 3), (1, 1), (1, 1), (1, 1)),  # several pixel blocks
    ((2, 64, 13, 11), (5, 64, 5, 5), (3, 2), (2, 0), (1, 1)),  # blocks over partial rows
    ((2, 3, 4, 5), (7, 3, 5, 5), (1, 1), (3, 3), (1, 1)),  # kernel larger than the input
    ((1, 1, 1, 1), (2, 1, 1, 1), (1, 1), (0, 0), (1, 1)),
    ((1, 48, 30, 29), (8, 48, 3, 3), (1, 1), (1, 1), (1, 1)),  # batch 1 over several blocks
]
TOL = {np.float32: 3e-6, np.float64: 1e-13}


def backend(dtype, threads):
    kw = {"float_dtype": "float64", "int_dtype": "int64"} if dtype == np.float64 else {}
    return NdArray(num_threads=threads, parallel_min=1, **kw)


@pytest.fixture(autouse=True)
def _im2col_everywhere(monkeypatch):
    monkeypatch.setattr(_native_winograd, "MIN_C", 10**9)  # the task path for every shape
    monkeypatch.setattr(_native_conv, "WINOGRAD_MAX_THREADS", 1)  # and on the chunked fallback


def inputs(case, dtype):
    xs, ws, s, p, d = case
    x = RNG.uniform(-1, 1, xs).astype(dtype)
    w = RNG.uniform(-1, 1, ws).astype(dtype)
    bias = RNG.uniform(-1, 1, ws[0]).astype(dtype)
    g = RNG.uniform(-1, 1, (xs[0], ws[0], *out_hw(xs, ws, s, p, d))).astype(dtype)
    return x, w, bias, g, ConvOptions(s, p, d, 1)


def close(got, want, dtype, k: int) -> None:
    assert got.dtype == dtype and got.shape == want.shape
    tol = TOL[dtype]
    np.testing.assert_allclose(got, want, rtol=tol * 10, atol=tol * k)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_forward_and_gradients_against_float64(case, dtype):
    x, w, bias, g, opt = inputs(case, dtype)
    _, s, p, d = case[1:]
    b = backend(dtype, 2)
    k = w[0].size
    for bb in (bias, None):
        close(b.conv2d(x, w, bb, opt), ref_conv(x, w, bb, s, p, d), dtype, k)
    gk = g.shape[0] * g.shape[2] * g.shape[3]
    close(
        b.conv2d_weight_backward(x, w, g, opt), ref_weight_grad(x, g, w.shape, s, p, d), dtype, gk
    )
    close(b.conv2d_x_backward(x, w, g, opt), ref_x_grad(x.shape, w, g, s, p, d), dtype, k)


@pytest.mark.parametrize("ratio", [10**9, 0], ids=["flipped-conv", "col2im"])
@pytest.mark.parametrize("case", CASES, ids=str)
def test_x_gradient_both_routes(case, ratio, monkeypatch):
    """dx by col2im (forced for every shape) and by the flipped-kernel conv where it applies."""
    monkeypatch.setattr(_native_conv_grad, "COL2IM_CHANNEL_RATIO", ratio)
    for dtype in (np.float32, np.float64):
        x, w, _, g, opt = inputs(case, dtype)
        got = backend(dtype, 2).conv2d_x_backward(x, w, g, opt)
        close(got, ref_x_grad(x.shape, w, g, *case[2:]), dtype, w[0].size)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_bitwise_identical_for_1_2_4_threads(dtype, monkeypatch):
    monkeypatch.setattr(_native_conv_grad, "COL2IM_CHANNEL_RATIO", 0)  # dx by col2im too
    for case in (CASES[0], CASES[4], CASES[5], CASES[2], CASES[8]):
        x, w, bias, g, opt = inputs(case, dtype)
        results = []
        for t in (1, 2, 4):
            b = backend(dtype, t)
            results.append(
                (b.conv2d(x, w, bias, opt), b.conv2d_weight_backward(x, w, g, opt),
                 b.conv2d_x_backward(x, w, g, opt))
            )  # fmt: skip
        for other in results[1:]:
            for a, c in zip(results[0], other):
                np.testing.assert_array_equal(a, c)


def test_task_path_is_the_one_running():
    if not _native_conv._Gemm.ready(_native.lib()):
        pytest.skip("numpy's BLAS exposes no cblas GEMM here")
    b = backend(np.float32, 2)
    assert b.conv2d.__qualname__.startswith("install.")
    assert b.conv2d_weight_backward.__qualname__.startswith("install.")
    assert b.conv2d_x_backward.__qualname__.startswith("install.")


def test_first_use_leaves_numpys_blas_threads_alone():
    """The GEMM probe at install runs with BLAS on one thread; a fresh process must find
    numpy's BLAS thread count as before afterwards (matmuls would run on one thread)."""
    code = (
        "import numpy, threadpoolctl as t; before = t.threadpool_info()[0]['num_threads']; "
        "from burn_ndarray import NdArray, _native_conv; b = NdArray(); "
        "assert _native_conv._Gemm.ok is not None; "
        "print(before, t.threadpool_info()[0]['num_threads'], b.num_threads)"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("BURN_")}
    env["BURN_NDARRAY_LOAD_AWARE"] = "0"  # the budget itself, not a loaded machine's cap
    cmd = [sys.executable, "-c", code]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    before, after, budget = map(int, out.stdout.split())
    assert after == (before if budget == before else budget)


def test_concurrent_calls_from_python_threads(monkeypatch):
    """Convs from several Python threads at once (one per logical device, say): the same bits
    as one at a time, and BLAS back on the budget once all are done (load-aware capping off:
    a loaded machine caps the budget, `test_load.py`)."""
    from concurrent.futures import ThreadPoolExecutor

    from burn_ndarray import _blas, _load

    monkeypatch.setattr(_load, "_ON", False)

    b = backend(np.float32, 2)
    args = [inputs(case, np.float32) for case in CASES[:6]]
    want = [b.conv2d_weight_backward(x, w, g, o) for x, w, _, g, o in args]
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda a: b.conv2d_weight_backward(a[0], a[1], a[3], a[4]), args * 3))
    for i, dw in enumerate(got):
        np.testing.assert_array_equal(dw, want[i % len(want)])
    assert _blas.current() in (2, None)


def test_without_the_per_thread_blas_count(monkeypatch):
    """An OpenBLAS without openblas_set_num_threads_local: the process-wide count is 1 for the
    call instead; same bits, and the budget back afterwards (load-aware capping off)."""
    from burn_ndarray import _blas, _load

    monkeypatch.setattr(_load, "_ON", False)

    lib, ptrs = _native.lib(), _blas.cblas_gemm()
    if not ptrs or not ptrs[2] or not _native_conv._Gemm.ready(lib):
        pytest.skip("no per-thread OpenBLAS count here")
    b = backend(np.float32, 2)
    x, w, bias, g, opt = inputs(CASES[4], np.float32)
    want = b.conv2d(x, w, bias, opt), b.conv2d_weight_backward(x, w, g, opt)
    monkeypatch.setattr(_native_conv._Gemm, "local", False)
    lib.conv_set_gemm(ptrs[0], ptrs[1], None)
    try:
        got = b.conv2d(x, w, bias, opt), b.conv2d_weight_backward(x, w, g, opt)
    finally:
        lib.conv_set_gemm(*ptrs)
    for a, c in zip(want, got):
        np.testing.assert_array_equal(a, c)
    assert _blas.current() in (2, None)


def test_non_contiguous_inputs():
    x, w, bias, _, opt = inputs(CASES[2], np.float32)
    b = backend(np.float32, 2)
    xt = np.ascontiguousarray(x.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)  # F-order planes
    np.testing.assert_array_equal(b.conv2d(xt, w, bias[::-1][::-1], opt), b.conv2d(x, w, bias, opt))


def test_shapes_left_to_the_numpy_convs():
    """groups > 1 keeps the numpy paths (or `_native_dwconv`)."""
    b = backend(np.float32, 2)
    x = RNG.uniform(-1, 1, (2, 6, 10, 10)).astype(np.float32)
    w = RNG.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    opt = ConvOptions((1, 1), (1, 1), (1, 1), 2)
    want = np.concatenate(
        [
            ref_conv(x[:, 3 * i : 3 * i + 3], w[2 * i : 2 * i + 2], None, (1, 1), (1, 1), (1, 1))
            for i in (0, 1)
        ],
        axis=1,
    )
    np.testing.assert_allclose(b.conv2d(x, w, None, opt), want, rtol=1e-5, atol=1e-5)


def test_chunked_fallback():
    """The path without a cblas GEMM (called directly: backends are interned by options, so an
    environment change would not rebuild one)."""
    from burn_ndarray import _native_conv_chunked

    x, w, bias, _, _ = inputs(CASES[2], np.float32)
    s, p, d = CASES[2][2:]
    got = _native_conv_chunked.conv2d(
        _native.lib(), 2, x, w, bias, s, p, d, out_hw(x.shape, w.shape, s, p, d)
    )
    close(got, ref_conv(x, w, bias, s, p, d), np.float32, w[0].size)


def test_block_pixels_depends_on_shapes_only():
    assert _native_conv.block_pixels(1024, 27, 4) == 1024  # one task per image
    pb = _native_conv.block_pixels(1024, 576, 4)
    assert pb % 16 == 0 and pb * 576 * 4 <= _native_conv.TASK_BYTES + 16 * 576 * 4
    assert _native_conv.block_pixels(10, 10**6, 8) == 10  # never more than the image


def test_clear_errors_on_bad_input():
    b = backend(np.float32, 2)
    x = np.ones((2, 3, 8, 8), np.float32)
    w = np.ones((4, 5, 3, 3), np.float32)
    opt = ConvOptions((1, 1), (1, 1), (1, 1), 1)
    with pytest.raises(ValueError, match="3 channels"):
        b.conv2d(x, w, None, opt)
    with pytest.raises(ValueError, match="output_grad"):
        b.conv2d_weight_backward(x, w[:, :3], np.ones((2, 5, 8, 8), np.float32), opt)


@pytest.mark.parametrize("threads", [1, 2, 4])
def test_equal_filters_give_equal_channels_on_the_task_path(threads):
    # a GEMM rounds rows of one tile differently (`_filter_classes`); ONNX's light squeezenet
    # (every weight 0.02) needs equal filters to give bit-identical channels
    x = RNG.uniform(-1, 1, (2, 32, 27, 27)).astype(np.float32)
    w = np.full((128, 32, 1, 1), 0.02, np.float32)
    w[5] = 0.03  # one distinct filter among the equal ones
    bias = np.zeros(128, np.float32)
    out = backend(np.float32, threads).conv2d(x, w, bias, ConvOptions((1, 1), (0, 0), (1, 1), 1))
    same = np.delete(out, 5, axis=1)
    assert (same == same[:, :1]).all()
    want = np.einsum("nchw->nhw", x.astype(np.float64))[:, None] * 0.02
    np.testing.assert_allclose(out[:, :1], want.astype(np.float32), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(
        out[:, 5],
        np.einsum("nchw->nhw", x.astype(np.float64)) * np.float32(0.03),
        rtol=1e-5,
        atol=1e-6,
    )


def test_shape_only_setup_is_planned_once_per_shape(monkeypatch):
    """The checks, geometry and task sizing of a conv depend on its shapes only: computed on
    a shape's first call (a small conv's Python went from ~11 to ~9 us a call), again for a
    new shape, with the results still those of the float64 reference."""
    calls = []
    real = _native_conv._geom

    def counted(*args):
        calls.append(args[0])
        return real(*args)

    monkeypatch.setattr(_native_conv, "_geom", counted)
    b = backend(np.float32, 1)
    opt = ConvOptions((2, 1), (1, 0), (1, 1), 1)
    # 5 input channels: 4 or fewer take the stem kernel (`_native_stem`), not the GEMM tasks
    w = RNG.uniform(-1, 1, (5, 5, 3, 2)).astype(np.float32)
    for shape in ((2, 5, 9, 8), (1, 5, 7, 6)):
        x = RNG.uniform(-1, 1, shape).astype(np.float32)
        for _ in range(3):
            got = b.conv2d(x, w, None, opt)
        want = ref_conv(x, w, None, (2, 1), (1, 0), (1, 1))
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    mine = [c for c in calls if c in ((2, 5, 9, 8), (1, 5, 7, 6))]  # not the GEMM probe's
    assert mine == [(2, 5, 9, 8), (1, 5, 7, 6)]
