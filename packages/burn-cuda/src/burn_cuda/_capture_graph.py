"""Step capture on CUDA: a call recorded as CUDA graphs (cupy's stream capture) and replayed
with `Graph.launch`.

`CudaTape(rt)` runs the recording call on a stream of its own in capture mode, so the device
work of the call (our kernels, cupy's, the direct cuBLAS GEMMs, which `_capture_blas` binds to
the capturing stream) becomes a graph. Ops Fusion routes through `dynamic` (random draws,
Adam's update: their host arguments change per call; `Cuda.CAPTURE_DYNAMIC`) split the
capture: the graph so far is closed and launched, the op runs eagerly and is recorded as a
call, and a new capture begins. A replay launches the graphs in order and calls the dynamic
ops anew (their results are copied into the recorded buffers, which the later graphs read, or
simply replace them when nothing after reads them).

Memory: allocations of the recording call come from a private cupy `MemoryPool`, used by
nothing else, so memory a graph writes is never handed to another tensor; the pool lives as
long as the tape. Inputs are bound by copying into the recording's own input buffers (a
graph's addresses are fixed). The stream is ordered after the caller's stream with events
before each replay, and the caller's stream after it.

A host read, a sync or an upload from (pageable) host memory inside the step is refused by
CUDA while capturing; the error is recognised (`explains`) and the step runs eagerly instead.
Kernels do not run while a stream captures but the step's Python does: a refused call has
advanced host state (the device's random counter, which `rewind` puts back; the optimizer's
state, which the capture layer puts back) and its results are not computed (a capture lost
at `stop` sets `lost`), so the capture layer runs it again eagerly.

Static copies of the inputs keep their layout (a transposed batch stays transposed: cuBLAS
reads it in the order the eager call does); memory allocated while recording comes from the
private pool and is what a replay writes (`writes`).
"""

from __future__ import annotations

import threading

from . import _capture_blas
from ._platform import load_cupy


