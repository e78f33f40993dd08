"""GPU-only behaviour of Cuda: devices, transfers, DLPack, async + sync, the memory pool and its
out-of-memory error, seeded random streams, float16, TF32 as an option, module ops against
NdArray float64. Skipped with the reason where no CUDA GPU is usable."""

from __future__ import annotations

import numpy as np
import pytest
from burn_cuda import Cuda, CudaOutOfMemoryError
from burn_ndarray import NdArray
from burn_tensor import Distribution, Tensor, module

pytestmark = [pytest.mark.gpu, pytest.mark.usefixtures("cuda_ready")]


def test_devices_and_transfers_to_and_from_ndarray():
    dev = Cuda().device()
    assert Cuda().device(0) is dev and repr(dev) == "Cuda"
    host = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = Tensor.from_data(host, NdArray().device()).to_device(dev)
    assert type(t.into_primitive()).__module__.startswith("cupy")
    back = (t * 2).to_device(NdArray().device())
    np.testing.assert_array_equal(back.numpy(), host * 2)
    for i in range(Cuda().device_count()):
        moved = t.to_device(Cuda().device(i))
        assert moved.into_primitive().device.id == i
        np.testing.assert_array_equal(moved.numpy(), host)


@pytest.mark.parametrize("fused", [False, True])
def test_training_on_the_second_gpu_stays_on_it(fused):
    # A data-parallel rank on GPU 1 (cupy's current device there, as bind_gpu sets it) trains
    # on Cuda().device(1): autodiff's and the default ops' helper tensors (the backward seed,
    # zeros for gather/embedding gradients) are made beside their inputs, not on GPU 0, so no
    # op reads another GPU's memory (cupy warns when one does).
    import warnings

    import cupy as cp
    from burn_autodiff import Autodiff
    from burn_fusion import Fusion

    if Cuda().device_count() < 2:
        pytest.skip("needs 2 GPUs (the nvidia-h100-x2 machine)")
    backend = Autodiff(Fusion(Cuda()) if fused else Cuda())
    dev = backend.device(1)
    with warnings.catch_warnings(), cp.cuda.Device(1):
        warnings.simplefilter("error", cp._util.PerformanceWarning)
        w = Tensor.from_data(np.arange(12, dtype=np.float32).reshape(4, 3), dev).require_grad()
        idx = Tensor.from_data(np.array([[0, 3], [3, 1]]), dev)
        emb = module.embedding(w, idx)  # [2, 2, 3]
        picked = emb.gather(2, Tensor.from_data(np.zeros((2, 2, 1), np.int64), dev))
        loss = (emb.exp() * 1e-3).sum() + picked.sum()
        grads = loss.backward()
        g = w.grad(grads)
        assert g.device.index == 1
        arr = cp.from_dlpack(g)
        assert arr.device.id == 1
        got = cp.asnumpy(arr)
    wn = np.arange(12, dtype=np.float64).reshape(4, 3)
    want = np.zeros((4, 3))
    for i in (0, 3, 3, 1):
        want[i] += np.exp(wn[i]) * 1e-3
        want[i, 0] += 1.0
    np.testing.assert_allclose(got, want, rtol=1e-5)


def test_dlpack_zero_copy_with_cupy_both_ways():
    import cupy as cp

    dev = Cuda().device()
    t = Tensor.from_data([[1.0, 2.0], [3.0, 4.0]], dev)
    assert t.__dlpack_device__()[0] == 2  # kDLCUDA
    a = cp.from_dlpack(t)
    assert a.data.ptr == t.into_primitive().data.ptr  # the same memory
    src = cp.arange(6, dtype=cp.float32).reshape(2, 3)
    u = Tensor.from_dlpack(src)
    assert u.device is dev and u.into_primitive().data.ptr == src.data.ptr
    assert u.sum().into_scalar() == 15.0


