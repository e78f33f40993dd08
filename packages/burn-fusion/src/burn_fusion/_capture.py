"""`capture(step)`: a training step recorded once and replayed without its per-op Python.

Per guard (the structure of the arguments: tensor kinds, dtypes, shapes and devices, module
parameter ids, constants), a call goes through these states:
1. warm-up: the first call runs eagerly (kernels compile, autotune and Fusion's pass-through
   learning settle);
2. record: the next calls run eagerly on private copies of the inputs while the device's tape
   records them; two consecutive recordings with the same signature (the same kernels, sizes,
   scalar arguments and buffer roles) make the step stable, so later calls replay. Up to
   `MAX_RECORDINGS` tries; a stream that keeps changing (Python control flow on changing
   values, a learning rate or step count baked into kernels) runs eagerly from then on;
3. replay: bind the new inputs, replay, return the results.
A step that reads a tensor's values on the host inside (an `item()`, a Python `if` on a
tensor) runs eagerly too; both say why once, as a `CaptureWarning`.
"""

from __future__ import annotations

import warnings
from typing import Any

from . import _capture_hooks as hooks
from ._capture_run import Recording
from ._capture_util import Refused, debug, fusion_of
from ._capture_tree import Memo, flatten

#: recordings of one guard before the step is declared uncapturable (runs eagerly)
MAX_RECORDINGS = 4
#: guards kept (least recently used dropped past this: their buffers are freed)
MAX_GUARDS = 8


class CaptureWarning(UserWarning):
    """A captured step runs eagerly; the message says why."""


class _Guard:
    """The state of one guard: "warm", "record", "replay" or "eager"."""

    def __init__(self):
        self.state = "warm"
        self.last: Recording | None = None  # the latest recording (stable one when replaying)
        self.tries = 0
        self.reason: str | None = None
        self.tape_stats: dict | None = None  # what a replay of `last` runs (its tape's stats)

    def drop(self) -> None:
        if self.last is not None:
            self.last.release()
            self.last = None


class CapturedStep:
    """A step function whose calls replay a recording of its device work (see `capture`)."""

    def __init__(self, fn, name: str | None = None):
        self.fn = fn
        self.name = name or getattr(fn, "__qualname__", repr(fn))
        self._guards: dict = {}
        self._warned: set = set()
        self._stats = {
            "calls": 0,
            "eager_calls": 0,
            "recordings": 0,
            "replays": 0,
            "guard_misses": 0,
        }
        self._replayed = None  # the tape stats of the latest replay's recording
        #: the modules and optimizers the last call walked or its replay returned: passed
        #: back unchanged, they are not walked again (`_capture_tree.Memo`)
        self._memo = Memo()
        self._last: tuple | None = None  # (spec, guard) of the last call

    def __repr__(self) -> str:
        return f"capture({self.name})"

    def stats(self) -> dict:
        """Counters: calls, eager_calls (warm-up and uncapturable calls), recordings, replays,
        guard_misses (a call whose arguments' structure or a guarded value differs from every
        recording's), guards (structures seen), `eager_reasons` (why steps run eagerly) and
        `tape`: what one replay of the latest replayed recording runs, where its tape says
        (CUDA: {"segments": graphs and dynamic calls, "graphs": .., "resident_calls": random
        draws and Adam updates inside the graphs}; a step of one graph has one segment)."""
        out = dict(self._stats)
        out["tape"] = self._replayed
        out["guards"] = len(self._guards)
        out["eager_reasons"] = sorted({g.reason for g in self._guards.values() if g.reason})
        return out

    def release(self) -> None:
        """Free every recording (their buffers go back to the pool); later calls start over."""
        for g in self._guards.values():
            g.drop()
        self._guards.clear()
        self._memo = Memo()
        self._last = None

    def _warn(self, reason: str) -> None:
        if reason not in self._warned:
            self._warned.add(reason)
            warnings.warn(
                f"burn capture: {self.name} runs eagerly: {reason}", CaptureWarning, stacklevel=3
            )

    def _eager(self, args) -> Any:
        self._stats["eager_calls"] += 1
        return self.fn(*args)

    def __call__(self, *args: Any) -> Any:
        self._stats["calls"] += 1
        if hooks.ACTIVE is not None:  # inside another step's recording: part of its work
            return self._eager(args)
        try:
            return self._call(args)
        finally:
            self._memo.turn()

    def _call(self, args) -> Any:
        tree = flatten(args, memo=self._memo)
        key = tree.spec
        last = self._last
        # the spec of the last call again (its guard is the most recently used): its subtrees
        # are mostly the memo's own objects, so comparing them is cheap where hashing the whole
        # spec (every parameter id) is not
        if last is not None and last[0] == key:
            guard = last[1]
        else:
            guard = self._guards.get(key)
        self._last = None
        if guard is None:
            try:
                fusion_of(tree)
            except Refused as e:
                self._warn(f"it cannot be captured: {e}")
                return self._eager(args)
            if self._guards:
                self._stats["guard_misses"] += 1
            if len(self._guards) >= MAX_GUARDS:
                oldest = next(iter(self._guards))
                self._guards.pop(oldest).drop()
            guard = self._guards[key] = _Guard()
        elif last is None or guard is not last[1]:  # most recently used last
            self._guards[key] = self._guards.pop(key)
        self._last = (key, guard)
        if guard.state == "warm":
            guard.state = "record"
            return self._eager(args)
        if guard.state == "eager":
            return self._eager(args)
        if guard.state == "replay":
            miss = guard.last.check(tree)
            if miss is None:
                self._stats["replays"] += 1
                self._replayed = guard.tape_stats
                return guard.last.replay(tree, self._memo)
            self._stats["guard_misses"] += 1
            debug(f"{self.name}: guard miss, records again: {miss}")
            guard.state, guard.tries = "record", 0
            guard.drop()
        return self._record(guard, tree, args)

    def _record(self, guard: _Guard, tree, args) -> Any:
        fusion, index = fusion_of(tree)
        rec = Recording(fusion, index, tree)
        self._stats["recordings"] += 1
        try:
            result = rec.run(self.fn, args)
        except BaseException:
            rec.release()
            raise
        guard.tries += 1
        if rec.refused is not None:
            host_read = rec.tape.refused is not None  # refused for good, not a first step
            debug(f"{self.name}: recording {guard.tries} refused: {rec.refused}")
            rec.release()
            if host_read or guard.tries >= MAX_RECORDINGS:
                self._give_up(guard, rec.refused)
            return result
        prev = guard.last
        stable = prev is not None and prev.signature() == rec.signature()
        if prev is not None:
            if not stable:
                debug(f"{self.name}: recording {guard.tries} differs from the one before "
                      f"({_differs(prev.signature(), rec.signature())})")
            prev.release()
        guard.last = rec
        if stable:
            debug(f"{self.name}: recording {guard.tries} is stable: later calls replay")
            guard.state = "replay"
            stats = getattr(rec.tape, "stats", None)
            guard.tape_stats = None if stats is None else stats()
        elif guard.tries >= MAX_RECORDINGS:
            self._give_up(
                guard,
                f"its op stream changed in each of {guard.tries} recorded calls (Python "
                "control flow on changing values, or a learning rate or step count baked "
                "into kernels: only Adam's update takes them as inputs)",
            )
        return result

    def _give_up(self, guard: _Guard, reason: str) -> None:
        guard.drop()
        guard.state, guard.reason = "eager", reason
        self._warn(reason)


