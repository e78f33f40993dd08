"""`burn_tensor.module.linear`: one backend op (`linear`), or inside `autocast(...)` one
`linear_half` (`_linear_autocast`); the common call is recognised with attribute reads alone
and the checks run only to name what is wrong."""

from __future__ import annotations

from . import _check as check
from . import module  # imports this file first: `_dequantized` is read at call time
from ._autocast import current_policy, run_half_biased
from ._dtype import Float
from ._errors import TensorCheckError
from ._module_conv_checks import _params_on_input
from .quantization._primitive import QuantizedPrimitive


def _linear_autocast(policy, x, weight, bias, ops):
    """`linear` inside `autocast(...)`: one backend op, `linear_half(x, weight, bias, half)`,
    whose default is what `run_half_biased` composes (a cast each, the half product, the
    widening cast, `+ bias` in the wide dtype) and which Cuda runs as one GEMM reading half
    operands and writing the wide output with the bias in its epilogue; under Autodiff one
    node keeping the half copies of x and weight (issue 34: the mixed transformer step
    recorded six ops per layer). `ops`: `linear`'s primitives of a common call; a call it does
    not vouch for (None) or a quantized input goes through `run_half_biased`, whose checks name
    what is wrong."""
    if ops is None or type(ops[0]) is QuantizedPrimitive:
        return run_half_biased(policy, linear, (x, weight, bias), {}, -1)
    xp, wp, bp = ops
    h = policy.dtype
    if x.dtype is h and weight.dtype is h and (bias is None or bias.dtype is h):
        return x._like(x._d.backend.linear(xp, wp, bp))  # nothing to cast: the plain op
    return x._like(x._d.backend.linear_half(xp, wp, bp, h)[0])


def linear(x, weight, bias=None):
    """x @ weight + bias, one backend op (`linear`; one autodiff node; inside `autocast(...)`
    `linear_half`, see `_linear_autocast`).

    Shapes: x [..., d_in] (rank >= 1), weight [d_in, d_out], bias [d_out] -> [..., d_out].

    Example:
        >>> y = linear(x, w, b)  # x [64, 1024], w [1024, 512], b [512] -> [64, 512]  # doctest: +SKIP
    """
    # The common call (float input, float weight and bias on its device, matching shapes, no
    # quantized weight or bias) is recognised with attribute reads alone, inline (no call: issue
    # 35, host cost per op), for the plain op and autocast's alike; the checks below only run to
    # name what is wrong.
    xp, wp = x._p, weight._p
    xs, ws = xp.shape, wp.shape  # read once: dims() builds a list per call
    d = x._d
    o = x._o
    ops = None
    if (
        o.kind is Float
        and weight._o is o
        and weight._d is d
        and len(ws) == 2
        and len(xs) >= 1
        and xs[-1] == ws[0]
        and type(wp) is not QuantizedPrimitive
    ):
        if bias is None:
            ops = (xp, wp, None)
        else:
            bp = bias._p
            if (
                bias._o is o
                and bias._d is d
                and type(bp) is not QuantizedPrimitive
                and len(bp.shape) == 1
                and bp.shape[0] == ws[1]
            ):
                ops = (xp, wp, bp)
    policy = current_policy()
    if policy is not None:  # inside `autocast(...)`: runs in half (see _autocast.py)
        return _linear_autocast(policy, x, weight, bias, ops)
    if ops is not None:
        return x._like(d.backend.linear(*ops))
    check.float_("linear", x)
    problems = []
    if len(ws) != 2 or len(xs) < 1 or xs[-1] != ws[0]:
        problems.append(
            f"input {x.dims()} and weight {weight.dims()} do not match ([.., d_in] x [d_in, d_out])"
        )
    elif bias is not None and tuple(bias._p.shape) != (ws[1],):
        problems.append(f"bias must be [d_out] = [{ws[1]}], got {bias.dims()}")
    _params_on_input(x, weight, bias, problems)
    if problems:
        raise TensorCheckError("linear", problems)
    if weight.is_quantized() or (bias is not None and bias.is_quantized()):
        # weight-only: the backend's quantized kernel, activations (and the bias) float
        b = None if bias is None else module._dequantized(x, bias)
        if not weight.is_quantized():
            return x._like(x._d.backend.linear(x._p, weight._p, b))
        return x._like(x._d.backend.q_linear(x._p, weight._p, b))
    p = x._d.backend.linear(x._p, weight._p, None if bias is None else bias._p)
    return x._like(p)
