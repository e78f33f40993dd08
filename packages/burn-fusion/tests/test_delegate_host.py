"""The host cost of an unfused op on Fusion (issue 35 item 3: Fusion never slower than its inner
backend): an op Fusion delegates costs its inner op plus its closure and the handles of its
results (no call per result to find its device or wrap it), and the results land on the right
stream with the inner op's values. Calls are counted with `sys.setprofile` ("call" and
"c_call" events: Python frames and builtin calls such as `list.append`), Fusion's beside the
inner backend's for the same op."""

from __future__ import annotations

import gc
import sys

import numpy as np
from _fusion_testlib import inner_backend
from burn_fusion import Fusion
from burn_fusion._op_wrappers import delegate
from burn_fusion._tensor import FusionTensor
from burn_tensor import TensorData


def _calls(fn) -> int:
    """Python and builtin function calls made by `fn()` (its own frame excluded), with the
    garbage collector off: a collection inside `fn` would count its callbacks (`gc.callbacks`
    another test left registered: a full suite run counted 2 more calls than alone)."""
    n = [0]

    def hook(frame, event, arg):
        if event == "call" or event == "c_call":
            n[0] += 1

    was = gc.isenabled()
    gc.disable()
    sys.setprofile(hook)
    try:
        fn()
    finally:
        sys.setprofile(None)
        if was:
            gc.enable()
    return n[0] - 1  # fn's own frame


def _setup(n: int = 1):
    fusion = Fusion(inner_backend())
    device = fusion.device()
    inner = fusion.inner
    rng = np.random.default_rng(0)
    vals = [rng.standard_normal((4, 4)).astype(np.float32) for _ in range(n)]
    prims = [inner.float_from_data(TensorData(v), device.inner()) for v in vals]
    handles = [fusion.wrap(p) for p in prims]
    return fusion, device, inner, vals, prims, handles


def test_a_delegated_op_costs_its_inner_op_plus_two_calls():
    fusion, device, inner, vals, (p,), (h,) = _setup()
    fusion.float_matmul(h, h)  # the first call learns the primitive type
    inner.float_matmul(p, p)
    extra = _calls(lambda: fusion.float_matmul(h, h)) - _calls(lambda: inner.float_matmul(p, p))
    # before: the closure, `out`, the inner backend's `device_index`, a dict lookup (5 in all);
    # now the closure and `ready` (the result's handle, written once for every wrapper)
    assert extra <= 3, f"Fusion.float_matmul made {extra} Python calls more than the inner op"
    out = fusion.float_matmul(h, h)
    assert type(out) is FusionTensor and out.stream is fusion.stream(device.index)
    got = inner.float_into_data(out.prim).numpy().astype(np.float64)
    np.testing.assert_allclose(got, vals[0].astype(np.float64) @ vals[0], rtol=1e-5, atol=1e-5)


def test_a_delegated_op_with_a_list_result_costs_one_handle_per_result():
    fusion, device, inner, vals, prims, handles = _setup(16)

    def neg_many(xs):  # an inner op over a list, as float_adam_update_many is on Cuda
        return [inner.float_neg(x) for x in xs]

    op = delegate(fusion, "neg_many", neg_many)
    op(handles)
    extra = _calls(lambda: op(handles)) - _calls(lambda: neg_many(prims))
    # per result its handle (`ready` and its `object.__new__`) and a constant; before: per
    # element also `out`, `device_index`, a dict lookup and an append (85 in all)
    assert extra <= 2 * 16 + 6, f"a delegated list op of 16 made {extra} calls more than inner"
    res = op(handles)
    assert type(res) is list and len(res) == 16
    for t, v in zip(res, vals):
        assert type(t) is FusionTensor and t.stream is fusion.stream(device.index)
        np.testing.assert_array_equal(inner.float_into_data(t.prim).numpy(), -v)


def test_a_created_tensor_lands_on_its_device_arguments_stream():
    fusion = Fusion(inner_backend())
    device = fusion.device()
    t = fusion.float_zeros((2, 3), device, fusion.float_dtype)
    assert type(t) is FusionTensor and t.stream is fusion.stream(device.index)
    np.testing.assert_array_equal(fusion.inner.float_into_data(t.prim).numpy(), np.zeros((2, 3)))
