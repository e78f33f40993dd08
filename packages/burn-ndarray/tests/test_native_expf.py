"""The native float32 exp and tanh (`kernels.c`: burn_expf; burn_tanhf before glibc 2.35, libmvec's
tanhf from 2.35 on) and the softmax kernels built on exp, against numpy float64 rounded to float32: ulp bounds over sampled sweeps of every
float32 bit pattern in range, dense sweeps at 0 and at the overflow / underflow boundaries, every
input with a subnormal result, special values, and bitwise-equal results for 1, 2 and 4 threads.
float64 keeps libm / libmvec and is covered by test_native.py."""

from __future__ import annotations

import platform
import re
import shutil
import subprocess

import numpy as np
import pytest
from burn_ndarray import NdArray, _native

LIB = _native.lib()
pytestmark = pytest.mark.skipif(LIB is None, reason=f"native kernels: {_native.status()}")
B = {n: NdArray(num_threads=n, parallel_min=1) for n in (1, 2, 4)}
RNG = np.random.default_rng(17)
GLIBC = tuple(int(v) for v in (platform.libc_ver()[1] or "0.0").split(".")[:2])
#: float32 tanh is libmvec's tanhf from glibc 2.35 on (faster on AVX-512), burn_tanhf before
OWN_TANH = GLIBC < (2, 35)
# measured over every 7th bit pattern (README, Native kernels): 1 ulp for exp and burn_tanhf;
# libmvec's tanhf is documented within 2 ulp
MAX_ULP_EXP = 1
MAX_ULP_TANH = 1 if OWN_TANH else 2


def bits_between(lo: float, hi: float, step: int = 1) -> np.ndarray:
    """Every `step`-th float32 from lo to hi (same sign, |lo| <= |hi|) by bit pattern."""
    a, b = (int(np.float32(v).view(np.uint32)) for v in (lo, hi))
    return np.arange(a, b + 1, step, dtype=np.int64).astype(np.uint32).view(np.float32)


def ulps(got: np.ndarray, exact: np.ndarray) -> np.ndarray:
    """Distance in float32 steps (subnormal steps included) from `exact` rounded to float32."""
    with np.errstate(over="ignore"):
        want = exact.astype(np.float32)

    def line(v):
        i = v.view(np.int32).astype(np.int64)
        return np.where(i < 0, -(i & 0x7FFFFFFF), i)

    return np.abs(line(got) - line(want))


def check(op, ref, x, bound):
    with np.errstate(all="ignore"):
        exact = ref(x.astype(np.float64))
    got = getattr(B[2], op)(x)
    u = ulps(got, exact)
    i = int(u.argmax())
    assert u[i] <= bound, f"{op}({x[i]!r}) = {got[i]!r}, want {exact[i]!r}: {u[i]} ulp"


@pytest.mark.parametrize("sign", [1, -1])
def test_exp_sampled_sweep_of_every_float32_in_range(sign):
    # [0, 89] and [-104, -0]: every 997th bit pattern (~1.1M each)
    check("float_exp", np.exp, bits_between(0.0 * sign, 89.0 if sign > 0 else -104.0, 997),
          MAX_ULP_EXP)  # fmt: skip


@pytest.mark.parametrize(
    "lo, hi", [(-1e-3, 1e-3), (-1.0, 1.0), (88.0, 89.0), (-87.5, -86.5), (-104.0, -100.0)]
)
def test_exp_dense_sweeps(lo, hi):
    check("float_exp", np.exp, np.linspace(lo, hi, 1 << 20, dtype=np.float32), MAX_ULP_EXP)


def test_exp_every_input_with_a_subnormal_result():
    # exp(x) < 2^-126 from x < -87.3365: every float32 down to -104 (2.2M inputs), not flushed
    x = bits_between(-87.33654, -104.0)
    check("float_exp", np.exp, x, MAX_ULP_EXP)
    got = B[2].float_exp(x)
    assert got[got > 0].min() == np.float32(2.0**-149)


def test_exp_special_values_are_numpys():
    x = np.array(
        [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 88.72283, 88.72284, 89.0, 1e30, -1e30,
         -103.972, -103.973, -104.0, 1e-45, -1e-45, 1e-38],
        np.float32,
    )  # fmt: skip
    got = B[1].float_exp(x)
    with np.errstate(all="ignore"):
        want = np.exp(x.astype(np.float64)).astype(np.float32)
    np.testing.assert_array_equal(got, want)  # NaN where NaN
    assert np.isfinite(got[6]) and got[7] == np.inf and got[11] == 2.0**-149


