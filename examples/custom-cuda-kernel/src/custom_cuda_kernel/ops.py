"""`fused_matmul_add_relu`: a custom op with a CUDA forward on Cuda, the tensor-op composition
elsewhere, and one backward written with tensor ops (the book's custom backend + autodiff).

On `Autodiff(Cuda())` the forward is the kernel (one launch) and the backward runs as ordinary
Cuda ops: relu's mask from the saved output, then the matmul and add derivatives.
"""

from __future__ import annotations

import numpy as np
from burn_autodiff import custom_op, reduce_to_shape
from burn_cuda import Cuda
from burn_tensor import Float, Tensor, TensorCheckError, activation

from .kernel import TILE, source

_KERNELS: dict = {}


def reference(lhs: Tensor, rhs: Tensor, bias: Tensor) -> Tensor:
    """relu(lhs @ rhs + bias) from tensor ops: every backend's forward but Cuda's.

    Shapes: [b, m, k] @ [b, k, n] + [b, m, n] -> [b, m, n] (size-1 dims broadcast).
    """
    return activation.relu(lhs.matmul(rhs) + bias)


def _kernel(dtype: str):
    k = _KERNELS.get(dtype)
    if k is None:
        import cupy as cp

        k = _KERNELS[dtype] = cp.RawKernel(source(dtype), "fused_matmul_add_relu")
    return k


def _check(lhs: Tensor, rhs: Tensor, bias: Tensor) -> tuple[int, int, int, int]:
    ls, rs, bs = lhs.dims(), rhs.dims(), bias.dims()
    problems = []
    if not (len(ls) == len(rs) == len(bs) == 3):
        problems.append(f"lhs, rhs and bias must be rank 3, got {ls}, {rs}, {bs}")
    elif ls[2] != rs[1]:
        problems.append(f"lhs {ls} and rhs {rs}: inner dims {ls[2]} != {rs[1]}")
    if problems:
        raise TensorCheckError("fused_matmul_add_relu", problems)
    batch = max(ls[0], rs[0], bs[0])
    m, n = ls[1], rs[2]
    for name, d, want in (("lhs", ls[0], batch), ("rhs", rs[0], batch), ("bias", bs[0], batch)):
        if d not in (1, want):
            problems.append(f"{name} batch {d} does not broadcast to {want}")
    if bs[1] not in (1, m) or bs[2] not in (1, n):
        problems.append(f"bias {bs} does not broadcast to [{batch}, {m}, {n}]")
    if problems:
        raise TensorCheckError("fused_matmul_add_relu", problems)
    return batch, m, ls[2], n


def cuda_forward(lhs: Tensor, rhs: Tensor, bias: Tensor) -> Tensor:
    """The fused kernel on Cuda tensors (float32/float64; other dtypes use the reference)."""
    batch, m, k, n = _check(lhs, rhs, bias)
    dtype = lhs.dtype.value
    if dtype not in ("float32", "float64") or rhs.dtype != lhs.dtype or bias.dtype != lhs.dtype:
        return reference(lhs, rhs, bias)
    import cupy as cp

    a, b, c = (cp.ascontiguousarray(t.into_primitive()) for t in (lhs, rhs, bias))
    out = cp.empty((batch, m, n), a.dtype)
    if out.size:
        bs = c.shape
        strides = (
            0 if a.shape[0] == 1 else m * k,
            0 if b.shape[0] == 1 else k * n,
            0 if bs[0] == 1 else bs[1] * bs[2],
            0 if bs[1] == 1 else bs[2],
            0 if bs[2] == 1 else 1,
        )
        grid = ((n + TILE - 1) // TILE, (m + TILE - 1) // TILE, batch)
        i32 = np.int32
        _kernel(dtype)(grid, (TILE, TILE), (a, b, c, out, i32(m), i32(k), i32(n), *strides))
    return Tensor.from_primitive(out, Float, lhs.device)


def backward(ctx, grad: Tensor) -> tuple[Tensor, Tensor, Tensor]:
    """Gradients of relu(lhs @ rhs + bias): relu passes grad where the output is > 0; then
    d lhs = g @ rhs^T, d rhs = lhs^T @ g, d bias = g, each summed over its broadcast dims."""
    lhs, rhs, bias = ctx.inputs
    g = grad.mask_fill(ctx.output.lower_equal_elem(0.0), 0.0)
    return (
        reduce_to_shape(g.matmul(rhs.transpose()), lhs.dims()),
        reduce_to_shape(lhs.transpose().matmul(g), rhs.dims()),
        reduce_to_shape(g, bias.dims()),
    )


fused_matmul_add_relu = custom_op(
    "fused_matmul_add_relu_cuda",
    forward={Cuda: cuda_forward, "default": reference},
    backward=backward,
)
fused_matmul_add_relu.__doc__ = """relu(lhs @ rhs + bias), one CUDA kernel on Cuda.

Shapes: [b, m, k] @ [b, k, n] + [b, m, n] -> [b, m, n]; size-1 batch dims of any input and
size-1 rows/columns of bias broadcast.

Example:
    >>> from burn_autodiff import Autodiff
    >>> from burn_cuda import Cuda
    >>> device = Autodiff(Cuda()).device()  # doctest: +SKIP
    >>> out = fused_matmul_add_relu(lhs, rhs, bias)  # doctest: +SKIP
"""
