"""`burn_tensor.module.conv2d_activation`: a 2-D convolution followed by its activation, as the
backend's `conv2d_activation` op (`_ops_conv_act.py`: one pass on NdArray's conv kernels)."""

from __future__ import annotations

from . import activation as act
from . import module  # imports this file at its end: its names are read at call time
from ._autocast import current_policy
from ._errors import TensorCheckError
from ._module_conv_checks import _conv2d_checks
from ._ops_conv_act import ACTIVATIONS

#: checked activation arguments -> their op tuple (at most MAX_SPECS kept)
_SPECS: dict = {}
MAX_SPECS = 64


def activation_spec(activation) -> tuple:
    """`activation` ("relu", or ("hard_sigmoid", alpha, beta)) as the op's tuple, checked.

    Example:
        >>> activation_spec("relu"), activation_spec(("hard_sigmoid", 0.2, 0.5))
        (('relu',), ('hard_sigmoid', 0.2, 0.5))
    """
    try:
        return _SPECS[activation]  # a model passes the same few values on every forward
    except (KeyError, TypeError):  # new, or unhashable (a list): checked below
        pass
    spec = (activation,) if isinstance(activation, str) else tuple(activation)
    if not spec or spec[0] not in ACTIVATIONS:
        raise TensorCheckError(
            "conv2d_activation",
            f"activation {activation!r}: expected one of {sorted(ACTIVATIONS)}",
        )
    name, params = spec[0], spec[1:]
    if len(params) != ACTIVATIONS[name]:
        raise TensorCheckError(
            "conv2d_activation",
            f"activation {name!r} takes {ACTIVATIONS[name]} parameters, got {list(params)}",
        )
    try:
        spec = (name,) + tuple(float(p) for p in params)
    except (TypeError, ValueError):
        raise TensorCheckError(
            "conv2d_activation", f"activation {name!r}: parameters {list(params)} not numbers"
        ) from None
    if len(_SPECS) < MAX_SPECS:
        try:
            _SPECS[activation] = spec
        except TypeError:
            pass
    return spec


def conv2d_activation(x, weight, bias, activation, *, options):
    """`activation(conv2d(x, weight, bias, options=options))` in one backend op.

    `activation`: "relu", "hard_swish", "silu", "sigmoid" or ("hard_sigmoid", alpha, beta).
    Under autocast, or with a quantized weight, the two run as separate ops (autocast adds the
    bias after the half-precision conv, so the activation must come after that).
    """
    spec = activation_spec(activation)
    if current_policy() is not None or weight.is_quantized():
        out = module.conv2d(x, weight, bias, options=options)
        return getattr(act, spec[0])(out, *spec[1:])
    _conv2d_checks(x, weight, bias, options)
    b = None if bias is None else module._dequantized(x, bias)
    return x._like(x._d.backend.conv2d_activation(x._p, weight._p, b, options, spec))
