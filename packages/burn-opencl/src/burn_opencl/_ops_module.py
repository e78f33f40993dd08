"""Module ops of the contract on OpenCL: convolutions through im2col/col2im and the matmul
kernel, interpolation as direct kernels (`burn_gpu.conv_program`: im2col and col2im are the
ones Cuda runs), pools as burn_gpu's kernels (`burn_gpu.pool_program`, the ones Cuda runs).

Conv backward passes stay the base class's defaults: they are written with conv2d,
conv_transpose2d, unfold4d (im2col here) and matmul, which are this module's kernels.
Interpolation's backward is the exact adjoint of its separable form: with the 1-D interpolation
matrices A_h [oh, h] and A_w [ow, w] (built on the host, small), grad_x = A_h^T @ grad @ A_w.
"""

from __future__ import annotations

import numpy as np
from burn_gpu import conv_program, geo_args, pool_program

from . import _ew
from ._array import ClArray
from ._matmul import matmul
from ._ops_reduce import _kernel as reduce_kernel


def _out(size, k, s, p, d):
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _launch(name, x, out_shape, g, extra):
    """New array of `out_shape` written by burn_gpu's conv kernel `name` (buffers, then the
    geometry ints `g`)."""
    rt = x.rt
    out = ClArray.empty(rt, out_shape, x.dtype)
    n = out.size
    if n:
        k = conv_kernel(rt, x.dtype, name, max(n, x.size))
        rt.launch1d(k, n, [out.buf, *extra, *g])
    return out


def conv_kernel(rt, dt, name, size):
    """Kernel `name` of burn_gpu's `conv_program`, 64-bit flat indices from 2^31 elements."""
    dt, wide = np.dtype(dt), size >= 2**31
    render = lambda: conv_program(dt.name, "opencl", wide)
    return rt.kernel(("conv", dt.str, wide), name, render)


def _pool_args(**kw) -> list:
    return [np.int32(v) for v in geo_args(**kw)]


def _pool(name, src, out_shape, g, extra, idt):
    """New array of `out_shape` written by burn_gpu's pool kernel `name` (buffers, then the
    geometry ints `g`)."""
    rt = src.rt
    out = ClArray.empty(rt, out_shape, src.dtype)
    if out.size:
        k = pool_kernel(rt, src.dtype, idt, name)
        rt.launch1d(k, out.size, [out.buf, *extra, *g])
    return out


def pool_kernel(rt, dt, idt, name):
    dt, idt = np.dtype(dt), np.dtype(idt)
    render = lambda: pool_program(dt.name, idt.name, "opencl")
    return rt.kernel(("pool", dt.str, idt.str), name, render)


def window_geo(x, kernel_size, stride, padding, dilation, out_hw, **kw):
    """Geometry ints (`burn_gpu.GEO_FIELDS`) of a sliding-window op (im2col, pools,
    interpolation) over x [n, c, h, w]."""
    n, c, h, w = x.shape
    return _pool_args(
        N=n,
        C=c,
        H=h,
        W=w,
        OH=out_hw[0],
        OW=out_hw[1],
        KH=kernel_size[0],
        KW=kernel_size[1],
        sh=stride[0],
        sw=stride[1],
        ph=padding[0],
        pw=padding[1],
        dh=dilation[0],
        dw=dilation[1],
        xo=x.offset,
        **kw,
    )


def im2col(x, kh, kw, stride, padding, dilation):
    x = _ew.contiguous(x)
    n, c, h, w = x.shape
    oh = _out(h, kh, stride[0], padding[0], dilation[0])
    ow = _out(w, kw, stride[1], padding[1], dilation[1])
    g = window_geo(x, (kh, kw), stride, padding, dilation, (oh, ow))
    shape = (n, c * kh * kw, oh * ow)
    if x.rt.kind == "cpu":  # a work-item per output row: no per-element divisions
        cols = ClArray.empty(x.rt, shape, x.dtype)
        rows = n * c * kh * kw * oh
        if rows and ow:
            k = conv_kernel(x.rt, x.dtype, "im2col_rows", max(cols.size, x.size))
            x.rt.launch1d(k, rows, [cols.buf, x.buf, *g])
        return cols, oh, ow
    cols = _launch("im2col", x, shape, g, [x.buf])
    return cols, oh, ow


