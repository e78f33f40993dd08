"""The native kernels load wherever they can: with a C compiler present and
`BURN_NDARRAY_NATIVE` not off, `lib()` must not be None.

Why a test of its own: every native test skips when `lib()` is None, and NdArray then silently
runs its numpy paths. A bug in our own code at load time (a merge left `_native_dwconv.py`
importing a name `_native_conv` no longer had) made every native test skip and every conv
10x slower, with the suite green."""

from __future__ import annotations

import pytest
from burn_ndarray import _native, _native_quant

CAN_BUILD = _native.enabled_by_env() and _native.find_compiler() is not None


@pytest.mark.skipif(not CAN_BUILD, reason="no C compiler here, or BURN_NDARRAY_NATIVE=0")
def test_the_native_kernels_load_where_a_compiler_exists():
    assert _native.lib() is not None, _native.status()


@pytest.mark.skipif(not CAN_BUILD, reason="no C compiler here, or BURN_NDARRAY_NATIVE=0")
def test_the_quantized_kernels_load_where_a_compiler_exists():
    assert _native_quant.lib() is not None, _native_quant.status()
