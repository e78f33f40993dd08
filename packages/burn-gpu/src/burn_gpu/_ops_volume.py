"""The 3-D module ops written once over the runtime contract (`GpuVolumeOps`, a mixin of
`GpuModuleOps`, so OpenCl and Cuda both run it): conv3d as `vol2col` + the backend's batched
matmul per group, conv_transpose3d as the matmul + `col2vol`'s gather, the 3-D pools as one
kernel each (`_vol.py`). The GEMMs are `self.float_matmul` (each backend's own: cuBLAS on Cuda,
the matmul kernel on OpenCl); kernels compute in float32/float64 (`rt.contiguous(...,
compute=True)`) and the results are cast back to the input's dtype.

Backward passes are the contract's: Autodiff differentiates the defaults of
`burn_tensor._ops_module3d` through the 2-D ops, which are these backends' kernels too.
"""

from __future__ import annotations

import math

from ._runtime import ints
from ._vol import vol_args, vol_program

_INT_MAX = 2**31 - 1


def _out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _geo(shape, out, k, s, p, d, **kw) -> dict:
    n, c, dd, h, w = shape
    return dict(N=n, C=c, D=dd, H=h, W=w, OD=out[0], OH=out[1], OW=out[2], KD=k[0], KH=k[1],
                KW=k[2], sd=s[0], sh=s[1], sw=s[2], pd=p[0], ph=p[1], pw=p[2], dd=d[0],
                dh=d[1], dw=d[2], **kw)  # fmt: skip


class GpuVolumeOps:
    """conv3d, conv_transpose3d, max/avg/adaptive-avg pool3d on burn_gpu's 3-D kernels."""

    def _vol(self, name, rt, out_shape, dt, bufs, geo, idt=None):
        """A new `out_shape` array of `dt` written by kernel `name` of `vol_program`."""
        total = math.prod(out_shape)
        wide = max(total, *(math.prod(b.shape) for b in bufs)) > _INT_MAX
        if name in ("max_pool3d", "avg_pool3d", "adaptive_avg3d") and wide:
            raise ValueError(f"{name}: more than {_INT_MAX} elements; pool kernels use 32-bit "
                             "ints")
        idt = idt if idt is not None else self.int_dtype.np
        out = rt.empty(tuple(out_shape), dt)
        if total:
            key = ("vol", dt.name, idt.name, wide)
            kern = rt.kernel(key, name, lambda: vol_program(dt.name, idt.name, rt.dialect, wide))
            rt.call(kern, total, [out, *bufs, *ints(vol_args(**geo))])
        return out

    # -- convolution ----------------------------------------------------------------------------
    def conv3d(self, x, weight, bias, options):
        rt = self.kernels_of(x)
        n, c_in = x.shape[:2]
        c_out, cig, *k = weight.shape
        g, s, p, d = options.groups, options.stride, options.padding, options.dilation
        out = [_out(x.shape[2 + i], k[i], s[i], p[i], d[i]) for i in range(3)]
        taps, length = math.prod(k), math.prod(out)
        xk = rt.contiguous(x, compute=True)
        geo = _geo(x.shape, out, k, s, p, d, xo=rt.layout(xk)[1])
        cols = self._vol("vol2col", rt, (n, c_in * taps, length), xk.dtype, [xk], geo)
        cols = self.float_reshape(rt.astype(cols, x.dtype), (n, g, cig * taps, length))
        w4 = self.float_reshape(weight, (1, g, c_out // g, cig * taps))
        y = self.float_reshape(self.float_matmul(w4, cols), (n, c_out, *out))
        if bias is not None:
            y = self.float_add(y, self.float_reshape(bias, (1, c_out, 1, 1, 1)))
        return y

    def conv_transpose3d(self, x, weight, bias, options):
        rt = self.kernels_of(x)
        n, c_in, *size = x.shape
        _, cog, *k = weight.shape
        g = options.groups
        s, p, po, d = options.stride, options.padding, options.padding_out, options.dilation
        cig, c_out, taps, length = c_in // g, cog * g, math.prod(k), math.prod(size)
        out = [(size[i] - 1) * s[i] - 2 * p[i] + d[i] * (k[i] - 1) + po[i] + 1 for i in range(3)]
        wg = self.float_swap_dims(self.float_reshape(weight, (1, g, cig, cog * taps)), 2, 3)
        xg = self.float_reshape(x, (n, g, cig, length))
        cols = self.float_matmul(wg, xg)  # [n, g, cog*taps, L] == [n, c_out, kd, kh, kw, d, h, w]
        ck = rt.contiguous(cols, compute=True)
        # col2vol's geometry: (D, H, W) the input's size, (OD, OH, OW) the output's
        geo = _geo((n, c_out, *size), out, k, s, p, d, xo=rt.layout(ck)[1])
        y = rt.astype(self._vol("col2vol", rt, (n, c_out, *out), ck.dtype, [ck], geo), x.dtype)
        if bias is not None:
            y = self.float_add(y, self.float_reshape(bias, (1, c_out, 1, 1, 1)))
        return y

    # -- pools ----------------------------------------------------------------------------------
    def max_pool3d_with_indices(self, x, kernel_size, stride, padding, dilation):
        rt = self.kernels_of(x)
        n, c = x.shape[:2]
        k, s, p, d = kernel_size, stride, padding, dilation
        out = [_out(x.shape[2 + i], k[i], s[i], p[i], d[i]) for i in range(3)]
        xk = rt.contiguous(x, compute=True)
        geo = _geo(x.shape, out, k, s, p, d, xo=rt.layout(xk)[1])
        idx = rt.empty((n, c, *out), self.int_dtype.np)
        # the kernel writes (values, indices): the indices array goes in as a buffer
        y = self._vol("max_pool3d", rt, (n, c, *out), xk.dtype, [idx, xk], geo, idx.dtype)
        return rt.astype(y, x.dtype), idx

    def max_pool3d(self, x, kernel_size, stride, padding, dilation):
        return self.max_pool3d_with_indices(x, kernel_size, stride, padding, dilation)[0]

    def avg_pool3d(self, x, kernel_size, stride, padding, count_include_pad):
        rt = self.kernels_of(x)
        n, c = x.shape[:2]
        k, s, p = kernel_size, stride, padding
        out = [_out(x.shape[2 + i], k[i], s[i], p[i], 1) for i in range(3)]
        xk = rt.contiguous(x, compute=True)
        geo = _geo(x.shape, out, k, s, p, (1, 1, 1), xo=rt.layout(xk)[1],
                   flag=int(bool(count_include_pad)))  # fmt: skip
        return rt.astype(self._vol("avg_pool3d", rt, (n, c, *out), xk.dtype, [xk], geo), x.dtype)

    def adaptive_avg_pool3d(self, x, output_size):
        rt = self.kernels_of(x)
        n, c = x.shape[:2]
        out = tuple(int(v) for v in output_size)
        xk = rt.contiguous(x, compute=True)
        one = (1, 1, 1)
        geo = _geo(x.shape, out, one, one, (0, 0, 0), one, xo=rt.layout(xk)[1])
        y = self._vol("adaptive_avg3d", rt, (n, c, *out), xk.dtype, [xk], geo)
        return rt.astype(y, x.dtype)
