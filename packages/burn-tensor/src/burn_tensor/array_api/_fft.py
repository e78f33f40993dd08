"""The FFT ops (`rfft`, `irfft`, `cfft`) over an array namespace with numpy's `fft` module:
numpy.fft (pocketfft) for NdArray, cupy.fft (cuFFT) for Cuda.

Complex operands and results are planes `[2, *shape]` (see `burn_tensor._ops_signal`). float32
and float64 are transformed in their own precision (complex64 / complex128: numpy >= 2 and
cupy keep float32 as float32); float16 and bfloat16 in float32, rounded back once.
"""

from __future__ import annotations

import numpy as np

_WIDE = (np.dtype(np.float32), np.dtype(np.float64))


def _compute(dtype) -> np.dtype:
    return np.dtype(dtype) if np.dtype(dtype) in _WIDE else np.dtype(np.float32)


def _complex_dtype(dtype) -> np.dtype:
    return np.dtype(np.complex128) if dtype == np.float64 else np.dtype(np.complex64)


def fft_ops(xp) -> dict:
    """`{"rfft", "irfft", "cfft"}` over namespace `xp`, each taking the backend as `self`.

    Example:
        >>> import numpy as np
        >>> z = fft_ops(np)["rfft"](None, np.array([1.0, 2.0, 3.0, 4.0], np.float32), 0, 4)
        >>> z.dtype, z.tolist()
        (dtype('float32'), [[10.0, -2.0, -2.0], [0.0, 2.0, 0.0]])
    """

    def planes(c, dtype):
        return xp.stack([c.real, c.imag]).astype(dtype, copy=False)

    def joined(z, dim, length=None):
        """Complex array of planes `z` (fitted to `length` along `dim` when given)."""
        ct = _compute(z.dtype)
        re, im = z[0].astype(ct, copy=False), z[1].astype(ct, copy=False)
        cdt = _complex_dtype(ct)
        c = re.astype(cdt) + im.astype(cdt) * cdt.type(1j)
        if length is not None and c.shape[dim] != length:
            if c.shape[dim] > length:
                cut = [slice(None)] * c.ndim
                cut[dim] = slice(0, length)
                c = c[tuple(cut)]
            else:
                pad = [(0, 0)] * c.ndim
                pad[dim] = (0, length - c.shape[dim])
                c = xp.pad(c, pad)
        return c

    def rfft(self, x, dim, n):
        y = xp.fft.rfft(x.astype(_compute(x.dtype), copy=False), n=n, axis=dim)
        return planes(y, x.dtype)

    def irfft(self, z, dim, n):
        bins = n // 2 + 1
        c = joined(z, dim, bins)
        # c2r transforms read only the real part of bin 0 and (even n) bin n / 2: zero their
        # imaginary parts so cuFFT agrees with pocketfft (its result is unspecified otherwise)
        at = [slice(None)] * c.ndim
        c = c.copy()
        for k in (0, n // 2) if n % 2 == 0 else (0,):
            at[dim] = k
            c[tuple(at)] = c[tuple(at)].real
        y = xp.fft.irfft(c, n=n, axis=dim)
        return xp.asarray(y).astype(z.dtype, copy=False)

    def cfft(self, z, dim, n, inverse):
        c = joined(z, dim)
        y = (xp.fft.ifft if inverse else xp.fft.fft)(c, n=n, axis=dim)
        return planes(y, z.dtype)

    return {"rfft": rfft, "irfft": irfft, "cfft": cfft}
