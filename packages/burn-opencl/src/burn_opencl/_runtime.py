"""One OpenCL device at work: its context, in-order queue, compiled programs and launches.

Programs are built per (family, dtypes) -- a family renders the OpenCL C source of many related
kernels at once (every elementwise op of float32, say) -- so the compiler front end runs once per
family instead of once per op. Every `cl.Kernel` is created once and kept in a dict: fetching a
kernel from its program per launch costs ~90 us on PoCL against ~4 us for a kept one.

Launches always name their local size: PoCL compiles a kernel once per local size, and letting
it pick one per global size would recompile for every new tensor size.
"""

from __future__ import annotations


import threading
import warnings

import numpy as np
import pyopencl as cl
from burn_gpu import CTYPES

from ._first_build import announce
from ._platform import kind_name
from ._pool import Block, Pool, size_class

#: by-value scalar argument types
SCALAR = {
    np.dtype(np.float64): np.float64,
    np.dtype(np.float32): np.float32,
    np.dtype(np.float16): np.float32,  # half kernels compute (and take scalars) in float32
    np.dtype(np.int64): np.int64,
    np.dtype(np.int32): np.int32,
    np.dtype(np.int16): np.int16,
    np.dtype(np.int8): np.int8,
    np.dtype(np.uint8): np.uint8,
    np.dtype(np.uint16): np.uint16,
    np.dtype(np.uint32): np.uint32,
    np.dtype(np.uint64): np.uint64,
    np.dtype(np.bool_): np.uint8,
}

try:  # bfloat16 (ml_dtypes' numpy dtype) where ml_dtypes is installed: float32 scalars too
    import ml_dtypes as _ml_dtypes

    SCALAR[np.dtype(_ml_dtypes.bfloat16)] = np.float32
except ImportError:  # pragma: no cover - burn-tensor's bf16 extra is not installed
    pass


def ctype(dt) -> str:
    try:
        return CTYPES["opencl"][np.dtype(dt).name]
    except KeyError:
        raise TypeError(f"OpenCl: element type {np.dtype(dt)} is not supported") from None



def build_options(cl_device) -> list[str]:
    """Options every program is built with. OpenCL lets float32 division and sqrt be off by up
    to 2.5 / 3 ulp unless asked; NVIDIA's driver is (a quantization scale came out one ulp
    from numpy's and CUDA's), so a device that can round them correctly is asked to: the same
    bits on every backend."""
    try:
        config = cl_device.single_fp_config
    except cl.Error:  # noqa: BLE001 - a driver without the query: its default
        return []
    flag = getattr(cl.device_fp_config, "CORRECTLY_ROUNDED_DIVIDE_SQRT", 0)
    return ["-cl-fp32-correctly-rounded-divide-sqrt"] if config & flag else []