class CudaTape:
    """The graphs and dynamic calls of one call on `rt` (a `CudaRuntime`)."""

    def __init__(self, rt):
        self.rt = rt
        self.cp = cp = load_cupy()
        self.dev = rt.dev
        with self.dev:
            self.stream = cp.cuda.Stream(non_blocking=True)
            self.pool = cp.cuda.MemoryPool()
        self.segments: list = []  # ("G", graph) or ("D", call index)
        self.calls: list = []  # (fn, args, kwargs, results)
        self.log: list = []  # fused launches: (kernel id, n, ints, scalars)
        self.bufs: dict = {}  # data pointers the graphs may write (inputs never rebind here)
        self.refused: str | None = None
        self.foreign = False  # another thread launched fused kernels while recording
        self.depth = 0
        self.tid = threading.get_ident()
        self.capturing = False
        self.call_dynamic = None
        self.on_swap = None
        self.copy_back: list = []
        self._ctx: list = []
        self.recording = False  # between start() and stop()
        self.lost = False  # the capture ended invalid: the call's last kernels never ran
        self.allocated: set = set()  # base pointers of the private pool's allocations
        self._rng = None

    # -- recording ------------------------------------------------------------------------------
    def _mine(self) -> bool:
        return self.depth == 0 and threading.get_ident() == self.tid

    def _begin(self) -> None:
        mode = getattr(self.cp.cuda.runtime, "streamCaptureModeRelaxed", None)
        if mode is None:
            self.stream.begin_capture()
        else:
            self.stream.begin_capture(mode)
        self.capturing = True

    def _end(self) -> None:
        self.capturing = False
        graph = self.stream.end_capture()
        graph.launch(self.stream)  # the recording call needs its values now
        self.segments.append(("G", graph))

    def _follow(self, first, then) -> None:
        """Stream `then` waits for the work queued so far on stream `first`."""
        ev = self.cp.cuda.Event(disable_timing=True)
        ev.record(first)
        then.wait_event(ev)

    def _malloc(self, size: int):
        mp = self.pool.malloc(size)
        mem = getattr(mp, "mem", None)
        if mem is not None:
            self.allocated.add(mem.ptr)
        return mp

    def writes(self, array) -> bool:
        """Whether a replay may write `array`'s memory: memory the recording allocated (its
        results, which a replay computes again; a dynamic op's result copied back)."""
        mem = getattr(array.data, "mem", None)
        return mem is None or mem.ptr in self.allocated

    def rewind(self) -> str:
        """Put the device random counters back where `start` found them (an aborted call drew
        from them: its eager re-run must draw the same numbers); says what changed."""
        from . import _random

        now = _random.snapshot()
        _random.restore(self._rng)
        moved = {str(d): (now[d][1], st[1]) for d, st in self._rng.items() if now.get(d) != st}
        return f"random counters {moved} (now, restored)" if moved else "random counters unmoved"

    def start(self) -> None:
        from . import _random

        cp = self.cp
        self._rng = _random.snapshot()
        # cuBLAS's handle and workspace before the private pool takes over allocation
        _capture_blas.begin(cp, self.dev.id)
        self.recording = True
        self.prev = cp.cuda.get_current_stream()
        self._follow(self.prev, self.stream)
        alloc = cp.cuda.using_allocator(self._malloc)
        alloc.__enter__()
        self._ctx = [alloc]
        self.dev.__enter__()
        self.stream.__enter__()
        rt, tape = self.rt, self

        def launch(kernel, n, ints, outs, ins, scalars, groups=None, items=None):
            if threading.get_ident() != tape.tid:
                # another thread's fused kernel may hold ops of the recorded step (Fusion's
                # stream is per device), launched outside the capture: not to be trusted
                tape.foreign = True
            elif tape._mine():
                tape.log.append((id(kernel), n, tuple(ints), tuple(scalars), groups, items))
            type(rt).launch(rt, kernel, n, ints, outs, ins, scalars, groups, items)

        rt.launch = launch
        self._begin()

    def stop(self) -> None:
        try:
            if self.capturing:
                try:
                    self._end()
                except Exception as exc:  # noqa: BLE001 - the capture was invalidated
                    self.refused = self.refused or self._why(exc)
                    self.lost = True  # what it captured since the last split never ran
        finally:
            self.recording = False
            _capture_blas.end()
            self.rt.__dict__.pop("launch", None)
            self.stream.__exit__(None, None, None)
            self.dev.__exit__(None, None, None)
            for ctx in reversed(self._ctx):
                ctx.__exit__(None, None, None)
            self._ctx = []
            self._follow(self.stream, self.prev)

    def explains(self, exc: BaseException) -> bool:
        """Whether `exc`, raised inside the recorded step, came from capturing it (a host read,
        a sync): then the step is refused and runs eagerly."""
        text = str(exc)
        # cupy says "...during stream capture..." or "the current stream is capturing, so D2H
        # transfers are disallowed"; the runtime says cudaErrorStreamCapture... (also from an
        # end_capture at a dynamic op's split, after which no capture is on)
        if self.recording and ("captur" in text.lower() or "cudaErrorStreamCapture" in text):
            self.refused = self.refused or self._why(exc)
            return True
        return False

    @staticmethod
    def _why(exc) -> str:
        return (
            "a host read, a sync or an upload inside the step (into_data, item, a Python bool of "
            "a tensor, device.sync(), Tensor.from_data: make constants outside the step and "
            f"pass them in): CUDA refused it while capturing ({type(exc).__name__}: {exc})"
        )

    def dynamic(self, fn, args, kwargs):
        """Close the graph so far, run dynamic op `fn` eagerly, record it, capture again."""
        if not self._mine() or not self.capturing:
            return fn(*args, **kwargs)
        self._end()
        self.depth += 1
        try:
            out = fn(*args, **kwargs)
        finally:
            self.depth -= 1
            self._begin()
        self.segments.append(("D", len(self.calls)))
        self.calls.append((fn, args, kwargs, _arrays(self.cp, out)))
        return out

    # -- after recording --------------------------------------------------------------------------
    def signature(self, role) -> tuple:
        """The fused launches (kernels, sizes, scalar arguments) and the segments' shape: what
        two calls must share to be the same step. (Ops outside Fusion's kernels are inside the
        graphs and not compared; the capture layer guards their float inputs by value.)"""
        kinds = tuple(s[0] for s in self.segments)
        return (tuple(self.log), kinds)

    def finish(self, work_after=None) -> None:
        """Ready the replay. `work_after[c]`: whether device work follows dynamic call `c` (its
        results must then be copied into the recorded buffers the later graphs read)."""
        if work_after is None:
            work_after = [True] * len(self.calls)
        self.copy_back = [
            [bool(work_after[c])] * len(res) for c, (_, _, _, res) in enumerate(self.calls)
        ]
        for g in (s[1] for s in self.segments if s[0] == "G"):
            upload = getattr(g, "upload", None)
            if upload is not None:
                upload(self.stream)

    def _call(self, index: int) -> None:
        new = _arrays(self.cp, self.call_dynamic(index))
        old = self.calls[index][3]
        if len(new) != len(old):
            raise RuntimeError("burn capture: a dynamic op returned another number of results")
        for n, o, copy in zip(new, old, self.copy_back[index]):
            if copy:
                o[...] = n
            else:
                self.on_swap(o, n)

    def replay(self) -> None:
        """Launch the graphs in order, dynamic ops called anew between them."""
        prev = self.cp.cuda.get_current_stream()
        self._follow(prev, self.stream)
        with self.dev, self.stream:
            for kind, x in self.segments:
                if kind == "G":
                    x.launch(self.stream)
                else:
                    self._call(x)
        self._follow(self.stream, prev)

    def release(self) -> None:
        self.segments = []
        self.calls = []
        self.allocated = set()
        self.pool.free_all_blocks()


