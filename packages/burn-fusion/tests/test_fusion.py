"""Fusion's own behaviour: laziness and what flushes, dead intermediates, in-place results, the
plan cache, broadcasting and strided inputs, equality with the unfused backend, errors, stats."""

from __future__ import annotations

import gc
import math

import numpy as np
import pytest
from _fusion_testlib import INNER, inner_backend
from burn_autodiff import Autodiff
from burn_fusion import MAX_OPS, Fusion, fusion_stats
from burn_ndarray import NdArray
from burn_tensor import Tensor, activation

RNG = np.random.default_rng(0)


@pytest.fixture(scope="module")
def inner():
    return inner_backend()


@pytest.fixture(scope="module")
def device(inner):
    return Fusion(inner).device()


def f32(*shape, lo=-2.0, hi=2.0):
    return RNG.uniform(lo, hi, shape).astype(np.float32)


def stream(device):
    return device.backend.stream(device.index)


def delta(device, before):
    after = device.fusion_stats()
    return {k: after[k] - before[k] for k in after}


# -- laziness and flushing ------------------------------------------------------------------------
def test_ops_are_recorded_not_run(device):
    x = Tensor.from_data(f32(8), device)
    y = (x * 2.0).exp()
    assert y.into_primitive().prim is None
    device.sync()  # sync flushes
    assert y.into_primitive().prim is not None


def test_reading_flushes_and_an_unfusable_op_flushes_its_inputs(device):
    a = f32(4, 4)
    x = Tensor.from_data(a, device)
    y = (x + 1.0).tanh()
    s = y.cumsum(1)  # not fusable: runs on the inner backend, after y's plan
    assert y.into_primitive().prim is not None
    np.testing.assert_allclose(s.numpy(), np.tanh(a + 1.0).cumsum(1), rtol=1e-5)


def test_an_incompatible_output_shape_flushes_the_plan(device):
    x = Tensor.from_data(f32(4, 4), device)
    b = Tensor.from_data(f32(3, 4), device)
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    y = b.exp()  # plan of shape [3, 4]
    z = x.exp()  # [4, 4] does not broadcast with [3, 4]: y's plan runs first
    assert y.into_primitive().prim is not None and z.into_primitive().prim is None
    z.numpy()
    assert delta(device, before)["flushes"] == 2


def test_broadcast_compatible_results_join_one_kernel(device):
    """A [rows, 1] statistic and the [rows, n] ops using it: one kernel, both results right."""
    a, m = f32(5, 7), f32(5, 1, lo=0.5, hi=1.5)
    x, s = Tensor.from_data(a, device), Tensor.from_data(m, device)
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    inv = (s * s + 1e-5).sqrt().recip()  # [5, 1]
    y = (x * inv).tanh() + 1.0  # [5, 7]
    device.sync()
    d = delta(device, before)
    assert (d["ops_recorded"], d["kernels_launched"]) == (7, 1), d
    np.testing.assert_allclose(inv.numpy(), 1 / np.sqrt(m * m + 1e-5), rtol=1e-5)
    np.testing.assert_allclose(y.numpy(), np.tanh(a / np.sqrt(m * m + 1e-5)) + 1.0, rtol=1e-5)
    wide = (Tensor.from_data(f32(1, 7), device).exp() * s).numpy()  # [1, 7] x [5, 1] -> [5, 7]
    assert wide.shape == (5, 7)


def test_the_size_limit_flushes(device):
    x = Tensor.from_data(f32(16), device)
    y = x
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    for _ in range(MAX_OPS + 1):
        y = y * 1.0
    y.numpy()
    assert delta(device, before)["kernels_launched"] == 2


# -- buffers --------------------------------------------------------------------------------------
def test_dead_intermediates_are_not_materialised(device):
    x = Tensor.from_data(f32(64), device)
    kept = x.exp()
    out = (kept * 2.0).sin().cos() + 1.0  # the three intermediates are dropped at once
    out.numpy()
    prog = stream(device).last_program
    assert len(prog.nodes) == 5 and len(prog.outputs) == 2  # kept and out only
    assert kept.into_primitive().prim is not None


def test_a_dropped_owned_input_is_written_in_place(device):
    a = f32(256)
    x = Tensor.from_data(a, device)
    y = (x * 3.0).exp()
    device.sync()
    buf = y.into_primitive().prim
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    z = (y + 1.0).sqrt()  # two ops: a fused kernel (a one-op plan runs the inner op)
    del y
    gc.collect()
    device.sync()
    assert delta(device, before)["results_in_place"] == 1
    assert z.into_primitive().prim is buf
    np.testing.assert_allclose(z.numpy(), np.sqrt(np.exp(a * 3.0) + 1.0), rtol=1e-5)


