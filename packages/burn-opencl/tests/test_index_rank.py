"""burn_gpu's index kernels walk up to `RANK` dims after merging: a tensor of more dims that do
not merge (every dim reversed) is made contiguous first, and gather / select / scatter /
select_assign still give numpy float64's result."""

from __future__ import annotations

import numpy as np
from burn_opencl import OpenCl
from burn_tensor import Tensor

B = OpenCl("cpu")
AXES = (7, 6, 5, 4, 3, 2, 1, 0)


def test_index_ops_past_the_kernels_rank():
    rng = np.random.default_rng(41)
    x = rng.standard_normal((2, 3, 2, 2, 3, 2, 2, 3)).astype(np.float32)
    t = Tensor.from_data(x, B.device()).permute(AXES)  # strided: no two dims merge
    xs = x.transpose(AXES).astype(np.float64)
    idx = rng.integers(0, xs.shape[4], xs.shape).astype(np.int32)
    ti = Tensor.from_data(idx, B.device())
    np.testing.assert_allclose(t.gather(4, ti).into_data().array, np.take_along_axis(xs, idx, 4))
    v = rng.standard_normal(xs.shape).astype(np.float32)
    want = xs.copy()
    pos = list(np.indices(xs.shape, sparse=True))
    pos[4] = idx
    np.add.at(want, tuple(pos), v)
    got = t.scatter(4, ti, Tensor.from_data(v, B.device())).into_data().array
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    sel = Tensor.from_data(np.array([1, 0, 1], np.int32), B.device())
    np.testing.assert_allclose(t.select(4, sel).into_data().array, np.take(xs, [1, 0, 1], 4))
    vs = rng.standard_normal(xs.shape[:4] + (3,) + xs.shape[5:]).astype(np.float32)
    want = xs.copy()
    np.add.at(want, (slice(None),) * 4 + ([1, 0, 1],), vs)
    got = t.select_assign(4, sel, Tensor.from_data(vs, B.device())).into_data().array
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