def test_dlpack_zero_copy_through_autodiff_and_fusion():
    # The decorators export their inner cupy array (a pending Fusion plan runs first), so NCCL
    # and torch read gradients in place.
    import cupy as cp
    from burn_autodiff import Autodiff
    from burn_fusion import Fusion

    for backend in (Autodiff(Cuda()), Fusion(Cuda()), Autodiff(Fusion(Cuda()))):
        dev = backend.device()
        t = (Tensor.from_data(np.arange(6, dtype=np.float32), dev) * 2.0).exp()
        assert t.__dlpack_device__()[0] == 2, backend  # kDLCUDA
        a = cp.from_dlpack(t)
        np.testing.assert_allclose(cp.asnumpy(a), np.exp(2.0 * np.arange(6)), rtol=1e-6)
        assert a.data.ptr == cp.from_dlpack(t).data.ptr  # the same buffer, not a new copy
        back = Tensor.from_dlpack(a, dev)
        assert back.device == dev and back.sum().into_scalar() == pytest.approx(float(a.sum()))


def test_dlpack_with_torch_when_installed():
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch without CUDA")
    dev = Cuda().device()
    t = Tensor.from_data(np.arange(8, dtype=np.float32), dev)
    tt = torch.from_dlpack(t)
    assert tt.is_cuda and tt.data_ptr() == t.into_primitive().data.ptr
    back = Tensor.from_dlpack(torch.arange(5, device="cuda", dtype=torch.float64))
    assert back.device is Cuda().device(0) and back.dtype.value == "float64"
    assert back.sum().into_scalar() == 10.0


def test_async_until_read_and_sync():
    import cupy as cp

    dev = Cuda().device()
    x = Tensor.random([2048, 2048], Distribution.default(), dev)
    for _ in range(3):
        x = x @ x * 1e-3
    dev.sync()
    assert cp.cuda.get_current_stream().done
    assert np.isfinite(x.sum().into_scalar())


def test_memory_stats_and_oom_error_names_the_op():
    dev = Cuda().device()
    before = dev.memory_stats()
    keep = Tensor.zeros([1024, 1024], dev)  # 4 MiB
    after = dev.memory_stats()
    assert after["bytes_in_use"] >= before["bytes_in_use"] + 4 * 2**20
    assert after["device_total"] > 0 and after["bytes_reserved"] >= after["bytes_in_use"]
    with pytest.raises(CudaOutOfMemoryError) as err:
        Tensor.zeros([2**44], dev)  # 64 TiB of float32
    e = err.value
    assert e.op == "float_zeros" and e.requested == 2**46
    assert "float_zeros: out of GPU memory" in str(e) and e.in_use >= 4 * 2**20
    del keep


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_same_seed_same_numbers(dtype):
    dev = Cuda(float_dtype=dtype).device()
    draws = []
    for _ in range(2):
        dev.seed(7)
        draws.append(
            [
                Tensor.random([1000], d, dev).numpy()
                for d in (
                    Distribution.uniform(-2, 3),
                    Distribution.normal(1, 2),
                    Distribution.bernoulli(0.3),
                )
            ]
        )
    for a, b in zip(*draws):
        np.testing.assert_array_equal(a, b)
    u, n, b = draws[0]
    assert -2 <= u.min() and u.max() < 3 and abs(u.mean() - 0.5) < 0.2
    assert abs(n.mean() - 1) < 0.3 and abs(n.std() - 2) < 0.3
    assert set(np.unique(b)) <= {0.0, 1.0} and abs(b.mean() - 0.3) < 0.07


