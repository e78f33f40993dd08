"""`OpenClRuntime`: this backend's `burn_gpu.Runtime` -- compile an OpenCL C source (a fused
kernel Fusion rendered, or any kernel of burn_gpu), allocate, describe a layout, launch.
`OpenCl.runtime(device)` returns one.

Compiled programs are kept in memory per runtime and their binaries on disk, per driver:
`burn_tensor.cache.cache_dir("fusion", "opencl", <driver>)/<sha256 of the source>.bin`
(`$BURN_CACHE_DIR`, else `$XDG_CACHE_HOME/burn` or `~/.cache/burn`; not used when that folder is
not safe), each with a `.sum` sidecar of its size and sha256. A binary is handed to the driver
only when its size and hash match, and kept only when the program built from it holds the kernel
asked for; anything else is deleted and rebuilt from source.
"""

from __future__ import annotations

import hashlib
import os
import re
import warnings
from pathlib import Path

import numpy as np
import pyopencl as cl
from burn_tensor import cache

from . import _ew
from ._array import ClArray
from ._fused_launch import FusedLaunch
from ._runtime import SCALAR

_I32 = np.int32
_SCALAR = {dt.name: t for dt, t in SCALAR.items()} | {"uint32": np.uint32}


def _driver_id(rt) -> str:
    d = rt.cl_device
    raw = f"{d.platform.name}-{d.platform.version}-{d.name}-{d.driver_version}"
    return re.sub(r"[^A-Za-z0-9._-]+", "_", raw)[:120]


