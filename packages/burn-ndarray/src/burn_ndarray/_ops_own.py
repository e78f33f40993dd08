"""NdArray ops written for it alone (not shared with other numpy-like backends): casts, bool
reductions, integer powers, relu, and the stride-1 conv input gradient. Listed in
`_ops_table.OPS`; each takes the backend as `self`."""

from __future__ import annotations

import numpy as np
from burn_tensor import Backend


def float_recip(self, x):
    return np.reciprocal(x)


def float_powf_scalar(self, x, s):
    return np.power(x, np.asarray(s, x.dtype))


def float_into_int(self, x, dtype):
    return x.astype(dtype.np)


def float_hypot(self, x, y):
    return np.hypot(x, y)


def float_cross(self, x, y, dim):
    """numpy's cross product: the same products and differences as the contract's default, in
    one call (broadcasting the other dims)."""
    return np.cross(x, y, axis=dim)


def int_into_float(self, x, dtype):
    return x.astype(dtype.np)


def int_arange_step(self, start, end, step, device, dtype):
    return np.arange(start, end, step, dtype=dtype.np)


def bool_into_int(self, x, dtype):
    return x.astype(dtype.np)


def bool_into_float(self, x, dtype):
    return x.astype(dtype.np)


def bool_any(self, x):
    return np.asarray(np.any(x)).reshape(1)


def bool_all(self, x):
    return np.asarray(np.all(x)).reshape(1)


def bool_any_dim(self, x, dim):
    return np.any(x, axis=dim, keepdims=True)


def bool_all_dim(self, x, dim):
    return np.all(x, axis=dim, keepdims=True)


def bool_argwhere(self, x):
    return np.argwhere(x).astype(self.int_dtype.np).reshape(-1, x.ndim)


def int_powi(self, x, y):
    return np.power(x, y)


def int_powi_scalar(self, x, s):
    if s < 0:
        raise ValueError("int_powi_scalar: negative exponents are not defined for Int tensors")
    return np.power(x, np.asarray(s, x.dtype))


def relu(self, x):
    """Direct numpy for speed (the default is a mask_fill)."""
    return np.maximum(x, np.asarray(0, x.dtype))


def conv2d_x_backward(self, x, weight, output_grad, options):
    """dL/dx of a stride-1, dilation-1 conv is a "full" conv of the output gradient with the
    flipped, in/out-swapped kernel: the forward conv2d path (im2col GEMMs) is about twice as
    fast as the transposed conv's scatter-adds. Other strides/dilations use the default."""
    kh, kw = weight.shape[2], weight.shape[3]
    ph, pw = int(options.padding[0]), int(options.padding[1])
    if (
        tuple(options.stride) != (1, 1)
        or tuple(options.dilation) != (1, 1)
        or ph > kh - 1
        or pw > kw - 1
    ):
        return Backend.conv2d_x_backward(self, x, weight, output_grad, options)
    g = options.groups
    c_out, cig = weight.shape[0], weight.shape[1]
    # [c_out, c_in/g, kh, kw] -> [c_in, c_out/g, kh, kw] per group, spatially flipped.
    wt = weight.reshape(g, c_out // g, cig, kh, kw).transpose(0, 2, 1, 3, 4)
    wt = np.ascontiguousarray(wt[..., ::-1, ::-1]).reshape(g * cig, c_out // g, kh, kw)
    o = type(options)((1, 1), (kh - 1 - ph, kw - 1 - pw), (1, 1), g)
    return self.conv2d(output_grad, wt, None, o)
