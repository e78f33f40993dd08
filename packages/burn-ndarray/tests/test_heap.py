"""NdArray keeps glibc's heap between steps when its native kernels load (`_native/heap.py`),
unless the user chose (`BURN_NDARRAY_HEAP_KEEP=0`, glibc's own malloc variables). Each case runs
in a fresh interpreter: the setting is process-wide and applied once.

The effect is checked on what it is for: 96 MB of 4 MB arrays written, freed and allocated and
written again. With the heap kept the second round reuses the pages (no minor faults to speak
of); with glibc's defaults the freed top is trimmed and every page faults in again."""

import os
import subprocess
import sys

import pytest
from burn_ndarray import _native
from burn_ndarray._native import heap

CHILD = """
import resource
import numpy as np
from burn_ndarray import NdArray, _native
from burn_ndarray._native import heap
NdArray()
native = _native.lib() is not None
def fill():
    return [np.full((1024, 1024), 1.5, np.float32) for _ in range(24)]
arrays = fill()  # the heap grows to hold them (these faults are the first touch)
del arrays
before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
arrays = fill()
faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
print(native, faults, heap.state(), sep="|")
"""
PAGES = 24 * 4 * 1024 * 1024 // 4096  # the 24 arrays' pages (4 KB)


def run_child(**env_changes):
    env = dict(os.environ)
    for key in ("BURN_NDARRAY_HEAP_KEEP",) + heap.USER_ENV:
        env.pop(key, None)
    env.update(env_changes)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    native, faults, state = out.stdout.strip().split("|", 2)
    return native == "True", int(faults), state


needs_glibc = pytest.mark.skipif(heap._libc() is None, reason="not glibc: no mallopt to set")


@needs_glibc
def test_heap_kept_once_native_kernels_load():
    native, faults, state = run_child()
    if not native:
        pytest.skip(f"native kernels unavailable here: {_native.status()}")
    assert state == "heap kept (trim above 1024 MB, mmap from 32 MB)"
    assert faults < PAGES // 10, f"{faults} minor faults re-allocating {PAGES} pages"


@needs_glibc
@pytest.mark.parametrize(
    "env, why",
    [
        ({"BURN_NDARRAY_HEAP_KEEP": "0"}, "BURN_NDARRAY_HEAP_KEEP=0"),
        ({"MALLOC_TRIM_THRESHOLD_": "131072"}, "MALLOC_TRIM_THRESHOLD_ is set"),
    ],
)
def test_user_choice_keeps_glibcs_thresholds(env, why):
    native, faults, state = run_child(**env)
    if not native:
        pytest.skip(f"native kernels unavailable here: {_native.status()}")
    assert state == f"glibc's heap thresholds kept ({why})"
    # glibc's defaults (or the user's 128 KB trim threshold) give the freed top back: the
    # second round faults most of its pages in again, which is what keep() avoids
    assert faults > PAGES // 2, f"only {faults} minor faults re-allocating {PAGES} pages"


def test_user_choice_reads_the_environment(monkeypatch):
    for key in ("BURN_NDARRAY_HEAP_KEEP",) + heap.USER_ENV:
        monkeypatch.delenv(key, raising=False)
    assert heap.user_choice() is None
    monkeypatch.setenv("GLIBC_TUNABLES", "glibc.malloc.trim_threshold=0")
    assert heap.user_choice() == "GLIBC_TUNABLES is set"
    monkeypatch.delenv("GLIBC_TUNABLES")
    monkeypatch.setenv("BURN_NDARRAY_HEAP_KEEP", "0")
    assert heap.user_choice() == "BURN_NDARRAY_HEAP_KEEP=0"
