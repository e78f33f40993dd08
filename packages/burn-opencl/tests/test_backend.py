"""OpenCl-specific behaviour: device selection, views without copies, kept kernels, the memory
pool, the counter-based generator (against a numpy Philox written here), and inputs that would
trap a CPU (integer division by zero)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from burn_opencl import OpenCl, _backend, _platform
from burn_tensor import Distribution, NoDeviceError, Tensor, TensorCheckError

B = OpenCl("cpu")


@pytest.fixture
def fresh_selection(monkeypatch):
    """Forget cached device selections so BURN_OPENCL_DEVICE is read again."""
    monkeypatch.setattr(_backend, "_SELECTIONS", {})


def test_constructor_options_and_repr():
    assert repr(OpenCl()) == "OpenCl()"
    b64 = OpenCl("cpu", float_dtype="float64")
    assert repr(b64) == "OpenCl(device_type='cpu', float_dtype='float64')"
    assert OpenCl("cpu") is OpenCl(device_type="cpu")
    # the device type is part of the backend's identity (interning, equality, pickling)
    assert OpenCl("cpu") is not OpenCl("all") and OpenCl("cpu") != OpenCl("all")
    assert pickle.loads(pickle.dumps(OpenCl("cpu"))) is OpenCl("cpu")
    with pytest.raises(ValueError, match="device_type must be one of"):
        OpenCl("tpu")
    # float16 is storage with float32 compute: every device takes it (no cl_khr_fp16 needed)
    assert OpenCl(float_dtype="float16").float_dtype.value == "float16"


def test_a_subclass_repr_names_the_subclass_and_its_options():
    # The repr is built from `repr_options()`, not by slicing "OpenCl(" off the base's string:
    # that printed "OpenCl(device_type='cpu', ithSoftmax()" for the subclass below (burn-fusion's
    # delegated-softmax backend, named in the conformance coverage line).
    class OpenClWithSoftmax(OpenCl):
        pass

    assert repr(OpenClWithSoftmax("cpu")) == "OpenClWithSoftmax(device_type='cpu')"
    f64 = OpenClWithSoftmax(float_dtype="float64")
    assert repr(f64) == "OpenClWithSoftmax(float_dtype='float64')"
    opts = OpenCl("cpu", int_dtype="int64").repr_options()
    assert opts == ["device_type='cpu'", "int_dtype='int64'"]


def test_device_info_and_listing():
    info = B.device_info()
    assert info.split()[1] == "cpu"
    lines = _platform.describe()
    assert any(line.startswith(info.split()[0] + " cpu") for line in lines)


def test_env_override_picks_platform_and_device(monkeypatch, fresh_selection):
    p, d = B.device_info().split()[0].split(":")
    monkeypatch.setenv("BURN_OPENCL_DEVICE", f"{p}:{d}")
    assert OpenCl("gpu").device_info() == B.device_info()  # the override wins over the type


@pytest.mark.parametrize(
    "value,match",
    [
        ("x", "expected 'platform:device'"),
        ("99:0", "platform 99 out of range"),
        ("0:99", "device 99 out of range"),
    ],
)
def test_env_override_errors_say_what_is_wrong(monkeypatch, fresh_selection, value, match):
    monkeypatch.setenv("BURN_OPENCL_DEVICE", value)
    with pytest.raises(NoDeviceError, match=match):
        OpenCl().device()


def test_views_share_the_buffer():
    x = Tensor.from_data(np.arange(24.0).reshape(2, 3, 4), B.device())
    p = x.into_primitive()
    for view in (
        B.float_permute(p, (2, 0, 1)),
        B.float_flip(p, (1,)),
        B.float_slice(p, (slice(0, 2, 1), slice(1, 3, 1), slice(0, 4, 2))),
        B.float_expand(B.float_slice(p, (slice(0, 1, 1),) * 3), (2, 3, 4)),
        B.float_swap_dims(p, 0, 2),
    ):
        assert view.buf is p.buf
    ref = np.arange(24.0).reshape(2, 3, 4)
    np.testing.assert_array_equal(x.permute([2, 0, 1]).numpy(), ref.transpose(2, 0, 1))
    np.testing.assert_array_equal(x.flip([1]).numpy(), ref[:, ::-1])


def test_kernels_are_built_once_and_kept():
    rt = B._rt(None)
    x = Tensor.from_data(np.ones((4, 5)), B.device())
    (x + x).exp().sum_dim(1)
    kept = dict(rt._kernels)
    for _ in range(3):
        y = Tensor.from_data(np.ones((7, 3)), B.device())
        (y + y).exp().sum_dim(1)
    assert rt._kernels == kept  # same keys, same cl.Kernel objects


def test_memory_pool_reuses_buffers_and_reports():
    dev = B.device()
    stats = dev.memory_stats()
    assert {"bytes_in_use", "bytes_reserved", "allocations", "reuses"} <= set(stats)
    x = Tensor.ones([1000], dev)
    in_use = dev.memory_stats()["bytes_in_use"]
    assert in_use >= stats["bytes_in_use"] + 4000
    del x
    assert dev.memory_stats()["bytes_in_use"] == in_use - 4096
    before = dev.memory_stats()
    y = Tensor.ones([1000], dev)
    after = dev.memory_stats()
    assert after["reuses"] == before["reuses"] + 1
    assert after["bytes_reserved"] == before["bytes_reserved"]
    assert y.sum().into_scalar() == 1000.0


def _philox(ctr, key):
    """Philox4x32-10 in numpy (uint64 arithmetic), the generator's reference."""
    c = [np.uint64(v) for v in ctr]
    k = [np.uint64(v) for v in key]
    mask = np.uint64(0xFFFFFFFF)
    for _ in range(10):
        p0 = c[0] * np.uint64(0xD2511F53)
        p1 = c[2] * np.uint64(0xCD9E8D57)
        c = [
            ((p1 >> np.uint64(32)) ^ c[1] ^ k[0]) & mask,
            p1 & mask,
            ((p0 >> np.uint64(32)) ^ c[3] ^ k[1]) & mask,
            p0 & mask,
        ]
        k = [(k[0] + np.uint64(0x9E3779B9)) & mask, (k[1] + np.uint64(0xBB67AE85)) & mask]
    return [int(v) for v in c]


