"""max_pool2d without indices (`_native/maxpool.c`): against a float64 window loop on odd sizes,
strides 1-3, padding and dilation; bit for bit the values of max_pool2d_with_indices (first of
-0.0 / +0.0 ties in row-major order, the first NaN, NaN payloads kept); every thread count alike."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from burn_ndarray import NdArray, _native

LIB = _native.lib()
needs_native = pytest.mark.skipif(LIB is None, reason=f"native kernels: {_native.status()}")
RNG = np.random.default_rng(37)
BACKENDS = [NdArray(num_threads=n, parallel_min=1) for n in (1, 3)]
B64 = NdArray(float_dtype="float64", int_dtype="int64", num_threads=2, parallel_min=1)

# (shape, kernel, stride, padding, dilation)
CASES = [
    ((1, 3, 13, 11), (3, 3), (2, 2), (0, 0), (1, 1)),
    ((2, 5, 27, 27), (3, 3), (2, 2), (1, 1), (1, 1)),
    ((1, 2, 9, 17), (2, 3), (1, 1), (1, 1), (1, 1)),
    ((1, 4, 20, 23), (3, 2), (3, 2), (1, 0), (2, 1)),
    ((1, 1, 7, 600), (1, 3), (1, 1), (0, 1), (1, 1)),  # a row longer than a vector block
    # the register-fold kernels (3x3 strides 1 and 2, 2x2 stride 2): rows shorter than a vector,
    # odd remainders, a long row
    ((2, 3, 9, 9), (3, 3), (1, 1), (1, 1), (1, 1)),
    ((1, 2, 5, 71), (3, 3), (2, 2), (1, 1), (1, 1)),
    ((1, 3, 8, 37), (2, 2), (2, 2), (0, 0), (1, 1)),
    ((1, 1, 4, 301), (3, 3), (1, 1), (0, 1), (1, 1)),
    # a 1-row plane, padding 2, dilation 3: both output rows' windows are all padding rows
    ((1, 2, 1, 9), (2, 3), (1, 1), (2, 1), (3, 1)),
]


def _out(n, k, s, p, d):
    return (n + 2 * p - d * (k - 1) - 1) // s + 1


def _reference(x, k, s, p, d):
    """float64 loop: the max of each window, padding -inf, NaN if the window holds one."""
    n, c, h, w = x.shape
    xp = np.full((n, c, h + 2 * p[0], w + 2 * p[1]), -np.inf)
    xp[:, :, p[0] : p[0] + h, p[1] : p[1] + w] = x
    oh, ow = _out(h, k[0], s[0], p[0], d[0]), _out(w, k[1], s[1], p[1], d[1])
    out = np.empty((n, c, oh, ow))
    for oy in range(oh):
        for ox in range(ow):
            rows = oy * s[0] + d[0] * np.arange(k[0])
            cols = ox * s[1] + d[1] * np.arange(k[1])
            win = xp[:, :, rows[:, None], cols[None, :]].reshape(n, c, -1)
            out[:, :, oy, ox] = np.where(np.isnan(win).any(-1), np.nan, win.max(-1))
    return out


@needs_native
@pytest.mark.parametrize("case", range(len(CASES)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_against_float64_loop_and_the_indexed_values(case, dtype):
    shape, k, s, p, d = CASES[case]
    x = RNG.standard_normal(shape).astype(dtype)
    flat = x.reshape(-1)
    flat[RNG.choice(flat.size, flat.size // 50, replace=False)] = np.nan
    flat[RNG.choice(flat.size, flat.size // 50, replace=False)] = -np.inf
    backends = BACKENDS if dtype == np.float32 else [B64]
    want = _reference(x.astype(np.float64), k, s, p, d)
    indexed = backends[0].max_pool2d_with_indices(x, k, s, p, d)[0]
    for b in backends:
        got = b.max_pool2d(x, k, s, p, d)
        assert got.dtype == dtype and got.shape == want.shape
        np.testing.assert_array_equal(got, want.astype(dtype))
        np.testing.assert_array_equal(got.view(np.uint8), indexed.view(np.uint8))


@needs_native
@pytest.mark.parametrize("case", range(len(CASES)))
def test_without_nan_the_max_only_kernels_give_the_same(case):
    """A task whose input rows hold no NaN folds with a plain max: the float64 loop's values
    and the indexed kernel's bits, on inputs without NaN and on ones where only the last plane
    holds one (its task alone takes the NaN-aware fold)."""
    shape, k, s, p, d = CASES[case]
    x = RNG.standard_normal(shape).astype(np.float32)
    x.reshape(-1)[RNG.choice(x.size, x.size // 20, replace=False)] = -np.inf
    one = x.copy()
    one[-1, -1].reshape(-1)[RNG.integers(one[-1, -1].size)] = np.nan
    for arr in (x, one):
        want = _reference(arr.astype(np.float64), k, s, p, d).astype(np.float32)
        indexed = BACKENDS[0].max_pool2d_with_indices(arr, k, s, p, d)[0]
        for b in BACKENDS:
            got = b.max_pool2d(arr, k, s, p, d)
            np.testing.assert_array_equal(got, want)
            np.testing.assert_array_equal(got.view(np.uint32), indexed.view(np.uint32))


@needs_native
def test_ties_of_signed_zeros_and_nan_payloads_follow_row_major_order():
    """Windows full of -0.0 / +0.0 and of NaNs with distinct payloads: the first in row-major
    order wins, as in max_pool2d_with_indices (a column-first reduction would pick others)."""
    x = RNG.choice(np.array([0.0, -0.0], np.float32), (2, 3, 31, 29))
    nans = np.array([0x7FC00001, 0x7FC00002, 0xFFC00003, 0x7FC00004], np.uint32).view(np.float32)
    y = x.copy().reshape(-1)
    where = RNG.choice(y.size, y.size // 3, replace=False)
    y[where] = RNG.choice(nans, where.size)
    for arr in (x, y.reshape(x.shape)):
        for k, s, p in (((3, 3), (2, 2), (1, 1)), ((2, 2), (1, 1), (0, 0))):
            want = BACKENDS[0].max_pool2d_with_indices(arr, k, s, p, (1, 1))[0]
            for b in BACKENDS:
                got = b.max_pool2d(arr, k, s, p, (1, 1))
                np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@needs_native
def test_max_pool2d_runs_native_from_native_min():
    """Before maxpool.c, max_pool2d was the default: the indexed kernel, indices dropped."""
    b = NdArray(num_threads=1)
    big = np.zeros((1, 16, 64, 64), np.float32)
    text = str(b.explain("max_pool2d", big, (3, 3), (2, 2), (1, 1), (1, 1)))
    assert "native tier runs" in text, text
    small = np.zeros((1, 1, 4, 4), np.float32)
    text = str(b.explain("max_pool2d", small, (3, 3), (2, 2), (1, 1), (1, 1)))
    assert "falls back" in text, text


@needs_native
def test_windows_of_millions_of_rows_or_columns_run():
    """Nothing in the kernel is sized by the window (it kept a per-column table of the kernel's
    width on the stack: a [1, 1, 1, 1.5M] input pooled whole crashed the process, and a table
    of row pointers would crash on a tall one). In a child process, so a crash is a failure."""
    code = textwrap.dedent(
        """
        import numpy as np
        from burn_ndarray import NdArray
        b = NdArray(num_threads=1)
        n = 1_500_000
        x = np.random.default_rng(0).standard_normal(n).astype(np.float32)
        for shape, k in (((1, 1, n, 1), (n, 1)), ((1, 1, 1, n), (1, n))):
            y = b.max_pool2d(x.reshape(shape), k, (1, 1), (0, 0), (1, 1))
            assert y.shape == (1, 1, 1, 1) and y.item() == x.max(), (shape, y)
        print("ok")
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout.strip() == "ok", (r.returncode, r.stderr[-2000:])
