"""`all_reduce` that autodiff can differentiate: d(all_reduce(x))/dx on each rank is the
all-reduce (same op) of the output gradients of every rank, so a model whose forward
all-reduces activations trains as if the ranks were one. Every rank must run backward."""

from __future__ import annotations

from typing import Any

from ._group import Communicator, check_op

_OP = None


def _autodiff_op():
    global _OP
    if _OP is None:
        from burn_autodiff import custom_op

        _OP = custom_op(
            "all_reduce",
            forward=lambda x, comm, op: comm.all_reduce(x, op),
            backward=lambda ctx, g: (ctx.options["comm"].all_reduce(g, ctx.options["op"]),),
        )
    return _OP


def _tracked(tensor: Any) -> bool:
    from burn_tensor.backend import AutodiffBackend

    return isinstance(tensor.device.backend, AutodiffBackend)


def all_reduce(tensor: Any, comm: Communicator, op: str = "sum") -> Any:
    """Sum (or mean) of `tensor` over every rank, returned to every rank on its own device.

    Shapes: tensor [*] -> [*]. Every rank gets bitwise the same values (combined in rank order).
    On an Autodiff device the result is tracked and its gradient is all-reduced in backward."""
    check_op(op)
    if _tracked(tensor):
        return _autodiff_op()(tensor, comm=comm, op=op)
    return comm.all_reduce(tensor, op)
