"""Threaded NdArray: same results for every thread count, one thread budget, a sturdy pool.

`parallel_min=1` sends every op through the threaded path, so small inputs exercise chunking
(chunks of a few elements). References are numpy float64 or one plain numpy call.
"""

from __future__ import annotations

import os
import pickle
import subprocess
import sys
import threading

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_ndarray._threads import run_chunks
from burn_tensor import Tensor, activation
from burn_tensor.ops import ConvOptions, InterpolateOptions

# The same size thresholds as THREADED (parallel_min=1 also sends every size to the native
# kernels when they are built): which implementation runs depends on the size, never on the
# thread count, so results are compared bitwise.
ONE = NdArray(num_threads=1, parallel_min=1)
THREADED = {n: NdArray(num_threads=n, parallel_min=1) for n in (2, 4)}
RNG = np.random.default_rng(7)
X = RNG.uniform(-3, 3, (37, 29)).astype(np.float32)
Y = RNG.uniform(0.5, 2, (37, 29)).astype(np.float32)
ROW = RNG.uniform(0.5, 2, (1, 29)).astype(np.float32)
COL = RNG.uniform(0.5, 2, (37, 1)).astype(np.float32)
MASK = RNG.uniform(size=(37, 29)) < 0.5

# (name, op on a backend) for elementwise ops: operands same-shape, broadcast, transposed.
ELEMENTWISE = [
    ("add", lambda b: b.float_add(X, Y)),
    ("sub_row", lambda b: b.float_sub(X, ROW)),
    ("mul_col", lambda b: b.float_mul(COL, X)),
    ("div_transposed", lambda b: b.float_div(X.T, Y.T)),
    ("exp", lambda b: b.float_exp(X)),
    ("tanh", lambda b: b.float_tanh(X)),
    ("erf", lambda b: b.float_erf(X)),
    ("log_negative", lambda b: b.float_log(X)),
    ("powf_scalar", lambda b: b.float_powf_scalar(Y, 1.7)),
    ("div_scalar", lambda b: b.float_div_scalar(X, 3.0)),
    ("clamp", lambda b: b.float_clamp(X, -1.0, 1.5)),
    ("mask_fill", lambda b: b.float_mask_fill(X, MASK, 0.25)),
    ("mask_where", lambda b: b.float_mask_where(X, MASK, Y)),
    ("greater_elem", lambda b: b.float_greater_elem(X, 0.5)),
    ("relu", lambda b: b.relu(X)),
    ("cast_int", lambda b: b.float_into_int(X, b.int_dtype)),
    ("int_div", lambda b: b.int_div((X * 10).astype(np.int32), (Y * 3).astype(np.int32) + 1)),
]


@pytest.mark.parametrize("case", ELEMENTWISE, ids=[c[0] for c in ELEMENTWISE])
def test_elementwise_bitwise_identical_for_1_2_4_threads(case):
    _, op = case
    ref = op(ONE)
    for n, b in THREADED.items():
        out = op(b)
        assert out.dtype == ref.dtype and out.shape == ref.shape, n
        raw = np.ascontiguousarray(out).view(np.uint8)  # bits, so NaN payloads and -0.0 count
        np.testing.assert_array_equal(raw, np.ascontiguousarray(ref).view(np.uint8), err_msg=f"{n}")


def test_elementwise_on_large_input_matches_one_thread_and_numpy():
    x = RNG.uniform(-2, 2, (300, 1001)).astype(np.float32)  # above the default PARALLEL_MIN
    b = NdArray(num_threads=4)
    assert x.size >= b.parallel_min
    np.testing.assert_array_equal(b.float_exp(x), NdArray(num_threads=1).float_exp(x))
    # native kernels (glibc's libmvec) may differ from numpy's exp in the last bits
    np.testing.assert_allclose(b.float_exp(x), np.exp(x), rtol=1e-6)
    np.testing.assert_array_equal(b.float_add(x, x[:1]), x + x[:1])


REDUCTIONS = [
    ("sum", lambda b: b.float_sum(X), lambda x: x.sum().reshape(1)),
    ("mean", lambda b: b.float_mean(X), lambda x: x.mean().reshape(1)),
    ("sum_dim0", lambda b: b.float_sum_dim(X, 0), lambda x: x.sum(0, keepdims=True)),
    ("sum_dim1", lambda b: b.float_sum_dim(X, 1), lambda x: x.sum(1, keepdims=True)),
    ("mean_dim0", lambda b: b.float_mean_dim(X, 0), lambda x: x.mean(0, keepdims=True)),
    ("max_dim1", lambda b: b.float_max_dim(X, 1), lambda x: x.max(1, keepdims=True)),
    ("min", lambda b: b.float_min(X), lambda x: x.min().reshape(1)),
    ("argmax0", lambda b: b.float_argmax(X, 0), lambda x: x.argmax(0)[None]),
    ("argmin1", lambda b: b.float_argmin(X, 1), lambda x: x.argmin(1)[:, None]),
]


