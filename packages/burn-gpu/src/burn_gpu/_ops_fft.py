"""The FFT ops (`rfft`, `irfft`, `cfft`) written once over the runtime contract
(`GpuSignalOps`, a mixin: OpenCl runs it; Cuda runs cuFFT through cupy.fft instead).

Each op is one pipeline on burn_gpu's FFT kernels (`_fft.py`): `fft_load` fills a
[2, outer, n, inner] work buffer of the compute type (float32, or float64), then log2(n)
radix-2 Stockham passes (power-of-two n), one direct DFT (other n up to `DFT_MAX`, O(n^2) per
line) or Bluestein's chirp z-transform (longer n: three M-point radix-2 transforms of length
M >= 2n - 1, O(n log n)), then `fft_store` writes the result planes, scaled (1 / n for the inverse transforms), and the
result is cast back to the input's dtype. Complex operands and results are planes [2, *shape]
(`burn_tensor.signal`); Autodiff's rules (`burn_autodiff/_rules_signal.py`) call these same ops.
"""

from __future__ import annotations

import math

from burn_tensor import DType

from ._fft import fft_program
from ._runtime import ints

_INT_MAX = 2**31 - 1


def _geometry(shape, dim):
    return math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1 :])


#: lengths that are not powers of two run the direct DFT up to this, Bluestein above
DFT_MAX = 64


def _bluestein_size(n: int) -> int:
    """The convolution length of Bluestein's algorithm for `n` (0: not used for `n`)."""
    if n & (n - 1) == 0 or n <= DFT_MAX:
        return 0
    return 1 << (2 * n - 2).bit_length()


def _twiddles(rt, call, n, dt):
    """The [2, n] table of cos / sin of 2 pi r / n (one launch of n items)."""
    tw = rt.empty((2, n), dt)
    call("fft_twiddles", n, [tw], (n,))
    return tw


def _radix2(rt, call, a, geometry, sign, dt, tw=None):
    """The radix-2 transform of the [2, outer, n, inner] lines of `a` (n a power of two):
    log2(n) Stockham passes ping-ponging with a second buffer; returns the buffer holding it.
    `tw`: the twiddle table of n (made here when not given)."""
    outer, n, inner = geometry
    if n == 1:
        return a
    tw = _twiddles(rt, call, n, dt) if tw is None else tw
    b, s = rt.empty(tuple(a.shape), dt), 1
    while s < n:
        call("fft_pass", outer * (n // 2) * inner, [b, a, tw], (outer, n, inner, s, sign))
        a, b, s = b, a, s * 2
    return a


class GpuSignalOps:
    """rfft, irfft, cfft on burn_gpu's FFT kernels."""

    def _fft(self, x, mode, plane_shape, dim, n, sign, planes, h, scale):
        """Run the pipeline; `x` is a real signal (mode 0) or planes (1: complex, 2: a half
        spectrum) of `plane_shape`; the result is `planes` planes of `h` bins along `dim`."""
        outer, m, inner = _geometry(plane_shape, dim)
        out_plane = (*plane_shape[:dim], h, *plane_shape[dim + 1 :])
        out_shape = (planes, *out_plane) if planes == 2 else out_plane
        big = _bluestein_size(n)
        work = 2 * outer * max(n, m, big) * inner
        if max(work, 2 * outer * h * inner) > _INT_MAX:
            raise ValueError(
                f"fft: {work} work elements; the FFT kernels index with 32-bit ints (< 2^31)"
            )
        if outer * inner == 0 or m == 0:  # nothing to read (a zero input): no empty buffer
            return self.float_zeros(out_shape, self.device_of(x), DType.from_np(x.dtype))
        rt = self.kernels_of(x)
        xk = rt.contiguous(x, compute=True)
        dt = xk.dtype

        def kern(name):
            return rt.kernel(("fft", dt.name), name, lambda: fft_program(dt.name, rt.dialect))

        def call(name, items, bufs, geometry, *scalars):
            rt.call(kern(name), items, [*bufs, *ints(geometry), *scalars])

        a = rt.empty((2, outer, n, inner), dt)
        call("fft_load", outer * n * inner, [a, xk], (mode, outer, m, inner, n, rt.layout(xk)[1]))
        if n & (n - 1) == 0:
            a = _radix2(rt, call, a, (outer, n, inner), sign, dt)
        elif not big:
            b = rt.empty((2, outer, n, inner), dt)
            call("dft", outer * n * inner, [b, a, _twiddles(rt, call, n, dt)],
                 (outer, n, inner, sign))
            a = b
        else:  # Bluestein: two M-point transforms of the batch, one of the filter
            c = rt.empty((2, outer, big, inner), dt)
            call("chirp_in", outer * big * inner, [c, a], (outer, n, inner, big, sign))
            f = rt.empty((2, 1, big, 1), dt)
            call("chirp_filter", big, [f], (n, big, sign))
            tw = _twiddles(rt, call, big, dt)
            f = _radix2(rt, call, f, (1, big, 1), -1, dt, tw)
            c = _radix2(rt, call, c, (outer, big, inner), -1, dt, tw)
            call("chirp_mul", outer * big * inner, [c, f], (outer, big, inner),
                 (1.0 / big, dt.name))
            c = _radix2(rt, call, c, (outer, big, inner), 1, dt, tw)
            call("chirp_out", outer * n * inner, [a, c], (outer, n, inner, big, sign))
        out = rt.empty(out_shape, dt)
        call("fft_store", planes * outer * h * inner, [out, a], (planes, outer, n, inner, h),
             (scale, dt.name))
        return rt.astype(out, x.dtype)

    def rfft(self, x, dim, n):
        return self._fft(x, 0, tuple(x.shape), dim, n, -1, 2, n // 2 + 1, 1.0)

    def irfft(self, z, dim, n):
        return self._fft(z, 2, tuple(z.shape[1:]), dim, n, 1, 1, n, 1.0 / n)

    def cfft(self, z, dim, n, inverse):
        scale = 1.0 / n if inverse else 1.0
        return self._fft(z, 1, tuple(z.shape[1:]), dim, n, 1 if inverse else -1, 2, n, scale)
