"""Backend extension with a custom backward (the Burn Book's `fused_matmul_add_relu`).

A custom op has a forward chosen per backend (a fused kernel on one backend, a reference
composition elsewhere) and one backward written with ordinary tensor ops. On an Autodiff device the
forward runs on the inner backend and, when an input is tracked, one graph node is recorded whose
backward is yours; on any other device only the forward runs.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from burn_tensor import Float, Tensor

from ._rule import Rule
from ._tensor import wrap
from ._wrap import record

#: Every custom op created, by name.
CUSTOM_OPS: dict[str, CustomOp] = {}


class CustomContext:
    """What a custom backward receives: `inputs` and `output` as Tensors on the inner backend,
    the forward's keyword `options`, and `needs_grad(i)` (does input i want a gradient)."""

    __slots__ = ("_node", "inputs", "options", "output")

    def __init__(self, inputs, output, options, node):
        self.inputs = inputs
        self.output = output
        self.options = options
        self._node = node

    def needs_grad(self, i: int) -> bool:
        return self._node.need(i)


class CustomOp:
    """A differentiable op with per-backend forwards and a backward written with tensor ops.

    Args:
        name: the op's name (shown in graph nodes).
        forward: `fn(*tensors, **options) -> Tensor`, or a dict choosing one per backend; keys are
            a backend class (matched along the MRO), a backend `name` ("ndarray") or "default".
        backward: `fn(ctx: CustomContext, grad: Tensor) -> tuple[Tensor | None, ...]`, one
            gradient per input, each with the input's shape (see `reduce_to_shape`) and dtype;
            the backward pass raises `TensorCheckError` naming the op and input otherwise.
        memory_bound: under `BalancedCheckpointing`, recompute the forward in backward instead of
            keeping the output.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> from burn_autodiff import Autodiff, custom_op
        >>> square = custom_op(
        ...     "my_square",
        ...     forward=lambda x: x * x,
        ...     backward=lambda ctx, g: (g * ctx.inputs[0] * 2.0,),
        ... )
        >>> x = Tensor.from_data([3.0], Autodiff(NdArray()).device()).require_grad()
        >>> x.grad(square(x).backward()).tolist()
        [6.0]
    """

    def __init__(self, name: str, forward, backward: Callable, memory_bound: bool = False):
        self.name = name
        self.forwards = forward if isinstance(forward, dict) else {"default": forward}
        self.backward = backward
        self.rule = Rule(
            self._backward, out=True, memory_bound=memory_bound, forward=self._recompute
        )
        self.rule.name = name
        CUSTOM_OPS[name] = self

    def forward_for(self, backend) -> Callable:
        """The forward registered for `backend` (by class along the MRO, then name, then default)."""
        f = self.forwards
        for cls in type(backend).__mro__:
            if cls in f:
                return f[cls]
        if backend.name in f:
            return f[backend.name]
        if "default" in f:
            return f["default"]
        raise NotImplementedError(f"custom op {self.name!r} has no forward for backend {backend!r}")

    def __call__(self, *tensors: Tensor, **options: Any) -> Tensor:
        device = tensors[0].device
        backend = device.backend
        if not backend.is_autodiff:
            return self.forward_for(backend)(*tensors, **options)
        inner = backend.inner
        inner_dev = device.inner()
        prims = [t.into_primitive() for t in tensors]
        out = self.forward_for(inner)(
            *(Tensor.from_primitive(p.p, Float, inner_dev) for p in prims), **options
        )
        parents = [p.node for p in prims]
        if all(n is None for n in parents):
            return Tensor.from_primitive(wrap(out.into_primitive(), None), Float, device)
        n = len(prims)
        # Inner device and options ride along as plain (non-tensor) arguments of the node.
        ia = [p.p for p in prims] + [inner_dev, options]
        r = self.rule
        r.keep = tuple(range(n))
        ad = record(
            inner,
            r,
            backend.checkpointing.balanced,
            parents + [None, None],
            ia,
            list(range(n)),
            out.into_primitive(),
        )
        return Tensor.from_primitive(ad, Float, device)

    def _recompute(self, *args):
        *prims, inner_dev, options = args
        out = self.forward_for(inner_dev.backend)(
            *(Tensor.from_primitive(p, Float, inner_dev) for p in prims), **options
        )
        return out.into_primitive()

    def _backward(self, c, g):
        n = len(c.args) - 2
        inner_dev, options = c.args[n], c.args[n + 1]
        inputs = tuple(Tensor.from_primitive(c.x(i), Float, inner_dev) for i in range(n))
        ctx = CustomContext(inputs, Tensor.from_primitive(c.output(), Float, inner_dev), options, c)
        grads = self.backward(ctx, Tensor.from_primitive(g, Float, inner_dev))
        if len(grads) != n:
            raise ValueError(
                f"custom op {self.name!r}: backward returned {len(grads)} grads for {n} inputs"
            )
        return tuple(None if gr is None else gr.into_primitive() for gr in grads) + (None, None)


def custom_op(name: str, forward, backward: Callable, memory_bound: bool = False) -> CustomOp:
    """Create a differentiable custom op; see `CustomOp`."""
    return CustomOp(name, forward, backward, memory_bound)


def reduce_to_shape(grad: Tensor, shape) -> Tensor:
    """Sum a broadcast gradient back to `shape` (same rank; size-1 dims are summed over).

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> g = Tensor.ones([2, 3], NdArray().device())
        >>> reduce_to_shape(g, [1, 3]).tolist()
        [[2.0, 2.0, 2.0]]
    """
    shape = list(shape)
    for d, (have, want) in enumerate(zip(grad.dims(), shape)):
        if want == 1 and have != 1:
            grad = grad.sum_dim(d)
    return grad
