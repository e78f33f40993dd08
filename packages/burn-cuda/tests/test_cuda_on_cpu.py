"""The CPU kernel runner itself (`cuda_on_cpu.py`, `fake_cupy.py`): the checks the kernel tests
rely on must fire (a write past a buffer, a launch the GPU rejects, a barrier deadlock, a
scalar of the wrong width) and barriers must order the threads of a block."""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

import cuda_on_cpu
from fake_cupy import FakeCupy, KernelWroteOutside

pytestmark = pytest.mark.skipif(not cuda_on_cpu.available(), reason="g++ is not installed")

COPY = """
extern "C" __global__ void copy_le(const float* x, float* y, long long n) {
  long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
  if (t > n) return;  // off by one: thread n writes y[n]
  y[t] = t < n ? x[t] : 0.0f;
}
"""

BLOCK_SUM = """
extern "C" __global__ void block_sum(const double* x, double* out, int n) {
  __shared__ double part[256];
  double acc = 0.0;
  for (int i = threadIdx.x; i < n; i += blockDim.x) acc += x[blockIdx.x * n + i];
  part[threadIdx.x] = acc;
  __syncthreads();
  for (int k = blockDim.x / 2; k > 0; k >>= 1) {
    if (threadIdx.x < k) part[threadIdx.x] += part[threadIdx.x + k];
    __syncthreads();
  }
  double w = part[0];
  for (int o = 16; o > 0; o >>= 1) w += __shfl_down_sync(0xffffffffu, 0.0, o);
  if (threadIdx.x == 0) out[blockIdx.x] = w;
}
"""

DIVERGENT = """
extern "C" __global__ void divergent(float* y) {
  float v = 1.0f;
  if (threadIdx.x < 16) v = __shfl_down_sync(0xffffffffu, v, 1);  // half a warp shuffles
  else __syncthreads();                                              // the rest wait here
  y[threadIdx.x] = v;
}
"""

WIDE = """
extern "C" __global__ void wide(long long* y, long long v) { y[0] = v; }
"""


def test_a_write_past_the_buffer_raises():
    cp = FakeCupy()
    x, y = cp.ndarray((300,), np.float32), cp.ndarray((300,), np.float32)
    with pytest.raises(KernelWroteOutside, match="copy_le"):
        cp.RawKernel(COPY, "copy_le")((2,), (256,), (x, y, np.int64(300)))


def test_launches_the_gpu_rejects_raise():
    cp = FakeCupy()
    k = cp.RawKernel(COPY, "copy_le")
    x = cp.ndarray((4,), np.float32)
    with pytest.raises(cuda_on_cpu.CpuKernelError, match="invalid configuration"):
        k((0,), (256,), (x, x, np.int64(0)))
    with pytest.raises(cuda_on_cpu.CpuKernelError, match="1024 threads"):
        k((1,), (2048,), (x, x, np.int64(0)))


def test_barriers_order_the_threads_of_a_block():
    cp = FakeCupy()
    x = np.random.default_rng(0).uniform(size=(3, 1000))
    xs = cp.asarray(x)
    out = cp.ndarray((3,), np.float64)
    cp.RawKernel(BLOCK_SUM, "block_sum")((3,), (256,), (xs, out, np.int32(1000)))
    np.testing.assert_allclose(np.asarray(out), x.sum(1), rtol=1e-12)


def test_threads_split_between_a_shuffle_and_a_barrier_deadlock():
    cp = FakeCupy()
    y = cp.ndarray((64,), np.float32)
    with pytest.raises(cuda_on_cpu.CpuKernelError, match="deadlock"):
        cp.RawKernel(DIVERGENT, "divergent")((1,), (64,), (y,))


def test_raw_kernel_scalars_pass_their_own_width():
    # cupy's RawKernel passes a numpy scalar's own bytes: an int32 for a `long long` parameter
    # reads 4 bytes beyond it (garbage) on the GPU, and here
    cp = FakeCupy(driver=False)
    y = cp.ndarray((1,), np.int64)
    k = cp.RawKernel(WIDE, "wide")
    k((1,), (1,), (y, np.int64(7)))
    assert int(y[0]) == 7
    k((1,), (1,), (y, np.int32(7)))
    assert int(y[0]) != 7