@pytest.mark.parametrize("case", REDUCTIONS, ids=[c[0] for c in REDUCTIONS])
def test_reductions_match_float64_for_every_thread_count(case):
    _, op, ref = case
    expected = ref(X.astype(np.float64))
    for b in (ONE, *THREADED.values()):
        out = op(b)
        assert out.shape == expected.shape
        np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


def test_sum_over_all_does_not_depend_on_the_thread_count():
    x = RNG.uniform(-1, 1, 100_003).astype(np.float32)
    sums = {n: NdArray(num_threads=n, parallel_min=64).float_sum(x)[0] for n in (2, 3, 4, 8)}
    assert len(set(sums.values())) == 1, sums
    assert abs(float(sums[2]) - x.astype(np.float64).sum()) < 1e-3


def test_module_ops_threaded_match_one_thread():
    x = RNG.uniform(-1, 1, (6, 3, 9, 9)).astype(np.float32)
    w = RNG.uniform(-1, 1, (4, 3, 3, 3)).astype(np.float32)
    bias = RNG.uniform(-1, 1, 4).astype(np.float32)
    opt = ConvOptions((1, 1), (1, 1), (1, 1), 1)
    mode = InterpolateOptions("bilinear")
    for b in THREADED.values():
        pairs = [
            (b.conv2d(x, w, bias, opt), ONE.conv2d(x, w, bias, opt)),
            (
                b.conv2d_weight_backward(x, w, ONE.conv2d(x, w, None, opt), opt),
                ONE.conv2d_weight_backward(x, w, ONE.conv2d(x, w, None, opt), opt),
            ),
            (
                b.avg_pool2d(x, (2, 2), (2, 2), (0, 0), True),
                ONE.avg_pool2d(x, (2, 2), (2, 2), (0, 0), True),
            ),
            (b.interpolate(x, (5, 13), mode), ONE.interpolate(x, (5, 13), mode)),
        ]
        for got, want in pairs:
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        vals, idx = b.max_pool2d_with_indices(x, (3, 3), (2, 2), (1, 1), (1, 1))
        rvals, ridx = ONE.max_pool2d_with_indices(x, (3, 3), (2, 2), (1, 1), (1, 1))
        np.testing.assert_array_equal(vals, rvals)
        np.testing.assert_array_equal(idx, ridx)


