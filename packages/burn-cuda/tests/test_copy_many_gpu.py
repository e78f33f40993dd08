"""`_capture_copies.copy_many`: a replay's batched input copies (one CUDA graph of memcpy nodes
per recurring address set) write exactly `dst[...] = src` for every pair, also when the sources
change value between calls, and leave strided pairs to the element-wise copy."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import _capture_copies

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]


def test_copy_many_copies_every_pair_and_reuses_its_graph():
    import cupy as cp

    rng = np.random.default_rng(0)
    shapes = [(3,), (17, 5), (1,), (64, 64), (2, 3, 4), (0, 4), (7,)]
    srcs = [cp.asarray(rng.normal(size=s).astype(np.float32)) for s in shapes]
    dsts = [cp.zeros(s, np.float32) for s in shapes]
    base = cp.asarray(rng.normal(size=(6, 8)).astype(np.float32))
    strided_src, strided_dst = base[:, ::2], cp.zeros((6, 4), np.float32)
    pairs = list(zip(dsts, srcs)) + [(strided_dst, strided_src)]
    # the cache holds at most _COPY_GRAPHS_MAX graphs: captured steps of earlier tests in this
    # process may have filled it (a new graph would evict one and the count would not move)
    _capture_copies._COPY_GRAPHS.clear()
    before = 0
    _capture_copies.copy_many(pairs)
    cp.cuda.Device().synchronize()
    for d, s in pairs:
        np.testing.assert_array_equal(cp.asnumpy(d), cp.asnumpy(s))
    assert len(_capture_copies._COPY_GRAPHS) == before + 1
    for s in srcs:  # new values at the same addresses: the cached graph copies them
        s *= 2.0
    strided_src *= 3.0
    _capture_copies.copy_many(pairs)
    cp.cuda.Device().synchronize()
    assert len(_capture_copies._COPY_GRAPHS) == before + 1
    for d, s in pairs:
        np.testing.assert_array_equal(cp.asnumpy(d), cp.asnumpy(s))


def test_copy_plan_copies_the_values_the_arrays_hold_at_each_call():
    import cupy as cp

    rng = np.random.default_rng(1)
    shapes = [(3,), (17, 5), (64, 64), (2, 3, 4), (0, 4), (7,), (1,)]
    srcs = [cp.asarray(rng.normal(size=s).astype(np.float32)) for s in shapes]
    dsts = [cp.zeros(s, np.float32) for s in shapes]
    go = _capture_copies.copy_plan(list(zip(dsts, srcs)))
    for k in (1.0, -3.0, 0.5):
        for s in srcs:  # new values in the same arrays: each call copies the current ones
            s[...] = cp.asarray(rng.normal(size=s.shape).astype(np.float32)) * k
        go()
        cp.cuda.Device().synchronize()
        for d, s in zip(dsts, srcs):
            np.testing.assert_array_equal(cp.asnumpy(d), cp.asnumpy(s))
    # fewer than 4 pairs (plain memcpys) and a strided pair (the element-wise copy)
    base = cp.asarray(rng.normal(size=(6, 8)).astype(np.float32))
    small = _capture_copies.copy_plan([(dsts[0], srcs[0]), (cp.zeros((6, 4), np.float32),
                                                            base[:, ::2])])  # fmt: skip
    srcs[0] *= 2.0
    small()
    cp.cuda.Device().synchronize()
    np.testing.assert_array_equal(cp.asnumpy(dsts[0]), cp.asnumpy(srcs[0]))
    np.testing.assert_array_equal(cp.asnumpy(small.pairs[1][0]), cp.asnumpy(base[:, ::2]))