def _bias(out, bias):
    if bias is None:
        return out
    b = _ew.contiguous(bias).reshape_view((1, bias.shape[0], 1, 1))
    return _ew.binary("add", out, b)


class OpenClModuleOps:
    def conv2d(self, x, weight, bias, options):
        o = options
        n = x.shape[0]
        cout, cig, kh, kw = weight.shape
        grp = o.groups
        cols, oh, ow = im2col(x, kh, kw, o.stride, o.padding, o.dilation)
        kk = cig * kh * kw
        cols = cols.reshape_view((n, grp, kk, oh * ow))
        w4 = _ew.contiguous(weight).reshape_view((1, grp, cout // grp, kk))
        out = matmul(w4, cols).reshape_view((n, cout, oh, ow))
        return _bias(out, bias)

    def conv_transpose2d(self, x, weight, bias, options):
        o = options
        x = _ew.contiguous(x)
        n, cin, h, w = x.shape
        _, cog, kh, kw = weight.shape
        grp = o.groups
        cig, cout = cin // grp, cog * grp
        xg = x.reshape_view((n, grp, cig, h * w))
        wg = _ew.contiguous(weight).reshape_view((1, grp, cig, cog * kh * kw)).swap_dims(2, 3)
        cols = matmul(wg, xg)  # [n, g, cog*kh*kw, h*w] == [n, cout, kh, kw, h, w]
        oh = (h - 1) * o.stride[0] - 2 * o.padding[0] + o.dilation[0] * (kh - 1)
        ow = (w - 1) * o.stride[1] - 2 * o.padding[1] + o.dilation[1] * (kw - 1)
        oh, ow = oh + o.padding_out[0] + 1, ow + o.padding_out[1] + 1
        g = _pool_args(
            N=n,
            C=cout,
            H=h,
            W=w,
            OH=oh,
            OW=ow,
            KH=kh,
            KW=kw,
            sh=o.stride[0],
            sw=o.stride[1],
            ph=o.padding[0],
            pw=o.padding[1],
            dh=o.dilation[0],
            dw=o.dilation[1],
            xo=cols.offset,
        )
        out = _launch("col2im", cols, (n, cout, oh, ow), g, [cols.buf])
        return _bias(out, bias)

    def conv2d_bias_backward(self, x, weight, bias, output_grad):
        """Sum of the output gradient over batch and pixels per channel: one launch (the
        default takes three sum_dim launches)."""
        g = _ew.contiguous(output_grad)
        n, c, h, w = g.shape
        rt = g.rt
        out = ClArray.empty(rt, (c,), g.dtype)
        if c:
            if n * h * w == 0:
                return _ew.full(rt, tuple(bias.shape), 0, g.dtype)
            k = reduce_kernel(rt, g.dtype, self.int_dtype.np, "sum_keep_mid")
            i32 = np.int32
            args = [out.buf, g.buf, i32(g.offset), i32(n), i32(c), i32(h * w)]
            rt.launch(k, (c * rt.wg,), (rt.wg,), args)
        return out.reshape_view(tuple(bias.shape))

    def unfold4d(self, x, kernel_size, options):
        o = options
        return im2col(x, kernel_size[0], kernel_size[1], o.stride, o.padding, o.dilation)[0]

    # -- pooling ---------------------------------------------------------------------------------
    def avg_pool2d(self, x, kernel_size, stride, padding, count_include_pad):
        x = _ew.contiguous(x)
        n, c, h, w = x.shape
        hw = tuple(
            _out(s, k, st, p, 1) for s, k, st, p in zip((h, w), kernel_size, stride, padding)
        )
        g = window_geo(
            x, kernel_size, stride, padding, (1, 1), hw, flag=count_include_pad
        )
        return _pool("avg_pool", x, (n, c) + hw, g, [x.buf], self.int_dtype.np)

    def avg_pool2d_backward(self, x, grad, kernel_size, stride, padding, count_include_pad):
        grad = _ew.contiguous(grad)
        g = window_geo(
            x,
            kernel_size,
            stride,
            padding,
            (1, 1),
            grad.shape[2:],
            flag=count_include_pad,
            go=grad.offset,
        )
        return _pool("avg_pool_backward", grad, tuple(x.shape), g, [grad.buf], self.int_dtype.np)

    def max_pool2d_with_indices(self, x, kernel_size, stride, padding, dilation):
        x = _ew.contiguous(x)
        n, c, h, w = x.shape
        hw = tuple(
            _out(s, k, st, p, d)
            for s, k, st, p, d in zip((h, w), kernel_size, stride, padding, dilation)
        )
        g = window_geo(x, kernel_size, stride, padding, dilation, hw)
        rt = x.rt
        idt = self.int_dtype.np
        out = ClArray.empty(rt, (n, c) + hw, x.dtype)
        idx = ClArray.empty(rt, (n, c) + hw, idt)
        if out.size:
            k = pool_kernel(rt, x.dtype, idt, "max_pool")
            rt.launch1d(k, out.size, [out.buf, idx.buf, x.buf, *g])
        return out, idx

    def max_pool2d_with_indices_backward(
        self, x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        grad = _ew.contiguous(output_grad)
        indices = _ew.contiguous(indices)
        g = window_geo(
            x,
            kernel_size,
            stride,
            padding,
            dilation,
            grad.shape[2:],
            go=grad.offset,
            io=indices.offset,
        )
        extra = [grad.buf, indices.buf]
        return _pool("max_pool_backward", grad, tuple(x.shape), g, extra, indices.dtype)

    def adaptive_avg_pool2d(self, x, output_size):
        x = _ew.contiguous(x)
        n, c = x.shape[:2]
        hw = (int(output_size[0]), int(output_size[1]))
        g = window_geo(x, (1, 1), (1, 1), (0, 0), (1, 1), hw)
        return _pool("adaptive_avg", x, (n, c) + hw, g, [x.buf], self.int_dtype.np)

    def adaptive_avg_pool2d_backward(self, x, grad):
        grad = _ew.contiguous(grad)
        g = window_geo(
            x, (1, 1), (1, 1), (0, 0), (1, 1), grad.shape[2:], go=grad.offset
        )
        idt = self.int_dtype.np
        return _pool("adaptive_avg_backward", grad, tuple(x.shape), g, [grad.buf], idt)

    # -- interpolation -----------------------------------------------------------------------------
    def interpolate(self, x, output_size, options):
        x = _ew.contiguous(x)
        n, c = x.shape[:2]
        hw = (int(output_size[0]), int(output_size[1]))
        flag = ("nearest", "bilinear", "bicubic").index(options.mode)
        g = window_geo(x, (1, 1), (1, 1), (0, 0), (1, 1), hw, flag=flag)
        return _launch("interpolate", x, (n, c) + hw, g, [x.buf])

    def interpolate_backward(self, x, grad, output_size, options):
        from ._interp_matrix import interp_matrix

        rt = grad.rt
        h, w = x.shape[2:]
        oh, ow = int(output_size[0]), int(output_size[1])
        ah = ClArray.from_numpy(rt, interp_matrix(options.mode, h, oh).astype(x.dtype))
        aw = ClArray.from_numpy(rt, interp_matrix(options.mode, w, ow).astype(x.dtype))
        ah_t = ah.reshape_view((1, 1, oh, h)).swap_dims(2, 3)  # [1, 1, h, oh]
        aw4 = aw.reshape_view((1, 1, ow, w))
        return matmul(ah_t, matmul(grad, aw4))
