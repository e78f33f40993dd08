"""Optimizer updates as one backend op (`float_adam_update`), for burn-optim.

A Python optimizer issues one backend call per elementwise op: 13 per parameter per Adam step.
On a GPU backend each call is a kernel launch with its Python dispatch around it, so the update
of a small model costs more than its forward pass. Calling the op once per parameter lets a
backend run it as one kernel; backends without an override get the same 13 ops (the default in
`FloatOps`), so results are the same as before on them.
"""

from __future__ import annotations

from ._dtype import Float
from ._errors import TensorCheckError


def adam_update(param, grad, moment_1, moment_2, *, lr, beta_1, beta_2, epsilon, time):
    """One Adam step on Float tensors -> `(param', moment_1', moment_2')`.

    Burn's Adam (moments start at zero; pass `moment_1=moment_2=None` on the first step):
    `m1 = beta_1 m1 + (1 - beta_1) g`, `m2 = beta_2 m2 + (1 - beta_2) g^2`,
    `param' = param - lr (m1 c) / (sqrt(m2) + epsilon s)`, `s = sqrt(1 - beta_2^time)`,
    `c = s / (1 - beta_1^time)`, `time` counting this step (1 on the first).

    Shapes: every tensor `[d...]`, the same shape, dtype and device.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> d = NdArray().device()
        >>> p, g = Tensor.from_data([1.0, 2.0], d), Tensor.from_data([0.5, -0.5], d)
        >>> new, m1, m2 = adam_update(p, g, None, None, lr=0.1, beta_1=0.9, beta_2=0.999,
        ...                           epsilon=1e-8, time=1)
        >>> [round(v, 4) for v in new.tolist()], [round(v, 4) for v in m1.tolist()]
        ([0.9, 2.1], [0.05, -0.05])
    """
    if not _plain_args(param, grad, moment_1, moment_2, time):
        _check_args(param, grad, moment_1, moment_2, time)
    new, m1, m2 = param._o.adam_update(
        param._p,
        grad._p,
        None if moment_1 is None else moment_1._p,
        None if moment_2 is None else moment_2._p,
        float(lr),
        float(beta_1),
        float(beta_2),
        float(epsilon),
        time,
    )
    return param._like(new), param._like(m1), param._like(m2)


def _plain_args(param, grad, moment_1, moment_2, time) -> bool:
    """The common case, checked without building anything: Float tensors of one kind view,
    device and shape, both moments or neither, a valid step count. The optimizer calls this
    once per parameter per step; anything else goes to `_check_args` for the messages."""
    o = getattr(param, "_o", None)
    if o is None or o.kind is not Float or type(time) is not int or time < 1:
        return False
    d, shape = param._d, param._p.shape
    tensors = (grad,) if moment_1 is None else (grad, moment_1, moment_2)
    if moment_1 is None and moment_2 is not None:
        return False
    for t in tensors:
        if getattr(t, "_o", None) is not o or t._d is not d or t._p.shape != shape:
            return False
    return True


def _check_args(param, grad, moment_1, moment_2, time) -> None:
    """Raise `TensorCheckError` naming every problem of `adam_update`'s arguments."""
    op = "adam_update"
    named = {"param": param, "grad": grad}
    if (moment_1 is None) != (moment_2 is None):
        raise TensorCheckError(op, "moment_1 and moment_2 must both be tensors or both None")
    if moment_1 is not None:
        named.update(moment_1=moment_1, moment_2=moment_2)
    problems = []
    for name, t in named.items():
        if getattr(t, "_o", None) is None:
            raise TensorCheckError(op, f"{name} must be a Tensor, got {type(t).__name__}")
        if t._o.kind is not Float:
            problems.append(f"{name} is {t._o.kind.value}, expected Float")
        elif t._o is not param._o or t._d is not param._d:
            problems.append(f"{name} is {t.dtype.value} on {t._d!r}, param on {param._d!r}")
        if tuple(t._p.shape) != tuple(param._p.shape):
            problems.append(f"{name} has shape {list(t._p.shape)}, param {list(param._p.shape)}")
    if isinstance(time, bool) or not isinstance(time, int) or time < 1:
        problems.append(f"time must be an int >= 1, got {time!r}")
    if problems:
        raise TensorCheckError(op, problems)
