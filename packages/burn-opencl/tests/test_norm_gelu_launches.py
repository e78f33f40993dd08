"""layer_norm, layer_norm_backward, gelu and gelu_backward on OpenCl launch burn_gpu's kernels:
one, three (dx per row, dgamma/dbeta partials per run of rows, the pass over the runs), one and
one -- where burn-tensor's decompositions took 10, 19, 1 and 11 -- in float32 and bfloat16
(the values: the conformance suite and `test_half.py`)."""

from __future__ import annotations

import math
import os

import numpy as np
import pytest
from burn_opencl import OpenCl, _plan
from burn_tensor import TensorData

cl = pytest.importorskip("pyopencl")
pytest.importorskip("ml_dtypes")
#: the OpenCL device type (conftest's: `BURN_OPENCL_TEST_DEVICE_TYPE=gpu` on the GPU machine)
DEVICE_TYPE = os.environ.get("BURN_OPENCL_TEST_DEVICE_TYPE", "cpu")


# float16 takes the same native route as bfloat16 (`_half.NATIVE`); its values: test_half.py
@pytest.mark.parametrize("dt", ["float32", "bfloat16"])
def test_each_op_is_its_kernels(monkeypatch, dt):
    be = OpenCl(DEVICE_TYPE, float_dtype=dt)
    dev = be.device()
    rng = np.random.default_rng(7)
    npdt = be.float_dtype.np
    put = lambda a: be.float_from_data(TensorData(a.astype(npdt)), dev)  # noqa: E731
    x64 = rng.standard_normal((3, 5, 16)).astype(npdt).astype(np.float64)
    x, go = put(x64), put(x64 * 0.5)
    g, b = put(rng.standard_normal(16)), put(rng.standard_normal(16))
    names = []
    # every launch: pyopencl's call (the eager ops) and the binding cached plans call directly
    real, real_plan = cl.enqueue_nd_range_kernel, _plan._ENQUEUE

    def counting(queue, kernel, *args, **kwargs):
        names.append(kernel.function_name)
        return real(queue, kernel, *args, **kwargs)

    def counting_plan(queue, kernel, *args):
        names.append(kernel.function_name)
        return real_plan(queue, kernel, *args)

    ops = {
        "layer_norm": lambda: be.layer_norm(x, g, b, 1e-5),
        "layer_norm_backward": lambda: be.layer_norm_backward(x, g, go, 1e-5),
        "gelu": lambda: be.gelu(x),
        "gelu_backward": lambda: be.gelu_backward(x, go),
    }
    launched = {}
    for name, fn in ops.items():
        fn()  # compiled outside the count
        names.clear()
        monkeypatch.setattr(cl, "enqueue_nd_range_kernel", counting)
        monkeypatch.setattr(_plan, "_ENQUEUE", counting_plan)
        out = fn()
        monkeypatch.undo()
        launched[name] = list(names)
    assert launched["layer_norm"] == ["layer_norm_rows"]
    assert launched["layer_norm_backward"] == [
        "layer_norm_bwd_rows", "layer_norm_bwd_part", "layer_norm_bwd_cols"
    ]  # fmt: skip
    assert len(launched["gelu"]) == 1 and len(launched["gelu_backward"]) == 1, launched
    # the last one's value: grad * (cdf + x pdf) on the stored values
    cdf = 0.5 * (1 + np.vectorize(math.erf)(x64 / math.sqrt(2)))
    want = (x64 * 0.5).astype(npdt).astype(np.float64) * (
        cdf + x64 * np.exp(-0.5 * x64 * x64) / math.sqrt(2 * math.pi)
    )
    got = np.asarray(be.float_into_data(out).array).astype(np.float64)
    eps = {"float32": 2.0**-22, "float16": 2.0**-10, "bfloat16": 2.0**-7}[dt]
    np.testing.assert_allclose(got, want, rtol=2 * eps, atol=2 * eps)
