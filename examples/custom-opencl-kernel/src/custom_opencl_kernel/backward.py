"""The custom op with its backward (the book's "Custom Backend Trait" and "Backward").

`matmul_add_relu_custom` runs the fused OpenCl kernel on OpenCl devices (and on
`Autodiff(OpenCl(...))`, where the forward runs on the inner backend and one graph node is
recorded); on any other backend its forward is the reference composition. The backward is
written with tensor ops, as in the book: relu's derivative from the saved output, then the
matmul and add derivatives, each summed back over broadcast dims.
"""

from __future__ import annotations

from burn_autodiff import custom_op, reduce_to_shape
from burn_opencl import OpenCl
from burn_tensor import Tensor, activation

from .forward import fused_matmul_add_relu


def matmul_add_relu_reference(lhs: Tensor, rhs: Tensor, bias: Tensor) -> Tensor:
    """The same computation with basic tensor ops, for testing.

    Shapes: lhs [..., m, k], rhs [..., k, n], bias [..., m, n] (size-1 dims broadcast).
    """
    x = lhs.matmul(rhs) + bias
    return activation.relu(x)


def _backward(ctx, grad: Tensor):
    lhs, rhs, bias = ctx.inputs
    output = ctx.output
    # relu_backward: the gradient flows where the output is positive.
    grad_output = grad.mask_fill(output.lower_equal_elem(0.0), 0.0)
    grads = [None, None, None]
    # The derivative of matmul with support for broadcasting.
    if ctx.needs_grad(0):
        grads[0] = reduce_to_shape(grad_output.matmul(rhs.transpose()), lhs.dims())
    if ctx.needs_grad(1):
        grads[1] = reduce_to_shape(lhs.transpose().matmul(grad_output), rhs.dims())
    # The add derivative is only 1: sum over the dims bias was broadcast along.
    if ctx.needs_grad(2):
        grads[2] = reduce_to_shape(grad_output, bias.dims())
    return tuple(grads)


#: relu(lhs @ rhs + bias): one OpenCL kernel on OpenCl, the reference elsewhere; differentiable
matmul_add_relu_custom = custom_op(
    "fused_matmul_add_relu",
    forward={OpenCl: fused_matmul_add_relu, "default": matmul_add_relu_reference},
    backward=_backward,
)
