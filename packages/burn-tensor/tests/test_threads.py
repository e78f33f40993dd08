"""Backends and devices are interned; creating them from many threads at once must hand every
thread the same, fully built object (a data-loader worker and the training loop may build
`NdArray()` or `Autodiff(...)` at the same moment)."""

from __future__ import annotations

import sys
import threading

import pytest
from burn_ndarray import NdArray
from burn_tensor import Tensor

THREADS = 16
ROUNDS = 40


@pytest.fixture(autouse=True)
def _fast_switching():
    # Switch threads as often as the interpreter allows, so a thread is likely to be preempted
    # between publishing an object and finishing its construction, if the code allows that.
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(old)


def _race(make):
    """Run `make()` on THREADS threads released together; return (results, errors)."""
    barrier = threading.Barrier(THREADS)
    results: list = [None] * THREADS
    errors: list = []

    def work(i):
        barrier.wait()
        try:
            results[i] = make()
        except BaseException as exc:  # noqa: BLE001 - reported by the assertion below
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return results, errors


def _fresh_backend_class(i: int) -> type:
    # A new class is a new interning key: every round races on a backend nobody built yet.
    return type(f"FreshCpu{i}", (NdArray,), {"name": f"fresh-cpu-{i}"})


@pytest.mark.parametrize(
    "options",
    [{}, {"float_dtype": "float64"}, {"float_dtype": "float16", "int_dtype": "int64"}],
    ids=["default", "f64", "f16-i64"],
)
def test_concurrent_backend_creation_gives_one_complete_backend(options):
    for r in range(ROUNDS):
        cls = _fresh_backend_class(r)

        def make(cls=cls):
            b = cls(**options)
            # A half-built backend has no `kind_ops` yet: building a tensor would fail.
            t = Tensor.ones([3], b.device())
            return b, t.sum().into_scalar()

        results, errors = _race(make)
        assert errors == [], f"round {r}: {errors[:3]}"
        first = results[0][0]
        assert all(b is first for b, _ in results), f"round {r}: threads got different backends"
        assert [s for _, s in results] == [3.0] * THREADS
        assert cls(**options) is first


def test_concurrent_device_creation_gives_one_device():
    for r in range(ROUNDS):
        b = _fresh_backend_class(1000 + r)()
        results, errors = _race(lambda b=b: b.device(0))
        assert errors == [], f"round {r}: {errors[:3]}"
        assert all(d is results[0] for d in results), f"round {r}: threads got different devices"
        assert b.device() is results[0]
        assert results[0].backend is b and results[0].index == 0


def test_concurrent_decorator_creation_gives_one_complete_decorator():
    from burn_autodiff import Autodiff

    for r in range(ROUNDS // 2):
        inner = _fresh_backend_class(2000 + r)()

        def make(inner=inner):
            b = Autodiff(inner)
            x = Tensor.ones([3], b.device()).require_grad()
            return b, x.grad((x * x).sum().backward()).tolist()

        results, errors = _race(make)
        assert errors == [], f"round {r}: {errors[:3]}"
        assert all(b is results[0][0] for b, _ in results), f"round {r}: different decorators"
        assert [g for _, g in results] == [[2.0, 2.0, 2.0]] * THREADS
