"""NdArray's own activations in numpy: `sigmoid`, `sigmoid_backward`, `hard_sigmoid`,
`leaky_relu`, `log_sigmoid`.

Each is the default decomposition of burn_tensor's ActivationOps, operation for operation (the
same bits), without its Python frames and temporaries: the defaults go through 3-7 backend
ops, each a dispatch, and sigmoid's last one is a `mask_where` that numpy runs at ~3.6 ns per
element on a random sign mask (efficientnet_b0: 14.6 ms of a 53 ms forward). Sigmoid here
selects the numerator before one division instead.

These are the small-tensor path and the fallback of the native kernels (`_native/act.c`,
installed by `_native_activation`), and what runs for float16 / bfloat16. They run quiet
(`_fp.quiet_table`): no floating-point warnings, NaN passes through.
Shapes: every op maps x [...] to x's shape (sigmoid_backward: output, grad [...] -> [...]).
"""

from __future__ import annotations

import numpy as np


def sigmoid(self, x):
    """(x < 0 ? e : 1) / (1 + e), e = exp(-|x|) in (0, 1]: exp never overflows, and a tiny
    result stays subnormal (1 / (1 + exp(-x)) flushes it to 0)."""
    e = np.abs(x)
    np.negative(e, out=e)
    np.exp(e, out=e)
    num = np.where(x < 0, e, e.dtype.type(1))
    np.add(e, e.dtype.type(1), out=e)
    return np.divide(num, e, out=num)


def sigmoid_backward(self, output, grad):
    """grad * (y * (1 - y)) from the sigmoid's output y."""
    t = np.negative(output)
    np.add(t, t.dtype.type(1), out=t)
    np.multiply(output, t, out=t)
    return np.multiply(grad, t)


def hard_sigmoid(self, x, alpha, beta):
    """clamp(x * alpha + beta, 0, 1); alpha and beta in x's dtype, as the scalar ops take them."""
    t = np.multiply(x, alpha)
    np.add(t, beta, out=t)
    return np.clip(t, np.asarray(0, t.dtype), np.asarray(1, t.dtype), out=t)


def leaky_relu(self, x, negative_slope):
    """x where x >= 0 (or NaN), x * negative_slope where x < 0."""
    return np.where(x < 0, np.multiply(x, negative_slope), x)


def log_sigmoid(self, x):
    """min(x, 0) - log1p(exp(-|x|)): no overflow for any |x|."""
    e = np.abs(x)
    np.negative(e, out=e)
    np.exp(e, out=e)
    np.log1p(e, out=e)
    return np.subtract(np.minimum(x, np.asarray(0, x.dtype)), e, out=e)


#: op name -> function, for NdArray's dispatch table (`_ops_table.OPS`)
OPS = {
    "hard_sigmoid": hard_sigmoid,
    "leaky_relu": leaky_relu,
    "log_sigmoid": log_sigmoid,
    "sigmoid": sigmoid,
    "sigmoid_backward": sigmoid_backward,
}
