"""`CudaRuntime`: this backend's `burn_gpu.Runtime` -- compile a CUDA C source (NVRTC through
`cupy.RawModule`), allocate, describe a layout, launch. `Cuda.runtime(device)` returns one.

Compiled kernels are kept in memory per runtime; on disk, cupy caches each compiled module per
source, GPU architecture and CUDA version (`$CUPY_CACHE_DIR`, default `~/.cupy/kernel_cache`),
which is the per-driver disk cache of fused kernels on CUDA.
"""

from __future__ import annotations

import functools

import numpy as np

from ._dtypes import kernel_dtype
from . import _kernels
from ._kernels import MAX_BLOCKS, process_launcher
from ._launch import DriverLauncher, RawLauncher
from ._platform import load_cupy
from ._prepared import Prepared

BLOCK = 256
_I32 = np.int32
_F32 = np.float32
_SCALAR = {
    "float64": np.float64,
    "float32": np.float32,
    "int64": np.int64,
    "int32": np.int32,
    "int16": np.int16,
    "int8": np.int8,
    "uint8": np.uint8,
    "uint16": np.uint16,
    "uint32": np.uint32,
    "uint64": np.uint64,
    "bool": np.uint8,
    "uint32": np.uint32,
    "float16": np.float32,  # burn_gpu's half kernels compute and take scalars in float32
    "bfloat16": np.float32,
}


class CudaRuntime:
    """Kernel services of one CUDA device (a `burn_gpu.Runtime`)."""

    dialect = "cuda"
    cpu = False
    fp64 = True
    max_group = 1024
    #: block size of fused reductions (a power of two: their tree reduction halves it)
    reduce_local = BLOCK

    def __init__(self, index: int):
        self.cp = cp = load_cupy()
        self.index = index
        self.dev = cp.cuda.Device(index)
        self.device_name = f"cuda:{index}"
        self._kernels: dict = {}
        self._eager: dict = {}

    @functools.cached_property
    def max_groups(self) -> int:
        """Cap on blocks of a grid-stride launch: four full waves of 256-thread blocks at 2048
        resident threads per SM, so no thread loops much and the last wave's tail is short."""
        return self.dev.attributes["MultiProcessorCount"] * 32

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
        cp = self.cp
        if cp.cuda.runtime.getDevice() == self.index:  # eager ops: no device context (~us)
            return cp.ndarray(shape, dtype)
        with self.dev:
            return cp.ndarray(shape, dtype)

    @staticmethod
    def layout(x):
        """(strides, offset) in elements, relative to the pointer the launch passes (cupy's data
        pointer is the view's first element, so the offset is 0)."""
        # `s // size` per stride through `map` (C-level; a generator resumed per dim was most
        # of this call: three layouts per layer_norm launch)
        return tuple(map(x.itemsize.__rfloordiv__, x.strides)), 0

    @staticmethod
    def layout_key(x):
        """What `layout(x)` depends on beyond shape and dtype (Fusion's plan signatures): the
        byte strides, an attribute (no division per dim)."""
        return x.strides

    @staticmethod
    def aligned(x) -> bool:
        """Whether `x`'s data pointer is 16-byte aligned: a vector kernel's float4 / double2
        accesses need it (cupy's allocations are 256-byte aligned; a view may not be)."""
        return x.data.ptr % 16 == 0

    def prepare(self, kernel, n: int, ints, outs, n_ins: int, scalar_dtypes, groups=None, items=None):
        """`launch` prepared once for a launch that recurs (Fusion's plan recipes): `outs` the
        (shape, dtype) of each new output, `scalar_dtypes` the scalars' dtype names. Returns
        `go(ins, scalars) -> new outputs` (`_prepared.Prepared`): launched from a driver
        parameter block of its own that holds the fixed ints (`_launch.DriverLauncher`'s slots:
        ~2 us less than cupy's RawKernel call, which `launch` takes)."""
        if groups is None:
            work = n if items is None else items
            grid = min((work + BLOCK - 1) // BLOCK, self.max_groups)
        else:
            grid = groups
        go = process_launcher()
        try:
            kernel.kernel  # noqa: B018 - the driver launcher needs the function handle
        except AttributeError:
            go = RawLauncher(self.cp, BLOCK)
        types = [_SCALAR[dt] for dt in scalar_dtypes]
        return Prepared(
            self, go, kernel, grid, BLOCK, [n, *ints], outs, n_ins, scalar_dtypes, types, groups,
            items,
        )

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
        from ._capture_copies import copy_into

        copy_into(dst, src)

    @staticmethod
    def copy_many(pairs) -> None:
        """`copy_into(dst, src)` for each (dst, src) pair, batched (`_capture_copies.copy_many`)."""
        from ._capture_copies import copy_many

        copy_many(pairs)

    @staticmethod
    def copy_plan(pairs):
        """A function doing `copy_many(pairs)` at each call: one prepared graph launch
        (`_capture_copies.copy_plan`)."""
        from ._capture_copies import copy_plan

        return copy_plan(pairs)

    @staticmethod
    def static_copy(src):
        """A new contiguous array with `src`'s values."""
        from ._capture_copies import static_copy

        return static_copy(src)
    # -- eager ops written once in burn_gpu (through the driver launcher, as `_kernels`) -------
    def kernel(self, key, name: str, render):
        """Kernel `name` of program `key` (a cupy RawKernel, compiled on first launch)."""
        k = self._eager.get((key, name))
        if k is None:
            k = self._eager[(key, name)] = self.cp.RawKernel(render(), name)
        return k

    @staticmethod
    def call(kernel, items: int, args, group=None, flat=False) -> None:
        """`kernel(*args)` on ceil(items / block) blocks (a thread per item, as burn_cuda's own
        launches; grid-stride ones at most `MAX_BLOCKS`); arrays pass their pointer, `(value, dtype)` a
        scalar: into the driver launcher's 8-byte slot as a Python int (a C `int` reads its low
        half), a Python float (`double`: an int value converted first) or a numpy float32;
        into cupy's RawKernel call as the exact numpy type."""
        if items <= 0:
            return
        # (read through the module, as `_bf16._launcher`: the CPU stand-in swaps the list)
        go = _kernels._GO[0] or process_launcher()
        if go.__class__ is DriverLauncher:
            a = [x if x.__class__ is not tuple else _F32(x[0]) if x[1] == "float32"
                 else float(x[0]) if x[1] == "float64" else x[0] for x in args]  # fmt: skip
        else:
            a = [_SCALAR[x[1]](x[0]) if x.__class__ is tuple else x for x in args]
        block = group or BLOCK
        grid = -(-items // block)
        go.args(kernel, grid if group or flat else min(grid, MAX_BLOCKS), block, a)

    def contiguous(self, x, compute: bool = False):
        kd = kernel_dtype(x.dtype) if compute else x.dtype
        if x._c_contiguous and x.dtype == kd:  # the common case, without cupy's checks
            return x
        return self.cp.ascontiguousarray(x, dtype=kd)

    @staticmethod
    def astype(x, dtype):
        return x if x.dtype == dtype else x.astype(dtype)


_EAGER: dict = {}


def runtime_at(index: int) -> CudaRuntime:
    """The eager ops' runtime of GPU `index`, one per device."""
    rt = _EAGER.get(index)
    if rt is None:
        rt = _EAGER[index] = CudaRuntime(index)
    return rt


def kernels_of(x) -> CudaRuntime:
    """The runtime of the GPU `x` lives on (`Cuda.kernels_of`)."""
    return runtime_at(x.device.id)
