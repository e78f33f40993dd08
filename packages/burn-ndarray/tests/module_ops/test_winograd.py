"""Winograd F(2x2, 3x3) conv against float64 references, and conv2d's dispatch onto it."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import _conv, _winograd
from burn_tensor import module
from burn_tensor.ops import ConvOptions


def ref_loops(x, w, b, pad):
    """Stride-1 3x3 cross-correlation as nested loops over kernel offsets, in float64."""
    x, w = np.asarray(x, np.float64), np.asarray(w, np.float64)
    n, _, h, wd = x.shape
    co = w.shape[0]
    oh, ow = h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2
    xp = np.zeros((n, x.shape[1], h + 2 * pad[0], wd + 2 * pad[1]))
    xp[:, :, pad[0] : pad[0] + h, pad[1] : pad[1] + wd] = x
    out = np.zeros((n, co, oh, ow))
    for i in range(3):
        for j in range(3):
            out += np.einsum("nchw,oc->nohw", xp[:, :, i : i + oh, j : j + ow], w[:, :, i, j])
    if b is not None:
        out += np.asarray(b, np.float64).reshape(1, co, 1, 1)
    return out


def ref_scalar(x, w, b, pad):
    """The same by definition, one output element at a time (small shapes only)."""
    n, ci, h, wd = x.shape
    co = w.shape[0]
    out = np.zeros((n, co, h + 2 * pad[0] - 2, wd + 2 * pad[1] - 2))
    for ni, o, y, q in np.ndindex(*out.shape):
        acc = 0.0 if b is None else float(b[o])
        for c, i, j in np.ndindex(ci, 3, 3):
            r, s = y + i - pad[0], q + j - pad[1]
            if 0 <= r < h and 0 <= s < wd:
                acc += float(x[ni, c, r, s]) * float(w[o, c, i, j])
        out[ni, o, y, q] = acc
    return out


def _check(got, expected, dtype):
    assert got.dtype == dtype and got.shape == expected.shape
    assert got.flags.c_contiguous
    scale = max(1.0, float(np.abs(expected).max()))
    # float32: a few ulps of the largest output; float64 stays near the direct sum's rounding.
    tol = 2e-6 if dtype == np.float32 else 1e-13
    err = float(np.abs(got - expected).max()) / scale
    assert err <= tol, err


# (n, c_in, c_out, h, w, padding, bias)
CASES = [
    (2, 3, 4, 7, 5, (0, 0), True),  # odd outputs 5x3
    (1, 5, 3, 8, 8, (1, 1), False),  # batch 1, even outputs
    (2, 2, 3, 9, 6, (2, 2), True),  # padding 2
    (1, 1, 4, 6, 7, (1, 2), True),  # c_in = 1, unequal padding
    (3, 4, 1, 3, 3, (0, 0), False),  # a single output pixel, c_out = 1
    (1, 2, 2, 1, 2, (1, 1), True),  # input smaller than the kernel, padded
    (2, 6, 5, 4, 11, (0, 1), True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("case", CASES)
def test_matches_float64_references(rng, dtype, case):
    n, ci, co, h, w, pad, with_bias = case
    x = rng.standard_normal((n, ci, h, w))
    wt = rng.standard_normal((co, ci, 3, 3))
    b = rng.standard_normal(co) if with_bias else None
    expected = ref_loops(x, wt, b, pad)
    np.testing.assert_allclose(expected, ref_scalar(x, wt, b, pad), rtol=1e-12, atol=1e-12)
    got = _winograd.conv2d_3x3(
        x.astype(dtype), wt.astype(dtype), None if b is None else b.astype(dtype), pad
    )
    _check(got, expected, dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_many_channels_and_large_values(rng, dtype):
    # Benchmark-like magnitudes (inputs in [0, 1e3), weights in +-0.1) and 64 channels: the
    # error relative to the largest output must stay at float rounding level.
    x = rng.random((2, 64, 12, 13)) * 1e3
    wt = rng.uniform(-0.1, 0.1, (32, 64, 3, 3))
    b = rng.standard_normal(32) * 1e3
    got = _winograd.conv2d_3x3(x.astype(dtype), wt.astype(dtype), b.astype(dtype), (1, 1))
    _check(got, ref_loops(x, wt, b, (1, 1)), dtype)


def test_batch_chunks_with_reused_buffers(rng, monkeypatch):
    """Chunks of 2 images over a batch of 5: buffers are refilled and the last chunk is short."""
    x = rng.standard_normal((5, 3, 6, 7))
    wt = rng.standard_normal((4, 3, 3, 3))
    b = rng.standard_normal(4)
    per_image = 16 * (3 + 4) * 3 * 4 * 8
    monkeypatch.setattr(_winograd, "CHUNK_BYTES", 2 * per_image)
    _check(_winograd.conv2d_3x3(x, wt, b, (1, 0)), ref_loops(x, wt, b, (1, 0)), np.float64)


def test_does_not_write_inputs(rng):
    x = rng.standard_normal((2, 3, 5, 5)).astype(np.float32)
    w = rng.standard_normal((2, 3, 3, 3)).astype(np.float32)
    b = rng.standard_normal(2).astype(np.float32)
    copies = x.copy(), w.copy(), b.copy()
    _winograd.conv2d_3x3(x, w, b, (1, 1))
    assert all(np.array_equal(a, c) for a, c in zip((x, w, b), copies))


def test_non_contiguous_input(rng):
    x = rng.standard_normal((3, 4, 9, 8)).transpose(0, 1, 3, 2)[::2]
    wt = rng.standard_normal((3, 4, 3, 3))
    _check(_winograd.conv2d_3x3(x, wt, None, (1, 1)), ref_loops(x, wt, None, (1, 1)), np.float64)


@pytest.mark.parametrize(
    ("stride", "dilation", "groups", "kernel", "expected"),
    [
        ((1, 1), (1, 1), 1, (3, 3), True),
        ((2, 1), (1, 1), 1, (3, 3), False),
        ((1, 1), (1, 2), 1, (3, 3), False),
        ((1, 1), (1, 1), 2, (3, 3), False),
        ((1, 1), (1, 1), 1, (3, 2), False),
    ],
)
def test_dispatch_only_for_stride1_3x3(stride, dilation, groups, kernel, expected):
    c = max(_winograd.MIN_C_IN, _winograd.MIN_C_OUT)
    w_shape = (c, c // groups, *kernel)
    x_shape = (1, c, 32, 32)
    assert _winograd.suits(x_shape, w_shape, stride, (1, 1), dilation, groups, (32, 32)) is expected
    # Too few channels or a cropped output (transposed-conv gradient) stay on im2col.
    ok = (1, 1), (1, 1), (1, 1), 1
    assert not _winograd.suits((1, 3, 32, 32), (c, 3, 3, 3), *ok, (32, 32))
    assert not _winograd.suits((1, c, 32, 32), (c, c, 3, 3), *ok, (31, 32))
    # Small images stay on im2col too.
    assert not _winograd.suits((1, c, 4, 4), (c, c, 3, 3), *ok, (4, 4))


def _spy(monkeypatch, native=False):
    """Shapes of the inputs that reached the numpy Winograd (and, with `native`, the native
    one, `_native_winograd`, which the native conv takes for large enough inputs)."""
    calls = []
    real = _winograd.conv2d_3x3

    def spy(*args):
        calls.append(args[0].shape)
        return real(*args)

    monkeypatch.setattr(_winograd, "conv2d_3x3", spy)
    if native:
        from burn_ndarray import _native_winograd

        real_native = _native_winograd.forward

        def native_spy(lib, threads, x, *args):
            calls.append(x.shape)
            return real_native(lib, threads, x, *args)

        monkeypatch.setattr(_native_winograd, "forward", native_spy)
    return calls


def test_conv2d_dispatches_to_winograd(env, rng, monkeypatch):
    calls = _spy(monkeypatch)
    c = _winograd.MIN_C_IN
    co = _winograd.MIN_C_OUT + 1
    s = _winograd.MIN_OUT_SIZE
    x = rng.standard_normal((2, c, s + 1, s))
    wt = rng.standard_normal((co, c, 3, 3)) * 0.2
    b = rng.standard_normal(co)
    out = module.conv2d(env.t(x), env.t(wt), env.t(b), padding=[1, 1])
    assert calls == [(2, c, s + 1, s)]
    env.close(out, ref_loops(x, wt, b, (1, 1)))
    # Same numbers as the im2col path.
    monkeypatch.setattr(_winograd, "suits", lambda *a: False)
    im2col = _conv.conv2d(env.p(x), env.p(wt), env.p(b), (1, 1), (1, 1), (1, 1), 1)
    env.close(out, im2col.astype(np.float64))


def test_conv2d_x_backward_through_winograd(env, rng, monkeypatch):
    """The stride-1 input gradient is a forward conv with the flipped kernel: it reaches
    Winograd too and must stay the adjoint of the forward conv."""
    c = max(_winograd.MIN_C_IN, _winograd.MIN_C_OUT)
    s = _winograd.MIN_OUT_SIZE
    opts = ConvOptions((1, 1), (1, 1), (1, 1), 1)
    x = rng.standard_normal((2, c, s, s + 1))
    wt = rng.standard_normal((c, c, 3, 3)) * 0.2
    gy = rng.standard_normal((2, c, s, s + 1))
    calls = _spy(monkeypatch)
    dx = env.backend.conv2d_x_backward(env.p(x), env.p(wt), env.p(gy), opts)
    assert calls, "conv2d_x_backward did not use Winograd"
    # dx = full correlation of gy with the flipped, in/out-swapped kernel.
    flipped = wt.transpose(1, 0, 2, 3)[:, :, ::-1, ::-1]
    env.close(dx, ref_loops(gy, flipped, None, (1, 1)))
    y = ref_loops(x, wt, None, (1, 1))
    lhs = float(np.sum(y * gy))
    assert float(np.sum(x * np.asarray(dx, np.float64))) == pytest.approx(lhs, rel=env.tol * 10)


def test_conformance_cases_reach_winograd(env, monkeypatch):
    """The conformance suite's Winograd cases must keep reaching Winograd, with several batch
    chunks of two sizes, odd outputs, and the conv and conv-transpose input gradients: if the
    dispatch thresholds change, update the cases in burn_backend_tests.suites.module_conv."""
    from burn_backend_tests.suites.module_conv import CONV2D, CONV_T2D

    calls = _spy(monkeypatch, native=True)
    sizes = set()
    real_buffers = _winograd._Buffers

    def buffers(m, *args):
        sizes.add(m)
        return real_buffers(m, *args)

    monkeypatch.setattr(_winograd, "_Buffers", buffers)
    B = env.backend
    # distinct filters: a conv whose filters are all equal computes one (`_filter_classes`)
    rng = np.random.default_rng(0)
    filters = lambda shape: env.p(rng.standard_normal(shape))  # noqa: E731
    c = CONV2D["winograd_odd_chunks"]
    x_shape, w_shape = c.shapes
    x, w = env.p(np.zeros(x_shape)), filters(w_shape)
    y = B.conv2d(x, w, None, c.options)
    assert calls == [x_shape] and y.shape[2] % 2 == 1
    # batch chunks are the numpy Winograd's (the native one splits tiles per image instead)
    assert len(sizes) in (0, 2), f"one batch chunk size only: {sizes}"
    B.conv2d_x_backward(x, w, y, c.options)
    assert len(calls) == 2, "conv2d_x_backward of winograd_odd_chunks did not use Winograd"
    for name in ("winograd_even_nobias", "winograd_empty_batch"):
        x_shape, w_shape = CONV2D[name].shapes
        B.conv2d(env.p(np.zeros(x_shape)), filters(w_shape), None, CONV2D[name].options)
        assert calls[-1] == x_shape, name
    t = CONV_T2D["winograd_x_grad"]
    x_shape, w_shape = t.shapes
    w = filters(w_shape)
    y = B.conv_transpose2d(env.p(np.zeros(x_shape)), w, None, t.options)
    n = len(calls)
    B.conv_transpose2d_x_backward(w, y, t.options)
    assert len(calls) == n + 1, "conv_transpose2d_x_backward of winograd_x_grad skipped Winograd"