def test_device_of_a_handle_pending_or_ready_without_running_it(device):
    # Default ops and autodiff create helper tensors on `device_of(x)`: it must not flush.
    y = (Tensor.from_data(f32(8), device) * 2.0).exp()
    handle = y.into_primitive()
    assert handle.prim is None
    assert device.backend.device_of(handle) == device
    assert handle.prim is None  # still pending
    device.sync()
    assert device.backend.device_of(handle) == device


def test_dlpack_export_runs_the_plan_and_the_buffer_is_never_reused(device):
    # What DLPack exports may be read in place later (NCCL, torch): no fused kernel may write it.
    a = f32(256)
    y = (Tensor.from_data(a, device) * 3.0).exp()
    assert y.into_primitive().prim is None
    if y.__dlpack_device__()[0] == 2:  # kDLCUDA (Fusion over Cuda): numpy reads host memory only
        import cupy

        exported = cupy.asnumpy(cupy.from_dlpack(y))
    else:
        exported = np.from_dlpack(y)
    np.testing.assert_allclose(exported, np.exp(a * 3.0), rtol=1e-5)
    handle = y.into_primitive()
    assert handle.prim is not None and not handle.owned


def test_a_buffer_seen_by_an_inner_op_is_never_written_in_place(device):
    a = f32(4, 8)
    x = Tensor.from_data(a, device)
    y = x * 3.0
    device.sync()
    view = y.reshape([8, 4])  # an inner view sharing y's buffer
    before = device.fusion_stats()
    z = (y + 1.0).sqrt()
    del y
    gc.collect()
    z.numpy()
    assert delta(device, before)["results_in_place"] == 0
    np.testing.assert_allclose(view.numpy(), (a * 3.0).reshape(8, 4), rtol=1e-6)


def _owned(device, a):
    """`exp(3 a)` computed by a fused kernel and never seen by an inner op: a buffer the
    reuse path may write into once its handle is dropped."""
    y = (Tensor.from_data(a, device) * 3.0).exp()
    device.sync()
    assert y.into_primitive().owned
    return y


@pytest.mark.parametrize("held", ["tensor", "clone"])
def test_a_live_input_is_not_written_in_place(device, held):
    """`z = (y + 1.0).sqrt()` over a `y` whose buffer the reuse path could take (owned, dense,
    z's shape and dtype): only the user's reference to `y` -- the tensor itself or a clone,
    which shares its handle -- keeps z out of y's buffer. The same chain with `y` dropped IS
    written in place, so this test reaches the reuse decision instead of passing because
    reuse never happens (a one-op plan would run on the inner backend and never get there)."""
    a = f32(256)
    want_z = np.sqrt(np.exp(a * 3.0) + 1.0)
    # dead input: reused
    y = _owned(device, a)
    buf = y.into_primitive().prim
    before = device.fusion_stats()
    z = (y + 1.0).sqrt()
    del y
    gc.collect()
    device.sync()
    assert delta(device, before)["results_in_place"] == 1
    assert z.into_primitive().prim is buf
    np.testing.assert_allclose(z.numpy(), want_z, rtol=1e-5)
    # live input: a new buffer, y intact
    y = _owned(device, a)
    buf = y.into_primitive().prim
    keep = y if held == "tensor" else y.clone()
    del y
    gc.collect()
    before = device.fusion_stats()
    z = (keep + 1.0).sqrt()
    device.sync()
    assert delta(device, before)["results_in_place"] == 0
    assert z.into_primitive().prim is not buf
    np.testing.assert_allclose(keep.numpy(), np.exp(a * 3.0), rtol=1e-6)
    np.testing.assert_allclose(z.numpy(), want_z, rtol=1e-5)


# -- plan cache -----------------------------------------------------------------------------------
def test_the_plan_cache_ignores_sizes_and_scalar_values(device):
    def chain(x, s):
        return ((x * s).exp() + s).sqrt()

    chain(Tensor.from_data(f32(10, 3), device), 0.5).numpy()
    device.sync()  # nothing left pending from earlier tests
    before = device.fusion_stats()
    a = f32(7, 5)
    got = chain(Tensor.from_data(a, device), 0.25).numpy()
    d = delta(device, before)
    assert (d["kernels_compiled"], d["plan_cache_hits"]) == (0, 1), d
    np.testing.assert_allclose(got, np.sqrt(np.exp(a * 0.25) + 0.25), rtol=1e-5)


def test_the_disk_cache_serves_a_new_runtime(tmp_path, monkeypatch, inner):
    if INNER != "opencl":
        pytest.skip("cupy keeps the CUDA disk cache")
    from burn_fusion import Node, Program, render

    monkeypatch.setenv("BURN_CACHE_DIR", str(tmp_path))
    prog = Program(
        (("float32", False),), 0, (Node("float_exp", (-1,), "float32", "float32"),), ((0, -1, ()),)
    )
    src, name = render(prog, "opencl")
    src += f"/* {tmp_path.name} */\n"  # a source no earlier test compiled
    assert inner.runtime(inner.device()).compile(src, name)[1] == "compiled"
    assert list(tmp_path.rglob("*.bin"))
    assert inner.runtime(inner.device()).compile(src, name)[1] == "disk"