def _differs(a: tuple, b: tuple) -> str:
    """Where two recordings' signatures first differ (for `BURN_CAPTURE_DEBUG`)."""
    parts = ("kernels", "dynamic ops", "step counters", "host floats")
    for part, x, y in zip(parts, a, b):
        if x != y:
            x, y = list(x), list(y)
            i = next((i for i, (u, v) in enumerate(zip(x, y)) if u != v), min(len(x), len(y)))
            got = lambda s: repr(s[i])[:200] if i < len(s) else "(none)"  # noqa: E731
            return f"{part}: {len(x)} vs {len(y)}, first difference at {i}: {got(x)} / {got(y)}"
    return "equal"


def capture(fn=None, *, name: str | None = None):
    """Capture training step `fn`: later calls replay its recorded device work.

    `fn(*args)` must be a function of its arguments: modules (values), optimizers (their state
    is carried: pass the optimizer as an argument), batches (tensors, or tuples, lists, dicts
    and dataclasses of them) and Python numbers. A float argument that reaches Adam's update
    as its learning rate is an input (changing it replays); any other float is guarded (a new
    value records again). Random draws (dropout) advance the device's random counter at each
    replay exactly as the eager step would.

    Results: tensors of returned modules and of the optimizer's state are the recording's own
    (a replay may write the new values into their buffers, so a model returned by an earlier
    call is not kept: copy what you keep, e.g. `model.into_record()`); loose tensors (loss,
    logits) are fresh copies each call, so they may be read later. Python numbers a step
    returns are those of its recording. Called while another captured step records, a
    captured step runs eagerly (the outer recording takes in its work).

    Args:
        fn: the step, e.g. `train_step(model, optim, batch, lr) -> (model, loss)`.
        name: the name warnings and `repr` use (default: `fn`'s).

    Returns:
        A `CapturedStep`, called like `fn`; `.stats()` counts recordings, replays, guard
        misses and eager calls; `.release()` frees the recordings' buffers.

    Example:
        >>> step = capture(train_step)  # doctest: +SKIP
        >>> for batch in loader:  # doctest: +SKIP
        ...     model, loss = step(model, optim, batch, 1e-3)
    """
    if fn is None:
        return lambda f: CapturedStep(f, name)
    return CapturedStep(fn, name)
