"""Step capture's batched copies on OpenCL (`_capture_copies`: `copy_many`, `copy_plan`, used
by a tape that cannot rebind its inputs): every pair copied exactly, a plan copying the values
its sources hold at each call, strided and empty pairs included."""

from __future__ import annotations

import numpy as np
from burn_opencl import OpenCl
from burn_opencl._capture_copies import copy_many, copy_plan
from burn_tensor import Float, Tensor

B = OpenCl("cpu")
D = B.device()


def _prim(a):
    return Tensor.from_data(np.asarray(a, np.float32), D).into_primitive()


def _np(prim, shape):
    return Tensor.from_primitive(prim, Float, D).numpy().reshape(shape)


SHAPES = [(3,), (17, 5), (0, 4), (2, 3, 4), (1,)]


def test_copy_many_copies_every_pair():
    rng = np.random.default_rng(0)
    vals = [rng.normal(size=s).astype(np.float32) for s in SHAPES]
    dsts = [_prim(np.zeros(s, np.float32)) for s in SHAPES]
    copy_many([(d, _prim(v)) for d, v in zip(dsts, vals)])
    for d, v in zip(dsts, vals):
        np.testing.assert_array_equal(_np(d, v.shape), v)


def test_copy_plan_copies_what_its_sources_hold_at_each_call():
    from burn_opencl._capture_tape import copy_into

    rng = np.random.default_rng(1)
    srcs = [_prim(np.zeros(s, np.float32)) for s in SHAPES]
    dsts = [_prim(np.zeros(s, np.float32)) for s in SHAPES]
    go = copy_plan(list(zip(dsts, srcs)))
    for k in range(3):
        vals = [rng.normal(size=s).astype(np.float32) * (k + 1) for s in SHAPES]
        for s, v in zip(srcs, vals):  # new values in the same buffers
            copy_into(s, _prim(v))
        go()
        for d, v in zip(dsts, vals):
            np.testing.assert_array_equal(_np(d, v.shape), v)


def test_copy_plan_of_a_strided_source_copies_its_values():
    a = np.arange(48, dtype=np.float32).reshape(8, 6)
    view = Tensor.from_data(a, D).swap_dims(0, 1).into_primitive()  # [6, 8], strided
    assert not view.is_contiguous()
    dst = _prim(np.zeros((6, 8), np.float32))
    go = copy_plan([(dst, view)])
    go()
    np.testing.assert_array_equal(_np(dst, (6, 8)), a.T)
