"""`Prepared`: one fused launch that recurs (`CudaRuntime.prepare`, Fusion's plan recipes), with
its own driver parameter block.

Why: a fused kernel's fixed arguments (the element count and, for a strided or broadcast plan,
every dim, stride and offset: up to ~25 ints) are the same at every launch, yet the process
launcher's `args` stored each one again through its per-argument type dispatch. Here they are
stored once, in a block of 8-byte slots this launch owns; a call stores only what changes (the
new outputs', the inputs' addresses and the scalars) and launches (`cuLaunchKernel` with this
block). The slots follow `_launch.DriverLauncher.args` exactly: an address or an `int` fills its
slot as 64 bits (a C `int` reads the low half), a `double` the slot, a `float` (numpy float32)
its first 4 bytes.

The block is written and read by one launch at a time: Fusion calls a prepared launch with its
stream's lock held, and a call from another thread than the one that prepared it (or with
another device current, or under cupy's RawKernel launcher) takes the general path instead
(the launcher's per-thread block), so a block is never rewritten while the driver reads it.

Example (what Fusion's recipe does):
    >>> go = runtime.prepare(kernel, n, ints, [(shape, dtype)], 2, ["float32"])  # doctest: +SKIP
    >>> (out,) = go([a, b], [0.5])                                              # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from ._launch import DriverLauncher

_INT, _DOUBLE, _FLOAT = range(3)
_ident = threading.get_ident


class Prepared:
    """A prepared fused launch: `go(ins, scalars) -> new outputs` (see the module docstring).

    Args:
        rt: the `CudaRuntime` (device, allocation, the capture tape's `launch`).
        go: the process launcher (`DriverLauncher`, or cupy's `RawLauncher`).
        kernel, grid, block: the kernel and its launch geometry.
        fixed: `[n, *ints]`, the arguments before the arrays.
        outs: (shape, dtype) of each new output; `n_ins` inputs follow them.
        scalar_dtypes: the scalars' dtype names; `types` their numpy types (float16/bfloat16
            kernels take float32 scalars).
    """

    __slots__ = ("addr", "block", "convs", "dts", "first", "fixed", "fn", "go", "grid",
                 "groups", "items", "kernel", "kinds", "outs", "params", "rt", "slots", "tid",
                 "f32", "f64")  # fmt: skip

    def __init__(self, rt, go, kernel, grid, block, fixed, outs, n_ins, scalar_dtypes, types,
                 groups, items):  # fmt: skip
        self.rt, self.go, self.kernel, self.grid, self.block = rt, go, kernel, grid, block
        self.groups, self.items, self.dts = groups, items, list(scalar_dtypes)
        self.fixed = [int(v) for v in fixed]
        self.outs = [(tuple(shape), np.dtype(dtype)) for shape, dtype in outs]
        # a C float (float32 and the half types' float32 scalars) takes a numpy float32 in the
        # driver's slot; a double and the integer types a Python number
        conv = {np.float32: np.float32, np.float64: float}
        self.convs = [conv.get(t, int) for t in types]
        self.kinds = [_FLOAT if t is np.float32 else _DOUBLE if t is np.float64 else _INT
                      for t in types]  # fmt: skip
        self.slots = self.fn = None
        self.tid = _ident()
        self.first = len(self.fixed)
        if go.__class__ is not DriverLauncher:  # cupy's RawKernel call: the exact numpy types
            self.convs = list(types)
            return
        n = self.first + len(self.outs) + n_ins + len(types)
        self.slots = (ctypes.c_int64 * n)(*self.fixed)
        base = ctypes.addressof(self.slots)
        self.params = (ctypes.c_void_p * n)(*(base + 8 * i for i in range(n)))
        self.f64 = (ctypes.c_double * n).from_buffer(self.slots)  # the same slots, as doubles
        self.f32 = (ctypes.c_float * (2 * n)).from_buffer(self.slots)  # slot i = f32[2 * i]
        self.addr = ctypes.addressof(self.params)

    def __call__(self, ins, scalars) -> list:
        rt = self.rt
        slots = self.slots
        if (
            slots is None
            or "launch" in rt.__dict__
            or _ident() != self.tid
            or rt.cp.cuda.runtime.getDevice() != rt.index
        ):
            return self._general(ins, scalars)
        nd = rt.cp.ndarray  # the current device is this runtime's: `rt.empty` without its check
        new = [nd(shape, dtype) for shape, dtype in self.outs]
        i = self.first
        for a in new:
            slots[i] = a.data.ptr
            i += 1
        for a in ins:
            slots[i] = a.data.ptr
            i += 1
        if scalars:
            self._scalars(slots, i, scalars)
        fn = self.fn
        if fn is None:
            fn = self.fn = self.go._fn(self.kernel)  # the handle on this device, kept
        go = self.go
        go._launch(fn, self.grid, 1, 1, self.block, 1, 1, 0, go._stream().ptr, self.addr, 0)
        return new

    def _scalars(self, slots, i, scalars) -> None:
        """Store `scalars` from slot `i` on, as `DriverLauncher.args` would."""
        for kind, conv, v in zip(self.kinds, self.convs, scalars):
            if kind == _INT:
                slots[i] = conv(v)
            elif kind == _DOUBLE:
                self.f64[i] = conv(v)
            else:
                self.f32[2 * i] = conv(v)
            i += 1

    def _general(self, ins, scalars) -> list:
        """The launch through the runtime's general paths (a capture tape's `launch`, another
        thread or device, cupy's RawKernel call)."""
        rt = self.rt
        new = [rt.empty(shape, dtype) for shape, dtype in self.outs]
        if "launch" in rt.__dict__:  # a step-capture tape is recording: its launch logs ours
            fixed = self.fixed
            pairs = list(zip(scalars, self.dts))
            rt.launch(self.kernel, fixed[0], fixed[1:], new, ins, pairs, self.groups, self.items)
            return new
        args = self.fixed + new
        args += ins
        for conv, v in zip(self.convs, scalars):
            args.append(conv(v))
        if rt.cp.cuda.runtime.getDevice() == rt.index:  # as `empty`: no device context (~us)
            self.go.args(self.kernel, self.grid, self.block, args)
        else:
            with rt.dev:
                self.go.args(self.kernel, self.grid, self.block, args)
        return new
