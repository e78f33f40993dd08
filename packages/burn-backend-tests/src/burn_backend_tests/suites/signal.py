"""Conformance: the FFT family (`burn_tensor.signal`: `rfft`, `irfft`, `cfft`, `icfft`; the
contract's `rfft`, `irfft`, `cfft`).

References are numpy float64 `np.fft` on the rounded inputs. Lengths cover powers of two (GPU
backends' radix-2 path), other lengths (their DFT fallback), 1, zero-padding and truncation
through `n`, every input layout and non-last dims. The tolerance is relative to the largest
magnitude of the reference (an FFT spreads each input's rounding over every bin): a multiple of
the dtype's epsilon times log2(n) (at most 10%: bfloat16).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from burn_tensor import DType, Int, TensorCheckError, Tolerance, signal

from .._ctx import sample

_EPS = {DType.F64: 2.3e-16, DType.F32: 1.2e-7, DType.F16: 9.8e-4, DType.BF16: 7.9e-3}


def _close(burn, got, want, n: int) -> None:
    want = np.asarray(want, dtype=np.float64)
    scale = max(1.0, float(np.max(np.abs(want)))) if want.size else 1.0
    r = min(0.1, 16 * _EPS.get(burn.fdt, 1e-3) * (math.log2(max(n, 2)) + 1))
    burn.assert_close(got, want, Tolerance.rel_abs(r, r * scale))


def _pair(burn, c, layout="contiguous"):
    re, rr = burn.view_input(c.real, layout=layout)
    im, ri = burn.view_input(c.imag, layout=layout)
    return re, im, rr + 1j * ri


@pytest.mark.parametrize(
    "length,layout", [(8, "contiguous"), (12, "permuted"), (1, "flipped"), (7, "strided")]
)
def test_rfft(burn, length, layout):
    t, x = burn.view_input(sample((3, length, 2), "any", length), layout=layout)
    for dim in (1, -2):
        re, im = signal.rfft(t, dim)
        want = np.fft.rfft(x, axis=1)
        _close(burn, re, want.real, length)
        _close(burn, im, want.imag, length)


def test_rfft_pads_and_truncates(burn):
    t, x = burn.view_input(sample((2, 6), "any", 9))
    for n in (16, 5, 2, 9):
        re, im = signal.rfft(t, 1, n=n)
        want = np.fft.rfft(x, n=n, axis=1)
        _close(burn, re, want.real, n)
        _close(burn, im, want.imag, n)


def test_rfft_dim0_and_literals(burn):
    # later Burn's doc example: rfft([1, 2, 3, 4]) = ([10, -2, -2], [0, 2, 0])
    re, im = signal.rfft(burn.float(np.array([1.0, 2.0, 3.0, 4.0])), 0)
    _close(burn, re, [10.0, -2.0, -2.0], 4)
    _close(burn, im, [0.0, 2.0, 0.0], 4)
    t, x = burn.view_input(sample((6, 3), "any", 1), layout="permuted")
    re, im = signal.rfft(t, 0)
    _close(burn, re, np.fft.rfft(x, axis=0).real, 6)
    _close(burn, im, np.fft.rfft(x, axis=0).imag, 6)


def test_irfft(burn):
    # 4 bins: n = 6 reads them all, 7, 8 and 12 pad, 3 and 1 truncate; bin 0's (and, for even
    # n, bin n / 2's) imaginary part is ignored, as numpy
    g = np.random.default_rng(4)
    c = g.normal(0, 2, (2, 4, 3)) + 1j * g.normal(0, 2, (2, 4, 3))
    re, im, cr = _pair(burn, c, "permuted")
    for n in (8, 7, 6, 3, 12, 1):
        _close(burn, signal.irfft(re, im, 1, n=n), np.fft.irfft(cr, n=n, axis=1), n)


def test_irfft_default_length_and_round_trip(burn):
    t, x = burn.view_input(sample((3, 10), "any", 2))
    re, im = signal.rfft(t, 1)
    _close(burn, signal.irfft(re, im, 1), x, 10)  # 6 bins -> 10 samples
    t, x = burn.view_input(sample((2, 9), "any", 3))
    re, im = signal.rfft(t, -1)
    _close(burn, signal.irfft(re, im, -1, n=9), x, 9)


@pytest.mark.parametrize("length", [16, 10, 1, 3])
def test_cfft(burn, length):
    g = np.random.default_rng(length)
    c = g.normal(0, 2, (2, length)) + 1j * g.normal(0, 2, (2, length))
    re, im, cr = _pair(burn, c, "flipped")
    for fn, ref in ((signal.cfft, np.fft.fft), (signal.icfft, np.fft.ifft)):
        yr, yi = fn(re, im, 1)
        want = ref(cr, axis=1)
        _close(burn, yr, want.real, length)
        _close(burn, yi, want.imag, length)


def test_cfft_n_dim_and_aliases(burn):
    g = np.random.default_rng(5)
    c = g.normal(0, 1, (5, 2, 3)) + 1j * g.normal(0, 1, (5, 2, 3))
    re, im, cr = _pair(burn, c, "strided")
    for n in (8, 3, 6):
        yr, yi = signal.fft(re, im, 0, n=n)
        _close(burn, yr, np.fft.fft(cr, n=n, axis=0).real, n)
        _close(burn, yi, np.fft.fft(cr, n=n, axis=0).imag, n)
        yr, yi = signal.ifft(re, im, 0, n=n)
        _close(burn, yr, np.fft.ifft(cr, n=n, axis=0).real, n)
        _close(burn, yi, np.fft.ifft(cr, n=n, axis=0).imag, n)
    zr, zi = signal.icfft(*signal.cfft(re, im, 2), 2)  # round trip along the last dim
    _close(burn, zr, cr.real, 3)
    _close(burn, zi, cr.imag, 3)


@pytest.mark.parametrize("length", [256, 100])
def test_fft_longer_signals(burn, length):
    # a multi-pass radix-2 transform and a longer DFT fallback on a middle dim
    t, x = burn.view_input(sample((2, length, 3), "any", length))
    re, im = signal.rfft(t, 1)
    want = np.fft.rfft(x, axis=1)
    _close(burn, re, want.real, length)
    _close(burn, im, want.imag, length)
    _close(burn, signal.irfft(re, im, 1, n=length), x, length)


def test_fft_empty_batches(burn):
    re, im = signal.rfft(burn.float(np.zeros((0, 8))), 1)
    assert re.dims() == [0, 5] and im.dims() == [0, 5]
    z = burn.float(np.zeros((3, 0)))
    yr, yi = signal.cfft(z, z, 0)
    assert yr.dims() == [3, 0] and yi.dims() == [3, 0]
    # a size-0 signal with an explicit n is all zeros (zero-padded)
    re, im = signal.rfft(burn.float(np.zeros((2, 0))), 1, n=4)
    _close(burn, re, np.zeros((2, 3)), 4)


def test_fft_refusals(burn):
    x = burn.float(np.ones((2, 4)))
    with pytest.raises(TensorCheckError, match="only defined for Float"):
        signal.rfft(burn.int(np.ones((2, 4))), 1)
    with pytest.raises(TensorCheckError, match="out of range"):
        signal.rfft(x, 2)
    for bad in (0, -3):
        with pytest.raises(TensorCheckError, match="n must be >= 1"):
            signal.rfft(x, 1, n=bad)
    for bad in (2.5, True, "4"):
        with pytest.raises(TensorCheckError, match="n must be an int"):
            signal.cfft(x, x, 1, n=bad)
    with pytest.raises(TensorCheckError, match="shapes differ"):
        signal.irfft(x, burn.float(np.ones((2, 3))), 1)
    with pytest.raises(TensorCheckError, match="1 bins .* pass n"):
        signal.irfft(burn.float(np.ones((2, 1))), burn.float(np.ones((2, 1))), 1)
    with pytest.raises(TensorCheckError, match="size 0 .* pass n"):
        signal.rfft(burn.float(np.ones((2, 0))), 1)
    with pytest.raises(TensorCheckError, match="must be a Tensor"):
        signal.rfft(np.ones(4), 0)
    with pytest.raises(TensorCheckError, match="Float"):
        signal.icfft(x, burn.tensor(np.ones((2, 4)), Int), 0)
