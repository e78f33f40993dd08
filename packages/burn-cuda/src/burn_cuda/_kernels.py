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
_FAST: dict = {}
_GO: list = [None]  # the process's launcher, made on first launch


def kernel(name: str, *dtypes, **options):
    """The compiled kernel `name` for element types `dtypes` and source `options` (as
    `_kernel_source.SOURCES`, e.g. `index="int"` for unfold4d)."""
    # keyed first on the arguments as given (dtype objects hash fast; `np.dtype(d).name` took
    # ~3 us per call on the H100 host), then on the canonical names on a miss
    fast = (name, dtypes, tuple(options.items())) if options else (name, dtypes)
    k = _FAST.get(fast)
    if k is not None:
        return k
    key = (name, *(np.dtype(d).name for d in dtypes), *sorted(options.items()))
    k = _CACHE.get(key)
    if k is None:
        cp = load_cupy()
        k = _CACHE[key] = cp.RawKernel(src.SOURCES[name](*dtypes, **options), name)
    _FAST[fast] = k
    return k


#: most blocks of a grid-stride launch: CUDA's `blockIdx.x * blockDim.x` is a 32-bit product,
#: so the work-items stay below 2^31 and the kernel's loop covers the rest
MAX_BLOCKS = 2**31 // BLOCK


def launch(k, total: int, *args) -> None:
    """Run grid-stride kernel `k` with one thread per element of `total` (blocks of BLOCK
    threads, at most MAX_BLOCKS) through the driver launcher (`_launch.py`). Python ints fill
    64-bit slots (a kernel's `int` parameter reads the low half), numpy float32 scalars `float`
    parameters, Python floats `double`."""
    if total <= 0:
        return
    launch_grid(k, min((total + BLOCK - 1) // BLOCK, MAX_BLOCKS), BLOCK, *args)


def launch_grid(k, grid: int, block: int, *args, smem: int = 0) -> None:
    """Run `k(*args)` on `grid` blocks of `block` threads (argument rules as `launch`), each
    with `smem` bytes of dynamic shared memory."""
    go = _GO[0]
    if go is None:
        go = process_launcher()
    go.args(k, grid, block, args, smem)


def process_launcher():
    """The process's kernel launcher (`_launch.launcher`: the driver's, or cupy's RawKernel
    call where `driver.launchKernel` is missing or BURN_CUDA_DRIVER_LAUNCH=0), made once."""
    go = _GO[0]
    if go is None:
        from ._launch import launcher

        go = _GO[0] = launcher(load_cupy(), BLOCK)
    return go


def i32(*values) -> tuple:
    """Geometry arguments as C ints."""
    return tuple(np.int32(v) for v in values)


#: a launch argument as a C `long long` (numpy's int64 type itself: a C call, no Python frame
#: per argument; linear's bias add passes three)
i64 = np.int64
