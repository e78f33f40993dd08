"""A conv module's options, computed once per geometry instead of on every forward.

`Conv2d.forward` derived its padding (`PaddingConfig.pads`, `split_pads`) and the op checked and
converted stride / padding / dilation to tuples (`module._tuple`) on every call: ~5 us of
Python per conv, as much as a whole small depthwise conv (mobilenet_v3_small runs 52 convs per
forward). `conv_plan` keeps the `ConvOptions` and the leftover asymmetric padding per
(padding, kernel, stride, dilation, groups[, input sizes for Same]); the op then takes
`options=` and skips the conversion. Fields the op would refuse (wrong lengths, non-integers,
negative values) get no plan: the module then calls the op as before and its checks name them.
"""

from __future__ import annotations

from burn_tensor import ConvOptions

from ._padding import split_pads

#: plans kept (a model has a handful of geometries; the dict is cleared when full)
PLAN_CACHE = 1024
_PLANS: dict = {}


def conv_plan(x, padding, kernel, stride, dilation, groups):
    """(ConvOptions, extra pads to apply by hand or None) for a conv module's fields on input
    `x`, or None when a field is not a valid geometry (the op's checks then speak)."""
    try:
        same = padding.variant == "Same"
        sizes = tuple(x.dims()[2:]) if same else None
        key = (padding, tuple(kernel), tuple(stride), tuple(dilation), groups, sizes)
        plan = _PLANS.get(key)
    except (AttributeError, TypeError):  # unhashable or odd fields: no plan
        return None
    if plan is None:
        plan = _build(x, padding, kernel, stride, dilation, groups)
        if plan is None:
            return None
        if len(_PLANS) >= PLAN_CACHE:
            _PLANS.clear()
        _PLANS[key] = plan
    return plan


def _build(x, padding, kernel, stride, dilation, groups):
    n = len(kernel)
    parts = (kernel, stride, dilation)
    if any(len(p) != n for p in parts) or not all(type(v) is int for p in parts for v in p):
        return None
    if type(groups) is not int or len(x.dims()) != n + 2:
        return None
    sym, extra = split_pads(padding.pads(x.dims()[2:], kernel, stride, dilation))
    if len(sym) != n:
        return None
    return ConvOptions(tuple(stride), tuple(sym), tuple(dilation), groups), extra
