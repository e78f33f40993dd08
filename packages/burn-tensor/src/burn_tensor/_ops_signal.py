"""Signal op family: the discrete Fourier transforms along one dim (`rfft`, `irfft`, `cfft`).

Burn 0.20 has no FFT; later Burn has `burn_tensor::signal::{rfft, irfft, cfft}` with a
(real, imaginary) pair of tensors for a complex one. Here the backend ops carry a complex tensor
as one tensor of planes `[2, *shape]` (plane 0 real, plane 1 imaginary) because Autodiff tracks
one output per op; `burn_tensor.signal` splits and stacks the planes, so users see Burn's pair.

Conventions (the signal layer guarantees them):
- `dim` is a non-negative dim of the signal (of one plane for complex operands), in range;
- `n >= 1` is the transform length: the signal is truncated or zero-padded to `n` along `dim`
  (irfft: the half spectrum is truncated or zero-padded to `n // 2 + 1` bins);
- unnormalised forward transforms, inverse transforms scaled by `1 / n` (numpy's "backward");
- `irfft` ignores the imaginary part of bin 0 and, for even `n`, of bin `n / 2`, as numpy.

The defaults are dense DFTs: one matmul with a twiddle matrix (built in float64 with exact
integer angle reduction, cast to the operand's dtype), O(n^2) per line but any length and any
backend. NdArray and Cuda run numpy.fft / cupy.fft (`burn_tensor.array_api.fft_ops`), OpenCl
burn_gpu's Stockham kernels.
"""

from __future__ import annotations

import numpy as np

from ._data import TensorData


def _dtype_of(x):
    from ._dtype import DType

    return DType.from_np(x.dtype)


def _angles(rows: int, cols: int, n: int) -> np.ndarray:
    """2 pi (j k mod n) / n for j < rows, k < cols: exact reduction before the float product."""
    jk = (np.arange(rows, dtype=np.int64)[:, None] * np.arange(cols, dtype=np.int64)) % n
    return (2.0 * np.pi / n) * jk


def rfft_bin_counts(n: int, bins: int) -> np.ndarray:
    """How often each of the first `bins` bins of a length-`n` real signal's half spectrum
    counts in the full spectrum: 1 for bin 0 and (even n) bin n/2, 2 for the mirrored ones."""
    c = np.full(bins, 2.0)
    c[0] = 1.0
    if n % 2 == 0 and n // 2 < bins:
        c[n // 2] = 1.0
    return c


class SignalOps:
    """Default DFTs (dense twiddle matmuls) written with backend ops only."""

    def _sig_lines(self, x, dim):
        """x with `dim` moved last and flattened to [lines, len], plus how to undo it."""
        last = len(x.shape) - 1
        xt = self.float_swap_dims(x, dim, last) if dim != last else x
        shape = tuple(xt.shape)
        lines = int(np.prod(shape[:-1], dtype=np.int64))
        x2 = self.float_reshape(xt, (lines, shape[-1]))

        def back(y2):
            y = self.float_reshape(y2, shape[:-1] + (y2.shape[-1],))
            return self.float_swap_dims(y, dim, last) if dim != last else y

        return x2, back

    def _sig_twiddle(self, mat: np.ndarray, like):
        data = TensorData(np.ascontiguousarray(mat).astype(_dtype_of(like).np))
        return self.float_from_data(data, self.device_of(like))

    def _sig_planes(self, z):
        """The real and imaginary planes of a complex operand [2, *shape]."""
        shape = tuple(z.shape[1:])
        rest = tuple(slice(0, s, 1) for s in shape)
        re = self.float_reshape(self.float_slice(z, (slice(0, 1, 1),) + rest), shape)
        im = self.float_reshape(self.float_slice(z, (slice(1, 2, 1),) + rest), shape)
        return re, im

    def _sig_stack(self, re, im):
        shape = (1,) + tuple(re.shape)
        return self.float_cat([self.float_reshape(re, shape), self.float_reshape(im, shape)], 0)

    def _sig_fit(self, x2, length):
        """[lines, m] truncated to `length` columns (padding is implicit in the matmul)."""
        m = x2.shape[-1]
        if m <= length:
            return x2
        return self.float_slice(x2, (slice(0, x2.shape[0], 1), slice(0, length, 1)))

    def rfft(self, x, dim, n):
        """Half spectrum [2, ..., n // 2 + 1 (at dim), ...] of real `x` along `dim`."""
        x2, back = self._sig_lines(x, dim)
        x2 = self._sig_fit(x2, n)
        a = _angles(x2.shape[-1], n // 2 + 1, n)
        re = self.float_matmul(x2, self._sig_twiddle(np.cos(a), x))
        im = self.float_matmul(x2, self._sig_twiddle(-np.sin(a), x))
        return self._sig_stack(back(re), back(im))

    def irfft(self, z, dim, n):
        """Real signal of length `n` along `dim` from half spectrum planes `z` [2, ...]."""
        re, im = self._sig_planes(z)
        re2, back = self._sig_lines(re, dim)
        im2, _ = self._sig_lines(im, dim)
        bins = n // 2 + 1
        re2, im2 = self._sig_fit(re2, bins), self._sig_fit(im2, bins)
        h = re2.shape[-1]
        a = _angles(h, n, n)
        c = (rfft_bin_counts(n, h) / n)[:, None]
        out = self.float_add(
            self.float_matmul(re2, self._sig_twiddle(c * np.cos(a), re)),
            self.float_matmul(im2, self._sig_twiddle(-c * np.sin(a), re)),
        )
        return back(out)

    def cfft(self, z, dim, n, inverse):
        """Full spectrum planes [2, ..., n, ...] of complex `z` [2, ...] along `dim`;
        `inverse`: the conjugate transform scaled by 1 / n."""
        re, im = self._sig_planes(z)
        re2, back = self._sig_lines(re, dim)
        im2, _ = self._sig_lines(im, dim)
        re2, im2 = self._sig_fit(re2, n), self._sig_fit(im2, n)
        a = _angles(re2.shape[-1], n, n)
        scale = 1.0 / n if inverse else 1.0
        cos = self._sig_twiddle(scale * np.cos(a), re)
        sin = self._sig_twiddle((scale if inverse else -scale) * np.sin(a), re)
        mm = self.float_matmul
        # (a + ib)(cos + i sin'), sin' = -sin forward, +sin inverse
        yr = self.float_sub(mm(re2, cos), mm(im2, sin))
        yi = self.float_add(mm(im2, cos), mm(re2, sin))
        return self._sig_stack(back(yr), back(yi))
