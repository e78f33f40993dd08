"""burn_gpu's `qlin_packed` (weight-only quantized linear) as Cuda launches it, on the CPU
stand-in: the real CUDA text built by g++, the grid the launcher computes, against the numpy
float64 reference of the dequantized weight."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from burn_gpu._quant import clear_runtimes
from burn_tensor import Tensor, module
from burn_tensor.quantization import (
    QuantLevel,
    QuantScheme,
    QuantValue,
    dequantize_ref,
    unpack_ref,
)
from cpu_backend import cuda_on_cpu_backend
from fake_cupy import FakeCupy

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

SCHEMES = [
    QuantScheme(),
    QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(8)),
    QuantScheme(value=QuantValue.Q2F, level=QuantLevel.block(4)),
]


def test_qlin_packed_runs_and_matches_reference():
    # one stand-in for every scheme: the fake's kernel cache records launches on the fake that
    # first built a kernel
    clear_runtimes()
    with cuda_on_cpu_backend(FakeCupy()) as (backend, cp):
        d = backend.device()
        rng = np.random.default_rng(0)
        for scheme in SCHEMES:
            # N = 40: not a multiple of 16 (q2) values a word; M * N spans several blocks
            w = Tensor.from_data(rng.normal(size=(33, 40)).astype(np.float32), d)
            w = w.quantize_dynamic(scheme)
            x = rng.normal(size=(2, 9, 33)).astype(np.float32)
            b = rng.normal(size=(40,)).astype(np.float32)
            before = len(cp.launches)
            got = module.linear(Tensor.from_data(x, d), w, Tensor.from_data(b, d)).numpy()
            assert "qlin_packed" in [launch.name for launch in cp.launches[before:]], scheme
            wd = w.quantized_data()
            ref = dequantize_ref(wd.values, wd.scales, scheme, (33, 40))
            np.testing.assert_allclose(got, x.astype(np.float64) @ ref + b, rtol=1e-4, atol=1e-4)
        # int8 x int8 -> int32 (qmm_i8; the portable DOT4 here, __dp4a on sm_61+)
        s = QuantScheme()
        a = Tensor.from_data(rng.normal(size=(5, 203)).astype(np.float32), d).quantize_dynamic(s)
        bb = Tensor.from_data(rng.normal(size=(203, 7)).astype(np.float32), d).quantize_dynamic(s)
        before = len(cp.launches)
        got = a.matmul(bb).numpy()
        assert "qmm_i8" in [launch.name for launch in cp.launches[before:]]
        da, db = a.quantized_data(), bb.quantized_data()
        ia, ib = unpack_ref(da.values, s, (5, 203)), unpack_ref(db.values, s, (203, 7))
        want = (ia @ ib).astype(np.float32) * np.float32(da.scales[0] * db.scales[0])
        np.testing.assert_array_equal(got, want)
    clear_runtimes()


def test_cublas_int8_path_kernels_transpose_and_scale():
    # the two kernels around cuBLAS's int8 GEMM (`_quant_gemm`), on the stand-in: the 32x32
    # tiled transpose (70 x 37: partial tiles on both edges; read from rows 44 bytes apart)
    # and the in-place int32 -> float32 scale
    from burn_cuda import _quant_gemm

    clear_runtimes()
    with cuda_on_cpu_backend(FakeCupy()) as (backend, cp):
        rng = np.random.default_rng(1)
        src = rng.integers(-128, 128, size=(70, 44)).astype(np.int8)
        s = cp.asarray(src)
        rt = backend.kernels_of(s)
        got = _quant_gemm.transpose_i8(rt, s, 70, 37, 44)
        assert got.shape == (37, 70)
        np.testing.assert_array_equal(np.asarray(got), src[:, :37].T)
        acc_np = rng.integers(-(2**20), 2**20, size=(5, 8)).astype(np.int32)
        sa = cp.asarray(np.array([0.013], np.float32))
        sb = cp.asarray(np.array([0.7], np.float32))
        want = acc_np.astype(np.float32) * (np.float32(0.013) * np.float32(0.7))
        out = _quant_gemm.scale_into_float(rt, cp.asarray(acc_np.copy()), sa, sb)
        np.testing.assert_array_equal(np.asarray(out), want)
    clear_runtimes()


def test_cublas_int8_path_covers_only_per_tensor_8bit_multiples_of_4():
    from burn_cuda import _quant_gemm

    clear_runtimes()
    with cuda_on_cpu_backend(FakeCupy()) as (backend, cp):
        d = backend.device()
        rng = np.random.default_rng(2)

        def q(shape, scheme=QuantScheme()):
            t = Tensor.from_data(rng.normal(size=shape).astype(np.float32), d)
            return t.quantize_dynamic(scheme)._p

        assert _quant_gemm.eligible(backend, q((8, 12)), q((12, 4)))
        assert not _quant_gemm.eligible(backend, q((8, 12)), q((12, 6)))  # n % 4
        assert not _quant_gemm.eligible(backend, q((5, 12)), q((12, 4)))  # m % 4
        assert not _quant_gemm.eligible(backend, q((8, 10)), q((10, 4)))  # k % 4
        blk = QuantScheme(level=QuantLevel.block(4))
        assert not _quant_gemm.eligible(backend, q((8, 12), blk), q((12, 4)))  # per block
        q4 = QuantScheme(value=QuantValue.Q4S)
        assert not _quant_gemm.eligible(backend, q((8, 12)), q((12, 8), q4))  # 4-bit
        # the stand-in has no cuBLAS (_gemm.ENABLED is off): q_matmul declines, qmm_i8 runs
        assert _quant_gemm.q_matmul(backend, q((8, 12)), q((12, 4))) is None
    clear_runtimes()


def test_qlin_gemv_small_batch_runs_and_matches_reference():
    # burn_gpu's split-K qlin_gemv (M <= 8) in the CUDA dialect, on the stand-in: K = 140 is
    # longer than the K slices of a 1024-item block (128), N = 136 spans several word blocks
    from burn_gpu import _quant_gemv

    clear_runtimes()
    with cuda_on_cpu_backend(FakeCupy()) as (backend, cp):
        d = backend.device()
        rng = np.random.default_rng(5)
        # the three scale modes (per tensor, a scale a word, a scale a value) in two programs
        q4 = QuantScheme(value=QuantValue.Q4S)
        for scheme in (q4, q4.with_level(QuantLevel.block(8)), SCHEMES[2]):
            w = Tensor.from_data(rng.normal(size=(140, 136)).astype(np.float32), d)
            w = w.quantize_dynamic(scheme)
            x = rng.normal(size=(2, 140)).astype(np.float32)
            before = len(cp.launches)
            got = module.linear(Tensor.from_data(x, d), w).numpy()
            assert "qlin_gemv" in [launch.name for launch in cp.launches[before:]], scheme
            wd = w.quantized_data()
            ref = dequantize_ref(wd.values, wd.scales, scheme, (140, 136))
            np.testing.assert_allclose(got, x.astype(np.float64) @ ref, rtol=1e-4, atol=1e-4)
    clear_runtimes()


def test_quant_cuda_sources_compile_for_sm90(nvcc_ptx):
    # what NVRTC compiles on the GPU machine, through nvcc --ptx (skips without nvcc): the
    # batch-1 linear (4-bit, 1024-item blocks) and the cuBLAS path's transpose / scale kernels
    from burn_cuda import _quant_gemm
    from burn_gpu._quant_gemv import gemv_program

    from burn_gpu._quant_gemv import DEFAULT_CUDA, GemvVariant

    staged = GemvVariant(256, 4, 4, False, True)  # tree reduction, x in shared memory
    for stem, src in (
        ("qlin_gemv4", gemv_program("cuda", 4, 1024)),
        ("qlin_gemv4_default", gemv_program("cuda", 4, DEFAULT_CUDA.g, DEFAULT_CUDA)),
        ("qlin_gemv8_staged", gemv_program("cuda", 8, 256, staged)),
        ("quant_gemm", _quant_gemm.SOURCE),
    ):
        proc, ptx = nvcc_ptx(stem, src)
        assert proc.returncode == 0, proc.stderr
        assert ptx.stat().st_size > 0


def test_qlin_gemv_default_variant_fuses_bias_and_keeps_its_plan():
    # batch 1 on CUDA's default variants (block scales: CUDA_BLOCK; per tensor: 16-byte loads,
    # warp shuffles: N = 128 is 16 int4 words, a multiple of 4), K = 300 longer than a block's K slices (512 / 2 = 256): the bias is
    # added in qlin_gemv's store (one launch, no float_add / reshape) and the second call
    # reuses the kept plan; then the tree reduction with x staged in shared memory
    from burn_gpu import _quant_gemv
    from burn_gpu._quant import _c_offset

    clear_runtimes()
    with cuda_on_cpu_backend(FakeCupy()) as (backend, cp):
        d = backend.device()
        rng = np.random.default_rng(6)
        scheme = QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(8))
        w = Tensor.from_data(rng.normal(size=(300, 128)).astype(np.float32), d)
        w = w.quantize_dynamic(scheme)
        b = rng.normal(size=128).astype(np.float32)
        x = rng.normal(size=(1, 300)).astype(np.float32)
        xt, bt = Tensor.from_data(x, d), Tensor.from_data(b, d)
        wd = w.quantized_data()
        want = x.astype(np.float64) @ dequantize_ref(wd.values, wd.scales, scheme, (300, 128)) + b
        for _ in range(2):
            before, plans = len(cp.launches), len(_quant_gemv._PLANS)
            got = module.linear(xt, w, bt).numpy()
            assert [launch.name for launch in cp.launches[before:]] == ["qlin_gemv"]
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        assert len(_quant_gemv._PLANS) == plans, "the second call built a new plan"
        plan = next(p for p in _quant_gemv._PLANS.values() if p.rt is backend.kernels_of(xt._p))
        # block scales take CUDA_BLOCK (one word an item: it read the scales fastest on the H200)
        assert plan.variant.vec == 1 and not plan.variant.shfl
        rt, qp = backend.kernels_of(xt._p), w._p
        offs = [_c_offset(rt, a) for a in (xt._p, qp.values, qp.scales)]
        # per tensor: 16-byte loads with warp shuffles (4 bits), 4 items a row (8 bits)
        assert _quant_gemv.default_variant(rt, 4, 0) == _quant_gemv.DEFAULT_CUDA
        assert _quant_gemv.default_variant(rt, 8, 0) == _quant_gemv.CUDA_INT8
        out = rt.empty((1, 128), np.dtype(np.float32))
        shfl = _quant_gemv.run_gemv(rt, out, xt._p, qp.values, qp.scales, 1, 300, 128, 16, 4, 8,
                                    offs, _quant_gemv.DEFAULT_CUDA)  # fmt: skip
        assert shfl.variant.vec == 4 and shfl.variant.shfl
        np.testing.assert_allclose(xt._like(out).numpy(), want - b, rtol=1e-4, atol=1e-4)
        staged = _quant_gemv.GemvVariant(256, 4, 4, False, True)
        out = rt.empty((1, 128), np.dtype(np.float32))
        run = _quant_gemv.run_gemv(rt, out, xt._p, qp.values, qp.scales, 1, 300, 128, 16, 4, 8, offs, staged)
        assert run.variant.xs and not run.variant.shfl
        np.testing.assert_allclose(xt._like(out).numpy(), want - b, rtol=1e-4, atol=1e-4)
    clear_runtimes()
