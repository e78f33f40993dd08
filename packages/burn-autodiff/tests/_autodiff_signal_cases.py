"""Gradcheck rows of the FFT ops (`rfft`, `irfft`, `cfft`; complex operands are planes
[2, *shape]): odd and even lengths, zero-padding (n above the input's length) and truncation
(below), a non-last dim, and irfft's ignored imaginary parts of bins 0 and n / 2."""

from __future__ import annotations

from _autodiff_testlib import u


def _rfft(dim, n):
    return lambda B, x: B.rfft(x, dim, n)


def _irfft(dim, n):
    return lambda B, z: B.irfft(z, dim, n)


def _cfft(dim, n, inverse):
    return lambda B, z: B.cfft(z, dim, n, inverse)


SIGNAL_CASES = [
    ("rfft", _rfft(1, 5), [u(3, 5)]),  # odd length
    ("rfft", _rfft(1, 8), [u(3, 5)]),  # zero-padded to an even power of two
    ("rfft", _rfft(1, 3), [u(3, 5)]),  # truncated
    ("rfft", _rfft(0, 6), [u(6, 2)]),  # a non-last dim
    ("irfft", _irfft(1, 6), [u(2, 3, 4)]),  # even n: bins 0 and 3 drop their imaginary parts
    ("irfft", _irfft(1, 7), [u(2, 3, 4)]),  # odd n
    ("irfft", _irfft(1, 4), [u(2, 3, 4)]),  # fewer bins read than given (truncated)
    ("irfft", _irfft(0, 9), [u(2, 3, 2)]),  # more bins than given (zero-padded), dim 0
    ("cfft", _cfft(1, 4, False), [u(2, 3, 4)]),
    ("cfft", _cfft(1, 6, False), [u(2, 3, 4)]),  # padded
    ("cfft", _cfft(0, 2, False), [u(2, 3, 4)]),  # truncated, dim 0
    ("cfft", _cfft(1, 5, True), [u(2, 3, 5)]),  # inverse, odd
    ("cfft", _cfft(1, 3, True), [u(2, 2, 5)]),  # inverse, truncated
]
