"""Step capture on OpenCL: a tape of the enqueues one call made, replayed as that list.

`ClTape(rt)` records, while started, every enqueue the calling thread makes on runtime `rt`:
`Runtime.launch`/`launch1d` (kernel, sizes, arguments), the launch plans' argument setters and
enqueues (`_plan._SET`/`_PACK`/`_ENQUEUE`: a plan's kernel keeps its preset arguments, so only
what a call sets is recorded), device copies and uploads (the host bytes are kept and written
again at replay). A host read (`Runtime.read`) marks the tape refused, with where it came from.
Ops Fusion routes through `dynamic` (random draws, Adam's update) run as usual but are recorded
as a call: the replay asks `call_dynamic(index)` for new results and copies them into the
recorded ones, which later launches read.

Memory: every buffer the tape references is pinned in the device's pool (`Pins`): a pinned
buffer whose block is dropped is held, not given out again, so a replay can never write into
another tensor's memory. `release()` unpins.
"""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np
import pyopencl as cl

from . import _plan
from ._array import ClArray
from ._capture_pins import Pins
from ._runtime import Runtime

_MEM = cl.MemoryObjectHolder


def _where() -> str:
    """file:line of the first frame outside burn's own packages (the user's code)."""
    f = sys._getframe(2)
    while f is not None:
        name = f.f_code.co_filename
        if "/burn_" not in name and "/burn/" not in name:
            return f"{name}:{f.f_lineno}"
        f = f.f_back
    return "?"


def _canon(a, role):
    if isinstance(a, _MEM):
        return role(a.int_ptr)
    if isinstance(a, np.generic):
        return (a.dtype.char, a.tobytes())
    if isinstance(a, np.ndarray):
        return a.tobytes()
    return a