def _arrays(cp, x) -> list:
    if isinstance(x, cp.ndarray):
        return [x]
    if isinstance(x, list | tuple):
        return [a for e in x for a in _arrays(cp, e)]
    return []


def copy_into(dst, src) -> None:
    """Write `src`'s values into `dst` (same shape and dtype), on the current stream."""
    if src.shape != dst.shape or src.dtype != dst.dtype:
        raise ValueError(
            f"burn capture: cannot copy a {src.dtype}{list(src.shape)} tensor into a recorded "
            f"{dst.dtype}{list(dst.shape)} buffer"
        )
    dst[...] = src


#: (dst ptr, src ptr, bytes) tuples -> a CUDA graph of their memcpy nodes; a few sets recur
_COPY_GRAPHS: dict = {}
_COPY_GRAPHS_MAX = 8


def copy_many(pairs) -> None:
    """`copy_into(dst, src)` for every (dst, src) pair, on the current stream. Contiguous pairs
    of one shape and dtype go as one launch of a CUDA graph of device-to-device memcpy nodes,
    recorded once per set of (destination, source, bytes) addresses: a replay of a captured
    training step binds the same ~300 parameter and moment buffers every call. The copies are
    address-to-address, so a cached graph is exactly the copies asked for whatever arrays now
    own those addresses."""
    plain, rest = [], []
    for dst, src in pairs:
        if (src.shape == dst.shape and src.dtype == dst.dtype and src.flags.c_contiguous
                and dst.flags.c_contiguous and src.device.id == dst.device.id):  # fmt: skip
            if src.nbytes:
                plain.append((dst.data.ptr, src.data.ptr, src.nbytes))
        else:
            rest.append((dst, src))
    for dst, src in rest:
        copy_into(dst, src)
    if len(plain) < 4:
        cp = load_cupy()
        stream = cp.cuda.get_current_stream().ptr
        kind = cp.cuda.runtime.memcpyDeviceToDevice
        for d, s, n in plain:
            cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream)
        return
    key = tuple(plain)
    graph = _COPY_GRAPHS.get(key)
    cp = load_cupy()
    if graph is None:
        graph = _record_copies(cp, plain, pairs[0][0].device.id)
        if len(_COPY_GRAPHS) >= _COPY_GRAPHS_MAX:
            _COPY_GRAPHS.pop(next(iter(_COPY_GRAPHS)))
        _COPY_GRAPHS[key] = graph
    graph.launch(cp.cuda.get_current_stream())


def _record_copies(cp, plain, device_id: int):
    """A CUDA graph of the memcpy nodes of `plain` ((dst, src, bytes) address triples)."""
    kind = cp.cuda.runtime.memcpyDeviceToDevice
    with cp.cuda.Device(device_id):
        stream = cp.cuda.Stream(non_blocking=True)
        mode = getattr(cp.cuda.runtime, "streamCaptureModeRelaxed", None)
        stream.begin_capture() if mode is None else stream.begin_capture(mode)
        try:
            for d, s, n in plain:
                cp.cuda.runtime.memcpyAsync(d, s, n, kind, stream.ptr)
        finally:
            graph = stream.end_capture()
    return graph


def static_copy(src):
    """A new array holding `src`'s values in `src`'s layout (strides): a transposed or sliced
    view is copied into a view of the same strides over a buffer of its span, so kernels and
    cuBLAS read it as they read `src` (a contiguous copy may give a GEMM other bits). Layouts
    with zero or negative strides are copied contiguous."""
    cp = load_cupy()
    with cp.cuda.Device(src.device.id):
        st = src.strides
        if src.size == 0 or src.flags.c_contiguous or min(st, default=1) <= 0:
            dst = cp.empty(src.shape, src.dtype)
        else:
            isz = src.dtype.itemsize
            span = sum((n - 1) * s for n, s in zip(src.shape, st)) // isz + 1
            base = cp.empty(span, src.dtype)
            dst = cp.ndarray(src.shape, src.dtype, base.data, strides=st)
        dst[...] = src
    return dst