def test_random_matches_a_numpy_philox_bit_for_bit():
    dev = B.device()
    seed = 0x0123456789ABCDEF
    dev.seed(seed)
    got = Tensor.random([5], Distribution.default(), dev).numpy()
    want = []
    for i in range(5):
        w = _philox((i, 0, 0, 0), (seed & 0xFFFFFFFF, seed >> 32))
        want.append((w[0] >> 8) * 2.0**-24)
    np.testing.assert_array_equal(got, np.array(want, np.float32))
    # the second call uses the next counter: different numbers, same reference formula
    got2 = Tensor.random([2], Distribution.default(), dev).numpy()
    w = _philox((1, 1, 0, 0), (seed & 0xFFFFFFFF, seed >> 32))
    assert got2[1] == np.float32((w[0] >> 8) * 2.0**-24)


def test_integer_division_by_zero_does_not_trap(monkeypatch):
    x = Tensor.from_data(np.array([7, -7, 0, -(2**31)], np.int32), B.device())
    d = Tensor.from_data(np.array([0, 0, 0, -1], np.int32), B.device())
    # The Tensor layer refuses a zero divisor (on a CPU device the check always runs) ...
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        x.div(d)
    # ... and with the checks off the kernel itself must still not trap the CPU.
    monkeypatch.setenv("BURN_CHECKS", "0")
    assert x.div(d).tolist()[:3] == [0, 0, 0]
    assert x.remainder(d).tolist() == [0, 0, 0, 0]


def test_data_checks_run_on_a_cpu_device_without_being_asked(monkeypatch):
    monkeypatch.delenv("BURN_CHECKS", raising=False)
    assert B.checks_force_sync is False
    x = Tensor.from_data(np.arange(6.0).reshape(2, 3), B.device())
    with pytest.raises(TensorCheckError, match="(?s)'gather'.*index -1 out of range for dim 1"):
        x.gather(1, Tensor.from_data(np.array([[0], [-1]], np.int32), B.device()))


@pytest.mark.gpu
def test_a_gpu_device_declares_that_checks_would_sync(monkeypatch):
    if _platform.probe("gpu") is not None:
        pytest.skip(f"no OpenCL GPU: {_platform.probe('gpu')}")
    monkeypatch.delenv("BURN_CHECKS", raising=False)
    gpu = OpenCl("gpu")
    assert gpu.checks_force_sync is True
    x = Tensor.from_data(np.arange(6.0).reshape(2, 3), gpu.device())
    ok = Tensor.from_data(np.array([[2], [0]], np.int32), gpu.device())
    assert x.gather(1, ok).tolist() == [[2.0], [3.0]]  # unchecked by default: no host read
    monkeypatch.setenv("BURN_CHECKS", "1")
    bad = Tensor.from_data(np.array([[0], [3]], np.int32), gpu.device())
    with pytest.raises(TensorCheckError, match="(?s)'gather'.*index 3 out of range for dim 1"):
        x.gather(1, bad)


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "int64"])
def test_other_int_dtypes(dtype):
    x = Tensor.from_data(np.array([1, 2, 3], dtype), B.device(), dtype=dtype)
    assert (x + x).tolist() == [2, 4, 6]
    assert x.sum().tolist() == [6]
    assert x.dtype.value == dtype


