"""Gradient rules of the FFT ops (`rfft`, `irfft`, `cfft`): each op is a real-linear map, so its
gradient is its transpose, which is again an FFT (run on the inner backend, fast where the
forward is). Complex values are planes [2, *shape]; a plane dim is `dim + 1`.

Derivations (theta = 2 pi j k / n; h = n // 2 + 1 bins; c_k = 1 for bin 0 and, for even n,
bin n / 2, else 2, the number of times a bin counts in the full spectrum):
- `rfft`: Re Y_k = sum_j x_j cos theta, Im Y_k = -sum_j x_j sin theta, so
  dL/dx_j = sum_k (Gr_k cos theta - Gi_k sin theta) = n * irfft(G_k / c_k, n)_j, because
  irfft(H, n)_j = (1/n) sum_k c_k (Re H_k cos theta - Im H_k sin theta) (its dropped imaginary
  parts of bins 0 and n / 2 multiply sin theta = 0 here anyway);
- `irfft`: by the same formula dL/dRe H_k = (c_k / n) Re rfft(g)_k and
  dL/dIm H_k = (c_k / n) Im rfft(g)_k, except 0 for the imaginary parts irfft ignores;
- `cfft`: the transpose of a complex-linear map A (as a real map on (re, im)) is A^H; the DFT
  matrix W is symmetric, so the forward's gradient is conj(W) g = n * ifft(g) and the
  inverse's (W / n) g = fft(g) / n.
Then the gradient is fitted back to the input's length along `dim`: where the forward zero-padded
the input the padding's gradient is dropped, where it truncated the cut entries get zeros.
"""

from __future__ import annotations

from burn_tensor import TensorData
from burn_tensor.ops import rfft_bin_counts

from ._graph import device_of
from ._rule import RULES, dtype_of, rule


def _weights(b, like, re: list, im: list, dim: int):
    """Per-bin factors of the two planes as a tensor broadcasting over `like`
    [2, ..., bins at dim + 1, ...]."""
    shape = [1] * len(like.shape)
    shape[0], shape[dim + 1] = 2, len(re)
    data = TensorData(list(re) + list(im), shape, dtype_of(like))
    return b.float_from_data(data, device_of(b, like))


def _fit(b, g, axis: int, size: int):
    """`g` truncated or zero-padded to `size` along `axis`."""
    have = g.shape[axis]
    if have == size:
        return g
    if have > size:
        cut = tuple(slice(0, size if i == axis else s, 1) for i, s in enumerate(g.shape))
        return b.float_slice(g, cut)
    pad = list(g.shape)
    pad[axis] = size - have
    zeros = b.float_zeros(tuple(pad), device_of(b, g), dtype_of(g))
    return b.float_cat([g, zeros], axis)


def _rfft(c, g):
    b, dim, n = c.b, c.arg(1), c.arg(2)
    inv = [n / k for k in rfft_bin_counts(n, n // 2 + 1).tolist()]
    gx = b.irfft(b.float_mul(g, _weights(b, g, inv, inv, dim)), dim, n)
    return _fit(b, gx, dim, c.shape(0)[dim]), None, None


def _irfft(c, g):
    b, dim, n = c.b, c.arg(1), c.arg(2)
    w = [k / n for k in rfft_bin_counts(n, n // 2 + 1).tolist()]
    wi = list(w)
    wi[0] = 0.0  # imaginary parts irfft never reads
    if n % 2 == 0:
        wi[n // 2] = 0.0
    spec = b.rfft(g, dim, n)
    gz = b.float_mul(spec, _weights(b, spec, w, wi, dim))
    return _fit(b, gz, dim + 1, c.shape(0)[dim + 1]), None, None


def _cfft(c, g):
    b, dim, n, inverse = c.b, c.arg(1), c.arg(2), c.arg(3)
    gz = b.float_mul_scalar(b.cfft(g, dim, n, not inverse), (1.0 / n) if inverse else float(n))
    return _fit(b, gz, dim + 1, c.shape(0)[dim + 1]), None, None, None


RULES["rfft"] = rule(_rfft)
RULES["irfft"] = rule(_irfft)
RULES["cfft"] = rule(_cfft)
