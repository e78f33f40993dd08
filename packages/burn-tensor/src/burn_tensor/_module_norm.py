"""`burn_tensor.module.layer_norm`: the user entry of the `layer_norm` backend op (Burn's
`burn::tensor::module::layer_norm`), with its argument checks."""

from __future__ import annotations

import math

from . import _check as check
from ._errors import TensorCheckError
from .quantization._primitive import QuantizedPrimitive


def layer_norm(input, gamma, beta=None, epsilon: float = 1e-5):
    """(input - mean) / sqrt(var + epsilon) * gamma + beta over the last dim (var biased).

    Shapes: input [..., d_model] (rank >= 1), gamma [d_model], beta [d_model] or None ->
    input's shape. One backend op (one autodiff node).

    Example:
        >>> from burn_tensor import Tensor, module
        >>> x = Tensor.from_data([[1.0, 3.0]])
        >>> module.layer_norm(x, Tensor.ones([2]), None, 0.0).tolist()
        [[-1.0, 1.0]]
    """
    op = "layer_norm"
    check.float_(op, input)
    problems = []
    xs = input._p.shape
    d = xs[-1] if xs else None
    for name, p in (("gamma", gamma), ("beta", beta)):
        if p is None:
            continue
        if p._d is not input._d or p._o.kind is not input._o.kind:
            problems.append(
                f"{name} must be a Float tensor on the input's device; input is "
                f"{check.describe(input)}, got {p._o.kind.value} {check.describe(p)}"
            )
        elif tuple(p._p.shape) != (d,):
            problems.append(f"{name} must be [d_model] = [{d}], got {p.dims()}")
    if not xs:
        problems.append("input must have rank >= 1 [..., d_model]")
    if isinstance(epsilon, bool) or not isinstance(epsilon, (int, float)) or not (
        math.isfinite(epsilon) and epsilon >= 0
    ):
        problems.append(f"epsilon must be a finite number >= 0, got {epsilon!r}")
    if problems:
        raise TensorCheckError(op, problems)
    if math.prod(xs) == 0:
        return input.zeros_like()
    gp = gamma._p
    bp = None if beta is None else beta._p
    if type(gp) is QuantizedPrimitive or type(bp) is QuantizedPrimitive:
        from .module import _dequantized  # a quantized gamma / beta runs dequantized (weight-only)

        gp = _dequantized(input, gamma)
        bp = None if beta is None else _dequantized(input, beta)
    return input._like(input._d.backend.layer_norm(input._p, gp, bp, float(epsilon)))
