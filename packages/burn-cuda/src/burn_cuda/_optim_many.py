"""`float_adam_update_many`: Adam over a list of parameters in one kernel launch (torch's
multi-tensor "foreach" Adam).

burn-optim's Adam calls `burn_tensor.ops.adam_update_many` once per step for all parameters of
a dtype, device and step count. A launch costs ~7-10 us of host time on the H100 host, and the
guide's model has 8 parameters: one launch instead of 8. The kernel reads a table of up to
`MAX_TENSORS` tensors (7 addresses and a length each), passed by value as one 2 KB struct
parameter, and runs block row `blockIdx.y` over tensor `y` with the one-tensor kernel's
arithmetic (burn_gpu's `adam_many_program`, the same `STEP`): results are the bits `float_adam_update` gives.

Float32/float64 C-contiguous operands through the driver launcher, and float16/bfloat16 ones
(half parameters and gradients; moments of the parameters' dtype, or all float32: the kernel's
`moments="float32"` form, float32 scalars): a pure-bf16 transformer step has ~100 parameters,
which one at a time cost ~100 launches and their Python on the H200 (issue 34). Anything else
(mixed dtypes, strided operands, cupy's RawKernel launcher) runs `float_adam_update` per
parameter, the default. Inside a captured step's resident op the kernel's SCALARS_FROM form
`adam_many_at` reads factor, denom and lr from the step's scalar block (`_capture_resident`).
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np
from burn_gpu import adam_many_program

from . import _platform
from ._capture_resident import active
from ._dtypes import HALF_DTYPES
from ._half_ops import allocator  # a bfloat16 array where cupy's constructor has none
from ._kernels import process_launcher
from ._optim import BLOCK, _scalars

#: tensors per launch (the table is 8 arrays of this many 8-byte entries: 2 KB of the 4 KB a
#: kernel's parameters may take); longer lists take several launches
MAX_TENSORS = 32
#: most block columns per tensor: the grid-stride loop covers the rest
MAX_GRID_X = 4096
#: most blocks per launch over all its tensors: every tensor row gets the longest one's block
#: columns, so 32 tensors at 4096 columns were 131k blocks, nearly all idle for the small ones
#: (a bias's 512 elements fill 2 of them); the H200 profile of the transformer step (session 19)
#: had Adam at 0.43 ms for 4 launches, ~2.4x the bytes it moves over the memory bandwidth.
#: 4096 blocks of 256 threads still keep every SM full while the big tensors loop.
MAX_BLOCKS = 4096

_KERNELS: dict = {}
_FLOATS = (np.dtype(np.float32), np.dtype(np.float64))


def _kernel(dt, moments=None, at=False):
    """The kernel for parameters of `dt` and moments of `moments` (None: `dt`'s; "float32");
    `at`: its SCALARS_FROM form."""
    key = (dt, moments, at)
    k = _KERNELS.get(key)
    if k is None:
        cp = _platform.load_cupy()
        src = adam_many_program(dt.name, MAX_TENSORS, moments, scalars_from=at)
        k = _KERNELS[key] = cp.RawKernel(src, "adam_many_at" if at else "adam_many")
    return k


class _Block(threading.local):
    """This thread's parameter block: the table, then `first` and the 7 scalars in 8-byte slots
    (a C `int` reads a slot's low half; a `float` is stored through a 4-byte view); the
    SCALARS_FROM form reads `first`, 4 scalars and the block address (slot 5)."""

    def __init__(self):
        self.table = (ctypes.c_uint64 * (8 * MAX_TENSORS))()
        self.slots = (ctypes.c_int64 * 8)()
        self.f32 = (ctypes.c_float * 16).from_buffer(self.slots)
        self.f64 = (ctypes.c_double * 8).from_buffer(self.slots)
        base = ctypes.addressof(self.slots)
        addrs = [ctypes.addressof(self.table), *(base + 8 * i for i in range(8))]
        self.params = (ctypes.c_void_p * 9)(*addrs)
        self.addr = ctypes.addressof(self.params)


_TLS = _Block()


def _fits(params, grads, moments_1, moments_2):
    """The moments' dtype when the one-launch path takes these operands (else None: the
    per-parameter default): every parameter and gradient of one dtype and C-contiguous, the
    moments of that dtype too (None on a first step) or, for half parameters, all float32."""
    dt = params[0].dtype
    if dt in HALF_DTYPES:
        mdt = dt if moments_1 is None else moments_1[0].dtype
        if mdt != dt and mdt != _FLOATS[0]:
            return None
    elif dt in _FLOATS:
        mdt = dt
    else:
        return None
    for i, (p, g) in enumerate(zip(params, grads)):
        if p.dtype != dt or g.dtype != dt or not (p._c_contiguous and g._c_contiguous):
            return None
        if moments_1 is not None:
            m1, m2 = moments_1[i], moments_2[i]
            if m1.dtype != mdt or m2.dtype != mdt or not (m1._c_contiguous and m2._c_contiguous):
                return None
    return mdt


class CudaOptimManyOps:
    """Mixin of `Cuda`: Adam over many parameters in one launch."""

    def float_adam_update_many(
        self, params, grads, moments_1, moments_2, lr, beta_1, beta_2, epsilon, time
    ):
        go = process_launcher()
        mdt = _fits(params, grads, moments_1, moments_2) if hasattr(go, "with_params") else None
        if mdt is None:
            return super().float_adam_update_many(  # the backend's default: one op each
                params, grads, moments_1, moments_2, lr, beta_1, beta_2, epsilon, time
            )
        dt = params[0].dtype
        half = dt in HALF_DTYPES
        kd = _FLOATS[0] if half else dt  # a half kernel's scalars are float32
        block = active()
        at = None if block is None else block.adam(kd, lr, beta_1, beta_2, epsilon, time)
        k = _kernel(dt, "float32" if mdt != dt else None, at is not None)
        first = moments_1 is None
        news, m1s, m2s = [], [], []
        if half:  # allocators looked up once (bfloat16: `empty`'s, not cupy's constructor)
            new_of, moment_of = allocator(dt), allocator(mdt)
            for p in params:
                shape = p.shape
                news.append(new_of(shape))
                m1s.append(moment_of(shape))
                m2s.append(moment_of(shape))
        else:
            nd = _platform.load_cupy().ndarray  # cupy's own constructor for float32/64
            for p in params:
                shape = p.shape
                news.append(nd(shape, dt))
                m1s.append(nd(shape, mdt))
                m2s.append(nd(shape, mdt))
        tls = _TLS
        sl = tls.slots
        sl[0] = int(first)
        scalars = _scalars(kd, lr, beta_1, beta_2, epsilon, time)
        if at is not None:  # b1, 1 - b1, b2, 1 - b2, then the address of the other three
            scalars = scalars[:4]
            sl[5] = at
        if kd == np.float32:
            for j, v in enumerate(scalars):
                tls.f32[2 * (j + 1)] = v
        else:
            for j, v in enumerate(scalars):
                tls.f64[j + 1] = v
        table = tls.table
        T = MAX_TENSORS
        rows = [i for i, p in enumerate(params) if p.size]  # empty tensors need no launch
        for start in range(0, len(rows), T):
            chunk = rows[start : start + T]
            longest = 0
            for r, i in enumerate(chunk):
                p = params[i]
                # moments are unread on a first step: the parameter's address stands in for them
                m1 = p if first else moments_1[i]
                m2 = p if first else moments_2[i]
                table[r] = p.data.ptr
                table[T + r] = grads[i].data.ptr
                table[2 * T + r] = m1.data.ptr
                table[3 * T + r] = m2.data.ptr
                table[4 * T + r] = news[i].data.ptr
                table[5 * T + r] = m1s[i].data.ptr
                table[6 * T + r] = m2s[i].data.ptr
                table[7 * T + r] = n = p.size
                longest = max(longest, n)
            grid_x = min((longest + BLOCK - 1) // BLOCK, MAX_GRID_X,
                         max(1, MAX_BLOCKS // len(chunk)))  # fmt: skip
            go.with_params(k, grid_x, len(chunk), BLOCK, tls.addr)
        return news, m1s, m2s