@pytest.mark.parametrize("sign", [1, -1])
def test_tanh_sampled_sweep(sign):
    check("float_tanh", np.tanh, bits_between(0.0 * sign, 10.0 * sign, 997), MAX_ULP_TANH)


@pytest.mark.parametrize("lo, hi", [(-1e-3, 1e-3), (0.55, 0.7), (-0.7, -0.55), (8.0, 10.0)])
def test_tanh_dense_sweeps(lo, hi):
    # near 0 (the odd polynomial: relative error), at the switch to exp (0.625), near 1
    check("float_tanh", np.tanh, np.linspace(lo, hi, 1 << 20, dtype=np.float32), MAX_ULP_TANH)


def test_tanh_special_values():
    tiny = np.float32(2.0**-149)
    x = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 1e-30, 44.0, 50.0, -1e30],
                 np.float32)  # fmt: skip
    got = B[1].float_tanh(x)
    assert np.isnan(got[0])
    want = np.array([1, -1, 0, 0, tiny, -tiny, 1e-30, 1, 1, -1], np.float32)
    np.testing.assert_array_equal(got[1:], want)
    assert np.signbit(got[4]) and not np.signbit(got[3])


SOFTMAX_ROWS = [
    [0.0, 1.0, 2.0, 3.0],
    [1e4, 1e4 - 1, 1e4 - 20, -1e4],  # large values: exp of differences only
    [-1e30, 0.0, -1e30, -87.0],  # exps underflowing to 0 or subnormal
    [-90.0, -95.0, -100.0, -103.0],  # relative to the max: 0, -5, -10, -13
    [3e38, -3e38, 0.0, 1.0],  # exp(-inf-like) = 0
]


