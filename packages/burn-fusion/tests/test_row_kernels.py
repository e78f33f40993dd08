"""The issue's normalisations as composed by users, on odd sizes, f32 and f64, along the last dim
and others: each takes at most 2 kernels (the statistic that the next one needs, then one row
kernel that reduces and writes the epilogue), no op runs unfused, and values match numpy in
float64."""

from __future__ import annotations

import numpy as np
import pytest
from _fusion_testlib import inner_backend, inner_overrides
from burn_fusion import Fusion
from burn_tensor import Tensor, activation

RNG = np.random.default_rng(7)
EPS = 1e-5
CONFIGS = {"f32": ("f32-i32", np.float32, 2e-4, 2e-5), "f64": ("f64-i64", np.float64, 1e-9, 1e-11)}
# (shape, dim): rows 3 .. 1000, row lengths 1 .. 4099, the last dim and others
CASES = [
    ((3, 1), 1),
    ((3, 4099), 1),
    ((1000, 33), 1),
    ((17, 257), 0),
    ((5, 6, 7), 1),
    ((5, 6, 7), 0),
]
_DEVICES: dict = {}


def _device(config: str):
    if config not in _DEVICES:
        _DEVICES[config] = Fusion(inner_backend(config)).device()
    return _DEVICES[config]


def _bcast(v: np.ndarray, shape, dim):
    """`v` (length shape[dim]) shaped to broadcast along `dim` only."""
    return v.reshape([n if d == dim else 1 for d, n in enumerate(shape)])


def softmax(x, d, _):
    e = (x - x.max_dim(d)).exp()
    return e / e.sum_dim(d)


def log_softmax(x, d, _):
    s = x - x.max_dim(d)
    return s - s.exp().sum_dim(d).log()


def layer_norm(x, d, p):
    mean = x.mean_dim(d)
    c = x - mean
    var = (c * c).mean_dim(d)
    return (x - mean) / (var + EPS).sqrt() * p["gamma"] + p["beta"]


def rms_norm(x, d, p):
    return x / (x.square().mean_dim(d) + EPS).sqrt() * p["gamma"]


def mean_of_product(x, _, p):
    return (x * p["y"]).mean()


def _reference(name, a, d, p):
    if name in ("softmax", "log_softmax"):
        s = a - a.max(d, keepdims=True)
        lse = np.log(np.exp(s).sum(d, keepdims=True))
        return np.exp(s - lse) if name == "softmax" else s - lse
    if name == "layer_norm":
        c = a - a.mean(d, keepdims=True)
        return c / np.sqrt((c * c).mean(d, keepdims=True) + EPS) * p["gamma"] + p["beta"]
    if name == "rms_norm":
        return a / np.sqrt((a * a).mean(d, keepdims=True) + EPS) * p["gamma"]
    return np.array([(a * p["y"]).mean()])


PATTERNS = {f.__name__: f for f in (softmax, log_softmax, layer_norm, rms_norm, mean_of_product)}


@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("shape,dim", CASES, ids=[f"{s}-d{d}" for s, d in CASES])
@pytest.mark.parametrize("name", list(PATTERNS))
def test_at_most_two_kernels_and_numpy_values(name, shape, dim, config):
    cfg, dt, rtol, atol = CONFIGS[config]
    device = _device(cfg)
    a = RNG.standard_normal(shape) * 3.0
    p64 = {
        "gamma": _bcast(RNG.standard_normal(shape[dim]), shape, dim),
        "beta": _bcast(RNG.standard_normal(shape[dim]), shape, dim),
        "y": RNG.standard_normal(shape),
    }
    x = Tensor.from_data(a.astype(dt), device)
    params = {k: Tensor.from_data(v.astype(dt), device) for k, v in p64.items()}
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    got = PATTERNS[name](x, dim, params).numpy()
    after = device.fusion_stats()
    kernels = after["kernels_launched"] - before["kernels_launched"]
    unfused = after["ops_unfused"] - before["ops_unfused"] - 1  # the read itself
    assert kernels <= 2 and unfused == 0, (kernels, unfused)
    # the inputs as the device holds them (f32 rounding), the arithmetic in float64
    ref = _reference(
        name,
        a.astype(dt).astype(np.float64),
        dim,
        {k: v.astype(dt).astype(np.float64) for k, v in p64.items()},
    )
    np.testing.assert_allclose(got, ref, rtol=rtol, atol=atol)


def test_library_softmax_and_layer_norm_counts():
    """The exact counts, through burn_tensor's own compositions."""
    device = _device("f32-i32")
    a = RNG.standard_normal((16, 100)).astype(np.float32)
    x = Tensor.from_data(a, device)
    counts = {}
    for name, fn in {
        "softmax": lambda: activation.softmax(x, 1),
        "log_softmax": lambda: activation.log_softmax(x, 1),
        # as burn-nn's LayerNorm: one mean, shared by the variance and the centring
        "layer_norm": lambda: (lambda vm: x.sub(vm[1]).div(vm[0].add_scalar(EPS).sqrt()))(
            x.var_mean_bias(1)
        ),
        "rms_norm": lambda: x.div(x.square().mean_dim(1).add_scalar(EPS).sqrt()),
    }.items():
        device.sync()
        before = device.fusion_stats()
        fn().numpy()
        after = device.fusion_stats()
        # kernels of either kind: fused ones, and ops run on the inner backend (minus the read)
        counts[name] = (after["kernels_launched"] - before["kernels_launched"]) + (
            after["ops_unfused"] - before["ops_unfused"] - 1
        )
    # an inner backend with its own softmax kernels (Cuda) runs each in one
    sm = 1 if inner_overrides(device, "softmax") else 2
    lsm = 1 if inner_overrides(device, "log_softmax") else 2
    assert counts == {"softmax": sm, "log_softmax": lsm, "layer_norm": 1, "rms_norm": 1}


