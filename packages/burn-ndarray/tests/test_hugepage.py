"""NdArray turns numpy's huge-page advice off when its native kernels load, unless the user chose
(`NUMPY_MADVISE_HUGEPAGE` set, or `BURN_NDARRAY_HUGEPAGE=1`). Each case runs in a fresh
interpreter: the setting is process-wide and applied once."""

import os
import subprocess
import sys

import pytest
from burn_ndarray import _native
from burn_ndarray._native import hugepage

CHILD = """
import numpy as np
from burn_ndarray import NdArray, _native
from burn_ndarray._native import hugepage
NdArray()
setter = hugepage._setter()
was = setter(True)  # returns the advice in force before this call
print(_native.lib() is not None, was, hugepage.state(), sep="|")
"""


def run_child(**env_changes):
    env = dict(os.environ)
    for key in ("NUMPY_MADVISE_HUGEPAGE", "BURN_NDARRAY_HUGEPAGE"):
        env.pop(key, None)
    env.update(env_changes)
    out = subprocess.run(
        [sys.executable, "-c", CHILD], env=env, capture_output=True, text=True, check=True
    )
    native, was, state = out.stdout.strip().split("|", 2)
    return native == "True", was == "True", state


needs_switch = pytest.mark.skipif(
    hugepage._setter() is None, reason="this numpy has no _set_madvise_hugepage (not Linux)"
)


@needs_switch
def test_advice_off_once_native_kernels_load():
    native, was, state = run_child()
    if not native:
        pytest.skip(f"native kernels unavailable here: {_native.status()}")
    assert was is False
    assert state == "numpy's huge-page advice off"


@needs_switch
@pytest.mark.parametrize(
    "env, why",
    [
        ({"BURN_NDARRAY_HUGEPAGE": "1"}, "BURN_NDARRAY_HUGEPAGE=1"),
        ({"NUMPY_MADVISE_HUGEPAGE": "1"}, "NUMPY_MADVISE_HUGEPAGE is set"),
    ],
)
def test_user_choice_keeps_numpys_advice(env, why):
    native, was, state = run_child(**env)
    if not native:
        pytest.skip(f"native kernels unavailable here: {_native.status()}")
    assert was is True  # numpy's default (both "1" values ask for the advice)
    assert state == f"numpy's huge-page advice kept ({why})"


def test_no_native_kernels_leave_numpy_alone():
    native, was, state = run_child(BURN_NDARRAY_NATIVE="0")
    assert not native
    assert state == ""
    if hugepage._setter() is not None:
        assert was is True
