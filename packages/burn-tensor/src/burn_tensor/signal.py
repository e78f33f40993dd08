"""Discrete Fourier transforms along one dim: later Burn's `burn::tensor::signal`
(`burn.tensor.signal` in the facade).

There is no complex dtype: a complex tensor is a (real, imaginary) pair of Float tensors of one
shape, as Burn's `signal::rfft` returns. Unlike Burn (powers of two only), every length works.

- `rfft(signal, dim, n=None) -> (re, im)`: the `n // 2 + 1` non-redundant bins of a real signal;
- `irfft(re, im, dim, n=None) -> signal`: the real signal of length `n` (default
  `2 * (bins - 1)`) from a half spectrum (the imaginary parts of bin 0 and, for even `n`, of
  bin `n / 2` are ignored, as numpy);
- `cfft(re, im, dim, n=None) -> (re, im)` (alias `fft`): the full spectrum of a complex signal;
- `icfft(re, im, dim, n=None) -> (re, im)` (alias `ifft`): its inverse.

`n` truncates or zero-pads the input along `dim` (numpy's and torch's `n`). Forward transforms
are unnormalised, inverse ones scaled by `1 / n` (numpy's default "backward" norm). Every one is
differentiable (Autodiff: linear rules, `burn_autodiff/_rules_signal.py`). Results keep the
input's dtype (float32 in, float32 out).

Example:
    >>> from burn_ndarray import NdArray
    >>> from burn_tensor import Tensor, signal
    >>> x = Tensor.from_data([1.0, 2.0, 3.0, 4.0], NdArray().device())
    >>> re, im = signal.rfft(x, 0)
    >>> re.tolist(), im.tolist()
    ([10.0, -2.0, -2.0], [0.0, 2.0, 0.0])
    >>> signal.irfft(re, im, 0).tolist()
    [1.0, 2.0, 3.0, 4.0]
"""

from __future__ import annotations

import operator

from . import _check as check
from ._errors import TensorCheckError

__all__ = ["cfft", "fft", "icfft", "ifft", "irfft", "rfft"]


def _float(op: str, t, name: str) -> None:
    from ._tensor import Tensor

    if not isinstance(t, Tensor):
        raise TensorCheckError(op, f"{name} must be a Tensor, got {type(t).__name__}")
    check.float_(op, t)


def _length(op: str, n, default: int, what: str) -> int:
    """`n` checked (an int >= 1), or `default` when None (which must be >= 1 too)."""
    if n is None:
        if default < 1:
            raise TensorCheckError(op, f"{what} gives a transform length of {default}; pass n >= 1")
        return default
    if isinstance(n, bool):
        raise TensorCheckError(op, f"n must be an int >= 1, got {n!r}")
    try:
        n = operator.index(n)
    except TypeError:
        raise TensorCheckError(op, f"n must be an int >= 1, got {n!r}") from None
    if n < 1:
        raise TensorCheckError(op, f"n must be >= 1, got {n}")
    return n


def _pair(op: str, re, im):
    """Both parts checked: Float, one device, one dtype, one shape."""
    _float(op, re, "re")
    _float(op, im, "im")
    problems = []
    if re._d is not im._d:
        problems.append(check.device_mismatch(re, im, ("re", "im")))
    elif re.dtype != im.dtype:
        problems.append(f"dtypes differ: re is {re.dtype.value}, im is {im.dtype.value}")
    if tuple(re._p.shape) != tuple(im._p.shape):
        problems.append(f"shapes differ: re {list(re._p.shape)}, im {list(im._p.shape)}")
    if problems:
        raise TensorCheckError(op, problems)


def _planes(re, im):
    """The pair as one tensor of planes [2, *shape] (what the backend ops take)."""
    from ._tensor import Tensor

    return Tensor.stack([re, im], 0)


def _split(like, p):
    """Backend planes [2, *shape] -> (re, im), each [*shape] (differentiable slices)."""
    # backend ops on the primitive (recorded by Autodiff like the Tensor methods), because
    # Tensor.reshape / squeeze read a 0 in a shape as "keep this dim"
    b, shape = like._d.backend, tuple(p.shape[1:])
    rest = tuple(slice(0, s, 1) for s in shape)
    return tuple(
        like._like(b.float_reshape(b.float_slice(p, (slice(i, i + 1, 1),) + rest), shape))
        for i in (0, 1)
    )


