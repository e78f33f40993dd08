"""Module ops written once over the runtime contract: pools, adaptive average pools, im2col
(`unfold4d`), the transposed convolution's col2im gather and interpolation's forward pass.

`GpuModuleOps` is a mixin of a `GpuBackend` (`OpenCl`, `Cuda`): each op takes the runtime of its
input's device (`self.kernels_of(x)`), makes the input contiguous in the type kernels compute in,
launches one kernel of `pool_program` / `conv_program` and casts the result back. The
convolutions themselves (the GEMM around im2col/col2im) stay in each backend: matmul is
runtime-specific by design.

Geometry: the 18 ints of `GEO_FIELDS`; flat indices are 32-bit (the pools refuse 2^31 elements
or more with a clear error; im2col/col2im switch to 64-bit indices there).
"""

from __future__ import annotations

import math

from ._conv import conv_program
from ._ops_volume import GpuVolumeOps
from ._pool import geo_args, pool_program
from ._runtime import Runtime, ints

_INT_MAX = 2**31 - 1


def _pair(v) -> tuple[int, int]:
    return (int(v[0]), int(v[1]))


def out_size(size: int, k: int, s: int, p: int, d: int) -> int:
    """Output length of a sliding window (Burn's formula)."""
    return (size + 2 * p - d * (k - 1) - 1) // s + 1


def _run(rt: Runtime, program: str, name: str, out_shape, dt, bufs, geo: dict, idt=None,
         wide: bool = False):
    """A new array of `out_shape` and dtype `dt` written by kernel `name` of `program` ("pool":
    `pool_program` with index dtype `idt`, or "conv": `conv_program`) over `bufs` and the
    geometry `geo`."""
    out = rt.empty(tuple(out_shape), dt)
    total = math.prod(out_shape)
    if program == "pool" and max(total, *(math.prod(b.shape) for b in bufs)) > _INT_MAX:
        raise ValueError(f"{name}: more than {_INT_MAX} elements; pool kernels use 32-bit ints")
    if total:
        if program == "pool":
            key = ("pool", dt.name, idt.name)
            render = lambda: pool_program(dt.name, idt.name, rt.dialect)
        else:
            key, render = ("conv", dt.name, wide), lambda: conv_program(dt.name, rt.dialect, wide)
        rt.call(rt.kernel(key, name, render), total, [out, *bufs, *ints(geo_args(**geo))])
    return out


def _window(shape, kernel_size, stride, padding, dilation, out_hw, **kw) -> dict:
    """Geometry of a sliding window over an [n, c, h, w] array of `shape`."""
    n, c, h, w = shape
    (kh, kw_), (sh, sw), (ph, pw), (dh, dw) = kernel_size, stride, padding, dilation
    return dict(N=n, C=c, H=h, W=w, OH=out_hw[0], OW=out_hw[1], KH=kh, KW=kw_, sh=sh, sw=sw,
                ph=ph, pw=pw, dh=dh, dw=dw, **kw)  # fmt: skip


