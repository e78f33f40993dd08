"""`dtype_name(dt)`: numpy's `dtype.name`, cached per dtype object.

numpy 2 computes `dtype.name` in Python on every read (`numpy/_core/_dtype.py`: five calls,
~4 us for float32 on the CPU stand-in's machine), and the launch paths read it for kernel keys
and dtype tests several times per op (a dropout's draw read it three times). A dict lookup
keyed by the dtype object costs ~0.1 us.
"""

from __future__ import annotations

#: dtype object -> its name (dtypes hash by value: equal dtypes share an entry). Public so a hot
#: path can read `DTYPE_NAMES.get(dt) or dtype_name(dt)`: one dict lookup, no call, once filled.
DTYPE_NAMES: dict = {}


def dtype_name(dt) -> str:
    """`dt.name` of a numpy (or ml_dtypes) dtype object, cached.

    Args:
        dt: a `numpy.dtype` (an array's `.dtype`).

    Returns:
        The name, e.g. "float32", "bfloat16".

    Example:
        >>> import numpy as np
        >>> dtype_name(np.dtype(np.float32))
        'float32'
    """
    try:
        return DTYPE_NAMES[dt]
    except KeyError:
        return DTYPE_NAMES.setdefault(dt, dt.name)