def rfft(signal, dim: int, n: int | None = None):
    """The half spectrum of a real signal along `dim` (Burn's `signal::rfft`).

    Args:
        signal: a Float tensor.
        dim: the transformed dim (negative counts from the end).
        n: the transform length (default: the signal's size along `dim`); the signal is
            truncated or zero-padded to it.

    Shapes: [.., m, ..] -> two tensors [.., n // 2 + 1, ..] (real, imaginary).

    Example:
        >>> from burn_tensor import Tensor
        >>> re, im = rfft(Tensor.from_data([[1.0, 0.0, 0.0]]), 1, n=4)
        >>> re.tolist(), im.tolist()
        ([[1.0, 1.0, 1.0]], [[0.0, 0.0, 0.0]])
    """
    op = "rfft"
    _float(op, signal, "signal")
    d = check.dim(op, dim, len(signal._p.shape))
    size = signal._p.shape[d]
    n = _length(op, n, size, f"a signal of size {size} along dim {d}")
    return _split(signal, signal._d.backend.rfft(signal._p, d, n))


def irfft(spectrum_re, spectrum_im, dim: int, n: int | None = None):
    """The real signal of a half spectrum along `dim` (Burn's `signal::irfft`).

    Args:
        spectrum_re, spectrum_im: the half spectrum's parts (Float, one shape).
        dim: the transformed dim.
        n: the output length (default `2 * (bins - 1)`); the spectrum is truncated or
            zero-padded to `n // 2 + 1` bins.

    Shapes: two [.., bins, ..] -> [.., n, ..].

    Example:
        >>> from burn_tensor import Tensor
        >>> re = Tensor.from_data([3.0, 0.0])
        >>> irfft(re, re.zeros_like(), 0, n=3).tolist()
        [1.0, 1.0, 1.0]
    """
    op = "irfft"
    _pair(op, spectrum_re, spectrum_im)
    d = check.dim(op, dim, len(spectrum_re._p.shape))
    bins = spectrum_re._p.shape[d]
    n = _length(op, n, 2 * (bins - 1), f"a half spectrum of {bins} bins along dim {d}")
    z = _planes(spectrum_re, spectrum_im)
    return spectrum_re._like(spectrum_re._d.backend.irfft(z._p, d, n))


def _complex(op: str, re, im, dim, n, inverse: bool):
    _pair(op, re, im)
    d = check.dim(op, dim, len(re._p.shape))
    size = re._p.shape[d]
    n = _length(op, n, size, f"a signal of size {size} along dim {d}")
    z = _planes(re, im)
    return _split(re, re._d.backend.cfft(z._p, d, n, inverse))


def cfft(signal_re, signal_im, dim: int, n: int | None = None):
    """The full spectrum of a complex signal along `dim` (Burn's `signal::cfft`; alias `fft`).

    Shapes: two [.., m, ..] -> two [.., n, ..] (n defaults to m).

    Example:
        >>> from burn_tensor import Tensor
        >>> re, im = cfft(Tensor.from_data([0.0, 1.0]), Tensor.from_data([1.0, 0.0]), 0)
        >>> re.tolist(), im.tolist()
        ([1.0, -1.0], [1.0, 1.0])
    """
    return _complex("cfft", signal_re, signal_im, dim, n, False)


def icfft(spectrum_re, spectrum_im, dim: int, n: int | None = None):
    """The inverse of `cfft`, scaled by `1 / n` (alias `ifft`; numpy's `ifft`).

    Example:
        >>> from burn_tensor import Tensor
        >>> re, im = icfft(Tensor.from_data([1.0, -1.0]), Tensor.from_data([1.0, 1.0]), 0)
        >>> re.tolist(), im.tolist()
        ([0.0, 1.0], [1.0, 0.0])
    """
    return _complex("icfft", spectrum_re, spectrum_im, dim, n, True)


#: numpy's and torch's names
fft = cfft
ifft = icfft
