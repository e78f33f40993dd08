"""The converter table: one entry per ONNX op type, with its opset range and attributes.

A converter is `fn(ctx: NodeCtx) -> None` that writes the node's Python lines through `ctx`.
Adding an op is one decorated function in the `_ops_<family>.py` file of its family:

    @op("Relu")
    def relu(ctx):
        ctx.set(0, f"activation.relu({ctx.x(0)})")
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

# Newest opset the converters were checked against (onnx 1.23's node tests go up to here).
MAX_OPSET = 28


@dataclass(frozen=True)
class OpSpec:
    op_type: str
    fn: Callable
    since: int
    until: int
    attrs: frozenset[str]
    family: str


OPS: dict[str, OpSpec] = {}


def op(*op_types: str, attrs: tuple[str, ...] = (), since: int = 1, until: int = MAX_OPSET):
    """Register `fn` as the converter of `op_types` for opsets `since..until` (inclusive).

    `attrs` lists every attribute the converter understands; any other attribute on a node is
    refused at import time.
    """

    def deco(fn: Callable) -> Callable:
        family = fn.__module__.rsplit("._ops_", 1)[-1]
        for name in op_types:
            OPS[name] = OpSpec(name, fn, since, until, frozenset(attrs), family)
        return fn

    return deco


def load_all() -> dict[str, OpSpec]:
    """Import every op family (their decorators fill `OPS`)."""
    from . import (  # noqa: F401
        _ops_attention,
        _ops_conv,
        _ops_elementwise,
        _ops_index,
        _ops_math,
        _ops_nn,
        _ops_norm,
        _ops_pool,
        _ops_quant,
        _ops_reduce,
        _ops_rnn,
        _ops_shape,
        _ops_signal,
        _ops_spatial,
    )

    return OPS
