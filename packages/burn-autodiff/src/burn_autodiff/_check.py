"""Errors of the backward pass: a gradient rule's output that does not fit the op's inputs.

`run_backward` compares each gradient's shape and dtype with its input's inline (two tuple/dtype
comparisons, nothing allocated) and calls these only on a mismatch, to build the message. A rule
that returned a wrong-shaped gradient would otherwise broadcast silently in the accumulation, or
fail much later (in the optimizer) far from the rule that caused it.
"""

from __future__ import annotations

from typing import Any

from burn_tensor import TensorCheckError


def _what(node: Any) -> str:
    rule = node.rule
    # Custom ops carry their forward on the rule (for recomputation); table rules do not.
    return "custom op backward" if rule.forward is not None else "gradient rule"


def _describe(p: Any) -> str:
    shape = getattr(p, "shape", None)
    dtype = getattr(p, "dtype", None)
    if shape is None or dtype is None:
        return f"a {type(p).__name__} (not a tensor primitive)"
    return f"shape {list(shape)} and dtype {dtype}"


def bad_grad(node: Any, position: str, expected: Any, got: Any) -> None:
    """Raise `TensorCheckError` naming the rule, the input position, expected and got."""
    name = node.rule.name
    raise TensorCheckError(
        name,
        f"{_what(node)} '{name}' returned a gradient for input {position} with {_describe(got)}; "
        f"expected the input's {_describe(expected)}",
    )


def bad_count(node: Any, grads: Any) -> None:
    """Raise `TensorCheckError`: a rule must return one entry (or None) per op argument."""
    name = node.rule.name
    got = len(grads) if isinstance(grads, (tuple, list)) else type(grads).__name__
    raise TensorCheckError(
        name,
        f"{_what(node)} '{name}' returned {got} gradient entries; expected "
        f"{len(node.parents)} (one per op argument, None where no gradient flows)",
    )


def consumed_graph(is_root: bool) -> None:
    """Raise for a backward pass through a graph an earlier `backward()` consumed (PyTorch's
    "backward through the graph a second time"): Burn frees the graph as it walks it."""
    where = "this tensor's graph" if is_root else "part of this tensor's graph"
    raise RuntimeError(
        f"backward: {where} was already used by an earlier backward(), which frees the graph "
        "(as in Burn; there is no retain_graph). Take every gradient you need from the one "
        "Gradients that backward() returned (several losses: backward() their sum), or run the "
        "forward pass again"
    )
