"""`NdArray().explain(op, *inputs)`: each route an NdArray op can take, read from the inputs
(its dispatch table's kernel, the native, threaded and bfloat16 tiers, the contract default)."""

from __future__ import annotations

import numpy as np
import pytest
from burn_ndarray import NdArray, _native, _native_ops
from burn_ndarray._ops_table import OPS
from burn_tensor import Tensor
from burn_tensor.backend import Spec

NATIVE = pytest.mark.skipif(_native.lib() is None, reason="no C compiler built the native kernels")


def test_small_input_runs_the_table_kernel():
    b = NdArray(num_threads=1)
    e = b.explain("float_add", Spec((2, 3), "float32"), Spec((2, 3), "float32"))
    final = e.final
    assert (final.how, final.impl, final.where) == ("kernel", "numpy.add", "compiled numpy ufunc")
    assert "NdArray.dispatch_table" in final.why
    assert OPS["float_add"].__func__.__wrapped__ is np.add  # what the table says, quiet


def test_table_function_has_file_and_line():
    step = NdArray(num_threads=1).explain("bool_any", ((2, 3), "bool")).final
    assert step.impl == "burn_ndarray._ops_own.bool_any"
    assert step.where.startswith("burn_ndarray/_ops_own.py:")


@NATIVE
def test_native_tier_takes_large_float32_and_declines_float16():
    b = NdArray(num_threads=1)
    n = _native_ops.default_native_min()
    big = Spec((n,), "float32")
    e = b.explain("float_exp", big)
    assert e.final.how == "tier" and "native tier runs" in e.final.why
    assert e.final.where.startswith("burn_ndarray/_native_ops.py:")
    e = b.explain("float_exp", Spec((n,), "float16"))
    assert "no native kernel for float16" in e.steps[0].why
    assert e.final.impl == "numpy.exp"
    e = b.explain("float_exp", Spec((n - 1,), "float32"))
    assert "< native_min" in e.steps[0].why and e.final.impl == "numpy.exp"


def test_threaded_tier_splits_from_parallel_min():
    b = NdArray(num_threads=2, parallel_min=8)
    e = b.explain("float_sum", Spec((16,), "float16"))  # no native kernel for float16
    assert [s.how for s in e.steps][-1] == "tier"
    assert "threaded tier runs: 16 elements >= parallel_min 8" in e.final.why
    e = b.explain("float_sum", Spec((4,), "float16"))
    assert e.final.how == "kernel" and e.final.impl.endswith("make_numeric.<locals>.sum_")
    # below the size the native tier calls the class's op directly (its small path)
    assert "4 elements <" in e.steps[0].why


def test_default_decomposition_is_named():
    step = NdArray().explain("float_max_abs", Spec((3,), "float32")).final
    assert step.how == "default"
    assert step.impl == "burn_tensor._ops_numeric.float_max_abs"
    assert step.where.startswith("burn_tensor/_ops_numeric.py:")


def test_bfloat16_tier_wraps():
    pytest.importorskip("ml_dtypes")
    e = NdArray(float_dtype="bfloat16").explain("float_exp", Spec((4,), "bfloat16"))
    assert e.steps[0].how == "tier" and "bfloat16 tier wraps" in e.steps[0].why
    assert e.steps[0].where.startswith("burn_ndarray/_bf16.py:")
    assert e.final.impl == "numpy.exp"


def test_tensors_are_inputs_too():
    device = NdArray(num_threads=1).device()
    x = Tensor.from_data([[1.0, 2.0]], device)
    e = device.backend.explain("float_matmul", x, Tensor.ones([2, 1], device))
    assert e.final.impl == "burn_ndarray._ops_common.matmul"
