"""Launch plans for Cuda's attention calls: the host's Python per call, once per shape (issue 36).

Which kernels an attention call launches (tensor-core, 3xTF32 or SIMT), on which grids, and
every launch argument except the arrays' addresses depend only on the call's dtypes, shapes,
strides, causal, scale, dropout probability, the device and the `BURN_*` switches: the general
path (`_attention.py`) re-derives all of it per call (eligibility, routing, views, the mask and
dropout tails; ~0.2k Python calls and two cupy RawKernel calls of 44 arguments per
forward+backward). The second call of a `key` (the first only marks it seen) runs the general
path while `RECORDING` notes its launches and allocations, and keeps a `Plan`: per launch a
parameter block of 8-byte slots filled as `DriverLauncher.args` fills its own (the same
bytes), and which slots take which array's address. Later calls of the key allocate the same
outputs, store the addresses and launch through `DriverLauncher.with_params`.

A call gets no plan (the general path runs, as before) when it runs inside a CUDA graph
capture, aliases two inputs when recorded, or passes an array the recording cannot place
(a contiguous copy of a strided or unaligned view, a cast): so the plan only ever replays what
the general path does for that key. A plan checks per call that the inputs are 16-byte aligned
(the tensor-core kernels' views need it; an unaligned call takes the general path, which copies).

Example (what `CudaAttentionOps.attention_with_lse` does; `general` runs the general path):
    >>> inputs = (q, k, v, seed, mask)                              # doctest: +SKIP
    >>> key = key_of(FORWARD, inputs, (causal, scale, dropout))      # doctest: +SKIP
    >>> r = run(key, inputs)                                         # doctest: +SKIP
    >>> out, lse = r if r is not None else record(key, inputs, (0, 1, 2), general)  # doctest: +SKIP
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

from . import _capture_blas, _platform
from ._kernels import process_launcher

FORWARD, BACKWARD = "forward", "backward"
#: most plans kept (a plan per (shape, dtype, flags, thread)); past it the cache starts over
MAX_PLANS = 512
_PLANS: dict = {}  # key -> None (seen once), False (no plan possible) or its Plan
_UNSEEN = object()


class Recording:
    """The launches `(kernel, grid, threads, args)`, the arrays `_empty` allocated (each with
    its layout: whether it is head-split, which the launches' stride arguments assume) and the
    constant arrays (the cached no-mask word) of one general-path call."""

    __slots__ = ("allocs", "consts", "launches")

    def __init__(self):
        self.launches, self.allocs, self.consts = [], [], []


#: the call being recorded (`record`), else None
RECORDING: list = [None]


def _alloc_spec(shape, dtype, split: bool = False) -> tuple:
    """(shape cupy allocates, the dtype it allocates, the dtype it is viewed as or None,
    split): bfloat16 is allocated as its 16-bit patterns (cupy has no bfloat16 of its own);
    `split`: a [b, h, s, d] `shape` is allocated [b, s, h, d] and seen through `swapaxes(1, 2)`
    (the head-split layout of MHA's projections, `_attention_views.split_out`)."""
    if split:
        shape = (shape[0], shape[2], shape[1], shape[3])
    if dtype.name == "bfloat16":
        return shape, np.dtype(np.uint16), dtype, split
    return shape, dtype, None, split


def _new(nd, shape, dt, view, split):
    """The array of an `_alloc_spec`: allocated, viewed as its dtype, then as [b, h, s, d]."""
    a = nd(shape, dt) if view is None else nd(shape, dt).view(view)
    return a.swapaxes(1, 2) if split else a


def empty(shape, dtype, split: bool = False):
    """An uninitialised cupy array of `shape` and `dtype` (`_alloc_spec`; `split`: in the
    head-split layout)."""
    return _new(_platform.load_cupy().ndarray, *_alloc_spec(shape, dtype, split))


def key_of(kind: str, arrays, flags) -> tuple | None:
    """The plan key of a call: its arrays' (inputs', a mask's) dtypes, shapes and strides,
    `flags` (causal, scale, dropout), the device, the switches and the thread (a plan's blocks
    are the thread's own: the driver reads them during the launch); None where no plan may
    serve (a capture, or `BURN_CUDA_ATTENTION_PLANS=0`)."""
    g = os.environ.get
    if _capture_blas.active() or g("BURN_CUDA_ATTENTION_PLANS") == "0":  # "0": an A/B switch
        return None
    env = (g("BURN_GPU_ATTENTION"), g("BURN_CUDA_ATTENTION_MMA"),
           g("BURN_CUDA_ATTENTION_WARP_ROWS"), g("BURN_CUDA_ATTENTION_PIPE"),
           g("BURN_CUDA_ATTENTION_SPLIT_OUT"), g("BURN_CUDA_ATTENTION_FUSED_BWD"),
           g("BURN_CUDA_ATTENTION_WGMMA"), g("BURN_CUDA_ATTENTION_WGMMA_BWD"))  # fmt: skip
    key = [kind, flags, arrays[0].device.id, env, threading.get_ident()]
    for a in arrays:  # a loop, not a generator: a frame less per array (issue 36 counts them)
        if a is None:
            key.append(None)
        else:
            key += (a.dtype, a.shape, a.strides)
    return tuple(key)


class Plan:
    """The launches of one key: `allocs` (`_alloc_spec` of each new array: shape, dtype and
    layout), `launches` (kernel, grid, threads, slots, params address, [(slot, array index)],
    the pointer block, dynamic shared memory bytes),
    `result` (per returned value: an index into inputs + new arrays, or -1 for None),
    `aligned` (the inputs whose address must be a multiple of 16) and `consts` (the constant
    arrays its blocks address, held)."""

    __slots__ = ("aligned", "allocs", "consts", "launches", "result")

    def __call__(self, inputs):
        arrays = list(inputs)
        ptrs = []
        for a in arrays:
            ptrs.append(0 if a is None else a.data.ptr)
        for i in self.aligned:
            if ptrs[i] & 15:
                return None
        nd = _platform.load_cupy().ndarray
        for shape, dt, view, split in self.allocs:  # `_new` inline (a frame less per array)
            a = nd(shape, dt) if view is None else nd(shape, dt).view(view)
            ptrs.append(a.data.ptr)
            # the layout recorded: the launches' stride arguments assume it
            arrays.append(a.swapaxes(1, 2) if split else a)
        go = process_launcher()
        for k, grid, threads, slots, addr, fills, _, smem in self.launches:
            for slot, i in fills:
                slots[slot] = ptrs[i]
            go.with_params(k, grid, 1, threads, addr, smem)
        result = self.result
        if len(result) == 2:  # the forward's (out, lse)
            a, b = result
            return arrays[a], None if b < 0 else arrays[b]
        return tuple([None if i < 0 else arrays[i] for i in result])


def run(key, inputs):
    """The call's result by its plan, or None (no plan for `key` yet, none possible, or an
    unaligned input): the caller then runs `record`."""
    plan = _PLANS.get(key) if key is not None else None
    return None if not plan else plan(inputs)


def record(key, inputs, aligned, general):
    """`general()` (the call by the general path). The first call of `key` only marks it seen
    (a shape met once, as in decoding with a growing sequence, never pays for a recording);
    the second keeps a plan from what it launched when every array it passed is placed (an
    input, a new array, a constant), else False (the key's calls stay on the general path)."""
    if key is None:
        return general()
    state = _PLANS.get(key, _UNSEEN)
    if state is _UNSEEN:
        if len(_PLANS) >= MAX_PLANS:
            _PLANS.clear()
        _PLANS[key] = None
        return general()
    if state is not None or not hasattr(process_launcher(), "with_params"):
        return general()  # no plan possible, or an unaligned call its plan declined
    if any(inputs[i].data.ptr & 15 for i in aligned):  # its copies would make the key False
        return general()
    rec = RECORDING[0] = Recording()
    try:
        result = general()
    finally:
        RECORDING[0] = None
    live = [a for a in inputs if a is not None]
    if len({id(a) for a in live}) != len(live):  # aliased inputs: no roles to tell apart
        return result
    _PLANS[key] = _build(rec, inputs, aligned, result)
    return result


def _build(rec: Recording, inputs, aligned, result):
    """A Plan of the recorded call, or False when an argument or result cannot be placed."""
    nd = _platform.load_cupy().ndarray
    where = {id(a): i for i, a in enumerate(inputs) if a is not None}
    n = len(inputs)
    where.update({id(a): n + j for j, (a, _) in enumerate(rec.allocs)})
    consts = {id(a) for a in rec.consts}
    # an input passed on as another object of the same memory and layout (cupy's
    # `ascontiguousarray` of a contiguous array is the array itself; numpy's, in the CPU
    # stand-in, a new view of it) is still that input
    same = {_layout(a): i for i, a in enumerate(inputs) if a is not None}
    launches = []
    for k, grid, threads, args in rec.launches:
        slots = (ctypes.c_int64 * max(1, len(args)))()
        fills = []
        try:
            for s, a in enumerate(args):
                if isinstance(a, nd):
                    i = where.get(id(a), same.get(_layout(a)))
                    if i is not None:
                        fills.append((s, i))
                    elif id(a) in consts:
                        slots[s] = a.data.ptr
                    else:  # a copy or a cast made for this call: not replayable
                        return False
                else:
                    _store(slots, s, a)
        except (AttributeError, TypeError):
            return False
        base = ctypes.addressof(slots)
        params = (ctypes.c_void_p * len(slots))(*(base + 8 * i for i in range(len(slots))))
        # `params` rides along: the block of pointers must live as long as the plan
        smem = getattr(k, "smem", 0)  # the dynamic shared memory a block of `k` takes
        launches.append((k, grid, threads, slots, ctypes.addressof(params), fills, params, smem))
    out = result if type(result) is tuple else (result,)
    index = []
    for r in out:
        if r is None:
            index.append(-1)
        elif id(r) in where and where[id(r)] >= n:
            index.append(where[id(r)])
        else:  # a result the recording did not allocate (the decomposition's): no plan
            return False
    plan = Plan()
    plan.allocs = [_alloc_spec(a.shape, a.dtype, split) for a, split in rec.allocs]
    plan.launches = launches
    plan.result = tuple(index)
    plan.aligned = tuple(aligned)
    plan.consts = list(rec.consts)  # the arrays whose addresses its blocks hold stay alive
    return plan


def _store(slots, s: int, a) -> None:
    """Slot `s` as `DriverLauncher.args` fills it: a numpy float32 in the slot's low 4 bytes,
    a Python float or float64 as a double, any integer as 64 bits (a C int reads the low half)."""
    c = a.__class__
    if c is np.float32:
        ctypes.c_float.from_buffer(slots, 8 * s).value = a
    elif c is float or c is np.float64:
        ctypes.c_double.from_buffer(slots, 8 * s).value = a
    else:
        slots[s] = a.__index__()


def _layout(a) -> tuple:
    return (a.data.ptr, a.shape, a.strides, a.dtype)
