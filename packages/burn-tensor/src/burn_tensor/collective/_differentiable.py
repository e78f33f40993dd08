"""`all_reduce` that autodiff can differentiate: d(all_reduce(x))/dx on each rank is the
all-reduce (same op) of the output gradients of every rank, so a model whose forward
all-reduces activations trains as if the ranks were one. Every rank must run backward.

The rule is an autodiff op, so the autodiff package provides it (`register_autodiff_all_reduce`,
called when `burn_autodiff` is imported, which it is wherever an Autodiff device exists).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ._group import Communicator, check_op

_RULE: Callable[[Any, Communicator, str], Any] | None = None


def register_autodiff_all_reduce(rule: Callable[[Any, Communicator, str], Any]) -> None:
    """Install `rule(tensor, comm, op)`: the all-reduce of a tensor on an Autodiff device,
    recorded so that its backward all-reduces the gradient."""
    global _RULE
    _RULE = rule


def _tracked(tensor: Any) -> bool:
    from burn_tensor.backend import AutodiffBackend

    return isinstance(tensor.device.backend, AutodiffBackend)


def all_reduce(tensor: Any, comm: Communicator, op: str = "sum") -> Any:
    """Sum (or mean) of `tensor` over every rank, returned to every rank on its own device.

    Shapes: tensor [*] -> [*]. Every rank gets bitwise the same values (combined in rank order).
    On an Autodiff device the result is tracked and its gradient is all-reduced in backward."""
    check_op(op)
    if _tracked(tensor):
        if _RULE is None:
            raise RuntimeError("all_reduce on an Autodiff device: burn_autodiff is not imported")
        return _RULE(tensor, comm, op)
    return comm.all_reduce(tensor, op)