def test_max_and_min_propagate_nan():
    device = _device("f32-i32")
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    a[1, 2] = np.nan
    x = Tensor.from_data(a, device)
    got_max = (x * 2.0).max_dim(1).numpy()
    got_min = (x * 2.0).min_dim(1).numpy()
    np.testing.assert_array_equal(got_max, (a * 2).max(1, keepdims=True))
    np.testing.assert_array_equal(got_min, (a * 2).min(1, keepdims=True))


def test_a_reduction_of_a_reduced_chain_is_one_row_kernel():
    """Two dependent reductions along one dim with fused prologues: one row kernel, whose second
    walk over the row reads the first reduction's value; the shared prologue is computed in
    both walks."""
    device = _device("f64-i64")
    a = RNG.standard_normal((9, 31))
    x = Tensor.from_data(a, device)
    device.sync()
    before = device.fusion_stats()["kernels_launched"]
    e = x.exp()
    m = e.max_dim(1)
    s = (e - m).abs().sum_dim(1)
    got_s, got_m = s.numpy(), m.numpy()
    assert device.fusion_stats()["kernels_launched"] - before == 1
    ea = np.exp(a)
    np.testing.assert_allclose(got_m, ea.max(1, keepdims=True), rtol=1e-12)
    np.testing.assert_allclose(got_s, np.abs(ea - ea.max(1, keepdims=True)).sum(1, keepdims=True))


def test_live_intermediates_and_row_statistics_are_written():
    """A row kernel writes every result still held: the full-size prologue value, the reduced
    value itself and a [rows, 1] op on it, beside the epilogue."""
    device = _device("f32-i32")
    a = RNG.standard_normal((6, 50)).astype(np.float32)
    x = Tensor.from_data(a, device)
    device.sync()
    before = device.fusion_stats()["kernels_launched"]
    e = (x * 0.5).exp()
    s = e.sum_dim(1)
    inv = s.recip()
    out = e * inv
    got = [t.numpy() for t in (out, e, s, inv)]
    assert device.fusion_stats()["kernels_launched"] - before == 1
    e_ref = np.exp(a.astype(np.float64) * 0.5)
    s_ref = e_ref.sum(1, keepdims=True)
    for g, r in zip(got, (e_ref / s_ref, e_ref, s_ref, 1 / s_ref)):
        np.testing.assert_allclose(g, r, rtol=1e-5)


def test_a_ready_input_does_not_flush_an_unrelated_plan():
    """A reduction of a materialised tensor that cannot join the pending plan (another shape)
    runs on the inner backend and leaves that plan pending."""
    device = _device("f32-i32")
    a, b = data = (RNG.standard_normal((4, 5)), RNG.standard_normal((7,)))
    x, y = (Tensor.from_data(v.astype(np.float32), device) for v in data)
    device.sync()
    z = (y * 2.0).exp()
    flushes = device.fusion_stats()["flushes"]
    m = x.max_dim(0)
    assert device.fusion_stats()["flushes"] == flushes
    np.testing.assert_allclose(m.numpy(), a.max(0, keepdims=True), rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), np.exp(b * 2.0), rtol=1e-5)


@pytest.mark.parametrize("op", ["softmax_backward", "log_softmax_backward"])
def test_softmax_backward_defaults_are_one_row_kernel(op):
    """The backward ops' defaults run on Fusion (OpenCl does not override them): the sum along
    the dim and the epilogue that reads it are one row kernel. An inner backend with its own
    kernel (Cuda) runs it as one delegated op."""
    device = _device("f32-i32")
    own = inner_overrides(device, op)
    y64 = RNG.random((11, 37)) + 0.1
    g64 = RNG.standard_normal((11, 37))
    y, g = (Tensor.from_data(v.astype(np.float32), device) for v in (y64, g64))
    device.sync()
    before = device.fusion_stats()
    out = getattr(device.backend, op)(y.into_primitive(), g.into_primitive(), 1)
    got = y._like(out).numpy()
    after = device.fusion_stats()
    assert after["kernels_launched"] - before["kernels_launched"] == (0 if own else 1)
    assert after["ops_unfused"] - before["ops_unfused"] == (2 if own else 1)  # + the read
    y64, g64 = y64.astype(np.float32).astype(np.float64), g64.astype(np.float32).astype(np.float64)
    if op == "softmax_backward":
        ref = y64 * (g64 - (g64 * y64).sum(1, keepdims=True))
    else:
        ref = g64 - np.exp(y64) * g64.sum(1, keepdims=True)
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)
