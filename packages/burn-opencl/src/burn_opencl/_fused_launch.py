"""`FusedLaunch`: a fused kernel's launch prepared once, for `OpenClRuntime.prepare`.

Fusion launches the same fused kernel with the same geometry on every step of a training loop.
The general `OpenClRuntime.launch` converts and sets every argument one call each (~1 us per
by-value argument through pyopencl) and allocates its outputs through `ClArray.__init__`'s
normalisation. Like a `_plan.Plan`, a prepared launch holds a private `cl.Kernel` whose fixed
by-value arguments (`n`, the layout ints) are set once; a call takes its outputs from the pool
by their known size class, sets the buffers in one pyopencl call, packs the scalars in another
and enqueues -- through `_plan`'s setters and enqueue, which a step-capture tape
(`_capture_tape.ClTape`) records like a plan's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pyopencl as cl

from . import _plan
from ._array import c_strides
from ._plan import new_array, take
from ._pool import size_class
from ._runtime import SCALAR

_I32 = np.int32


class FusedLaunch:
    """`launch(ins, scalars) -> new outputs` of one fused kernel (see the module docstring)."""

    __slots__ = (
        "at",
        "first",
        "gsize",
        "kernel",
        "lock",
        "nums",
        "outs",
        "pool",
        "queue",
        "rt",
        "tchars",
    )

    def __init__(self, rt, kernel, n, ints, outs, n_ins, scalar_dtypes, gsize, lsize):
        self.rt = rt
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            self.kernel = k = cl.Kernel(kernel.program, kernel.function_name)
        fixed = [_I32(n), *(_I32(v) for v in ints)]
        for i, v in enumerate(fixed):
            k.set_arg(i, v)
        self.first = len(fixed)
        self.outs = []
        for shape, dtype in outs:
            dtype = np.dtype(dtype)
            if dtype.kind == "f":
                rt.check_dtype(dtype)
            shape = tuple(shape)
            m = 1
            for d in shape:
                m *= d
            self.outs.append((size_class(m * dtype.itemsize), shape, dtype, c_strides(shape)))
        self.at = self.first + len(outs) + n_ins
        conv = [SCALAR[np.dtype(dt)] for dt in scalar_dtypes]
        self.tchars = [np.dtype(c).char.encode() for c in conv]
        self.nums = [float if np.dtype(c).kind == "f" else int for c in conv]
        self.gsize = (gsize, lsize)
        self.pool = rt.pool
        self.queue = rt.queue
        self.lock = rt.lock

    def __call__(self, ins, scalars) -> list:
        pool, rt = self.pool, self.rt
        outs = [new_array(rt, take(pool, size), shape, dt, st) for size, shape, dt, st in self.outs]
        flat = []
        i = self.first
        for o in outs:
            flat += (i, o.buf)
            i += 1
        for x in ins:
            flat += (i, x.buf)
            i += 1
        k = self.kernel
        plan = _plan  # its setters are read per call: a step-capture tape swaps them to record
        with self.lock:
            plan._SET(k, tuple(flat))
            if scalars:
                packed = []
                at = self.at
                for s, (tc, num, v) in enumerate(zip(self.tchars, self.nums, scalars)):
                    packed += (at + s, tc, num(v))
                plan._PACK(k, tuple(packed))
            gsize, lsize = self.gsize
            plan._ENQUEUE(self.queue, k, gsize, lsize, None, None, False, False)
        return outs
