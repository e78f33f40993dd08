"""The op table of a half-type Cuda backend (`_half_ops.py` has the kernels and their launch
helpers, `_half_reduce.py` the reductions): `ops(backend, ...)` returns the name -> function
table `_bf16.install` puts on the instance, data movement on the 16-bit patterns where cupy's
copies need it (`_bits`), every function falling back to the op it replaces when its operands
are not half."""

from __future__ import annotations

from functools import partial

from burn_gpu import FUSED

from ._half_ops import _BF16S, _U16, MOVES, contiguous, elementwise_op, is_half
from ._memory import guard


def _bits(fn):
    """`fn` over the 16-bit patterns: half arrays (also inside lists) go in as uint16 views and
    uint16 results come back as the half dtype of the first half operand."""

    def op(*args, **kwargs):
        half = None
        conv = []
        for a in args:
            if is_half(a):
                half = half or a.dtype
                a = a.view(_U16)
            elif type(a) in (list, tuple) and a and any(is_half(v) for v in a):
                half = half or next(v.dtype for v in a if is_half(v))
                a = type(a)(v.view(_U16) if is_half(v) else v for v in a)
            conv.append(a)
        res = fn(*conv, **kwargs)
        if half is None:
            return res
        if type(res) in (list, tuple):
            return type(res)(r.view(half) if getattr(r, "dtype", None) == _U16 else r for r in res)
        return res.view(half) if getattr(res, "dtype", None) == _U16 else res

    op.__name__ = getattr(fn, "__name__", "op")
    return op


def _reshape(fn):
    """bfloat16 reshape: a contiguous array reshapes as a view (no kernel reads the dtype), a
    strided one as its 16-bit patterns (cupy copies it)."""
    bits = _bits(fn)

    def float_reshape(x, shape):
        return fn(x, shape) if x._c_contiguous else bits(x, shape)

    return float_reshape


#: the activations of the expression table (their op names have no `float_` prefix)
ACTIVATIONS = ("relu", "relu_backward", "sigmoid", "gelu", "gelu_backward")
#: the moves that are views of any dtype (cupy's transpose, broadcast, basic slicing)
VIEWS = ("float_swap_dims", "float_permute", "float_transpose", "float_expand", "float_slice",
         "float_detach")  # fmt: skip


def ops(backend, original, plain, oom=()) -> dict:
    """name -> function for `backend` (a half-type Cuda instance); `original(name)` gives the
    op it replaces (the fallback: bfloat16's float32 detour), `plain(name)` the class's op.
    Every function re-raises cupy's out-of-memory error `oom` naming its op (the class's ops
    do already; the elementwise ops catch it themselves, the rest get `_memory.guard`)."""
    # the reductions live beside (they import this module's launch helpers)
    from ._half_reduce import adam_update, arg_dim, cumsum, reduce_all, reduce_dim

    table = {}
    for name in FUSED:
        if name.startswith("float_") or name in ACTIVATIONS:
            table[name] = elementwise_op(name, original(name), oom)
    elementwise = set(table)
    bf16 = backend.float_dtype.np in _BF16S
    for name in MOVES:
        if not bf16 or name in VIEWS:
            # cupy moves float16 natively, and a view never reads the dtype: the class's op
            # (already out-of-memory guarded) without a layer around it
            table[name] = plain(name)
        elif name == "float_reshape":
            table[name] = _reshape(plain(name))
        else:
            table[name] = _bits(plain(name))
    index_dt = backend.int_dtype.np

    def with_fallback(name, run):
        fb = original(name)

        def op(x, *rest):
            res = run(x, *rest) if is_half(x) else None
            return fb(x, *rest) if res is None else res

        op.__name__ = name
        return op

    # partials rather than lambdas: no Python frame between the op and its kernel's launch
    for kind in ("sum", "mean", "max", "min"):
        table[f"float_{kind}_dim"] = with_fallback(f"float_{kind}_dim", partial(reduce_dim, kind))
    for kind in ("sum", "mean"):
        table[f"float_{kind}"] = with_fallback(f"float_{kind}", partial(reduce_all, kind))
    for kind in ("argmax", "argmin"):
        table[f"float_{kind}"] = with_fallback(
            f"float_{kind}", lambda x, dim, kind=kind: arg_dim(kind, x, dim, index_dt)
        )
    table["float_cumsum"] = with_fallback("float_cumsum", cumsum)
    adam_fb = original("float_adam_update")

    def float_adam_update(param, grad, m1, m2, lr, beta_1, beta_2, epsilon, time):
        if not is_half(param):
            return adam_fb(param, grad, m1, m2, lr, beta_1, beta_2, epsilon, time)
        return adam_update(param, grad, m1, m2, lr, beta_1, beta_2, epsilon, time)

    many_fb = original("float_adam_update_many")
    many = plain("float_adam_update_many")

    def float_adam_update_many(params, grads, m1s, m2s, lr, beta_1, beta_2, epsilon, time):
        # half parameters: the class's multi-tensor kernel (`_optim_many`), whose fallback is
        # `float_adam_update` per parameter: this table's half kernel
        fn = many if is_half(params[0]) else many_fb
        return fn(params, grads, m1s, m2s, lr, beta_1, beta_2, epsilon, time)

    table["float_adam_update"] = float_adam_update
    table["float_adam_update_many"] = float_adam_update_many
    # burn_gpu's softmax and layer norm kernels (the class's ops) take half; contiguous first
    rows = ("softmax", "log_softmax", "softmax_backward", "log_softmax_backward", "layer_norm",
            "layer_norm_backward")  # fmt: skip
    for name in rows:
        fb = plain(name)

        def soft(*args, fb=fb):
            return fb(*(contiguous(a) if is_half(a) else a for a in args))

        soft.__name__ = name
        table[name] = soft
    for name, fn in table.items():
        if name not in elementwise and getattr(fn, "__self__", None) is not backend:
            table[name] = guard(name, fn, oom)
    return table