@pytest.mark.parametrize("log", [False, True])
def test_softmax_rows_against_float64(log):
    base = np.array(SOFTMAX_ROWS, np.float32)
    x = np.concatenate([base, RNG.uniform(-30, 30, (4096 // 4, 4)).astype(np.float32)])
    x = np.ascontiguousarray(np.tile(x, (1, 1025))[:, :4099])  # rows of 4099 (odd) elements
    # x - max rounds in float32 in the kernel (up to 2e-6 relative after exp for |x - max| ~ 60):
    # the reference starts from the same differences, so what remains is exp's and the sum's error
    with np.errstate(over="ignore"):  # -3e38 - 3e38 = -inf, as in the kernel
        s = (x - x.max(1, keepdims=True)).astype(np.float64)
    want = s - np.log(np.exp(s).sum(1, keepdims=True)) if log else np.exp(s)
    want = want if log else want / want.sum(1, keepdims=True)
    got = (B[2].log_softmax if log else B[2].softmax)(x, 1).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-38 if not log else 1e-5)
    # along dim 0 (the column kernels)
    got0 = (B[2].log_softmax if log else B[2].softmax)(np.ascontiguousarray(x.T), 0)
    np.testing.assert_allclose(got0.T.astype(np.float64), want, rtol=1e-6,
                               atol=1e-38 if not log else 1e-5)  # fmt: skip


def test_log_softmax_backward_against_float64():
    x = RNG.uniform(-20, 20, (64, 1001)).astype(np.float32)
    y = B[2].log_softmax(x, 1)
    g = RNG.standard_normal(x.shape).astype(np.float32)
    yd, gd = y.astype(np.float64), g.astype(np.float64)
    want = gd - np.exp(yd) * gd.sum(1, keepdims=True)
    got = B[2].log_softmax_backward(y, g, 1).astype(np.float64)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_bitwise_equal_for_every_thread_count():
    x = RNG.uniform(-90, 90, (33, 4099)).astype(np.float32)
    for i, v in enumerate((np.nan, np.inf, -np.inf, -0.0, 1e-45)):
        x.flat[i::97] = v
    y = B[1].log_softmax(x / 8, 1)
    g = RNG.standard_normal(x.shape).astype(np.float32)
    ops = [
        lambda b: b.float_exp(x), lambda b: b.float_tanh(x / 9), lambda b: b.float_erf(x / 20),
        lambda b: b.softmax(x / 8, 1), lambda b: b.softmax(x / 8, 0),
        lambda b: b.log_softmax(x / 8, 1), lambda b: b.log_softmax_backward(y, g, 1),
    ]  # fmt: skip
    for op in ops:
        ref = op(B[1]).view(np.uint32)
        for n in (2, 4):
            np.testing.assert_array_equal(op(B[n]).view(np.uint32), ref)


@pytest.mark.skipif(
    platform.machine() != "x86_64" or shutil.which("objdump") is None,
    reason="x86_64 register names; needs objdump",
)
def test_float32_exp_loops_are_inlined_and_vectorized():
    """No call per element (libm's scalar expf would be ~10x slower and no other test would
    notice): the float32 exp / tanh loops and the softmax kernels (with their row helpers, which
    gcc keeps out of line under -mprefer-vector-width=512) contain no exp/tanh call and use
    256- or 512-bit registers."""
    dis = subprocess.run(
        ["objdump", "-d", "--no-show-raw-insn", str(_native._STATE["path"])],
        capture_output=True, text=True, timeout=120, check=True,
    ).stdout  # fmt: skip
    if "ymm" not in dis:
        pytest.skip("built for a CPU without AVX")
    blocks = dict(re.findall(r"<([\w.]+)>:\n(.*?)(?:\n\n|$)", dis, re.DOTALL))
    own = (("un_exp_f32", ()), ("softmax_f32", ("sm_",)), ("softmax_bwd_f32", ("smb_",)))
    if OWN_TANH:
        own += (("un_tanh_f32", ()),)
    for fn, prefixes in own:
        text = "".join(
            v for k, v in blocks.items()
            if k.startswith(fn) or (prefixes and k.startswith(prefixes) and "_f32" in k)
        )  # fmt: skip
        assert text, fn
        math_call = r"call\s+\w+\s+<(?:_ZGV\w+_|_+)?(?:exp|tanh)f?(?:@plt)?>"  # libm, libmvec
        assert not re.search(math_call, text), f"{fn} calls a math function"
        assert re.search(r"v\w+ps\s.*[yz]mm", text), f"{fn}: no 256/512-bit float ops"


def test_a_special_value_in_a_block_changes_no_other_result():
    # a block with NaN / inf / |x| > 87 is redone on the careful path: the others' bits must be
    # the fast path's, so a result depends on its argument only
    x = RNG.uniform(-87, 87, 3 * 4096 + 5).astype(np.float32)
    clean = B[1].float_exp(x)
    for v in (np.nan, np.inf, -np.inf, 88.0, -100.0):
        y = x.copy()
        y[4097] = v
        got = B[1].float_exp(y)
        np.testing.assert_array_equal(np.delete(got, 4097), np.delete(clean, 4097))


@pytest.fixture(scope="module")
def own_tanh_lib(tmp_path_factory):
    """The kernels built with -DBURN_OWN_TANH: burn_tanhf is what older glibc (no vector tanhf)
    runs, so it is checked here on every machine, not only where it is the default."""
    cc = _native.find_compiler()
    if cc is None:
        pytest.skip("no C compiler")
    out = tmp_path_factory.mktemp("own_tanh") / "kernels.so"
    _native._compile(cc, out, [*_native.flags(), "-DBURN_OWN_TANH"])
    return _native._load(out)


def _own_tanh(lib, x: np.ndarray, threads: int = 1) -> np.ndarray:
    import ctypes

    x = np.ascontiguousarray(x, np.float32)
    o = np.empty_like(x)
    lib.un_tanh_f32(ctypes.c_void_p(x.ctypes.data), ctypes.c_void_p(o.ctypes.data),
                    ctypes.c_long(x.size), ctypes.c_int(threads))  # fmt: skip
    return o


def test_own_tanh_within_one_ulp_and_its_special_values(own_tanh_lib):
    x = np.concatenate([
        bits_between(0.0, 10.0, 997), bits_between(-0.0, -10.0, 997),
        np.linspace(-1e-3, 1e-3, 1 << 18, dtype=np.float32),
        np.linspace(0.55, 0.7, 1 << 18, dtype=np.float32),  # the switch at 0.625
    ])  # fmt: skip
    got = _own_tanh(own_tanh_lib, x)
    u = ulps(got, np.tanh(x.astype(np.float64)))
    i = int(u.argmax())
    assert u[i] <= 1, f"burn_tanhf({x[i]!r}) = {got[i]!r}: {u[i]} ulp"
    tiny = np.float32(2.0**-149)
    s = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, tiny, -tiny, 50.0, -1e30], np.float32)
    got = _own_tanh(own_tanh_lib, s)
    assert np.isnan(got[0])
    np.testing.assert_array_equal(got[1:], np.array([1, -1, 0, 0, tiny, -tiny, 1, -1], np.float32))
    assert np.signbit(got[4]) and not np.signbit(got[3])
    big = RNG.uniform(-9, 9, 3 * 4096 + 7).astype(np.float32)  # several blocks, 1 vs 2 threads
    np.testing.assert_array_equal(_own_tanh(own_tanh_lib, big, 2), _own_tanh(own_tanh_lib, big))