# -- equality with the unfused backend ------------------------------------------------------------
def _chains():
    return [
        lambda x, y, m: ((x * y - 0.5).abs() + 1.0).log() / (y.exp() + 1.0),
        lambda x, y, m: x.clamp(-0.5, 0.5).mask_where(m, y.sin()).powf_scalar(2.0),
        lambda x, y, m: (x.greater(y).float() + x.lower_equal_elem(0.1).float()) * x.erf(),
        lambda x, y, m: x.mask_fill(m, 3.0).remainder(y.abs() + 0.5).sign().tanh(),
        lambda x, y, m: (x.int() + y.int() * 3).clamp(-2, 5).float() + x.round(),
        lambda x, y, m: (~(x.greater_elem(0.0)) | m).int().float() - activation.sigmoid(x),
        lambda x, y, m: x.atan2(y + 3.0).recip().cos() * x.square() - y.floor().ceil(),
    ]


@pytest.mark.parametrize("layout", ["contiguous", "broadcast", "permuted"])
@pytest.mark.parametrize("k", range(len(_chains())))
def test_fused_chains_equal_the_unfused_backend(inner, device, k, layout):
    fn = _chains()[k]
    a, b = f32(6, 5), f32(6, 5)
    if layout == "broadcast":
        b = f32(1, 5)
    mask = RNG.uniform(size=(6, 5)) < 0.5
    res = []
    for dev in (inner.device(), device):
        x = Tensor.from_data(a if layout != "permuted" else a.T.copy(), dev)
        if layout == "permuted":
            x = x.transpose()
        y = Tensor.from_data(b, dev)
        m = Tensor.from_data(mask, dev)
        res.append(fn(x, y, m).numpy())
    np.testing.assert_allclose(res[1], res[0], rtol=2e-6, atol=1e-6)


def test_custom_gelu_equals_the_inner_backends_gelu(inner, device):
    a = f32(1000, lo=-4.0, hi=4.0)
    fused = Tensor.from_data(a, device)
    fused = (fused * 0.5 * ((fused / math.sqrt(2.0)).erf() + 1.0)).numpy()
    from burn_tensor import activation

    unfused = activation.gelu(Tensor.from_data(a, inner.device())).numpy()
    np.testing.assert_allclose(fused, unfused, rtol=1e-5, atol=1e-6)


# -- composition, errors, stats -------------------------------------------------------------------
def test_autodiff_over_fusion(inner):
    device = Autodiff(Fusion(inner)).device()
    a = f32(3, 4)
    x = Tensor.from_data(a, device).require_grad()
    y = ((x * 2.0).exp() + x).sum()
    grads = y.backward()
    np.testing.assert_allclose(x.grad(grads).numpy(), 2 * np.exp(2 * a) + 1, rtol=1e-5)
    assert fusion_stats(device)["ops_recorded"] > 0
    assert device.fusion_stats() == fusion_stats(device)


def test_wrapping_a_backend_without_kernels_says_what_to_use():
    with pytest.raises(TypeError, match=r"NdArray\(\) compiles no kernels.*Fusion\(OpenCl\(\)\)"):
        Fusion(NdArray())


def test_wrong_nesting_is_refused(inner):
    with pytest.raises(ValueError, match="put Autodiff outside"):
        Fusion(Autodiff(inner))
    with pytest.raises(TypeError, match="already fused"):
        Fusion(Fusion(inner))


def test_fusion_stats_needs_a_fusion_device():
    with pytest.raises(TypeError, match="not a Fusion backend"):
        NdArray().device().fusion_stats()


def test_backend_identity(inner):
    assert Fusion(inner) is Fusion(inner)
    assert Fusion(inner).inner is inner and Fusion(inner).float_dtype is inner.float_dtype
    assert repr(Fusion(inner)) == f"Fusion({inner!r})"
    assert not Fusion.missing_ops()


def test_entry_points_name_the_fusion_backends():
    from burn_tensor import available_backends

    assert {"fusion-opencl", "fusion-cuda"} <= set(available_backends())


def test_a_failed_flush_leaves_tensors_that_say_so(device, monkeypatch):
    st = stream(device)
    x = Tensor.from_data(f32(9), device)
    y = (x * 7.0).cosh().asinh()  # a plan no earlier test compiled

    def broken(src, name):
        raise RuntimeError("compiler exploded")

    monkeypatch.setattr(st.rt, "compile", broken)
    with pytest.raises(RuntimeError, match="compiler exploded"):
        y.numpy()
    monkeypatch.undo()
    with pytest.raises(RuntimeError, match="failed"):
        y.numpy()
    with pytest.raises(RuntimeError, match="failed"):
        (y + 1.0).numpy()
    np.testing.assert_allclose((x * 1.0).exp().numpy(), np.exp(x.numpy()), rtol=1e-6)