class OpenClRuntime:
    """Kernel services of one OpenCL device (a `burn_gpu.Runtime`)."""

    dialect = "opencl"

    def __init__(self, rt):
        self.rt = rt
        self.device_name = rt.name
        self.cpu = rt.kind == "cpu"
        self.fp64 = rt.fp64
        self.max_group = 1 << (rt.cl_device.max_work_group_size.bit_length() - 1)
        self._kernels: dict = {}
        #: work-group size of fused reductions (a power of two: their tree reduction halves it)
        self.reduce_local = 1 << (rt.wg.bit_length() - 1)
        #: cap on work-groups of a launch (grid-stride over items or rows)
        self.max_groups = rt.max_groups
        #: the trusted binary cache folder of this driver, or None (memory only)
        self.disk = cache.cache_dir("fusion", "opencl", _driver_id(self.rt))
        #: build options of the programs compiled here (Fusion's fused kernels and burn_gpu's
        #: templates): the device's, then `BURN_OPENCL_BUILD_OPTIONS` (read now). The workspace's
        #: tests set -cl-opt-disable there: PoCL then compiles a cold program about 10x faster
        #: (Fusion's suites build thousands), results unchanged. The classic eager programs
        #: (`Runtime.program`: elementwise, matmul tiles and their autotune) never take it.
        self.build_options = list(rt.build_options) + os.environ.get("BURN_OPENCL_BUILD_OPTIONS", "").split()

    def compile(self, source: str, name: str):
        """(kernel, how): how is "memory", "disk" (a cached binary) or "compiled"."""
        k = self._kernels.get(source)
        if k is not None:
            return k, "memory"
        rt = self.rt
        path = None
        if self.disk is not None:
            path = self.disk / (self.binary_key(source) + ".bin")
        with rt.lock, warnings.catch_warnings():
            warnings.simplefilter("ignore")  # PoCL prints build notes; pytest makes them errors
            k, how = self._from_disk(path, name), "disk"
            if k is None:
                k, how = self._build_source(source, name, path), "compiled"
        self._kernels[source] = k
        return k, how

    def binary_key(self, source: str) -> str:
        """The disk cache's name for `source`'s binary: its text and the build options (a binary
        built with other options is another entry)."""
        key = " ".join(self.build_options) + "\n" + source
        return hashlib.sha256(key.encode()).hexdigest()

    def _from_disk(self, path: Path | None, name: str):
        """The kernel from the verified cached binary at `path`, or None (a bad one deleted)."""
        binary = cache.read_verified(path) if path is not None else None
        if binary is None:  # missing, or size/sha256 differ: never handed to the driver
            return None
        try:
            prg = cl.Program(self.rt.ctx, [self.rt.cl_device], [binary]).build()
            return cl.Kernel(prg, name)
        except Exception:  # noqa: BLE001 - refused, another entry's binary, no such kernel
            cache.discard(path)
            return None

    def _build_source(self, source: str, name: str, path: Path | None):
        rt = self.rt
        try:
            prg = cl.Program(rt.ctx, source).build(options=self.build_options)
            k = cl.Kernel(prg, name)
        except cl.Error as exc:
            raise RuntimeError(
                f"burn_fusion: building fused kernel {name} failed on {rt.name}:\n{exc}\n"
                f"{source}"
            ) from exc
        if path is not None:
            self._store(path, prg)
        return k

    @staticmethod
    def _store(path: Path, prg) -> None:
        try:
            binary = prg.get_info(cl.program_info.BINARIES)[0]
            cache.write_verified(path, bytes(binary))
        except (cl.Error, OSError):
            pass  # the disk cache is an optimisation only

    def empty(self, shape, dtype) -> ClArray:
        return ClArray.empty(self.rt, shape, dtype)

    @staticmethod
    def layout(x: ClArray):
        """(strides, offset) in elements, relative to the buffer the launch passes."""
        return x.strides, x.offset

    @staticmethod
    def aligned(x: ClArray) -> bool:
        """Whether `x`'s first element is 16-byte aligned (vector kernels): buffers are, and
        a view at an offset is read through strides anyway; `vload4` needs only element
        alignment, so this is the contiguity the stream already checked."""
        return x.offset == 0

    def prepare(self, kernel, n: int, ints, outs, n_ins: int, scalar_dtypes, groups=None, items=None):
        """`launch` prepared once for a launch that recurs (Fusion's plan recipes): `outs` the
        (shape, dtype) of each new output, `scalar_dtypes` the scalars' dtype names. Returns
        `go(ins, scalars) -> new outputs` (`_fused_launch.py`)."""
        rt = self.rt
        if groups is None:
            wg = rt.wg
            work = n if items is None else items
            gsize, lsize = (min((work + wg - 1) // wg, rt.max_groups) * wg,), (wg,)
        else:
            L = self.reduce_local
            gsize, lsize = (groups * L,), (L,)
        return FusedLaunch(rt, kernel, n, ints, outs, n_ins, scalar_dtypes, gsize, lsize)

    def launch(self, kernel, n: int, ints, outs, ins, scalars, groups=None, items=None) -> None:
        """Elementwise: a grid-stride launch over `items` work-items (default `n`; a vector
        kernel's items each take 4 elements). Reductions (`groups` given): `groups`
        work-groups of `reduce_local` items."""
        args = [_I32(n)]
        args += [_I32(v) for v in ints]
        args += [o.buf for o in outs]
        args += [x.buf for x in ins]
        args += [SCALAR[np.dtype(dt)](v) for v, dt in scalars]
        if groups is None:
            self.rt.launch1d(kernel, n if items is None else items, args)
        else:
            L = self.reduce_local
            self.rt.launch(kernel, (groups * L,), (L,), args)

    # -- step capture (burn_fusion.capture; optional in the Runtime contract) ----------------------
    def tape(self):
        """A new recording of this device's enqueues (`_capture_tape.ClTape`)."""
        from ._capture_tape import ClTape

        return ClTape(self.rt)

    @staticmethod
    def copy_into(dst: ClArray, src: ClArray) -> None:
        """Write `src`'s values into contiguous array `dst` (queued)."""
        from ._capture_tape import copy_into

        copy_into(dst, src)

    @staticmethod
    def copy_many(pairs) -> None:
        """`copy_into(dst, src)` for each (dst, src) pair (a tape that cannot rebind)."""
        from ._capture_copies import copy_many

        copy_many(pairs)

    @staticmethod
    def copy_plan(pairs):
        """A function doing `copy_many(pairs)` at each call, prepared once."""
        from ._capture_copies import copy_plan

        return copy_plan(pairs)

    @staticmethod
    def rebased(view: ClArray, base: ClArray) -> ClArray:
        """`view`'s layout over contiguous `base`'s buffer (an input rebound by a tape)."""
        from ._capture_tape import rebased

        return rebased(view, base)

    @staticmethod
    def static_copy(src: ClArray) -> ClArray:
        """A new contiguous array with `src`'s values (queued copy)."""
        from ._capture_tape import static_copy

        return static_copy(src)
    # -- eager ops written once in burn_gpu ----------------------------------------------------
    def kernel(self, key, name: str, render):
        """The device's kept kernel `name` of program `key` (built once per device)."""
        return self.rt.kernel(key, name, render)

    def call(self, kernel, items: int, args, group=None, flat=False) -> None:
        """`kernel(*args)`: arrays pass their buffer, `(value, dtype name)` pairs a scalar.
        `flat`: groups of `wg_flat` items from that many on (PoCL vectorises across them)."""
        a = [x.buf if x.__class__ is ClArray else _SCALAR[x[1]](x[0]) for x in args]
        rt = self.rt
        if flat:
            group = rt.wg_flat if items >= rt.wg_flat else rt.wg
        if group is None:
            rt.launch1d(kernel, items, a)
        elif items > 0:
            rt.launch(kernel, (-(-items // group) * group,), (group,), a)

    @staticmethod
    def contiguous(x: ClArray, compute: bool = False) -> ClArray:
        return _ew.contiguous(x)  # no float16 kernels to compute in float32 around

    @staticmethod
    def astype(x: ClArray, dtype) -> ClArray:
        return x if x.dtype == dtype else _ew.cast(x, np.dtype(dtype))


def eager(rt) -> OpenClRuntime:
    """The eager ops' `OpenClRuntime` of device runtime `rt`, kept on it."""
    k = rt.eager
    if k is None:
        k = rt.eager = OpenClRuntime(rt)
    return k


def kernels_of(x: ClArray) -> OpenClRuntime:
    """The runtime of the device `x` lives on (`OpenCl.kernels_of`)."""
    return eager(x.rt)
