"""The custom CUDA kernel example: its source compiles (nvcc, where installed), the backward
matches finite differences on NdArray float64 (runs everywhere), and on a GPU the kernel's
forward and gradients equal the tensor-op reference on Cuda (float32 and float64, odd sizes,
broadcast batch and bias). The GPU tests skip with the reason where no CUDA GPU is usable (CI)."""

from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_cuda import probe
from burn_ndarray import NdArray
from burn_tensor import Tensor, TensorCheckError
from custom_cuda_kernel import fused_matmul_add_relu, reference, source

REASON = probe()
gpu = pytest.mark.skipif(REASON is not None, reason=f"no usable CUDA GPU here: {REASON}")

SHAPES = [
    ((2, 5, 7), (2, 7, 3), (2, 5, 3)),  # smaller than a tile
    ((3, 33, 17), (1, 17, 40), (1, 1, 40)),  # rhs batch and bias rows broadcast, odd sizes
    ((1, 20, 16), (4, 16, 18), (4, 20, 1)),  # lhs batch broadcast, bias per row
]


def _data(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed here")
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_kernel_source_compiles(tmp_path, dtype):
    (tmp_path / "k.cu").write_text(source(dtype))
    proc = subprocess.run(
        ["nvcc", "--ptx", "-arch=sm_90", "-o", str(tmp_path / "k.ptx"), str(tmp_path / "k.cu")],
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert ".entry fused_matmul_add_relu(" in (tmp_path / "k.ptx").read_text()


def _grads(device, op, arrays):
    ts = [Tensor.from_data(a, device).require_grad() for a in arrays]
    out = op(*ts)
    grads = (out * out).sum().backward()  # a loss whose gradient is not all ones
    return out.numpy(), [t.grad(grads).numpy() for t in ts]


def test_backward_matches_finite_differences_on_ndarray():
    # On NdArray the forward is the reference; the gradients are the custom backward's.
    arrays = _data(SHAPES[1], seed=3)
    dev = Autodiff(NdArray(float_dtype="float64")).device()
    _, grads = _grads(dev, fused_matmul_add_relu, arrays)
    eps = 1e-6

    def loss(arrs):
        out = np.maximum(arrs[0] @ arrs[1] + arrs[2], 0)
        return float((out * out).sum())

    for i, a in enumerate(arrays):
        flat = np.unravel_index(np.arange(0, a.size, max(1, a.size // 7)), a.shape)
        for idx in zip(*flat):
            plus = [x.copy() for x in arrays]
            minus = [x.copy() for x in arrays]
            plus[i][idx] += eps
            minus[i][idx] -= eps
            fd = (loss(plus) - loss(minus)) / (2 * eps)
            assert grads[i][idx] == pytest.approx(fd, rel=1e-5, abs=1e-6), (i, idx)


def test_shape_errors_name_the_op():
    dev = NdArray().device()
    a = Tensor.from_data(np.ones((2, 3, 4)), dev)
    with pytest.raises(TensorCheckError, match="fused_matmul_add_relu"):
        from custom_cuda_kernel.ops import cuda_forward

        cuda_forward(a, a, a)  # inner dims 4 != 3


@gpu
@pytest.mark.gpu
@pytest.mark.parametrize("dtype,tol", [("float64", 1e-10), ("float32", 2e-4)])
@pytest.mark.parametrize("shapes", SHAPES, ids=["small", "broadcast-rhs", "broadcast-lhs"])
def test_kernel_matches_reference_on_cuda(dtype, tol, shapes):
    from burn_cuda import Cuda

    arrays = _data(shapes, seed=1)
    dev = Autodiff(Cuda(float_dtype=dtype, int_dtype="int64")).device()
    out_f, grads_f = _grads(dev, fused_matmul_add_relu, arrays)
    out_r, grads_r = _grads(dev, reference, arrays)
    want = np.maximum(arrays[0] @ arrays[1] + arrays[2], 0)  # float64 numpy
    np.testing.assert_allclose(out_f, want, rtol=tol, atol=tol)
    np.testing.assert_allclose(out_f, out_r, rtol=tol, atol=tol)
    for gf, gr, a in zip(grads_f, grads_r, arrays):
        assert gf.shape == a.shape
        np.testing.assert_allclose(gf, gr, rtol=tol * 10, atol=tol * 10)


@gpu
@pytest.mark.gpu
def test_forward_is_one_kernel_on_cuda():
    from burn_cuda import Cuda
    from custom_cuda_kernel.ops import cuda_forward

    assert fused_matmul_add_relu.forward_for(Cuda()) is cuda_forward
    dev = Cuda().device()
    arrays = [a.astype(np.float32) for a in _data(SHAPES[0])]
    out = fused_matmul_add_relu(*(Tensor.from_data(a, dev) for a in arrays))
    assert out.device is dev and out.dims() == [2, 5, 3]
    np.testing.assert_allclose(
        out.numpy(), np.maximum(arrays[0] @ arrays[1] + arrays[2], 0), rtol=2e-5, atol=2e-5
    )
