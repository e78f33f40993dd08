"""Module ops on the GPU: convolutions as im2col kernel + cuBLAS GEMM (cupy 14 has no cuDNN),
transposed convolutions as GEMM + a col2im gather kernel, pools (adaptive average included) as
direct kernels, interpolation as burn_ndarray's separable matrix products run on cupy.

conv2d's input and weight gradients (float32 without TF32, float64, one group) run the same
kernels as burn_tensor's defaults, called directly: the input gradient one GEMM + col2im, the
weight gradient im2col + one batched GEMM + the column sum over the batch (`_gemm.sum_rows`),
where the defaults went through 5-7 backend ops (~100 us of host time each on the H100 host).
Other cases take the defaults (unfold4d and matmul for weights, conv_transpose2d for inputs).
"""

from __future__ import annotations

import numpy as np
from burn_gpu import geo_args
from burn_tensor.array_api import interpolation
from burn_tensor.ops import ConvOptions, ConvTransposeOptions, InterpolateOptions, UnfoldOptions

from . import _gemm
from ._dtypes import KERNEL_FLOATS, kernel_dtype
from ._kernel_source import BIAS_BLOCK
from ._kernels import i32, i64, kernel, launch, launch_grid
from ._ops_linear import add_bias, direct
from ._platform import load_cupy

_INT_MAX = 2**31 - 1

_BIAS_DTYPES = KERNEL_FLOATS


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def _out(size, k, s, p, d) -> int:
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _k(cp, x):
    """x contiguous in the dtype our kernels compute in (float16 -> float32)."""
    if x._c_contiguous and x.dtype in _BIAS_DTYPES:  # the common case, without cupy's checks
        return x
    return cp.ascontiguousarray(x, dtype=kernel_dtype(x.dtype))


def _as(a, dtype):
    """a in `dtype` (itself when it already is: cupy's astype(copy=False) costs a call)."""
    return a if a.dtype == dtype else a.astype(dtype)


def unfold(cp, x, kernel_size, stride, padding, dilation):
    """im2col: [n, c, h, w] -> [n, c*kh*kw, oh*ow] (Burn's unfold4d layout)."""
    n, c, h, w = x.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    oh, ow = _out(h, kh, sh, ph, dh), _out(w, kw, sw, pw, dw)
    xk = _k(cp, x)
    out = cp.ndarray((n, c * kh * kw, oh * ow), xk.dtype)
    total = out.size
    geo = geo_args(N=n, C=c, H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw,
                   dh=dh, dw=dw)  # fmt: skip
    wide = max(total, xk.size) >= 2**31  # 32-bit divisions where they fit
    launch(kernel("im2col", xk.dtype, wide=wide), total, out, xk, *i32(*geo))
    return _as(out, x.dtype)


def _col2im(cp, cols, n, c_out, h, w, oh, ow, kernel_size, stride, padding, dilation):
    """The transposed-conv gather: cols [n, c_out*kh*kw, h*w] (contiguous, a kernel dtype) ->
    [n, c_out, oh, ow]."""
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    out = cp.ndarray((n, c_out, oh, ow), cols.dtype)
    total = out.size
    geo = geo_args(N=n, C=c_out, H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph,
                   pw=pw, dh=dh, dw=dw)  # fmt: skip
    wide = max(total, cols.size) >= 2**31
    launch(kernel("col2im", cols.dtype, wide=wide), total, out, cols, *i32(*geo))
    return out