def unfold(rt: Runtime, x, kernel_size, stride, padding, dilation):
    """im2col: (cols [n, c*kh*kw, oh*ow] in x's dtype, oh, ow), Burn's unfold4d layout; a GPU
    takes `im2col` (a work-item per 4 outputs of a row), a CPU device `im2col_rows` (a
    work-item per output row: no per-element divisions)."""
    k, s, p, d = _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation)
    n, c, h, w = x.shape
    oh, ow = out_size(h, k[0], s[0], p[0], d[0]), out_size(w, k[1], s[1], p[1], d[1])
    xk = rt.contiguous(x, compute=True)
    shape = (n, c * k[0] * k[1], oh * ow)
    geo = _window(x.shape, k, s, p, d, (oh, ow), xo=rt.layout(xk)[1])
    wide = max(math.prod(shape), math.prod(x.shape)) > _INT_MAX  # 32-bit divisions where they fit
    cols = rt.empty(shape, xk.dtype)
    rows = n * c * k[0] * k[1] * oh
    if rows and ow:
        # a GPU: an item per 4 outputs of a row (`im2col`); a CPU: an item per row
        name, items = ("im2col_rows", rows) if rt.cpu else ("im2col", rows * ((ow + 3) // 4))
        kern = rt.kernel(("conv", xk.dtype.name, wide), name,
                         lambda: conv_program(xk.dtype.name, rt.dialect, wide))  # fmt: skip
        rt.call(kern, items, [cols, xk, *ints(geo_args(**geo))])
    return rt.astype(cols, x.dtype), oh, ow


def col2im(rt: Runtime, cols, c_out: int, hw, out_hw, kernel_size, stride, padding, dilation):
    """The transposed convolution's gather: cols [n, c_out*kh*kw, h*w] (contiguous from its
    layout offset, a kernel dtype) -> [n, c_out, oh, ow]; each output pixel sums the columns
    that land on it (deterministic)."""
    n = cols.shape[0]
    k, s, p, d = _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation)
    geo = _window((n, c_out, *hw), k, s, p, d, out_hw, xo=rt.layout(cols)[1])
    shape = (n, c_out, out_hw[0], out_hw[1])
    wide = max(math.prod(shape), math.prod(cols.shape)) > _INT_MAX
    return _run(rt, "conv", "col2im", shape, cols.dtype, [cols], geo, wide=wide)


class GpuModuleOps(GpuVolumeOps):
    """Mixin of a `GpuBackend`: unfold4d, the pools and interpolation as burn_gpu's kernels
    (and the 3-D ops of `GpuVolumeOps`)."""

    def unfold4d(self, x, kernel_size, options):
        o = options
        return unfold(self.kernels_of(x), x, kernel_size, o.stride, o.padding, o.dilation)[0]

    def _pool(self, name, x, out_shape, src, geo, idx=None, at="xo"):
        """Kernel `name` of `pool_program` over `src` (x, or a gradient: `at="go"`), made
        contiguous in a compute type, then `idx` where given; the result in x's dtype."""
        rt = self.kernels_of(x)
        src = rt.contiguous(src, compute=True)
        geo[at] = rt.layout(src)[1]
        bufs = [src]
        if idx is not None:
            idx = rt.contiguous(idx)
            geo["io"] = rt.layout(idx)[1]
            bufs.append(idx)
        idt = idx.dtype if idx is not None else self.int_dtype.np
        return rt.astype(_run(rt, "pool", name, out_shape, src.dtype, bufs, geo, idt), x.dtype)

    def avg_pool2d(self, x, kernel_size, stride, padding, count_include_pad):
        k, s, p = _pair(kernel_size), _pair(stride), _pair(padding)
        n, c, h, w = x.shape
        hw = (out_size(h, k[0], s[0], p[0], 1), out_size(w, k[1], s[1], p[1], 1))
        geo = _window(x.shape, k, s, p, (1, 1), hw, flag=int(bool(count_include_pad)))
        return self._pool("avg_pool", x, (n, c, *hw), x, geo)

    def avg_pool2d_backward(self, x, grad, kernel_size, stride, padding, count_include_pad):
        k, s, p = _pair(kernel_size), _pair(stride), _pair(padding)
        geo = _window(x.shape, k, s, p, (1, 1), grad.shape[2:], flag=int(bool(count_include_pad)))
        return self._pool("avg_pool_backward", x, x.shape, grad, geo, at="go")

    def max_pool2d_with_indices(self, x, kernel_size, stride, padding, dilation):
        rt = self.kernels_of(x)
        k, s, p, d = _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation)
        n, c, h, w = x.shape
        hw = (out_size(h, k[0], s[0], p[0], d[0]), out_size(w, k[1], s[1], p[1], d[1]))
        xk = rt.contiguous(x, compute=True)
        geo = _window(x.shape, k, s, p, d, hw, xo=rt.layout(xk)[1])
        idx = rt.empty((n, c, *hw), self.int_dtype.np)
        # the kernel writes (values, indices) from x: the indices array goes in as a buffer
        out = _run(rt, "pool", "max_pool", (n, c, *hw), xk.dtype, [idx, xk], geo, idx.dtype)
        return rt.astype(out, x.dtype), idx

    def max_pool2d_with_indices_backward(
        self, x, kernel_size, stride, padding, dilation, output_grad, indices
    ):
        k, s, p, d = _pair(kernel_size), _pair(stride), _pair(padding), _pair(dilation)
        geo = _window(x.shape, k, s, p, d, output_grad.shape[2:])
        # gather form: each input pixel sums the outputs whose index names it (no atomics)
        return self._pool("max_pool_backward", x, x.shape, output_grad, geo, indices, "go")

    def adaptive_avg_pool2d(self, x, output_size):
        n, c = x.shape[:2]
        hw = _pair(output_size)
        geo = _window(x.shape, (1, 1), (1, 1), (0, 0), (1, 1), hw)
        return self._pool("adaptive_avg", x, (n, c, *hw), x, geo)

    def adaptive_avg_pool2d_backward(self, x, grad):
        geo = _window(x.shape, (1, 1), (1, 1), (0, 0), (1, 1), grad.shape[2:])
        return self._pool("adaptive_avg_backward", x, x.shape, grad, geo, at="go")

    def interpolate(self, x, output_size, options):
        rt = self.kernels_of(x)
        n, c = x.shape[:2]
        hw = _pair(output_size)
        xk = rt.contiguous(x, compute=True)
        flag = ("nearest", "bilinear", "bicubic").index(options.mode)
        geo = _window(x.shape, (1, 1), (1, 1), (0, 0), (1, 1), hw, flag=flag, xo=rt.layout(xk)[1])
        out = _run(rt, "conv", "interpolate", (n, c, *hw), xk.dtype, [xk], geo)
        return rt.astype(out, x.dtype)
