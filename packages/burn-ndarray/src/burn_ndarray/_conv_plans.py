"""Per-shape conv plans: what a conv call decides from its shapes alone, remembered.

A conv's path, geometry and task split depend only on the input and weight shapes and dtypes,
the bias's, and the options, so `_native_conv` and `_native_dwconv` work them out once per such
key (`plan(x, weight, bias, options)`) and look them up on every later call (~1 us instead of
several). A backend instance keeps at most `MAX_PLANS` (cleared when full: a model has a few
dozen conv shapes).
"""

from __future__ import annotations

#: plans remembered per backend instance and conv family, at most
MAX_PLANS = 256


def lookup(plans: dict, plan, x, weight, bias, options):
    """The plan for this call, from `plans` or made by `plan(x, weight, bias, options)` and kept.

    Example:
        >>> import numpy as np
        >>> plans = {}
        >>> x, w = np.zeros((1, 3, 8, 8), np.float32), np.zeros((4, 3, 3, 3), np.float32)
        >>> lookup(plans, lambda *a: "direct", x, w, None, "opts"), len(plans)
        ('direct', 1)
    """
    b = None if bias is None else (bias.dtype, bias.shape)
    try:
        key = (x.shape, x.dtype, weight.shape, weight.dtype, b, options)
        return plans[key]
    except (KeyError, TypeError):  # new, or options holding lists (unhashable)
        p = plan(x, weight, bias, options)
        if len(plans) >= MAX_PLANS:
            plans.clear()
        try:
            plans[key] = p
        except TypeError:
            pass
        return p