class CudaModuleOps:
    # -- convolution ------------------------------------------------------------------------------
    def conv2d(self, x, weight, bias, options: ConvOptions):
        cp = load_cupy()
        o = options
        n = x.shape[0]
        c_out, cg, kh, kw = weight.shape
        g = o.groups
        sh, sw = _pair(o.stride)
        ph, pw = _pair(o.padding)
        dh, dw = _pair(o.dilation)
        oh = _out(x.shape[2], kh, sh, ph, dh)
        ow = _out(x.shape[3], kw, sw, pw, dw)
        cols = unfold(cp, x, (kh, kw), (sh, sw), (ph, pw), (dh, dw))
        cols = cols.reshape(n, g, cg * kh * kw, oh * ow)
        wm = _as(weight, x.dtype).reshape(1, g, c_out // g, cg * kh * kw)
        out = self.float_matmul(wm, cols).reshape(n, c_out, oh, ow)  # cuBLAS batched GEMM
        if bias is not None:
            b = _as(bias, x.dtype)
            # in place on the fresh GEMM output: one bare launch (a [1, c, 1, 1] broadcast has
            # two broadcast runs, which the hot path's add does not cover: cupy's ufunc)
            fresh = out._c_contiguous and out.dtype in _BIAS_DTYPES
            if not (fresh and add_bias(out, b, c_out, oh * ow)):
                out = self.float_add(out, b.reshape(1, c_out, 1, 1))
        return out

    def conv2d_x_backward(self, x, weight, output_grad, options: ConvOptions):
        g = output_grad
        if options.groups == 1 and direct(self, x, weight, g) and weight._c_contiguous:
            n, c_out, h, w = g.shape
            _, c_in, kh, kw = weight.shape
            # cols [n, c_in*kh*kw, h*w] = W^T [c_in*kh*kw, c_out] @ g [n, c_out, h*w]
            wt = weight.reshape(1, c_out, c_in * kh * kw).swapaxes(1, 2)
            cols = _gemm.matmul(wt, g.reshape(n, c_out, h * w))
            if cols is not None:
                return _col2im(
                    load_cupy(), cols, n, c_in, h, w, x.shape[2], x.shape[3], (kh, kw),
                    _pair(options.stride), _pair(options.padding), _pair(options.dilation),
                )  # fmt: skip
        return super().conv2d_x_backward(x, weight, output_grad, options)

    def conv2d_weight_backward(self, x, weight, output_grad, options: ConvOptions):
        g = output_grad
        if options.groups == 1 and direct(self, x, weight, g):
            c_out, c_in, kh, kw = weight.shape
            n = x.shape[0]
            cols = unfold(
                load_cupy(), x, (kh, kw), _pair(options.stride), _pair(options.padding),
                _pair(options.dilation),
            )  # fmt: skip
            length = cols.shape[2]
            # per image: g[b] [c_out, L] @ cols[b]^T [L, c_in*kh*kw] (transposed in place)
            prod = _gemm.matmul(g.reshape(n, c_out, length), cols.swapaxes(1, 2))
            if prod is not None:
                if n == 1:
                    return prod.reshape(weight.shape)
                dw = _gemm.sum_rows(prod.reshape(n, c_out * c_in * kh * kw))
                if dw is not None:
                    return dw.reshape(weight.shape)
        return super().conv2d_weight_backward(x, weight, output_grad, options)

    def conv2d_bias_backward(self, x, weight, bias, output_grad):
        # one reduction over (batch, h, w), not three sum_dims; float32/float64 contiguous: our
        # kernel, a block per channel (cupy's multi-axis sum took 30-70 us of host time)
        cp = load_cupy()
        g = output_grad
        if g.dtype in _BIAS_DTYPES and g.ndim == 4 and g._c_contiguous:
            n, c, h, w = g.shape
            if n * h * w == 0:
                out = cp.zeros((c,), g.dtype)
            else:
                out = cp.ndarray((c,), g.dtype)
                # burn_gpu's sum_keep_mid (float64 accumulation, a fixed tree: same bits every run)
                k = kernel("sum_keep_mid", g.dtype)
                launch_grid(k, c, BIAS_BLOCK, out, g, i64(0), i64(n), i64(c), i64(h * w))
        else:
            out = cp.sum(g, axis=(0, 2, 3), dtype=g.dtype)
        shape = tuple(bias.shape)
        return out if out.shape == shape else out.reshape(shape)

    def conv_transpose2d(self, x, weight, bias, options: ConvTransposeOptions):
        cp = load_cupy()
        o = options
        n, c_in, h, w = x.shape
        _, cog, kh, kw = weight.shape
        g = o.groups
        c_out = cog * g
        sh, sw = _pair(o.stride)
        ph, pw = _pair(o.padding)
        dh, dw = _pair(o.dilation)
        oh = (h - 1) * sh - 2 * ph + dh * (kh - 1) + int(o.padding_out[0]) + 1
        ow = (w - 1) * sw - 2 * pw + dw * (kw - 1) + int(o.padding_out[1]) + 1
        # cols [n, g, cog*kh*kw, h*w] = W_g^T @ x_g: every product, then gathered per pixel.
        wm = _as(weight, x.dtype).reshape(g, c_in // g, cog * kh * kw)
        xs = x.reshape(n, g, c_in // g, h * w)
        cols = _k(cp, self.float_matmul(cp.swapaxes(wm, 1, 2)[None], xs))
        out = _col2im(
            cp, cols.reshape(n, c_out * kh * kw, h * w), n, c_out, h, w, oh, ow, (kh, kw),
            (sh, sw), (ph, pw), (dh, dw),
        )  # fmt: skip
        out = _as(out, x.dtype)
        if bias is not None:
            out += _as(bias, x.dtype).reshape(1, c_out, 1, 1)
        return out

    def unfold4d(self, x, kernel_size, options: UnfoldOptions):
        o = options
        return unfold(
            load_cupy(),
            x,
            _pair(kernel_size),
            _pair(o.stride),
            _pair(o.padding),
            _pair(o.dilation),
        )

    # -- pooling: burn_gpu's pool kernels (`pool_program`, the ones OpenCl runs) -------------------
    def _pool(self, name, out_shape, bufs, idt, like, **geo):
        """A new array of `out_shape` in the kernel dtype of `bufs[-1]` (the data read), cast
        to `like`'s dtype, written by burn_gpu's pool kernel `name`; its arguments: the new
        array, `bufs`, the geometry `geo` (`burn_gpu.GEO_FIELDS`)."""
        cp = load_cupy()
        src = bufs[-1]
        out = cp.ndarray(out_shape, src.dtype)
        total = out.size
        if max(total, *(b.size for b in bufs)) > _INT_MAX:
            raise ValueError(
                f"{name}: more than {_INT_MAX} elements; the pool kernels index with 32-bit ints"
            )
        if total:
            k = kernel(name, src.dtype, idt)
            launch(k, total, out, *bufs, *(np.int32(v) for v in geo_args(**geo)))
        return out.astype(like.dtype, copy=False)

    def avg_pool2d(self, x, kernel_size, stride, padding, count_include_pad):
        (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
        n, c, h, w = x.shape
        oh, ow = _out(h, kh, sh, ph, 1), _out(w, kw, sw, pw, 1)
        xk = _k(load_cupy(), x)
        geo = dict(N=n, C=c, H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw)
        idt = self.int_dtype.np
        return self._pool("avg_pool", (n, c, oh, ow), [xk], idt, x, **geo,
                          dh=1, dw=1, flag=int(bool(count_include_pad)))  # fmt: skip

    def avg_pool2d_backward(self, x, grad, kernel_size, stride, padding, count_include_pad):
        (kh, kw), (sh, sw), (ph, pw) = _pair(kernel_size), _pair(stride), _pair(padding)
        n, c, h, w = x.shape
        oh, ow = grad.shape[2:]
        g = load_cupy().ascontiguousarray(grad, dtype=kernel_dtype(x.dtype))
        geo = dict(N=n, C=c, H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw)
        idt = self.int_dtype.np
        return self._pool("avg_pool_backward", x.shape, [g], idt, x, **geo,
                          dh=1, dw=1, flag=int(bool(count_include_pad)))  # fmt: skip

    def max_pool2d_with_indices(self, x, kernel_size, stride, padding, dilation):
        cp = load_cupy()
        (kh, kw), (sh, sw) = _pair(kernel_size), _pair(stride)
        (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
        n, c, h, w = x.shape
        oh, ow = _out(h, kh, sh, ph, dh), _out(w, kw, sw, pw, dw)
        idx = cp.ndarray((n, c, oh, ow), self.int_dtype.np)
        geo = dict(N=n, C=c, H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw)
        out = self._pool("max_pool", (n, c, oh, ow), [idx, _k(cp, x)], idx.dtype, x, **geo,
                         dh=dh, dw=dw)  # fmt: skip
        return out, idx

    def max_pool2d_with_indices_backward(
        self, x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        cp = load_cupy()
        (kh, kw), (sh, sw) = _pair(kernel_size), _pair(stride)
        (ph, pw), (dh, dw) = _pair(padding), _pair(dilation)
        n, c, h, w = x.shape
        oh, ow = output_grad.shape[2:]
        idx = cp.ascontiguousarray(indices)
        g = cp.ascontiguousarray(output_grad, dtype=kernel_dtype(x.dtype))
        geo = dict(N=n, C=c, H=h, W=w, OH=oh, OW=ow, KH=kh, KW=kw, sh=sh, sw=sw, ph=ph, pw=pw)
        # gather form: each input pixel sums the outputs whose index names it (no atomics)
        out = cp.ndarray(x.shape, g.dtype)
        if max(out.size, g.size) > _INT_MAX:
            raise ValueError(f"max_pool_backward: more than {_INT_MAX} elements (32-bit ints)")
        if out.size:
            geo.update(dh=dh, dw=dw)
            k = kernel("max_pool_backward", g.dtype, idx.dtype)
            launch(k, out.size, out, g, idx, *(np.int32(v) for v in geo_args(**geo)))
        return out.astype(x.dtype, copy=False)

    def adaptive_avg_pool2d(self, x, output_size):
        # a direct kernel: the separable matrix form needs an isfinite check that reads the
        # device (a sync per call) and host-built matrices copied over each time
        oh, ow = _pair(output_size)
        n, c, h, w = x.shape
        xk = _k(load_cupy(), x)
        idt = self.int_dtype.np
        return self._pool("adaptive_avg", (n, c, oh, ow), [xk], idt, x,
                          N=n, C=c, H=h, W=w, OH=oh, OW=ow)  # fmt: skip

    def adaptive_avg_pool2d_backward(self, x, grad):
        n, c, h, w = x.shape
        oh, ow = grad.shape[2:]
        g = load_cupy().ascontiguousarray(grad, dtype=kernel_dtype(x.dtype))
        idt = self.int_dtype.np
        return self._pool("adaptive_avg_backward", x.shape, [g], idt, x,
                          N=n, C=c, H=h, W=w, OH=oh, OW=ow)  # fmt: skip

    # -- interpolation -----------------------------------------------------------------------------
    def interpolate(self, x, output_size, options: InterpolateOptions):
        return interpolation.interpolate(x, _pair(output_size), options.mode, load_cupy())

    def interpolate_backward(self, x, grad, output_size, options: InterpolateOptions):
        return interpolation.interpolate_backward(
            x, grad, _pair(output_size), options.mode, load_cupy()
        )
