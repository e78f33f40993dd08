"""Helpers of step capture: where a step's tensors live, their Fusion handles and primitives,
and the small functions recordings are compared and bound with."""

from __future__ import annotations

import os
import sys

import numpy as np
from burn_tensor import Tensor
from burn_tensor.ops import tensor_parts

from ._capture_tree import Tree


class Refused(Exception):
    """This step cannot be captured; the message says why."""


def fusion_of(tree: Tree):
    """(Fusion backend, device index) of the tensors in `tree`; raises `Refused`."""
    from ._backend import Fusion

    found = None
    for leaf, kind in zip(tree.leaves, tree.kinds):
        if kind != "T":
            continue
        d = leaf.device
        b = d.backend
        f = b.inner if b.is_autodiff else b
        if not isinstance(f, Fusion):
            raise Refused(f"its tensors are on {b!r}, not a Fusion backend")
        where = (f, d.index)
        if found is None:
            found = where
        elif where != found:
            raise Refused(f"its tensors are on two devices ({found[0]!r} {found[1]}, {b!r} "
                          f"{d.index}): a capture covers one device")
    if found is None:
        raise Refused("none of its arguments is a tensor or holds one")
    rt = found[0].stream(found[1]).rt
    if not callable(getattr(rt, "tape", None)):
        raise Refused(f"{type(rt).__name__} cannot record a step (its runtime has no tape())")
    return found


def handle_of(t: Tensor):
    """The Fusion handle under tensor `t` (an autodiff tensor's inner handle)."""
    p, kind, d = tensor_parts(t)
    b = d.backend
    return b.inner_primitive(p, kind) if b.is_autodiff else p


def prim_of(t: Tensor):
    """The materialised inner primitive under `t` (its pending plan run)."""
    h = handle_of(t)
    if h.prim is None:
        h.stream.flush()
        if h.prim is None:
            raise RuntimeError("burn capture: a tensor's fused kernel failed; it has no value")
    return h.prim


def lift(like: Tensor, prim, fusion) -> Tensor:
    """A tensor of `like`'s kind, device and require-grad flag over inner primitive `prim`."""
    h = fusion.wrap(prim)
    _, kind, d = tensor_parts(like)
    if not d.backend.is_autodiff:
        return Tensor.from_primitive(h, kind, d)
    t = Tensor.from_inner(Tensor.from_primitive(h, kind, d.inner()), d)
    return t.require_grad() if like.is_require_grad() else t


def scalars(sig) -> set:
    """Every number and byte string in a tape's signature (the recorded scalar arguments)."""
    out: set = set()
    stack = [sig]
    while stack:
        x = stack.pop()
        if isinstance(x, tuple | list):
            stack.extend(x)
        elif isinstance(x, bytes | float | int) and not isinstance(x, bool):
            out.add(x)
    return out


def is_baked(value: float, scalars: set) -> bool:
    """Whether `value` is among recorded scalar arguments (as a number or float32/64 bytes)."""
    return (
        value in scalars
        or np.float32(value).tobytes() in scalars
        or np.float64(value).tobytes() in scalars
    )


def work(stream) -> int:
    """A count that grows with every op Fusion runs or records on `stream`."""
    st = stream.stats
    return st["ops_recorded"] + st["ops_unfused"] + st["ops_passed_through"] + st["flushes"]


def counters(states) -> list:
    """The int leaves (step counts) of flattened states, in order."""
    return [v for _, t in states for v, k in zip(t.leaves, t.kinds) if k == "I"]


def key(prim) -> int:
    buf = getattr(prim, "buf", None)
    if buf is not None:
        return buf.int_ptr
    return prim.data.ptr  # a cupy array


def canon(a, role):
    if hasattr(a, "shape") and hasattr(a, "dtype") and not isinstance(a, type):
        try:
            return ("P", role(key(a)), tuple(a.shape), str(a.dtype))
        except AttributeError:
            pass
    if isinstance(a, list | tuple):
        return tuple(canon(e, role) for e in a)
    return repr(a)


def debug(msg: str) -> None:
    """`BURN_CAPTURE_DEBUG=1`: print a capture decision on stderr (why a recording was refused,
    what an aborted one restored, how a learning rate was bound). Called at recordings, never
    per replayed op."""
    if os.environ.get("BURN_CAPTURE_DEBUG", "0").strip() not in ("", "0"):
        print(f"burn capture: {msg}", file=sys.stderr, flush=True)


def raised_at(exc: BaseException) -> str:
    """file:line of the innermost frame of `exc`'s traceback outside burn's packages that
    called into them: where the step's own code made the call a runtime refused (a host
    read), not the runtime's (cupy's) frame that raised."""

    def ours(tb) -> bool:
        name = tb.tb_frame.f_code.co_filename
        return "/burn_" in name or "/burn/" in name

    tb, found = exc.__traceback__, "?"
    while tb is not None:
        if not ours(tb) and tb.tb_next is not None and ours(tb.tb_next):
            found = f"{tb.tb_frame.f_code.co_filename}:{tb.tb_lineno}"
        tb = tb.tb_next
    return found