class Runtime:
    """Context, queue, kernel cache and allocation for one OpenCL device (shared by every
    `OpenCl` backend configuration that uses this device)."""

    def __init__(self, cl_device, platform_index: int, device_index: int):
        self.cl_device = cl_device
        self.name = cl_device.name.strip()
        self.kind = kind_name(cl_device)
        self.platform_index = platform_index
        self.device_index = device_index
        self.ctx = cl.Context([cl_device])
        self.queue = cl.CommandQueue(self.ctx)
        self.fp64 = "cl_khr_fp64" in cl_device.extensions
        self.build_options = build_options(cl_device)
        self.fp16 = "cl_khr_fp16" in cl_device.extensions
        #: float element types this device holds (float16: storage, float32 compute; no
        #: cl_khr_fp16 needed; bfloat16 is not of numpy's kind "f" and always passes)
        self.floats = {np.dtype(np.float32), np.dtype(np.float16)}
        self.floats |= {np.dtype(np.float64)} if self.fp64 else set()
        gpu = self.kind == "gpu"
        max_wg = cl_device.max_work_group_size
        #: local size of 1-D launches (elementwise, index ops)
        self.wg = min(256 if gpu else 64, max_wg)
        #: local size of one-element-per-item launches (contiguous elementwise): large on a CPU,
        #: where PoCL pays per work-group and vectorises across a group's items
        self.wg_flat = min(256 if gpu else 1024, max_wg)
        #: cap on work-groups of grid-stride launches (each item loops over the rest)
        self.max_groups = cl_device.max_compute_units * (64 if gpu else 8)
        self.local_mem = cl_device.local_mem_size
        self._programs: dict = {}
        self._kernels: dict = {}
        #: launch plans by op and operand layouts (`_plan`)
        self.plans: dict = {}
        #: this device's `burn_gpu.Runtime` for eager ops (`_gpu_runtime.kernels_of`)
        self.eager = None
        # A kernel's arguments are state on the kernel object: hold the lock from set_args to
        # enqueue so threads (data-loader workers) cannot interleave.
        self.lock = threading.RLock()
        self.pool = Pool(self.ctx, max_cached=cl_device.global_mem_size // 4)

    def __repr__(self) -> str:
        return f"Runtime({self.platform_index}:{self.device_index} {self.kind} {self.name!r})"

    # -- programs and kernels --------------------------------------------------------------------
    def check_dtype(self, dt: np.dtype) -> None:
        if dt.kind == "f" and dt not in self.floats:
            why = "" if dt != np.float64 else " (the device has no cl_khr_fp64)"
            raise TypeError(f"OpenCl: {self.name} cannot hold {dt} tensors{why}")

    def program(self, key, render, build=None):
        """The built program for `key`; `render()` gives its source on first use, or (`build`
        given) `build(ctx, device)` builds it (a program made in more than one step)."""
        prg = self._programs.get(key)
        if prg is not None:
            return prg
        with self.lock:  # two threads asking for one new program build it once
            return self._build(key, render, build)

    def _build(self, key, render, build=None):
        prg = self._programs.get(key)
        if prg is None and build is not None:
            announce(self.name)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    prg = build(self.ctx, self.cl_device)
                except cl.RuntimeError as exc:
                    raise RuntimeError(
                        f"OpenCl: building kernels {key} failed on {self.name}:\n{exc}"
                    ) from exc
            self._programs[key] = prg
        if prg is None:
            announce(self.name)
            src = render()
            if self.fp64 and "double" in src:
                src = "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n" + src
            with warnings.catch_warnings():
                # PoCL prints notes on success; pytest turns warnings into errors.
                warnings.simplefilter("ignore")
                try:
                    prg = cl.Program(self.ctx, src).build(options=self.build_options)
                except cl.RuntimeError as exc:
                    raise RuntimeError(
                        f"OpenCl: building kernels {key} failed on {self.name}:\n{exc}"
                    ) from exc
            self._programs[key] = prg
        return prg

    def kernel(self, key, name: str, render, build=None):
        """The kept `cl.Kernel` `name` of program `key` (`program`'s `render` / `build`)."""
        k = self._kernels.get((key, name))
        if k is None:
            prg = self.program(key, render, build)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                k = cl.Kernel(prg, name)
            self._kernels[(key, name)] = k
        return k

    # -- memory ----------------------------------------------------------------------------------
    def alloc(self, nbytes: int) -> Block:
        """A pooled device buffer of at least `nbytes` (a `Block`; its `.buf` is the cl.Buffer)."""
        return self.pool.alloc(nbytes)

    def upload(self, arr: np.ndarray) -> Block:
        """A new block holding a copy of `arr`. The copy happens now, off the queue (a queued
        write would wait for every kernel before it), into a buffer of the pool's size class."""
        size = size_class(arr.nbytes)
        host = np.empty(size, np.uint8)
        host[: arr.nbytes] = np.ascontiguousarray(arr).reshape(-1).view(np.uint8)
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR
        buf = cl.Buffer(self.ctx, flags, hostbuf=host)
        pool = self.pool
        pool.reserved += size
        pool.in_use += size
        pool.allocations += 1
        return Block(buf, size, pool)

    def read(self, buf, out: np.ndarray, byte_offset: int = 0) -> np.ndarray:
        if out.nbytes:
            cl.enqueue_copy(self.queue, out, buf, src_offset=byte_offset, is_blocking=True)
        return out

    def copy(self, dst, src, nbytes: int, src_offset: int = 0, dst_offset: int = 0) -> None:
        if nbytes:
            cl.enqueue_copy(
                self.queue,
                dst,
                src,
                byte_count=nbytes,
                src_offset=src_offset,
                dst_offset=dst_offset,
            )

    # -- launches --------------------------------------------------------------------------------
    def launch1d(self, kernel, n: int, args, wg: int | None = None) -> None:
        """Grid-stride launch over `n` items (kernels loop `i += get_global_size(0)`)."""
        if n <= 0:
            return
        wg = wg or self.wg
        groups = min((n + wg - 1) // wg, self.max_groups)
        with self.lock:
            set_args(kernel, args)
            cl.enqueue_nd_range_kernel(self.queue, kernel, (groups * wg,), (wg,))

    def launch(self, kernel, global_size, local_size, args) -> None:
        with self.lock:
            set_args(kernel, args)
            cl.enqueue_nd_range_kernel(self.queue, kernel, global_size, local_size)

    def sync(self) -> None:
        self.queue.finish()


# pyopencl's `set_arg` takes ~14 us for a by-value argument (a struct's bytes, a numpy scalar)
# against ~0.3 us for its buffer-protocol setter, which it reaches only after a slower path:
# call that setter directly (it is pyopencl's own, used by its generated invokers).
_SET_BUF = getattr(cl.Kernel, "_set_arg_buf", None)
_MEM = cl.MemoryObjectHolder


def set_args(kernel, args) -> None:
    if _SET_BUF is None:
        kernel.set_args(*args)
        return
    for i, a in enumerate(args):
        if isinstance(a, _MEM):
            kernel.set_arg(i, a)
        else:
            _SET_BUF(kernel, i, a)


_RUNTIMES: dict = {}


def runtime_for(cl_device, platform_index: int, device_index: int) -> Runtime:
    """The one Runtime of a physical device (keyed by the driver's device handle)."""
    key = cl_device.int_ptr
    rt = _RUNTIMES.get(key)
    if rt is None:
        rt = _RUNTIMES[key] = Runtime(cl_device, platform_index, device_index)
    return rt
