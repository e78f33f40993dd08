"""Load-aware thread counts (`_load`): busy cores are not woken, free ones are, the budget caps
both, and the native kernels' thread count (`_native_ops._nt`) follows."""

from __future__ import annotations

import os

import pytest
from burn_ndarray import _load, _native_ops


@pytest.fixture
def fake(monkeypatch):
    def set_load(load, cores):
        monkeypatch.setattr(os, "getloadavg", lambda: (load, load, load))
        monkeypatch.setattr(_load, "_cores", lambda: cores)
        monkeypatch.setattr(_load, "_ON", True)
        monkeypatch.setattr(_load, "_state", {"at": -1e9, "free": 1 << 30, "cpu": 0.0, "wall": 0.0})

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
