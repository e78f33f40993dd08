"""NdArray's quantized kernels (`_native/quant.c`): int8 x int8 -> int32 matmul, and the packed
weight-only linear that never expands the weight in memory (peak RSS of a fresh process)."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import numpy as np
import pytest
from burn_ndarray import NdArray, _native_quant
from burn_tensor import Tensor, module
from burn_tensor.quantization import (
    QuantLevel,
    QuantScheme,
    QuantStore,
    QuantValue,
    dequantize_ref,
    unpack_ref,
)

pytestmark = pytest.mark.skipif(_native_quant.lib() is None, reason=_native_quant.status())


@pytest.mark.parametrize("store", list(QuantStore), ids=lambda s: s.value)
@pytest.mark.parametrize("threads", [1, 2])
def test_int8_matmul_accumulates_exactly_in_int32(store, threads):
    d = NdArray(num_threads=threads).device()
    rng = np.random.default_rng(0)
    # K = 2051: sums reach ~127 * 127 * 2051 = 3.3e7, beyond float32's exact integers
    a = Tensor.from_data(rng.normal(size=(9, 2051)).astype(np.float32), d)
    b = Tensor.from_data(rng.normal(size=(2051, 7)).astype(np.float32), d)
    scheme = QuantScheme(value=QuantValue.Q8S, store=store)
    qa, qb = a.quantize_dynamic(scheme), b.quantize_dynamic(scheme)
    da, db = qa.quantized_data(), qb.quantized_data()
    ia = unpack_ref(da.values, scheme, (9, 2051))
    ib = unpack_ref(db.values, scheme, (2051, 7))
    want = (ia @ ib).astype(np.float32) * np.float32(da.scales[0] * db.scales[0])
    got = qa.matmul(qb)
    assert not got.is_quantized()
    np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize(
    "scheme",
    [
        QuantScheme(),
        QuantScheme(store=QuantStore.NATIVE),
        QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32)),
        QuantScheme(value=QuantValue.Q2F, level=QuantLevel.block(8)),
    ],
    ids=["q8s", "q8s-native", "q4s-b32", "q2f-b8"],
)
@pytest.mark.parametrize("m", [1, 5])
def test_packed_linear_matches_float64_reference(scheme, m):
    d = NdArray(num_threads=2).device()
    rng = np.random.default_rng(1)
    w = Tensor.from_data(rng.normal(size=(96, 224)).astype(np.float32), d).quantize_dynamic(scheme)
    x = rng.normal(size=(m, 96)).astype(np.float32)
    bias = rng.normal(size=(224,)).astype(np.float32)
    wd = w.quantized_data()
    want = x.astype(np.float64) @ dequantize_ref(wd.values, wd.scales, scheme, (96, 224)) + bias
    got = module.linear(Tensor.from_data(x, d), w, Tensor.from_data(bias, d))
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("op", ["linear", "matmul"])
def test_packed_linear_does_not_expand_the_weight(op):
    """int4 weight [4096, 4096]: 8 MiB packed, 64 MiB as float32. `module.linear(x, w)` and
    `x.matmul(w)` at batch 1 must raise the peak RSS of a fresh process by far less than the
    float32 weight."""
    child = textwrap.dedent(
        """
        import resource
        import numpy as np
        from burn_ndarray import NdArray, _native_quant
        from burn_tensor import Tensor, module
        from burn_tensor.quantization import QuantizedData, QuantLevel, QuantScheme, QuantValue
        assert _native_quant.lib() is not None
        d = NdArray(num_threads=1).device()
        scheme = QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32))
        rng = np.random.default_rng(0)
        values = rng.integers(-2**31, 2**31, size=(4096, 512), dtype=np.int64).astype(np.int32)
        scales = np.full((4096, 128), 0.01, np.float32)
        w = Tensor.from_quantized_data(QuantizedData(values, scales, scheme, (4096, 4096)), d)
        x = Tensor.from_data(np.ones((1, 4096), np.float32), d)
        run = (lambda: module.linear(x, w)) if OP == "linear" else (lambda: x.matmul(w))
        _native_quant.lib()  # the library loaded before the baseline
        # ru_maxrss is the lifetime peak: the baseline is taken before the first call, else a
        # first call that expanded the weight would hide in the baseline
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        run().numpy()
        y = run().numpy()
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        assert y.shape == (1, 4096) and np.isfinite(y).all()
        print(before, after)
        """
    )
    child = f"OP = {op!r}\n" + child
    out = subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    before, after = map(int, out.stdout.split())
    grew_mib = (after - before) / 1024
    assert grew_mib < 8, f"peak RSS grew {grew_mib:.1f} MiB (a float32 weight is 64 MiB)"


def test_float_matmul_quantized_weight_takes_the_packed_kernel():
    """x.matmul(qw) (float lhs, quantized rank-2 rhs) = linear without bias (that it runs on
    the packed kernel is checked by the peak-RSS test's `matmul` case)."""
    d = NdArray(num_threads=2).device()
    rng = np.random.default_rng(4)
    scheme = QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(16))
    w = Tensor.from_data(rng.normal(size=(64, 48)).astype(np.float32), d).quantize_dynamic(scheme)
    x = rng.normal(size=(3, 64)).astype(np.float32)
    wd = w.quantized_data()
    want = x.astype(np.float64) @ dequantize_ref(wd.values, wd.scales, scheme, (64, 48))
    got = Tensor.from_data(x, d).matmul(w)
    assert not got.is_quantized()
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-4, atol=1e-4)


def test_forked_child_runs_the_quantized_kernels_without_hanging():
    # libgomp's pool does not survive fork: after the parent ran a parallel region, a child
    # (a data-loader worker) must run the quantized kernels on its calling thread
    code = textwrap.dedent(
        """
        import os, numpy as np
        from burn_ndarray import NdArray
        from burn_tensor import Tensor, module
        from burn_tensor.quantization import QuantScheme
        d = NdArray(num_threads=4).device()
        w = Tensor.from_data(np.ones((256, 256), np.float32), d).quantize_dynamic(QuantScheme())
        x = Tensor.from_data(np.ones((64, 256), np.float32), d)
        module.linear(x, w).numpy()
        pid = os.fork()
        if pid == 0:
            import signal
            signal.alarm(30)  # a hung child dies instead of staying behind
            print(float(module.linear(x, w).numpy()[0, 0]), flush=True)
            os._exit(0)
        os.waitpid(pid, 0)
        """
    )
    out = subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", code],
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert out.stdout.split() == ["256.0"], out.stdout + out.stderr