class ClTape:
    """The recorded enqueues of one call on `rt` (a `burn_opencl` device `Runtime`)."""

    def __init__(self, rt: Runtime):
        self.rt = rt
        self.ops: list = []
        self.bufs: dict[int, object] = {}  # int_ptr -> cl.Buffer the ops reference
        self.calls: list = []  # (fn, args, kwargs, results) of dynamic ops, in order
        self.refused: str | None = None
        self.foreign = False  # another thread enqueued work while recording
        self.depth = 0
        self.tid = threading.get_ident()
        self.pinned: list = []
        self._saved = None
        #: set by the caller before `replay`: index -> new results of dynamic op `index`
        self.call_dynamic = None
        #: set by the caller: (recorded result, new result) of a dynamic op no later step
        #: reads: the new one takes the recorded one's place in the results
        self.on_swap = None

    # -- recording ------------------------------------------------------------------------------
    def _mine(self) -> bool:
        if threading.get_ident() != self.tid:
            # another thread's kernel may have run ops of the recorded step (Fusion's stream
            # is per device): this recording cannot be trusted
            self.foreign = True
            return False
        return self.depth == 0

    def _note(self, *objs) -> None:
        for a in objs:
            if isinstance(a, _MEM):
                self.bufs[a.int_ptr] = a

    def start(self) -> None:
        rt = self.rt
        if "launch" in rt.__dict__:
            raise RuntimeError("burn capture: this OpenCL device is already recording a step")
        tape = self

        def launch(kernel, global_size, local_size, args):
            if tape._mine():
                args = list(args)
                tape._note(*args)
                tape.ops.append(("L", kernel, tuple(global_size), tuple(local_size), args))
            Runtime.launch(rt, kernel, global_size, local_size, args)

        def launch1d(kernel, n, args, wg=None):
            if tape._mine():
                args = list(args)
                tape._note(*args)
                tape.ops.append(("1", kernel, n, args, wg))
            Runtime.launch1d(rt, kernel, n, args, wg)

        def copy(dst, src, nbytes, src_offset=0, dst_offset=0):
            if tape._mine():
                tape._note(dst, src)
                tape.ops.append(("C", dst, src, nbytes, src_offset, dst_offset))
            Runtime.copy(rt, dst, src, nbytes, src_offset, dst_offset)

        def read(buf, out, byte_offset=0):
            mine = threading.get_ident() == tape.tid and tape.depth == 0
            if mine and tape.refused is None:
                tape.refused = (
                    f"a host read of {out.nbytes} bytes inside the step (into_data, tolist, "
                    f"item or a tensor's bool/float) at {_where()}"
                )
            return Runtime.read(rt, buf, out, byte_offset)

        def upload(arr):
            block = Runtime.upload(rt, arr)
            if threading.get_ident() == tape.tid and tape.depth == 0:  # others' are harmless
                host = np.ascontiguousarray(arr).reshape(-1).view(np.uint8).copy()
                tape._note(block.buf)
                tape.ops.append(("W", block.buf, host))
            return block

        saved = (_plan._SET, _plan._PACK, _plan._ENQUEUE)
        set_, pack, enqueue = saved

        def plan_set(kernel, flat):
            if tape._mine():
                tape._note(*flat)
                tape.ops.append(("S", kernel, tuple(flat)))
            return set_(kernel, flat)

        def plan_pack(kernel, flat):
            if tape._mine():
                tape.ops.append(("P", kernel, tuple(flat)))
            return pack(kernel, flat)

        def plan_enqueue(queue, kernel, gsize, lsize, *rest):
            if tape._mine():
                tape.ops.append(("E", kernel, tuple(gsize), tuple(lsize), rest))
            return enqueue(queue, kernel, gsize, lsize, *rest)

        self._saved = saved
        rt.launch, rt.launch1d, rt.copy, rt.read, rt.upload = launch, launch1d, copy, read, upload
        _plan._SET, _plan._PACK, _plan._ENQUEUE = plan_set, plan_pack, plan_enqueue

    def stop(self) -> None:
        rt = self.rt
        for name in ("launch", "launch1d", "copy", "read", "upload"):
            rt.__dict__.pop(name, None)
        if self._saved is not None:
            _plan._SET, _plan._PACK, _plan._ENQUEUE = self._saved
            self._saved = None

    def dynamic(self, fn, args, kwargs):
        """Run dynamic op `fn` (its launches are not recorded) and record it as a call."""
        if threading.get_ident() != self.tid or self.depth:
            return fn(*args, **kwargs)
        self.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            self.depth -= 1
        results = _prims(out)
        for p in results:
            if not (p.is_contiguous() and p.offset == 0) and self.refused is None:
                self.refused = f"{getattr(fn, '__name__', fn)} returned a strided view"
        for a in list(args) + list(kwargs.values()):
            for p in _prims(a):
                self._note(p.buf)
        for p in results:
            self._note(p.buf)
        self.ops.append(("D", len(self.calls)))
        self.calls.append((fn, args, kwargs, results))
        return out

    # -- after recording --------------------------------------------------------------------------
    def signature(self, role) -> tuple:
        """The recorded work with buffers replaced by `role(int_ptr)` (an input's index or
        "t"): two calls with equal signatures did the same work on the same kind of buffers."""
        out = []
        for op in self.ops:
            tag = op[0]
            if tag in ("L", "1"):
                args = tuple(_canon(a, role) for a in op[-2 if tag == "1" else -1])
                out.append((tag, id(op[1]), op[2], op[3] if tag == "L" else op[4], args))
            elif tag == "S":
                out.append(("S", id(op[1]), tuple(_canon(a, role) for a in op[2])))
            elif tag == "P":
                out.append(("P", id(op[1]), op[2]))
            elif tag == "E":
                out.append(("E", id(op[1]), op[2], op[3]))
            elif tag == "C":
                out.append(("C", role(op[1].int_ptr), role(op[2].int_ptr), *op[3:]))
            elif tag == "W":
                out.append(("W", role(op[1].int_ptr), op[2].tobytes()))
            else:
                out.append(op)
        return tuple(out)

    def finish(self, work_after=None) -> None:
        """Pin the buffers and build the replay list (argument lists kept mutable, so `rebind`
        can point an input at another buffer). `work_after` is not needed here: the list says
        which steps read a dynamic op's results."""
        keys = list(self.bufs)
        pins = Pins.of(self.rt.pool)
        pins.pin(keys)
        self.pinned = keys
        # a tape dropped without release() still gives its buffers back
        self._unpin = weakref.finalize(self, pins.unpin, keys)
        rt = self.rt
        queue = rt.queue
        set_, pack, enqueue = _plan._SET, _plan._PACK, _plan._ENQUEUE
        steps = []
        for op in self.ops:
            tag = op[0]
            if tag == "L":
                steps.append((Runtime.launch, [rt, *op[1:]]))
            elif tag == "1":
                steps.append((Runtime.launch1d, [rt, *op[1:]]))
            elif tag == "C":
                steps.append((Runtime.copy, [rt, *op[1:]]))
            elif tag == "W":
                if op[2].nbytes:
                    steps.append((_write, [queue, op[1], op[2]]))
            elif tag == "S":  # the setter takes a tuple; the list stays rebindable
                steps.append((_tupled(set_), [op[1], list(op[2])]))
            elif tag == "P":
                steps.append((pack, op[1:]))
            elif tag == "E":
                steps.append((enqueue, (queue, op[1], op[2], op[3], *op[4])))
            else:
                steps.append((self._call, (op[1],)))
        self.steps = steps
        self.calls = [(fn, _mutable(args), kwargs, res) for fn, args, kwargs, res in self.calls]
        # where each buffer is referenced: (list, index) of a cl.Buffer or of a ClArray
        self.refs: dict[int, list] = {}
        last_use: dict[int, int] = {}  # buffer key -> last step referencing it
        call_step = []
        for i, (fn, args) in enumerate(steps):
            if fn == self._call:
                call_step.append(i)
                args = self.calls[args[0]][1]
            if isinstance(args, list):
                for key in self._index(args):
                    last_use[key] = i
        #: per dynamic call, per result: copied into the recorded buffer (a later step reads
        #: it) or handed to `on_swap` to take the recorded one's place in the results
        self.copy_back = [
            [last_use.get(r.buf.int_ptr, -1) > call_step[c] for r in results]
            for c, (_, _, _, results) in enumerate(self.calls)
        ]

    def _index(self, args: list) -> list:
        """Note where `args` (nested lists) reference buffers; returns their keys."""
        keys = []
        for j, a in enumerate(args):
            if isinstance(a, _MEM):
                key = a.int_ptr
            elif type(a) is ClArray:
                key = a.buf.int_ptr
            elif isinstance(a, list):
                keys += self._index(a)
                continue
            else:
                continue
            self.refs.setdefault(key, []).append((args, j))
            keys.append(key)
        return keys

    def rebind(self, old: int, prim: ClArray) -> None:
        """Point every reference to buffer `old` (an input's) at contiguous array `prim`: its
        buffer, or for an array argument (a dynamic op's) the same view of `prim`'s buffer."""
        buf = prim.buf
        refs = self.refs.pop(old, [])
        for args, j in refs:
            a = args[j]
            args[j] = rebased(a, prim) if type(a) is ClArray else buf
        self.refs.setdefault(buf.int_ptr, []).extend(refs)

    def _call(self, index: int) -> None:
        new = _prims(self.call_dynamic(index))
        old = self.calls[index][3]
        if len(new) != len(old):
            raise RuntimeError("burn capture: a dynamic op returned another number of results")
        for n, o, copy in zip(new, old, self.copy_back[index]):
            if copy:
                copy_into(o, n)
            else:
                self.on_swap(o, n)

    def replay(self) -> None:
        """Enqueue the recorded work again (dynamic ops called anew)."""
        with self.rt.lock:
            for fn, args in self.steps:
                fn(*args)

    def release(self) -> None:
        """Unpin the buffers (once); the tape cannot replay after this."""
        if self.pinned:
            self._unpin()
            self.pinned = []
            self.steps = []