def test_batched_matmul_split_matches_numpy():
    a = RNG.uniform(-1, 1, (5, 3, 7, 4)).astype(np.float32)
    c = RNG.uniform(-1, 1, (5, 3, 4, 6)).astype(np.float32)
    w = RNG.uniform(-1, 1, (4, 6)).astype(np.float32)
    b = THREADED[4]
    np.testing.assert_allclose(b.float_matmul(a, c), a.astype(np.float64) @ c, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(b.float_matmul(a, w), a.astype(np.float64) @ w, rtol=1e-5, atol=1e-5)


def test_softmax_through_tensor_api():
    t = Tensor.from_data(X, THREADED[4].device())
    x = X.astype(np.float64)
    e = np.exp(x - x.max(1, keepdims=True))
    np.testing.assert_allclose(
        activation.softmax(t, 1).numpy(), e / e.sum(1, keepdims=True), rtol=1e-5, atol=1e-6
    )


def test_fp_errors_stay_quiet_on_threaded_paths_under_callers_raise_mode():
    b = THREADED[4]
    z = np.zeros(40, np.float32)
    with np.errstate(all="raise"):
        out = b.float_div(np.ones(40, np.float32), z)
        s = b.float_sum(np.full(40, 3e38, np.float32))
    assert np.isinf(out).all() and np.isinf(s).all()


def test_options_are_identity_and_survive_pickle():
    b = NdArray(num_threads=3, parallel_min=10)
    assert b is NdArray(num_threads=3, parallel_min=10)
    assert b is not NdArray(num_threads=2, parallel_min=10)
    assert b.options()["num_threads"] == 3 and b.num_threads == 3 and b.parallel_min == 10
    assert pickle.loads(pickle.dumps(b)) is b
    assert repr(b) == "NdArray(num_threads=3, parallel_min=10)"
    with pytest.raises(ValueError, match="num_threads"):
        NdArray(num_threads=0)
    with pytest.raises(ValueError, match="parallel_min"):
        NdArray(parallel_min=-5)


def test_environment_sets_the_defaults():
    code = "from burn_ndarray import NdArray; b = NdArray(); print(b.num_threads, b.parallel_min)"
    env = {**os.environ, "BURN_NUM_THREADS": "3", "BURN_NDARRAY_PARALLEL_MIN": "1"}
    out = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert out.stdout.split() == ["3", "1"], out.stderr
    env["BURN_NUM_THREADS"] = "many"
    bad = subprocess.run(
        [sys.executable, "-c", code], env=env, capture_output=True, text=True, check=False
    )
    assert "BURN_NUM_THREADS: expected a positive integer, got 'many'" in bad.stderr


def test_default_budget_is_the_cores_this_process_may_use(monkeypatch):
    from burn_ndarray._threads import default_threads

    monkeypatch.delenv("BURN_NUM_THREADS", raising=False)
    assert default_threads() == len(os.sched_getaffinity(0))


def test_blas_gets_the_budget_back_after_a_threaded_region(monkeypatch):
    from burn_ndarray import _blas, _load

    monkeypatch.setattr(_load, "_ON", False)  # the budget, not a loaded machine's cap

    b = THREADED[2]
    # 5 input channels: the GEMM conv path (4 or fewer take the stem kernel, no BLAS call)
    x = RNG.uniform(-1, 1, (4, 5, 8, 8)).astype(np.float32)
    w = RNG.uniform(-1, 1, (5, 5, 3, 3)).astype(np.float32)
    b.conv2d(x, w, None, ConvOptions((1, 1), (0, 0), (1, 1), 1))
    assert _blas.current() in (2, None)


def test_worker_errors_reach_the_caller_and_the_pool_keeps_working():
    def chunk(i):
        if i == 2:
            raise ZeroDivisionError(f"chunk {i}")
        return i

    with pytest.raises(ZeroDivisionError, match="chunk 2"):
        run_chunks(chunk, [(0,), (1,), (2,), (3,)])
    assert run_chunks(chunk, [(0,), (1,), (3,)]) == [0, 1, 3]


def test_concurrent_callers_get_correct_results():
    b = THREADED[4]
    results = {}

    def work(k):
        x = np.full((50, 20), k, np.float32)
        results[k] = [b.float_sum(b.float_mul_scalar(x, 2.0))[0] for _ in range(20)]

    threads = [threading.Thread(target=work, args=(k,)) for k in range(1, 5)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(1, 5):
        assert results[k] == [2.0 * k * 1000] * 20


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs os.fork")
def test_forked_child_gets_a_working_pool():
    code = (
        "import os, numpy as np\n"
        "from burn_ndarray import NdArray\n"
        "b = NdArray(num_threads=4, parallel_min=1)\n"
        "x = np.arange(100, dtype=np.float32)\n"
        "assert b.float_sum(x)[0] == 4950\n"
        "pid = os.fork()\n"
        "if pid == 0:\n"
        "    os._exit(0 if b.float_sum(x)[0] == 4950 else 3)\n"
        "_, status = os.waitpid(pid, 0)\n"
        "assert os.waitstatus_to_exitcode(status) == 0, status\n"
    )
    subprocess.run(
        [sys.executable, "-W", "ignore::DeprecationWarning", "-c", code], check=True, timeout=60
    )


def test_a_worker_that_does_not_run_holds_no_chunk():
    """A worker kept off the cores (here: busy on another job, as a descheduled thread would be)
    does not hold the region: the calling thread claims and runs every chunk itself, in order."""
    import threading
    import time

    from burn_ndarray._threads import Pool, _Job

    pool = Pool()
    pool.run(lambda: 0, [(), ()])  # one worker started
    release = threading.Event()
    pool._jobs.put(_Job(release.wait, [(5.0,)]))  # the only worker is now held elsewhere
    time.sleep(0.05)
    t0 = time.perf_counter()
    names = pool.run(lambda i: (i, threading.current_thread().name), [(i,) for i in range(4)])
    took = time.perf_counter() - t0
    release.set()
    assert [i for i, _ in names] == [0, 1, 2, 3]
    assert {n for _, n in names} == {threading.current_thread().name}
    assert took < 1.0, f"the region waited {took:.2f} s for a worker that was not running"
