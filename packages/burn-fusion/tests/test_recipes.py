"""Launch recipes (issue 35, item 3: Fusion's per-op host cost): a plan whose structure recurs is
planned once -- later flushes take its recipe and only gather values -- and the recipe never
changes results: other scalar values, other data, a dropped input written in place, another
layout (a new recipe) all compute what numpy does."""

from __future__ import annotations

import numpy as np
import pytest
from _fusion_testlib import check_scalar_plans, general_launches, inner_backend
from burn_fusion import Fusion, _stream
from burn_tensor import Tensor


@pytest.fixture
def gathers(monkeypatch):
    """How many times a flush planned from scratch (`Stream._gather`, the planning pass)."""
    count = [0]
    real = _stream.Stream._gather

    def counted(self, *args):
        count[0] += 1
        return real(self, *args)

    monkeypatch.setattr(_stream.Stream, "_gather", counted)
    return count


def _device():
    return Fusion(inner_backend()).device()


def test_a_recurring_plan_is_planned_once_and_takes_new_values(gathers):
    device = _device()
    rng = np.random.default_rng(0)
    base = rng.standard_normal((6, 5)).astype(np.float32)
    b = Tensor.from_data(rng.standard_normal((1, 5)).astype(np.float32), device)
    device.sync()
    gathers[0] = 0
    for step, s in enumerate((0.5, -1.5, 3.0)):
        xv = base + step  # new data each step, same structure
        x = Tensor.from_data(xv, device)
        got = ((x * s + b).exp() - x).numpy()
        want = np.exp(xv.astype(np.float64) * s + b.numpy().astype(np.float64)) - xv
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    assert gathers[0] == 1, gathers[0]  # step 1 planned; steps 2 and 3 took its recipe


def test_another_layout_is_another_recipe_with_its_own_results(gathers):
    device = _device()
    v = np.arange(20, dtype=np.float32).reshape(4, 5) / 7.0
    x = Tensor.from_data(v, device)
    t = Tensor.from_data(np.ascontiguousarray(v.T), device).swap_dims(0, 1)  # strided view
    device.sync()
    gathers[0] = 0
    a = ((x * 2.0).sin() + x).numpy()
    c = ((t * 2.0).sin() + t).numpy()  # same ops, an input read through strides
    a2 = ((x * 2.0).sin() + x).numpy()
    want = np.sin(v.astype(np.float64) * 2.0) + v
    for got in (a, c, a2):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
    assert gathers[0] == 2, gathers[0]  # contiguous, strided; the third reuses the first


def test_a_recipe_with_a_forced_reduction_recurs(gathers):
    """Layer norm (one row kernel: the mean, the variance, the normalisation) recurs from its
    recipe; so does a reduction forced by one along another dim."""
    device = _device()
    rng = np.random.default_rng(2)
    gathers[0] = 0
    planned_once = None
    for step in range(3):
        if step == 1:
            planned_once = gathers[0]
        xv = rng.standard_normal((4, 9)).astype(np.float32) * (step + 1)
        x = Tensor.from_data(xv, device)
        c = x - x.mean_dim(1)
        y = c / ((c * c).mean_dim(1) + 1e-5).sqrt()
        got = y.numpy()
        col = (y * 2.0).sum_dim(0).numpy()  # along dim 0: forces nothing (y is read first)
        e = x.exp()
        a = e.sum_dim(1)
        rows = (a + e.sum_dim(0)).numpy()  # the sum along 0 forces the pending one along 1
        x64 = xv.astype(np.float64)
        c64 = x64 - x64.mean(1, keepdims=True)
        want = c64 / np.sqrt((c64 * c64).mean(1, keepdims=True) + 1e-5)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(col, (want * 2.0).sum(0, keepdims=True), rtol=1e-4, atol=1e-4)
        want_rows = np.exp(x64).sum(1, keepdims=True) + np.exp(x64).sum(0, keepdims=True)
        np.testing.assert_allclose(rows, want_rows, rtol=1e-5, atol=1e-5)
    assert gathers[0] == planned_once, (gathers[0], planned_once)