def rebased(view: ClArray, base: ClArray) -> ClArray:
    """`view`'s shape, strides and offset over `base`'s buffer (`base` contiguous from 0)."""
    if view.shape == base.shape and view.strides == base.strides and view.offset == 0:
        return base
    return ClArray(base.rt, base.block, view.shape, view.dtype, view.strides, view.offset)


def _tupled(setter):
    """`setter(kernel, flat)` given the flat arguments as a (rebindable) list."""

    def set_list(kernel, flat):
        setter(kernel, tuple(flat))

    return set_list


def _mutable(x):
    """Tuples of (nested) arguments as lists, so references can be rebound in place."""
    if isinstance(x, list | tuple):
        return [_mutable(e) for e in x]
    return x


def _write(queue, buf, host) -> None:
    cl.enqueue_copy(queue, buf, host, is_blocking=False)


def _prims(x) -> list:
    if type(x) is ClArray:
        return [x]
    if isinstance(x, list | tuple):
        return [p for e in x for p in _prims(e)]
    return []


def copy_into(dst: ClArray, src: ClArray) -> None:
    """Write `src`'s values into contiguous `dst` (same shape and dtype), on the queue."""
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError(
            f"burn capture: cannot copy a {src.dtype}{list(src.shape)} tensor into a recorded "
            f"{dst.dtype}{list(dst.shape)} buffer"
        )
    if not (src.is_contiguous()):
        from ._extension import into_contiguous

        src = into_contiguous(src)
    isz = src.dtype.itemsize
    Runtime.copy(src.rt, dst.buf, src.buf, src.size * isz, src.offset * isz, dst.offset * isz)


def static_copy(src: ClArray) -> ClArray:
    """A new contiguous array holding `src`'s values."""
    dst = ClArray.empty(src.rt, src.shape, src.dtype)
    if src.size:
        copy_into(dst, src)
    return dst
