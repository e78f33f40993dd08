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


def adam_update_many(params, grads, moments_1, moments_2, *, lr, beta_1, beta_2, epsilon, time):
    """`adam_update` on a list of parameters at once -> `(params', moments_1', moments_2')`.

    The parameters share one dtype, device, set of hyper-parameters and step count `time`
    (`float_adam_update_many`: one kernel launch for the whole list on GPU backends, as torch's
    multi-tensor Adam). `moments_1`/`moments_2`: lists matching `params`, or None when every
    parameter takes its first step. Results equal `adam_update` on each parameter.

    Shapes: `params[i]`, `grads[i]` and the moments `[d_i...]`, one shape per i.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_tensor import Tensor
        >>> d = NdArray().device()
        >>> ps = [Tensor.from_data([1.0, 2.0], d), Tensor.from_data([[3.0]], d)]
        >>> gs = [Tensor.from_data([0.5, -0.5], d), Tensor.from_data([[1.0]], d)]
        >>> new, m1, m2 = adam_update_many(ps, gs, None, None, lr=0.1, beta_1=0.9,
        ...                                beta_2=0.999, epsilon=1e-8, time=1)
        >>> [round(v, 4) for v in new[0].tolist()], new[1].tolist()
        ([0.9, 2.1], [[2.9000000953674316]])
    """
    _check_many(params, grads, moments_1, moments_2, time)
    p0 = params[0]
    first = moments_1 is None
    new, m1, m2 = p0._o.adam_update_many(
        [p._p for p in params],
        [g._p for g in grads],
        None if first else [m._p for m in moments_1],
        None if first else [m._p for m in moments_2],
        float(lr),
        float(beta_1),
        float(beta_2),
        float(epsilon),
        time,
    )
    like = p0._like
    return [like(x) for x in new], [like(x) for x in m1], [like(x) for x in m2]


def _check_many(params, grads, moments_1, moments_2, time) -> None:
    """Raise `TensorCheckError` naming what is wrong with `adam_update_many`'s arguments."""
    op = "adam_update_many"
    if not isinstance(params, list | tuple) or not isinstance(grads, list | tuple):
        raise TensorCheckError(op, "params and grads must be lists of tensors")
    if not params:
        raise TensorCheckError(op, "params is empty: expected at least one parameter")
    n = len(params)
    if len(grads) != n:
        raise TensorCheckError(op, f"{len(grads)} grads for {n} params")
    if (moments_1 is None) != (moments_2 is None):
        raise TensorCheckError(op, "moments_1 and moments_2 must both be lists or both None")
    if moments_1 is not None and (len(moments_1) != n or len(moments_2) != n):
        raise TensorCheckError(
            op, f"{len(moments_1)} moments_1 and {len(moments_2)} moments_2 for {n} params"
        )
    if _plain_many(params, grads, moments_1, moments_2, time):
        return
    p0 = params[0]
    o = getattr(p0, "_o", None)
    for i in range(n):
        m1 = None if moments_1 is None else moments_1[i]
        m2 = None if moments_2 is None else moments_2[i]
        p = params[i]
        if getattr(p, "_o", None) is not o or (o is not None and p._d is not p0._d):
            what = type(p).__name__ if getattr(p, "_o", None) is None else p.dtype.value
            where = "" if getattr(p, "_o", None) is None else f" on {p._d!r}"
            raise TensorCheckError(
                op,
                f"params[{i}] is {what}{where}; every parameter must have params[0]'s kind, "
                f"dtype and device ({'none' if o is None else p0.dtype.value} on "
                f"{getattr(p0, '_d', None)!r})",
            )
        if not _plain_args(p, grads[i], m1, m2, time):
            try:
                _check_args(p, grads[i], m1, m2, time)
            except TensorCheckError as e:
                raise TensorCheckError(op, [f"parameter {i}: {v}" for v in e.violations]) from None


def _plain_many(params, grads, moments_1, moments_2, time) -> bool:
    """`_plain_args` of every parameter against params[0]'s kind view and device, in one loop
    (the optimizer's every step: one call for the list instead of one per parameter); False
    sends the caller to the per-parameter checks and their messages. Lengths are checked."""
    p0 = params[0]
    o = getattr(p0, "_o", None)
    if o is None or o.kind is not Float or type(time) is not int or time < 1:
        return False
    d = p0._d
    try:  # anything without a Tensor's slots is not the usual case (AttributeError)
        if moments_1 is None:
            for p, g in zip(params, grads):
                if p._o is not o or g._o is not o or p._d is not d or g._d is not d:
                    return False
                if g._p.shape != p._p.shape:
                    return False
            return True
        for p, g, m1, m2 in zip(params, grads, moments_1, moments_2):
            if p._o is not o or g._o is not o or m1._o is not o or m2._o is not o:
                return False
            if p._d is not d or g._d is not d or m1._d is not d or m2._d is not d:
                return False
            shape = p._p.shape
            if g._p.shape != shape or m1._p.shape != shape or m2._p.shape != shape:
                return False
    except AttributeError:
        return False
    return True


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