def test_in_place_through_a_recipe_writes_the_dropped_input():
    """The second flush of a plan whose owned input was dropped takes the recipe that writes
    into that input's buffer: counted each time, values right each time."""
    device = _device()
    v = np.linspace(-2.0, 2.0, 24, dtype=np.float32).reshape(4, 6)
    x = Tensor.from_data(v, device)
    before = device.fusion_stats()["results_in_place"]
    for _ in range(3):
        h = (x * 3.0).exp()  # a fused kernel's own buffer: may be written in place
        device.sync()  # h materialised by its fused kernel (owned; never read out)
        y = ((h + 1.0) * 0.5).log()  # h's last use: its buffer takes y
        del h
        got = y.numpy()
        np.testing.assert_allclose(got, np.log((np.exp(v * 3.0) + 1.0) * 0.5), rtol=1e-5)
    assert device.fusion_stats()["results_in_place"] - before == 3


def test_prepared_launches_replace_the_general_launch_with_the_same_values():
    """Where the runtime prepares launches (OpenCl's `prepare`), no fused kernel goes through
    the general `launch`: float and int scalars, two outputs, a row kernel."""
    device = _device()
    st = device.backend.stream(device.index)
    from burn_opencl import OpenCl

    if isinstance(device.backend.inner, OpenCl):
        assert st.prepare is not None, "OpenClRuntime.prepare is missing"
    elif st.prepare is None:
        pytest.skip(f"{device.backend.inner!r} prepares no launches")
    rng = np.random.default_rng(3)
    with general_launches(st) as general:
        for step in range(3):
            s = 0.25 * (step + 1)
            x, xv = check_scalar_plans(device, rng, (5, 7), s, step + 3, 2, 50)
            e = (x - x.max_dim(1)).exp()
            sm = (e / e.sum_dim(1)).numpy()  # max kernel, then a row kernel
            ref = np.exp(xv - xv.max(1, keepdims=True))
            np.testing.assert_allclose(sm, ref / ref.sum(1, keepdims=True), rtol=1e-5)
    assert general[0] == 0, general[0]


def test_same_ops_over_inputs_of_another_dtype_or_shape_take_their_own_recipe(gathers):
    """The recipe key is built while recording (`_recipe.Sig`): an input's dtype and shape are
    its step, so the same op chain over float64, or over another shape, is planned anew (and
    computes numpy's values) while a repeat of either takes its recipe."""
    device = _device()
    v = np.linspace(-1.0, 1.0, 12).reshape(3, 4)
    cases = [(v.astype(np.float32), 1e-6), (v, 1e-12), (v[:2].astype(np.float32), 1e-6)]
    gathers[0] = 0
    for _ in range(2):
        for data, rtol in cases:
            x = Tensor.from_data(data, device, dtype=data.dtype)
            got = ((x * 1.5).exp() - x).numpy()
            assert got.dtype == data.dtype
            want = np.exp(data.astype(np.float64) * 1.5) - data
            np.testing.assert_allclose(got, want, rtol=rtol, atol=rtol)
    assert gathers[0] == 3, gathers[0]  # one plan per case; the second round from the recipes


def test_the_signature_tree_is_bounded_and_starts_afresh(monkeypatch):
    """Past `MAX_SIGS` recorded prefixes a stream's tree starts afresh (a model with ever-new
    shapes must not grow it forever); plans recorded after that are planned again, right."""
    monkeypatch.setattr(_stream, "MAX_SIGS", 6)
    device = _device()
    st = device.backend.stream(device.index)
    roots = [st.sig_root]  # (held: an id of a freed root could come back)
    for n in range(1, 9):  # each shape: 3 new prefixes (the input, two ops)
        v = np.arange(n, dtype=np.float32) / 3.0
        x = Tensor.from_data(v, device)
        np.testing.assert_allclose(((x + 2.0) * x).numpy(), (v + 2.0) * v, rtol=1e-6)
        assert st.sig_root.tree[0] <= 6 + 3, st.sig_root.tree[0]
        if st.sig_root is not roots[-1]:
            roots.append(st.sig_root)
    assert len(roots) >= 3, len(roots)  # started afresh at least twice