def test_float16_tensors_on_a_float32_backend():
    """float16 tensors (storage, float32 compute) on a float32 OpenCl: made, cast, computed."""
    t = Tensor.from_data(np.array([1.0, 2.5, 1 / 3]), B.device(), dtype="float16")
    assert t.dtype.value == "float16"
    got = (t * 2.0).into_data().array
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, (np.array([1.0, 2.5, 1 / 3]).astype(np.float16) * 2))
    c = Tensor.ones([2], B.device()).cast("float16")
    assert c.dtype.value == "float16" and c.tolist() == [1.0, 1.0]


@pytest.mark.parametrize(
    "shape,dim", [((3, 5000), 1), ((300, 2), 0), ((20000,), 0), ((2, 9000, 3), 1)]
)
def test_long_rows_reduce_through_the_tree_kernels(shape, dim):
    # Long rows take the work-group tree path (with a second pass over chunk partials).
    rng = np.random.default_rng(5)
    x = rng.uniform(-1, 1, shape)
    t = Tensor.from_data(x, B.device())
    xr = x.astype(np.float32).astype(np.float64)
    kw = {"rtol": 1e-4, "atol": 1e-3}
    np.testing.assert_allclose(t.sum_dim(dim).numpy(), xr.sum(dim, keepdims=True), **kw)
    np.testing.assert_allclose(t.mean_dim(dim).numpy(), xr.mean(dim, keepdims=True), **kw)
    np.testing.assert_array_equal(
        t.max_dim(dim).numpy(), x.astype(np.float32).max(dim, keepdims=True)
    )
    np.testing.assert_array_equal(
        t.min_dim(dim).numpy(), x.astype(np.float32).min(dim, keepdims=True)
    )
    near_one = Tensor.from_data(1 + x * 1e-4, B.device())
    want = (1 + xr * 1e-4).astype(np.float32).astype(np.float64).prod(dim, keepdims=True)
    # float32 products of n terms near 1 drift by up to ~n * 2^-24 whatever the order
    np.testing.assert_allclose(near_one.prod_dim(dim).numpy(), want, rtol=2e-3)
    np.testing.assert_allclose(t.sum().numpy(), [xr.sum()], **kw)
    ints = Tensor.from_data(rng.integers(-5, 6, shape).astype(np.int32), B.device())
    assert ints.sum().tolist() == [int(ints.numpy().astype(np.int64).sum())]
    y = x.copy()
    y.reshape(-1)[len(y.reshape(-1)) // 2] = np.nan
    assert np.isnan(Tensor.from_data(y, B.device()).max().numpy()).all()


@pytest.mark.parametrize("n", [2, 7, 1000, 1025])
def test_merge_sort_long_rows_is_stable_with_nan_order(n):
    rng = np.random.default_rng(n)
    x = rng.integers(0, 20, (3, n)).astype(np.float32)  # many ties
    x[1, :: max(1, n // 5)] = np.nan
    t = Tensor.from_data(x, B.device())
    v, i = t.sort_with_indices(1)
    want = np.argsort(x, 1, kind="stable")  # NaN last
    np.testing.assert_array_equal(i.numpy(), want)
    np.testing.assert_array_equal(v.numpy(), np.take_along_axis(x, want, 1))
    vd, idesc = t.sort_descending_with_indices(1)
    # numpy's descending order as burn-ndarray defines it: reversed ascending, ties in order
    flipped = np.flip(np.argsort(np.flip(x, 1), 1, kind="stable"), 1)
    np.testing.assert_array_equal(idesc.numpy(), (n - 1) - flipped)
    np.testing.assert_array_equal(vd.numpy(), np.take_along_axis(x, (n - 1) - flipped, 1))


@pytest.mark.parametrize(
    "x_dtype,v_dtype,values",
    [("F64", "F32", [0.5, 0.25]), ("I32", "I64", [5, 7])],
)
def test_slice_assign_converts_values_of_another_dtype(x_dtype, v_dtype, values):
    # found by burn-fusion's differential fuzzer: the copy kernel wrote the values' raw bytes
    # (f32 0.5 into an f64 tensor read back as 1.19e-07), NdArray converts them
    from burn_tensor import DType

    dev = B.device()
    np_dt = np.float32 if x_dtype.startswith("F") else np.int32
    x = Tensor.from_data(np.zeros(3, np_dt), dev).cast(getattr(DType, x_dtype))
    v = Tensor.from_data(np.array(values, np_dt), dev).cast(getattr(DType, v_dtype))
    got = x.slice_assign([slice(0, 2)], v).numpy()
    np.testing.assert_array_equal(got, np.array(values + [0], np.float64))
