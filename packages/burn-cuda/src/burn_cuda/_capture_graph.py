"""Step capture on CUDA: a call recorded as CUDA graphs (cupy's stream capture) and replayed
with `Graph.launch`.

`CudaTape(rt)` runs the recording call on a stream of its own in capture mode, so the device
work of the call (our kernels, cupy's, the direct cuBLAS GEMMs, which `_capture_blas` binds to
the capturing stream) becomes a graph.

Random draws and Adam's update, whose host arguments change per call (the device's random
counter; the learning rate and step count), stay inside the graph: the capture layer asks
`resident(name)` and runs them through `resident_call`, under which they launch kernels that
read those values from the tape's device scalar block (`_capture_resident.ResidentBlock`,
allocated from the private pool at `start`). The block is written by one tiny kernel launch
before each graph the recording launches, and once at the start of every replay with the
replay's values (`scalars_of`, set by the capture layer: the bound learning rate and step
count of each resident call; the random counter advanced by the step's draws). A step of
Fusion ops, dropout and Adam is then ONE graph (`segments`: [("G", graph)]).

Other ops Fusion routes through `dynamic` (`Cuda.CAPTURE_DYNAMIC`: calls cupy refuses while
capturing; random draws and Adam where the block cannot serve: cupy's RawKernel launcher,
`BURN_CUDA_CAPTURE_RESIDENT=0`) split the capture: the graph so far is closed and launched,
the op runs eagerly and is recorded as a call, and a new capture begins. A replay launches the
graphs in order and calls the dynamic ops anew (their results are copied into the recorded
buffers, which the later graphs read, or simply replace them when nothing after reads them).

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

import os
import threading

from . import _capture_blas
from ._capture_resident import RESIDENT_OPS, ResidentBlock, supported
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
        self.block: ResidentBlock | None = None  # the device scalar block (resident ops)
        #: set by the capture layer before `replay`: resident call index -> {"lr", "time"}
        self.scalars_of = None

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
        if self.block is not None and self.block.used:
            self.block.refresh()  # the words the graph's resident kernels read (recorded values)
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
        if os.environ.get("BURN_CUDA_CAPTURE_RESIDENT", "1") != "0" and supported():
            self.block = ResidentBlock(cp, self.dev.id)  # from the private pool, before capturing
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

    def resident(self, name: str) -> bool:
        """Whether op `name` runs inside the graph (`resident_call`) rather than splitting it."""
        return (
            self.block is not None and name in RESIDENT_OPS and self.capturing and self._mine()
        )

    def resident_call(self, fn, args, kwargs):
        """Run resident op `fn` inside the capture: its kernels read the scalar block."""
        block = self.block
        index = block.calls
        block.calls += 1
        try:
            with block.running(index):
                return fn(*args, **kwargs)
        finally:
            self.foreign = self.foreign or block.foreign
            if block.refused is not None:
                # the op took its scalars as arguments (the recording's bits are right, a
                # replay could not change them): the recording is not replayed
                self.refused = self.refused or f"a random draw or Adam update: {block.refused}"

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

    def stats(self) -> dict:
        """What one replay runs: `segments` (graphs plus dynamic calls between them), `graphs`,
        `resident_calls` (random draws and Adam updates inside the graphs)."""
        graphs = sum(1 for s in self.segments if s[0] == "G")
        resident = 0 if self.block is None else self.block.calls
        return {"segments": len(self.segments), "graphs": graphs, "resident_calls": resident}

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
            block = self.block
            if block is not None and block.used:
                from . import _random

                block.bind(self.scalars_of, _random.reserve)
                block.refresh()  # one launch, ahead of the graphs on this stream
            for kind, x in self.segments:
                if kind == "G":
                    x.launch(self.stream)
                else:
                    self._call(x)
        self._follow(self.stream, prev)

    def release(self) -> None:
        self.segments = []
        self.calls = []
        self.block = None
        self.scalars_of = None
        self.allocated = set()
        self.pool.free_all_blocks()


def _arrays(cp, x) -> list:
    if isinstance(x, cp.ndarray):
        return [x]
    if isinstance(x, list | tuple):
        return [a for e in x for a in _arrays(cp, e)]
    return []
