"""Load-aware thread counts (`_load`): busy cores are not woken, free ones are, the budget caps
both, and the native kernels' thread count (`_native_ops._nt`) follows."""

from __future__ import annotations

import math
import os

import pytest
from burn_ndarray import _load, _native_ops


@pytest.fixture
def fake(monkeypatch):
    def set_load(load, cores):
        monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
        monkeypatch.setattr(_load, "_cores", lambda: cores)
        monkeypatch.setattr(_load, "_ON", True)
        monkeypatch.setattr(_load, "_state", _load._fresh_state())

    return set_load


def test_busy_cores_are_not_woken(fake):
    fake(load=1.2, cores=2)  # another process spins on one of 2 cores
    assert _load.threads_now(2) == 1
    assert _native_ops._nt(2, 1 << 30, 1) == 1
    fake(load=7.0, cores=2)
    assert _load.threads_now(8) == 1  # never below one


def test_free_cores_are_woken_up_to_the_budget(fake):
    fake(load=0.0, cores=4)
    assert _load.threads_now(2) == 2
    assert _load.threads_now(8) == 4
    fake(load=1.0, cores=16)
    assert _load.threads_now(16) == 15
    assert _native_ops._nt(16, 1 << 30, 1) == 15


def test_off_by_environment(fake, monkeypatch):
    fake(load=9.0, cores=2)
    monkeypatch.setattr(_load, "_ON", False)
    assert _load.threads_now(2) == 2



@pytest.fixture
def clock(monkeypatch):
    """A simulated 16-core machine: `clock.run(seconds, ours, others)` advances time in 0.25 s
    samples with this process using `ours` cores and others `others`, feeding the load average
    the kernel's way (60 s time constant) and sampling `free_cores` each step; returns the load."""
    st = {"wall": 1000.0, "cpu": 0.0, "load": 0.0}
    monkeypatch.setattr(_load, "_cores", lambda: 16)
    monkeypatch.setattr(_load, "_ON", True)
    monkeypatch.setattr(_load.time, "monotonic", lambda: st["wall"])
    monkeypatch.setattr(_load.time, "process_time", lambda: st["cpu"])
    monkeypatch.setattr(os, "getloadavg", lambda: (st["load"],) * 3)
    monkeypatch.setattr(_load, "_state", _load._fresh_state())

    def run(seconds: float, ours: float, others: float = 0.0) -> float:
        a = math.exp(-0.25 / 60)
        for _ in range(int(seconds / 0.25)):
            st["wall"] += 0.25
            st["cpu"] += ours * 0.25
            st["load"] = st["load"] * a + (ours + others) * (1 - a)
            _load.free_cores()
        return st["load"]

    return type("Clock", (), {"run": staticmethod(run)})


def test_our_own_busy_minute_is_not_counted_as_others(clock):
    # 40 s of training on 16 cores, then 10 s of one core's work (the forward passes' Python):
    # the load average (60 s time constant) still holds most of our own 16 for a minute; it
    # must not be read as other processes (it was: the own share came from the last 5 s only,
    # and 1 or 2 threads were woken)
    clock.run(40, ours=16)
    assert clock.run(10, ours=1) > 6  # the load average still shows our training
    assert _load.threads_now(16) == 16  # but no one else is there


def test_another_process_beside_our_own_work_is_still_seen(clock):
    clock.run(300, ours=8, others=4)  # 5 minutes: both averages settle
    assert _load.threads_now(16) == 12


def test_blas_threads_and_native_gemm_follow_the_free_cores(fake, monkeypatch):
    """numpy's BLAS count set back to the budget after a region, and the native GEMM's team,
    are capped by the free cores too (BLAS threads spin at barriers like ours: beside a busy
    core, mobilenet_v3_small's default-thread forward was 2x its one-thread time)."""
    import numpy as np
    from burn_ndarray import _blas, _native_gemm

    seen = []
    monkeypatch.setattr(_blas, "_controllers", [type("C", (), {
        "set_num_threads": lambda self, n: seen.append(n)})()])  # fmt: skip
    monkeypatch.setattr(_blas, "_current", None)
    fake(load=1.2, cores=2)
    _blas.set_threads(2)
    assert seen == [1] and _blas._current == 1
    fake(load=0.0, cores=2)
    _blas.set_threads(2)
    assert seen == [1, 2]
    runs = []
    monkeypatch.setattr(
        _native_gemm._native_conv, "_run", lambda fn, threads, *args, **kw: runs.append(args[-1])
    )  # the kernel call: its last argument is the team size
    lib = type("Lib", (), {"gemm_tiled_f32": None, "gemm_tiled_f64": None})()
    x = np.ones((512, 512), np.float32)
    for load, team in ((0.0, 2), (1.2, 1)):
        fake(load=load, cores=2)
        _native_gemm.gemm(lib, 2, x, x)
        assert runs[-1] == team, (load, runs)
