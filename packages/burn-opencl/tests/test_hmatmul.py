"""OpenCl's tensor-core half matmul (`_hmatmul`, `_hgemm`, `_hgemm_wg`): the operand layouts it
reads in place (hand-derived), the wgmma kernel's PTX patch (text in, text out), that it stays
out of the way where it cannot run (PoCL: the float32 detour, numbers against numpy), and on an
NVIDIA GPU of compute capability 8.0+ (the GPU machine; skipped elsewhere with the reason) its
products against numpy float64 over uneven shapes, batches, broadcasts, views and both half
types, that the kernel is what ran, and on 9.0 that it was the wgmma one (`mma` on request)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_opencl import OpenCl
from burn_opencl import _hgemm_wg as wg
from burn_opencl._hmatmul import hmatmul, operand_layout, usable

ml_dtypes = pytest.importorskip("ml_dtypes")
NP = {"float16": np.dtype(np.float16), "bfloat16": np.dtype(ml_dtypes.bfloat16)}
#: float32 accumulation over K <= 264, one rounding to the half type: a few of its ulps
RTOL = {"float16": 2.0**-9, "bfloat16": 2.0**-6}


@pytest.mark.parametrize(
    "shape, strides, offset, bshape, want",
    [
        ((64, 32), (32, 1), 0, (), (32, 0)),  # plain row-major
        ((64, 32), (40, 1), 16, (), (40, 0)),  # a slice of a wider matrix
        ((64, 32), (1, 64), 0, (), None),  # transposed: a copy
        ((64, 32), (36, 1), 0, (), None),  # row stride 36: rows not 16-byte aligned
        ((64, 32), (32, 1), 4, (), None),  # offset 4 elements: 8 bytes
        ((3, 64, 32), (2048, 32, 1), 0, (3,), (32, 2048)),
        ((64, 32), (32, 1), 0, (2, 3), (32, 0)),  # broadcast over the whole batch
        ((2, 1, 64, 32), (2048, 2048, 32, 1), 0, (2, 3), None),  # broadcast inner dim: 2 strides
        ((2, 3, 64, 32), (6144, 2048, 32, 1), 0, (2, 3), (32, 2048)),  # merges into one
        ((1, 32), (32, 1), 0, (), (8, 0)),  # one row: its stride is never read
    ],
)
def test_operand_layout(shape, strides, offset, bshape, want):
    assert operand_layout(shape, strides, offset, bshape) == want


_PTX = """.version 9.0
.target sm_90, texmode_independent
\t// begin inline asm
\t// WG_FENCE
\t// end inline asm
\t// WG_MMA {%f1, %f2, %f3}, %rd7, %rd8;
\t// WG_COMMIT
\t// WG_WAIT1
\t// WG_PROXY
\tmov.u32 %r1, %r2;
"""


def test_wgmma_patch_turns_each_placeholder_into_its_instruction():
    out = wg.patch(_PTX, "bfloat16", wg.WTile(bn=128))
    lines = out.splitlines()
    assert lines[1] == ".target sm_90a, texmode_independent"
    mma = next(x for x in lines if "wgmma.mma_async" in x)
    # the operands the compiler gave the placeholder, in order; scale-d a true predicate; A, B
    # unscaled; A K-major, B transposed (N-major)
    assert ("wgmma.mma_async.sync.aligned.m64n128k16.f32.bf16.bf16 {%f1, %f2, %f3}, %rd7, %rd8,"
            " wgp, 1, 1, 0, 1;") in mma  # fmt: skip
    assert "setp.ne.u32 wgp, wgr, 0" in mma and "mov.u32 wgr, 1" in mma
    assert "\twgmma.fence.sync.aligned;" in lines
    assert "\twgmma.commit_group.sync.aligned;" in lines
    assert "\twgmma.wait_group.sync.aligned 1;" in lines
    assert "\tfence.proxy.async.shared::cta;" in lines
    assert "\tmov.u32 %r1, %r2;" in lines and "// WG_" not in out  # the rest as it was


def test_wgmma_patch_refuses_what_it_cannot_patch():
    with pytest.raises(RuntimeError, match="no WG_MMA placeholder"):
        wg.patch(".target sm_90\n\tmov.u32 %r1, %r2;\n", "float16")
    with pytest.raises(RuntimeError, match="not for .target sm_90"):
        wg.patch(_PTX.replace("sm_90,", "sm_80,"), "float16")


def test_wgmma_render_names_every_accumulator_and_checks_its_tile():
    src = wg.render("float16", wg.WTile(bn=256, stages=2))
    macro = next(x for x in src.splitlines() if x.startswith("#define WG_MMA"))
    assert macro.count('"+f"(acc[') == 128 and "%128, %129" in macro
    assert "#define LBO_B 2048" in src and "#define SBO_B 512" in src
    with pytest.raises(ValueError, match="local memory"):
        wg.render("float16", wg.WTile(bn=256, stages=3))  # 72 KB
    with pytest.raises(ValueError, match="bad tile"):
        wg.render("float16", wg.WTile(stages=2, wait=1))  # the loads would run 0 steps ahead
    with pytest.raises(ValueError, match="dtype must be one of"):
        wg.render("float32")


def test_pocl_takes_the_float32_detour(taken):
    backend = OpenCl("cpu", float_dtype="float16")
    from burn_tensor import Tensor

    d = backend.device()
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((16, 32)), rng.standard_normal((32, 24))
    ta, tb = Tensor.from_data(a, d), Tensor.from_data(b, d)
    rt = ta.into_primitive().rt
    assert not usable(rt)  # PoCL: not an NVIDIA GPU
    assert hmatmul(ta.into_primitive(), tb.into_primitive()) is None
    ra, rb = (v.astype(np.float16).astype(np.float64) for v in (a, b))
    got = np.asarray((ta @ tb).into_data().array).astype(np.float64)
    np.testing.assert_allclose(got, ra @ rb, rtol=RTOL["float16"], atol=RTOL["float16"])
    assert taken == [False]  # the backend's matmul asked, and was told to detour


def _nvidia_runtime():
    try:
        import pyopencl as cl
    except ImportError:
        return None
    for p in cl.get_platforms():
        if "NVIDIA" not in p.name:
            continue
        for d in p.get_devices():
            if getattr(d, "compute_capability_major_nv", 0) >= 8:
                return d
    return None


gpu = pytest.mark.skipif(
    _nvidia_runtime() is None,
    reason="needs NVIDIA's OpenCL on a GPU of compute capability 8.0+ (the GPU machine)",
)


@pytest.fixture
def taken(monkeypatch):
    """The list of whether each half matmul ran on tensor cores (True) or took the detour
    (False): `_half`'s matmul wrapper calls `hmatmul` through its module global."""
    from burn_opencl import _half

    seen, real = [], _half.hmatmul

    def spy(x, y):
        out = real(x, y)
        seen.append(out is not None)
        return out

    monkeypatch.setattr(_half, "hmatmul", spy)
    return seen


