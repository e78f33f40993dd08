"""`conv2d_activation` on NdArray's native convs: the activation as an epilogue of the kernels.

burn_tensor's `conv2d_activation(x, weight, bias, options, activation)` is conv2d then the
activation op. Here the dense task path (`_native/conv.c`) applies relu, hard_sigmoid and
hard_swish to each task's output block right after its GEMM, the grouped / depthwise kernel
(`_native/dwconv_tpl.h`) and the few-channel stem (`_native/stemconv.c`) to each task's output
rows, and numpy's pointwise GEMM path calls the same C epilogue on its output in place
(`_native/epilogue.h`): no second pass over the output, no second op. The formulas are the
activation kernels' own, so a fused result has the same bits as the conv followed by the op.
Other activations (silu, sigmoid) and the other conv paths (Winograd, the numpy fallbacks) run
the conv, then the backend's op.
"""

from __future__ import annotations

import ctypes

from . import _native_ops as _ops
from ._native_ops import F32

#: activation name -> the EPI_* code of `_native/epilogue.h`
EPILOGUES = {"relu": 1, "hard_sigmoid": 2, "hard_swish": 3, "silu": 4, "sigmoid": 5}
#: codes from this one on use exp: float32 only, and only where the op runs its native kernel
EXP_KINDS = 4
#: no activation: the kernels' arguments (kind, alpha, beta)
NONE = (0, 0.0, 0.0)


def epilogue(act, dtype=F32, size=0, m=0) -> tuple | None:
    """(kind, alpha, beta) of activation tuple `act` for the kernels writing `size` elements
    of `dtype`; NONE for no activation, None when the kernels have no epilogue for it. sigmoid
    and silu only for float32 outputs of at least `m` (native_min) elements: smaller ones the
    op computes with numpy's exp, float64 with libmvec's, other bits than `_native/expf.h`.

    Example:
        >>> epilogue(None), epilogue(("hard_sigmoid", 0.2, 0.5)), epilogue(("silu",))
        ((0, 0.0, 0.0), (2, 0.2, 0.5), None)
        >>> epilogue(("silu",), F32, 1 << 14, 1 << 14)
        (4, 0.0, 0.0)
    """
    if act is None:
        return NONE
    kind = EPILOGUES.get(act[0])
    if kind is None or (kind >= EXP_KINDS and (dtype != F32 or size < m or m <= 0)):
        return None
    return (kind, act[1], act[2]) if len(act) == 3 else (kind, 0.0, 0.0)


def then(backend, out, act):
    """`out` after activation `act` as the backend's own op (paths without an epilogue)."""
    return out if act is None else getattr(backend, act[0])(out, *act[1:])


def in_place(lib, backend, out, act, m):
    """`out` (a fresh C-contiguous float32/float64 array) with `act` applied in place by the
    C epilogue, or the backend's op when the epilogue does not cover it."""
    ep = epilogue(act, out.dtype, out.size, m)
    if ep is None or not out.flags.c_contiguous:
        return then(backend, out, act)
    if ep[0]:
        fn = lib.conv_epilogue_f32 if out.dtype == F32 else lib.conv_epilogue_f64
        fn(_ops._ptr(out), out.size, *ep)
    return out


def declare(lib) -> None:
    p, L, i = ctypes.c_void_p, ctypes.c_long, ctypes.c_int
    for t, ct in (("f32", ctypes.c_float), ("f64", ctypes.c_double)):
        fn = getattr(lib, f"conv_epilogue_{t}")
        fn.argtypes, fn.restype = (p, L, i, ct, ct), None
