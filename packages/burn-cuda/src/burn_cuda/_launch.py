"""Kernel launches straight through the driver (`cuLaunchKernel`) for the hot path.

Why: a cupy `RawKernel` call packs its arguments in Cython on every launch (a pointer object
per array, a type dispatch per scalar) and looks up the kernel for the current device: 6.3-8.4
us per launch on the H100 host, where `cupy.cuda.driver.launchKernel` with a prepared
parameter block took 5.1-5.7 us including the stores of the three array addresses
(`probe_launch.py`). One block of 8-byte slots serves every kernel: `params[i]` points at
`slots[i]`, and a launch stores the values and passes `params`. A pointer, `long long` or
`double` fills its slot; a C `int`/`unsigned int` reads the low 4 bytes of an integer stored
in the slot as 64 bits (little-endian x86-64/aarch64 hosts, two's complement); a `float` is
stored through a 4-byte view of the slot's first half (`args`: numpy float32 scalars).

The block is per thread (the driver reads the parameters during the call, which cupy runs
without the GIL: another thread must not rewrite them meanwhile). Kernel handles are cached per
(kernel, device). `BURN_CUDA_DRIVER_LAUNCH=0`, or a cupy without `driver.launchKernel`, gives the
`RawKernel` call instead.

Example (what `_fast` does for `out = a + b` on n contiguous elements):
    >>> go = launcher(cp)
    >>> go.p3i(kernel, grid, a, b, out, n)   # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

SLOTS = 32  # the most parameters a kernel launched here takes (burn_gpu's scatter_add: 31)


class _Block(threading.local):
    """This thread's parameter block: `ints`/`floats` alias the same 8-byte slots.

    Made at a thread's first launch, which also makes the current device's (primary) context
    current on the thread: `cuLaunchKernel` is a driver call, and a thread whose runtime calls
    so far bound no context (cupy served its allocations from the pool's cache) got
    CUDA_ERROR_INVALID_CONTEXT (a data loader's thread drawing random numbers)."""

    def __init__(self, runtime=None):
        if runtime is not None:
            runtime.setDevice(runtime.getDevice())  # CUDA 12: the context is current now
            runtime.memGetInfo()  # a call needing the context binds it (cupy's _ensure_context)
        self.ints = (ctypes.c_int64 * SLOTS)()
        self.floats = (ctypes.c_double * SLOTS).from_buffer(self.ints)
        self.f32 = (ctypes.c_float * (2 * SLOTS)).from_buffer(self.ints)  # slot i = [2 * i]
        base = ctypes.addressof(self.ints)
        self.params = (ctypes.c_void_p * SLOTS)(*(base + 8 * i for i in range(SLOTS)))
        self.addr = ctypes.addressof(self.params)


class DriverLauncher:
    """Launches cupy RawKernels with `cuLaunchKernel` from this thread's parameter slots
    (`p3i`/`p2i`/`p2ii`/`p2is` for the hot path's fixed signatures, `vec` for burn_gpu's vector
    elementwise kernels, `args` for any other)."""

    def __init__(self, cp, block: int = 256):
        import numpy as np

        self.cp = cp
        self.block = block
        self._nd = cp.ndarray
        self._f32 = np.float32
        self._f64 = np.float64
        self._launch = cp.cuda.driver.launchKernel
        self._device = cp.cuda.runtime.getDevice
        self._stream = cp.cuda.get_current_stream
        self._tls = _Block(cp.cuda.runtime)
        self._handles: dict = {}

    def _fn(self, k):
        key = (k, self._device())
        f = self._handles.get(key)
        if f is None:
            # RawKernel.kernel compiles (or loads) for the current device; keep it alive with
            # the handle so the module is not unloaded under us
            fn = k.kernel
            f = self._handles[key] = (fn.ptr, fn)
        return f[0]

    def p3i(self, k, grid: int, a, b, o, n: int) -> None:
        """k(a*, b*, out*, long long n) on `grid` blocks."""
        tls = self._tls
        s = tls.ints
        s[0] = a.data.ptr
        s[1] = b.data.ptr
        s[2] = o.data.ptr
        s[3] = n
        self._launch(self._fn(k), grid, 1, 1, self.block, 1, 1, 0, self._stream().ptr, tls.addr, 0)

    def p2i(self, k, grid: int, a, o, n: int) -> None:
        """k(a*, out*, long long n)."""
        tls = self._tls
        s = tls.ints
        s[0] = a.data.ptr
        s[1] = o.data.ptr
        s[2] = n
        self._launch(self._fn(k), grid, 1, 1, self.block, 1, 1, 0, self._stream().ptr, tls.addr, 0)

    def p2ii(self, k, grid: int, block: int, a, o, n: int, m: int) -> None:
        """k(a*, out*, long long n, long long m) on `grid` blocks of `block` threads."""
        tls = self._tls
        s = tls.ints
        s[0] = a.data.ptr
        s[1] = o.data.ptr
        s[2] = n
        s[3] = m
        self._launch(self._fn(k), grid, 1, 1, block, 1, 1, 0, self._stream().ptr, tls.addr, 0)

    def p2is(self, k, grid: int, a, o, n: int, scalar, is_float: bool) -> None:
        """k(a*, out*, long long n, double|long long s)."""
        tls = self._tls
        s = tls.ints
        s[0] = a.data.ptr
        s[1] = o.data.ptr
        s[2] = n
        if is_float:
            tls.floats[3] = scalar
        else:
            s[3] = scalar
        self._launch(self._fn(k), grid, 1, 1, self.block, 1, 1, 0, self._stream().ptr, tls.addr, 0)

    def vec(self, k, grid: int, block: int, n: int, o, arrays, scalars=()) -> None:
        """k(int n, out*, in*..., float s...): burn_gpu's vector elementwise kernels (the half
        types' `_half_ops`), without `args`' per-argument type dispatch."""
        tls = self._tls
        s = tls.ints
        s[0] = n
        s[1] = o.data.ptr
        i = 2
        for a in arrays:
            s[i] = a.data.ptr
            i += 1
        for v in scalars:
            tls.f32[2 * i] = v
            i += 1
        self._launch(self._fn(k), grid, 1, 1, block, 1, 1, 0, self._stream().ptr, tls.addr, 0)

    def with_params(
        self, k, grid_x: int, grid_y: int, block: int, params_addr: int, smem: int = 0
    ) -> None:
        """k on a (grid_x, grid_y) grid of `block` threads with a parameter block the caller
        built: `params_addr` is the address of an array of pointers, one per kernel parameter,
        each to that parameter's bytes (a struct passed by value included; the driver copies
        them during the call); `smem` bytes of dynamic shared memory a block."""
        self._launch(
            self._fn(k), grid_x, grid_y, 1, block, 1, 1, smem, self._stream().ptr, params_addr, 0
        )

    def args(self, k, grid: int, block: int, args, smem: int = 0) -> None:
        """k(*args) on `grid` blocks of `block` threads (`smem` bytes of dynamic shared memory
        each), for any kernel of up to SLOTS
        parameters: cupy arrays pass their device address, Python and numpy ints fill an 8-byte
        slot (a C `int` parameter reads its low half), numpy float32 a `float`, Python floats and
        float64 a `double`. Other arguments (or too many) take cupy's RawKernel call."""
        if len(args) > SLOTS:
            k((grid,), (block,), args, shared_mem=smem)
            return
        tls = self._tls
        s = tls.ints
        nd, f32, f64 = self._nd, self._f32, self._f64
        try:
            for i, a in enumerate(args):
                c = a.__class__
                if c is nd:
                    s[i] = a.data.ptr
                elif c is f32:
                    tls.f32[2 * i] = a
                elif c is float or c is f64:
                    tls.floats[i] = a
                else:
                    s[i] = a.__index__()  # ints, numpy ints (a numpy bool has none)
        except (AttributeError, TypeError):
            k((grid,), (block,), args, shared_mem=smem)
            return
        self._launch(self._fn(k), grid, 1, 1, block, 1, 1, smem, self._stream().ptr, tls.addr, 0)


class RawLauncher:
    """The same calls through cupy's `RawKernel.__call__` (the fallback, and for A/B runs)."""

    def __init__(self, cp, block: int = 256):
        self.block = (block,)

    def p3i(self, k, grid, a, b, o, n):
        k((grid,), self.block, (a, b, o, n))

    def p2i(self, k, grid, a, o, n):
        k((grid,), self.block, (a, o, n))

    def p2ii(self, k, grid, block, a, o, n, m):
        k((grid,), (block,), (a, o, n, m))

    def p2is(self, k, grid, a, o, n, scalar, is_float):
        k((grid,), self.block, (a, o, n, scalar))

    def vec(self, k, grid, block, n, o, arrays, scalars=()):
        k((grid,), (block,), (np.int32(n), o, *arrays, *[np.float32(v) for v in scalars]))

    def args(self, k, grid, block, args, smem=0):
        k((grid,), (block,), args, shared_mem=smem)


def launcher(cp, block: int = 256):
    """The driver launcher where cupy exposes `driver.launchKernel` (unless
    BURN_CUDA_DRIVER_LAUNCH=0), else cupy's RawKernel call."""
    if os.environ.get("BURN_CUDA_DRIVER_LAUNCH", "1") != "0" and hasattr(
        getattr(getattr(cp, "cuda", None), "driver", None), "launchKernel"
    ):
        return DriverLauncher(cp, block)
    return RawLauncher(cp, block)