def _backend(dt):
    return OpenCl("gpu", float_dtype=dt)


def _case(dt, xs, ys, x_view=None, y_view=None):
    """x @ y on the GPU against numpy float64 of the half-rounded inputs; the views (functions
    of a Tensor) are applied to both sides."""
    from burn_tensor import Tensor

    d = _backend(dt).device()
    rng = np.random.default_rng(sum(xs) + sum(ys))
    x, y = rng.standard_normal(xs), rng.standard_normal(ys)
    rx, ry = (v.astype(NP[dt]).astype(np.float64) for v in (x, y))
    tx, ty = Tensor.from_data(x, d), Tensor.from_data(y, d)
    if x_view:
        tx, rx = x_view(tx), x_view(rx)
    if y_view:
        ty, ry = y_view(ty), y_view(ry)
    got = np.asarray((tx @ ty).into_data().array)
    assert got.dtype == NP[dt]
    want = np.matmul(rx, ry)
    scale = np.abs(rx).max() * np.abs(ry).max() * rx.shape[-1]
    np.testing.assert_allclose(got.astype(np.float64), want, rtol=RTOL[dt],
                               atol=RTOL[dt] * scale * 2.0**-4)  # fmt: skip
    return tx.into_primitive().rt


@gpu
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
@pytest.mark.parametrize(
    "xs, ys",
    [
        ((128, 64), (64, 128)),  # one tile
        ((200, 72), (72, 136)),  # M, N, K not tile multiples
        ((1, 264), (264, 8)),  # a single row, the narrowest N
        ((3, 130, 40), (3, 40, 24)),  # batched
        ((2, 3, 33, 16), (1, 1, 16, 48)),  # y broadcast over two batch dims (Burn: same rank)
        ((1, 33, 16), (4, 16, 48)),  # x broadcast
    ],
)
def test_products_on_tensor_cores(dt, xs, ys, taken):
    rt = _case(dt, xs, ys)
    assert usable(rt)
    assert taken == [True]  # this product came from the kernel, not the float32 detour


@gpu
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_views_are_copied_or_read_in_place(dt, taken):
    # rows 16..79 of y: read in place (offset 16 rows); x transposed: copied contiguous first
    rows = lambda t: t[16:80] if isinstance(t, np.ndarray) else t.slice([slice(16, 80)])  # noqa: E731
    _case(dt, (48, 64), (96, 32), y_view=rows)
    flip = lambda t: t.T if isinstance(t, np.ndarray) else t.transpose()  # noqa: E731
    _case(dt, (64, 48), (64, 32), x_view=flip)
    assert taken == [True, True]


@gpu
def test_shapes_it_cannot_take_go_the_detour(monkeypatch, taken):
    rt = _case("float16", (20, 12), (12, 16))  # K = 12: not a multiple of 8
    _case("float16", (20, 16), (16, 12))  # N = 12
    monkeypatch.setenv("BURN_OPENCL_HGEMM", "0")
    assert not usable(rt)
    _case("bfloat16", (64, 64), (64, 64))
    assert taken == [False, False, False]


def _hopper():
    d = _nvidia_runtime()
    return d is not None and (d.compute_capability_major_nv, d.compute_capability_minor_nv) == (9, 0)


@pytest.mark.skipif(not _hopper(), reason="needs NVIDIA's OpenCL on a compute capability 9.0 GPU")
@pytest.mark.parametrize("dt", ["float16", "bfloat16"])
def test_hopper_runs_the_wgmma_kernel_and_mma_on_request(dt, monkeypatch, taken):
    from burn_opencl import _hgemm as hg
    from burn_opencl import _hmatmul

    rt = _case(dt, (136, 264), (264, 200))
    assert _hmatmul.wgmma(rt)
    assert ("hgemm_wg", dt, wg.DEFAULT) in rt._programs
    monkeypatch.setenv("BURN_OPENCL_HGEMM", "mma")
    _case(dt, (72, 40), (40, 24))
    assert ("hgemm", dt, hg.DEFAULT) in rt._programs
    assert taken == [True, True]