def test_float16_ops_against_float64():
    dev = Cuda(float_dtype="float16").device()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((16, 32))
    b = rng.standard_normal((32, 8))
    x, y = Tensor.from_data(a, dev), Tensor.from_data(b, dev)
    assert x.dtype.value == "float16"
    np.testing.assert_allclose((x @ y).numpy(), a @ b, rtol=2e-2, atol=5e-2)
    np.testing.assert_allclose(x.exp().sum_dim(1).numpy()[:, 0], np.exp(a).sum(1), rtol=2e-2)
    from math import erf

    np.testing.assert_allclose(x.erf().numpy(), np.vectorize(erf)(a), atol=2e-3)
    np.testing.assert_allclose(x.cummax(1).numpy(), np.maximum.accumulate(a, 1), atol=2e-3)
    img = Tensor.from_data(rng.standard_normal((2, 3, 8, 8)), dev)
    pooled = module.max_pool2d(img, [2, 2], [2, 2], [0, 0], [1, 1])
    ref = img.numpy().astype(np.float64).reshape(2, 3, 4, 2, 4, 2).max(axis=(3, 5))
    np.testing.assert_allclose(pooled.numpy(), ref, atol=1e-3)


def test_tf32_is_an_option():
    assert Cuda(allow_tf32=True) is not Cuda() and Cuda(allow_tf32=True) is Cuda(allow_tf32=True)
    assert repr(Cuda(allow_tf32=True)) == "Cuda(allow_tf32=True)"
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((256, 256)), rng.standard_normal((256, 256))
    exact = Tensor.from_data(a, Cuda().device()) @ Tensor.from_data(b, Cuda().device())
    np.testing.assert_allclose(exact.numpy(), a @ b, rtol=1e-4, atol=1e-3)
    fast = Tensor.from_data(a, Cuda(allow_tf32=True).device())
    fast = fast @ Tensor.from_data(b, Cuda(allow_tf32=True).device())
    np.testing.assert_allclose(fast.numpy(), a @ b, rtol=2e-2, atol=0.5)


def test_conv2d_against_ndarray_float64():
    rng = np.random.default_rng(2)
    x, w, bias = (
        rng.standard_normal((4, 6, 13, 11)),
        rng.standard_normal((8, 3, 3, 3)),
        rng.standard_normal(8),
    )
    kw = {"stride": [2, 1], "padding": [1, 2], "dilation": [1, 2], "groups": 2}
    ref = module.conv2d(
        *(Tensor.from_data(a, NdArray(float_dtype="float64").device()) for a in (x, w, bias)), **kw
    )
    got = module.conv2d(
        *(Tensor.from_data(a, Cuda(float_dtype="float64").device()) for a in (x, w, bias)), **kw
    )
    np.testing.assert_allclose(got.numpy(), ref.numpy(), rtol=1e-10, atol=1e-10)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 8, 26, 26), (3, 5, 1, 1), (1, 1, 7, 3), (0, 4, 5, 5),
                                   (2, 3, 0, 4), (129, 2, 3, 3), (1024, 16, 26, 26)])  # fmt: skip
def test_conv2d_bias_backward_kernel_against_float64(dtype, shape):
    """The per-channel bias gradient kernel: sums over batch and pixels against numpy float64
    (float32 results within rounding of one cast), empty batches and images give zeros."""
    import cupy as cp
    from burn_cuda import Cuda

    b = Cuda(float_dtype=dtype)
    rng = np.random.default_rng(2)
    g = rng.standard_normal(shape).astype(dtype)
    bias = cp.zeros(shape[1], dtype)
    got = b.conv2d_bias_backward(None, None, bias, cp.asarray(g)).get()
    want = g.astype(np.float64).sum(axis=(0, 2, 3))
    assert got.shape == (shape[1],) and got.dtype == np.dtype(dtype)
    # (1024, 16, 26, 26) sums rows then columns in the dtype (float32: 692k values a channel)
    big = shape[0] * shape[2] * shape[3] >= 1 << 17
    rtol = (1e-5 if big else 1e-6) if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got, want, rtol=rtol, atol=1e-2 if big else 1e-5)
    # a strided gradient takes cupy's sum: the same values
    gs = cp.asarray(np.ascontiguousarray(np.swapaxes(g, 2, 3))).swapaxes(2, 3)
    got2 = b.conv2d_bias_backward(None, None, bias, gs).get()
    np.testing.assert_allclose(got2, want, rtol=1e-5, atol=1e-4)
