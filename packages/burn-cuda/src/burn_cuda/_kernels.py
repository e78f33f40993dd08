"""Compiling and launching burn_cuda's own kernels (sources in `_kernel_source.py`).

Each (kernel, dtypes) pair is compiled once per process by NVRTC through `cupy.RawKernel` (cupy
also caches the binary on disk, `~/.cupy/kernel_cache`); launches pass every scalar as the exact
numpy type of its C parameter, since a RawKernel does no type conversion.
"""

from __future__ import annotations

import numpy as np

from . import _kernel_source as src
from ._platform import load_cupy

BLOCK = 256
_CACHE: dict = {}


def kernel(name: str, *dtypes, **options):
    """The compiled kernel `name` for element types `dtypes` and source `options` (as
    `_kernel_source.SOURCES`, e.g. `index="int"` for unfold4d)."""
    key = (name, *(np.dtype(d).name for d in dtypes), *sorted(options.items()))
    k = _CACHE.get(key)
    if k is None:
        cp = load_cupy()
        k = _CACHE[key] = cp.RawKernel(src.SOURCES[name](*dtypes, **options), name)
    return k


def launch(k, total: int, *args) -> None:
    """Run `k` with one thread per element of `total`; ints are `int` (C int) unless given as
    numpy scalars. The element count is passed first after the arrays, as `long long`."""
    if total <= 0:
        return
    grid = (total + BLOCK - 1) // BLOCK
    k((grid,), (BLOCK,), args)


def i32(*values) -> tuple:
    """Geometry arguments as C ints."""
    return tuple(np.int32(v) for v in values)


def i64(v) -> np.int64:
    return np.int64(v)