def test_repr_names_the_class_and_its_options():
    # Built from `repr_options()`: a subclass is named as itself (the base's string used to be
    # sliced at len("Cuda("), which cut a subclass's name into the options).
    from burn_tensor import _backend as tensor_backend
    from cpu_backend import cuda_on_cpu_backend

    with cuda_on_cpu_backend(FakeCupy(), float_dtype="float64", allow_tf32=True) as (cuda, _):
        assert repr(cuda) == "Cuda(float_dtype='float64', allow_tf32=True)"

        class TunedCuda(type(cuda)):
            pass

        try:
            assert repr(TunedCuda(allow_tf32=True)) == "TunedCuda(allow_tf32=True)"
        finally:
            cache = tensor_backend._Interned._cache
            for key in [k for k in cache if k[0] is TunedCuda]:
                del cache[key]


def test_a_backend_made_outside_the_stand_in_keeps_its_own_ops(monkeypatch):
    """A Cuda() made before the stand-in (on the GPU machine: the real cupy; here another
    FakeCupy plays it) whose kind views are rebuilt while the stand-in's ops are on the class
    (burn_tensor's coverage plugin does that) must dispatch to its own ops afterwards."""
    from burn_cuda import _backend, _launch, _platform
    from burn_tensor import Tensor
    from burn_tensor import _backend as tensor_backend
    from burn_tensor._device import Device
    from burn_backend_tests import plugin
    from cpu_backend import _cupyx, cuda_on_cpu_backend

    outside = FakeCupy()
    monkeypatch.setattr(_platform, "load_cupy", lambda: outside)
    for name, module in _cupyx().items():
        monkeypatch.setitem(sys.modules, name, module)
    for key in ("_CP", "_MATMUL"):
        monkeypatch.setattr(_backend, key, [None])
    before = dict(vars(_backend.Cuda))
    try:
        mine = _backend.Cuda(float_dtype="float64")

        def cupy_of_add(backend):
            fn = backend.kind_ops[Tensor.from_data([1.0], backend.device())._o.kind].add.__func__
            cells = [c.cell_contents for c in fn.__closure__ or ()]
            return next(c.cp for c in cells if isinstance(c, _launch.DriverLauncher))

        assert cupy_of_add(mine) is outside
        # the conformance plugin keys its suite context by backend, and backends of equal
        # options are equal: the stand-in's suite tests must not run on (and rebuild) `mine`
        monkeypatch.setitem(plugin._CTX, mine, "the outside backend's suite context")
        with cuda_on_cpu_backend(FakeCupy(), float_dtype="float64") as (inner, fake):
            assert inner == mine and inner is not mine
            assert inner not in plugin._CTX
            plugin._CTX[inner] = "the stand-in's suite context"
            mine._init_kind_ops()  # what the coverage plugin's recording() does
            assert cupy_of_add(mine) is fake
        assert cupy_of_add(mine) is outside
        assert plugin._CTX[mine] == "the outside backend's suite context"
        with cuda_on_cpu_backend(FakeCupy(), float_dtype="float64") as (inner, fake):  # kept for its next use
            assert plugin._CTX[inner] == "the stand-in's suite context"
            plugin._CTX.pop(inner)
    finally:
        for name in [n for n in vars(_backend.Cuda) if n not in before]:
            delattr(_backend.Cuda, name)
        for name, value in before.items():
            setattr(_backend.Cuda, name, value)
        key = (_backend.Cuda, tuple(mine.options().items()))
        tensor_backend._Interned._cache.pop(key, None)
        for k in [k for k in Device._cache if k[0] is mine]:
            del Device._cache[k]


def test_a_new_threads_first_driver_launch_makes_its_context_current():
    # a thread (a data loader's) whose cupy calls never bound a context launched through the
    # driver into CUDA_ERROR_INVALID_CONTEXT (H200, step capture's thread test)
    import threading

    from burn_cuda._launch import DriverLauncher

    cp = FakeCupy(strict_context=True)
    go = DriverLauncher(cp)
    k = cp.RawKernel(WIDE, "wide")
    y = cp.ndarray((1,), np.int64)
    errors: list = []

    def launch():
        try:
            go.args(k, 1, 1, [y, 7])
        except Exception as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    t = threading.Thread(target=launch)
    t.start()
    t.join()
    assert errors == [] and int(y[0]) == 7
