"""`CudaRuntime`: this backend's `burn_gpu.Runtime` -- compile a CUDA C source (NVRTC through
`cupy.RawModule`), allocate, describe a layout, launch. `Cuda.runtime(device)` returns one.

Compiled kernels are kept in memory per runtime; on disk, cupy caches each compiled module per
source, GPU architecture and CUDA version (`$CUPY_CACHE_DIR`, default `~/.cupy/kernel_cache`),
which is the per-driver disk cache of fused kernels on CUDA.
"""

from __future__ import annotations

import numpy as np

from ._platform import load_cupy

BLOCK = 256
_I32 = np.int32
_SCALAR = {
    "float64": np.float64,
    "float32": np.float32,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "bool": np.uint8,
}


class CudaRuntime:
    """Kernel services of one CUDA device (a `burn_gpu.Runtime`)."""

    dialect = "cuda"

    def __init__(self, backend, device):
        self.cp = cp = load_cupy()
        self.index = device.index
        self.dev = cp.cuda.Device(self.index)
        self.device_name = f"cuda:{self.index}"
        sms = self.dev.attributes["MultiProcessorCount"]
        #: cap on blocks of a grid-stride launch: four full waves of 256-thread blocks at 2048
        #: resident threads per SM, so no thread loops much and the last wave's tail is short
        self.max_groups = sms * 32
        #: block size of fused reductions (a power of two: their tree reduction halves it)
        self.reduce_local = BLOCK
        self._kernels: dict = {}

    def compile(self, source: str, name: str):
        """(kernel, how): how is "memory" or "compiled" (cupy may serve it from its disk
        cache)."""
        k = self._kernels.get(source)
        if k is not None:
            return k, "memory"
        with self.dev:
            mod = self.cp.RawModule(code=source, options=("--std=c++14",))
            k = mod.get_function(name)
        self._kernels[source] = k
        return k, "compiled"

    def empty(self, shape, dtype):
        with self.dev:
            return self.cp.empty(shape, dtype)

    @staticmethod
    def layout(x):
        """(strides, offset) in elements, relative to the pointer the launch passes (cupy's data
        pointer is the view's first element, so the offset is 0)."""
        size = x.itemsize
        return tuple(s // size for s in x.strides), 0

    @staticmethod
    def aligned(x) -> bool:
        """Whether `x`'s data pointer is 16-byte aligned: a vector kernel's float4 / double2
        accesses need it (cupy's allocations are 256-byte aligned; a view may not be)."""
        return x.data.ptr % 16 == 0

    def launch(self, kernel, n: int, ints, outs, ins, scalars, groups=None, items=None) -> None:
        """Elementwise: a grid-stride launch over `items` threads (default `n`; a vector
        kernel's threads each take 4 elements), at most `max_groups` blocks. Reductions
        (`groups` given): `groups` blocks of `reduce_local` threads."""
        args = [_I32(n)]
        args += [_I32(v) for v in ints]
        args += outs
        args += ins
        args += [_SCALAR[dt](v) for v, dt in scalars]
        if groups is None:
            work = n if items is None else items
            grid = min((work + BLOCK - 1) // BLOCK, self.max_groups)
        else:
            grid = groups
        with self.dev:
            kernel((grid,), (BLOCK,), tuple(args))

    # -- step capture (burn_fusion.capture; optional in the Runtime contract) ----------------------
    def tape(self):
        """A new recording of this device's work as CUDA graphs (`_capture_graph.CudaTape`)."""
        from ._capture_graph import CudaTape

        return CudaTape(self)

    @staticmethod
    def copy_into(dst, src) -> None:
        """Write `src`'s values into `dst` (same shape and dtype), on the current stream."""
        from ._capture_graph import copy_into

        copy_into(dst, src)

    @staticmethod
    def static_copy(src):
        """A new contiguous array with `src`'s values."""
        from ._capture_graph import static_copy

        return static_copy(src)
