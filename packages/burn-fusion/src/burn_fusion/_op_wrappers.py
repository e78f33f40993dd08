"""The op wrappers `Fusion.setup` installs: `delegate` (an op the inner backend runs, after
flushing pending plans that its inputs read), `lazy` (an elementwise op recorded on the device's
stream) and `reduction` (a sum/mean the stream may fold into a plan's kernel)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from burn_tensor import Device

from . import _capture_hooks as _hooks
from ._capture_hooks import capture_dynamic, dynamic
from ._table import OPS, REDUCTIONS
from ._tensor import FusionTensor, ready

if TYPE_CHECKING:
    from ._backend import Fusion

FT = FusionTensor
_new = object.__new__


def _unwrap(a):
    if a.prim is None:
        a.stream.flush()
        if a.prim is None:  # its plan was taken by a flush that raised
            raise RuntimeError(
                "burn_fusion: the fused kernel computing this tensor failed (see the first "
                "error raised by that flush); the tensor has no value"
            )
    if a.owned:
        a.stream.escape(a)
    return a.prim


def delegate(fusion: Fusion, name: str, inner_fn):
    """`name` run unfused: pending inputs are materialised, the inner op runs, results are
    wrapped as ready handles.

    This runs for every matmul, view and reduction the stream does not fuse (about half of a
    transformer step's ops), so the common cases are inline: a ready, non-owned input is read
    without `_unwrap`, and a single primitive result of a type already seen is wrapped in `op`
    itself, no call at all (each Python call costs ~0.1 us bare, ~1.5 us under cProfile). A
    result's stream is its op's device's: a Device argument's, else the stream of its tensor
    inputs (an inner op computes on its inputs' device), so the inner backend's `device_index`
    runs only for an op with neither (issue 35: it was one call per result, through cupy's
    `ndarray.device`)."""
    if name in capture_dynamic(fusion.inner):  # step capture calls these again at replay
        inner_fn = dynamic(name, inner_fn)
    is_prim = fusion.inner.is_primitive
    device_index = fusion.inner.device_index
    streams = fusion._streams
    prim_types: set = set()  # types is_primitive said yes to (a primitive's type never changes)

    def out(o, st):
        """Handles on the primitives of result `o` (a primitive, a tuple or list of them, or
        anything else, returned as is), on stream `st` (None: the primitive's device's)."""
        if type(o) is tuple or type(o) is list:  # list: ops over lists (adam_update_many)
            res = [None] * len(o)
            for i, e in enumerate(o):  # `out(e, st)`, inline for the usual primitives (hundreds)
                if type(e) in prim_types and st is not None:
                    res[i] = ready(e, False, st)
                else:
                    res[i] = out(e, st)
            return res if type(o) is list else tuple(res)
        if type(o) in prim_types or is_prim(o):
            prim_types.add(type(o))
            if st is None:
                st = streams.get(device_index(o)) or fusion.stream(device_index(o))
            return ready(o, False, st)
        return o

    def op(*args):
        if _hooks.ACTIVE is not None:  # a step records: it notes host scalars, other threads
            _hooks.ACTIVE.note(name, args)
        ia = list(args)  # always a copy: cheaper than asking whether one was made yet
        st = dev_st = None
        mixed = False  # inputs on several devices (collectives): each result's own device
        i = -1
        for a in args:
            i += 1
            t = type(a)
            if t is FT:
                p = a.prim
                if p is None or a.owned:
                    p = _unwrap(a)
                ia[i] = p
                if st is None:
                    st = a.stream
                elif a.stream is not st:
                    mixed = True
            elif t is list:
                if a and type(a[0]) is FT:  # (a comprehension: no append call per element)
                    ia[i] = [e.prim if e.prim is not None and not e.owned else _unwrap(e) for e in a]
                    if st is None:
                        st = a[0].stream
                    for e in a:
                        if e.stream is not st:
                            mixed = True
                            break
            elif t is Device and a.backend is fusion:
                ia[i] = a.inner()
                dev_st = streams.get(a.index) or fusion.stream(a.index)
        if st is not None:
            st.stats["ops_unfused"] += 1
        o = inner_fn(*ia)
        if dev_st is not None:
            st = dev_st
        elif mixed:
            st = None
        if type(o) in prim_types and st is not None:  # the common case: `ready(o, False, st)`,
            t = _new(FT)  # inline (hundreds a step)
            t.shape = o.shape
            t.dtype = o.dtype
            t.prim = o
            t.node = None
            t.stream = st
            t.owned = False
            return t
        return out(o, st)

    op.__name__ = name
    return op


def lazy(fusion: Fusion, name: str, fallback):
    """`name` recorded on the stream of its first operand (the Tensor layer puts every operand
    on one device); `fallback` runs it unfused when it cannot be fused (dtype, size)."""
    spec = OPS[name]
    nin = len(spec.inputs)
    has_dtype = spec.out == "D"

    def op(*args):
        if _hooks.ACTIVE is not None:  # as `delegate`'s
            _hooks.ACTIVE.note(name, args)
        tensors = args[:nin]
        for t in tensors:
            if type(t) is not FT:
                return fallback(*args)
        x = tensors[0]
        if has_dtype:
            dt = args[nin].np
            if dt == x.dtype:
                return x
            out = x.stream.record(name, tensors, (), dt)
        else:
            out = x.stream.record(name, tensors, args[nin:], None)
        return fallback(*args) if out is None else out

    op.__name__ = name
    return op


def reduction(name: str, fallback):
    """`name` fused: along a dim, a pending node of the plan (its input's ops run inside the
    reduction, its consumers in the same row kernel); of the whole tensor of a pending input,
    partial sums with the input's ops inside, then their sum (two kernels)."""
    kind, has_dim = REDUCTIONS[name]

    def op(x, *rest):
        if _hooks.ACTIVE is not None:  # as `delegate`'s
            _hooks.ACTIVE.note(name, (x, *rest))
        if type(x) is FT and x.stream is not None:
            if has_dim:
                out = x.stream.reduce_dim(x, rest[0], kind)
            elif x.prim is None:
                out = x.stream.reduce_all(x, kind == "mean")
            else:
                out = None
            if out is not None:
                return out
        return fallback(x, *rest)

    op.__name__ = name
    return op
