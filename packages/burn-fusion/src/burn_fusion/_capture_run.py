"""One recording of a captured step: run it once on private copies of its inputs while the
device's tape records, then replay that tape for later calls.

Recording: the inputs' tensors are copied into buffers the recording owns ("static inputs"),
the step runs eagerly on them under the runtime's tape (`rt.tape()`), pending plans are
flushed, and the results are classified. While it runs, Fusion's op wrappers report each op
(`note`: host floats, which may be constants of kernels the tape cannot see; another thread's
work on the device). A call the runtime stopped half-way (a CUDA host read) or whose last
kernels never ran has the host state it advanced put back (`_rewind`) and runs eagerly. The
replay is `_capture_replay.Replay`'s.

Dynamic ops (`_capture_hooks.DYNAMIC_OPS`: random draws, Adam's update) are recorded in one of
two ways, as the tape says: a tape whose `resident(name)` is true runs them inside its
recording (`resident_call`: the values that change per call are read from device memory the
tape rewrites at each replay, from `scalars_of(index)`: the bound learning rate and step
count); otherwise the tape records them as calls made anew at replay (`dynamic`).
"""

from __future__ import annotations

import os
import threading
from typing import Any

from burn_tensor import Device, Tensor

from . import _capture_hooks as hooks
from ._capture_replay import Replay
from ._capture_tree import Tree, flatten, unflatten
from ._capture_util import (
    canon,
    counters,
    debug,
    handle_of,
    is_baked,
    key,
    lift,
    prim_of,
    raised_at,
    scalars,
    work,
)

#: ops of another thread that do not make a recording untrusted: uploads and host reads
_HARMLESS = ("from_data", "into_data")


class Recording(Replay):
    """The tape of one call and what a replay needs to bind and return."""

    def __init__(self, fusion, index: int, tree: Tree):
        self.fusion = fusion
        self.index = index
        self.stream = fusion.stream(index)
        self.rt = self.stream.rt
        self.in_tree = tree
        self.tape = None
        self.calls: list = []  # per dynamic call: {"lr": float leaf or None, "time": int}
        #: per resident call (run inside the tape's recording): the same, and its "args"
        self.resident_calls: list = []
        #: (op name, its float arguments) of each Fusion op of the step that took host floats
        #: (`note`): constants of kernels the tape may not see (a CUDA graph's cupy kernels)
        self.host_ops: list = []

    # -- recording ------------------------------------------------------------------------------
    def run(self, fn, in_args) -> Any:
        """Call `fn` on static copies of the inputs while the tape records; returns its result.
        `self.refused` says why the tape cannot be replayed (None: it can). `in_args` are the
        call's own arguments (for an eager run when the runtime refuses to record)."""
        tree, rt, fusion = self.in_tree, self.rt, self.fusion
        self.in_args = in_args
        fusion.flush()
        statics, leaves = [], []
        for leaf, kind in zip(tree.leaves, tree.kinds):
            if kind == "T":
                s = rt.static_copy(prim_of(leaf))
                statics.append(s)
                leaves.append(lift(leaf, s, fusion))
            else:
                statics.append(None)
                leaves.append(leaf)
        self.statics = statics
        self.static_leaves = leaves
        args = unflatten(tree.spec, iter(leaves), iter(tree.templates), restore=True)
        self.in_states = self._states(tree.templates)
        self.in_counters = counters(self.in_states)
        tape = self.tape = rt.tape()
        hooks.ACTIVE = self
        env = os.environ.get("BURN_CHECKS")
        if env is None or env.strip() == "":
            # data-dependent checks read values on the host: skipped while recording, as on
            # the GPU (`BURN_CHECKS=1` keeps them, and the step then runs eagerly)
            os.environ["BURN_CHECKS"] = "0"
        tape.start()
        explained = False
        try:
            result = fn(*args)
            fusion.flush()
        except Exception as exc:
            explains = getattr(tape, "explains", None)
            explained = explains is not None and explains(exc)
            if not explained:
                # the step's own error: its stateful arguments get their state from before
                # the call back, not the recording's copies (on CUDA, kernels after the last
                # split never ran)
                self._restore_states()
                raise
            if tape.refused is not None:  # say where, as a tape that sees the read does
                tape.refused = f"{tape.refused} at {raised_at(exc)}"
        finally:
            tape.stop()
            hooks.ACTIVE = None
            if env is None:
                os.environ.pop("BURN_CHECKS", None)
            elif env.strip() == "":
                os.environ["BURN_CHECKS"] = env
        self.refused = tape.refused
        if self.refused is None and getattr(tape, "foreign", False):
            self.refused = "another thread ran device work while it recorded (tried again)"
        if explained or getattr(tape, "lost", False):
            # the runtime refused to record it (a CUDA host read) or lost the capture: the call
            # stopped half-way, or its last kernels never ran. Host state it advanced (the
            # optimizer's, the device's random counter) is put back, and it runs eagerly.
            self._rewind()
            debug(f"recording aborted, eager run instead: {self.refused}")
            return fn(*self.in_args)
        self.result = result
        self.out_tree = flatten(result)
        self.out_states = self._states(tree.templates)
        self.out_counters = counters(self.out_states)
        if self.refused is None:
            self._settle()
        if self.refused is None:  # a replay writes the recorded buffers again
            result = self._loose_copies()
        return result

    def _rewind(self) -> None:
        """Undo the host state an aborted recording advanced: stateful arguments (an optimizer)
        get their state from before the call back (the recording ran on static copies, so
        those tensors are untouched), and the tape rewinds what it snapshotted (Cuda: the
        device's random counter, which the step's draws advanced)."""
        # ops the aborted call left pending run now, on their own: the eager run's plans are
        # then those of a call of its own
        self.fusion.flush()
        self._restore_states()
        rewind = getattr(self.tape, "rewind", None)
        what = rewind() if rewind is not None else None
        debug(
            f"rewound {len(self.in_states)} stateful argument(s) to their state before the "
            f"call; tape: {what or 'nothing to rewind'}"
        )

    def _restore_states(self) -> None:
        """Stateful arguments (an optimizer) get their state from before the call back."""
        tree = self.in_tree
        unflatten(tree.spec, iter(tree.leaves), iter(tree.templates), restore=True)

    def note(self, name: str, args) -> None:
        """The hook of Fusion's op wrappers while this records (`_backend`): another thread's
        op on this device makes the recording untrusted (Fusion's stream is per device, and a
        CUDA tape sees only fused launches); this thread's host floats are noted (a constant
        of a kernel the tape may not see: a learning rate baked there is guarded, not bound;
        and two recordings with other constants differ)."""
        tape = self.tape
        if threading.get_ident() != tape.tid:
            # uploads and reads are harmless (a loader thread's batches); a read that flushes
            # the stream launches, which the tape's launch hook sees
            if not name.endswith(_HARMLESS) and self._touches(args):
                if not tape.foreign:
                    debug(f"another thread ran {name} on this device while recording")
                tape.foreign = True
            return
        if tape.depth or name in hooks.DYNAMIC_OPS:
            # a dynamic op's arguments are compared as its call's (`signature`); its betas
            # or weight decay equal to the learning rate would not make that rate baked
            return
        floats = tuple(a for a in args if isinstance(a, float))
        if floats:
            self.host_ops.append((name, floats))

    def _touches(self, args) -> bool:
        """Whether op arguments `args` reach this recording's device."""
        for a in args:
            if type(a) is list and a:
                a = a[0]
            if getattr(a, "stream", None) is self.stream:
                return True
            if isinstance(a, Device) and a.backend is self.fusion and a.index == self.index:
                return True
        return False

    def _states(self, templates) -> list:
        """(object, flattened state) of each stateful object among `templates`."""
        return [
            (obj, flatten(obj.capture_state(), state=True))
            for obj in templates
            if callable(getattr(obj, "capture_state", None))
            and callable(getattr(obj, "capture_restore", None))
        ]

    def dynamic(self, name: str, fn, args, kwargs):
        """The hook of `_capture_hooks.dynamic`: note how the op's host scalars are bound.
        Another thread's op (a data loader's), or one inside a dynamic op, just runs."""
        tape = self.tape
        if tape.depth or threading.get_ident() != tape.tid:
            return fn(*args, **kwargs)
        roles = hooks.roles(name)
        bind = {"name": name}
        if kwargs:
            self.tape.refused = self.tape.refused or f"{name} was called with keywords"
        if "lr" in roles:
            lr = args[roles["lr"]]
            hits = [
                i
                for i, (v, k) in enumerate(zip(self.in_tree.leaves, self.in_tree.kinds))
                if k == "F" and float(v) == lr
            ]
            bind["lr"] = hits[0] if len(hits) == 1 else None
            bind["lr_value"] = lr
        if "time" in roles:
            bind["time"] = args[roles["time"]]
        resident = getattr(tape, "resident", None)
        if resident is not None and resident(name):
            bind["args"] = args  # (compared between recordings: `signature`)
            self.resident_calls.append(bind)
            return tape.resident_call(fn, args, kwargs)
        self.calls.append(bind)
        out = self.tape.dynamic(fn, args, kwargs)
        bind["work"] = work(self.stream)  # device work so far (is there any after this op?)
        return out

    def _settle(self) -> None:
        """Classify the results and check the counters; sets `self.refused` when a replay
        could not reproduce this call."""
        tape = self.tape
        self.in_keys = {key(s): i for i, s in enumerate(self.statics) if s is not None}
        for leaf, kind in zip(self.out_tree.leaves, self.out_tree.kinds):
            if kind == "T":
                prim_of(leaf)  # materialised (flushed above: a check)
        if [t.spec for _, t in self.in_states] != [t.spec for _, t in self.out_states]:
            self.refused = "the optimizer state changed shape during the call (a first step)"
            return
        self.steps = [b - a for a, b in zip(self.in_counters, self.out_counters)]
        moving = {d for d in self.steps if d}
        if len(moving) > 1:
            self.refused = "its step counters advance by different amounts"
            return
        self.step = moving.pop() if moving else 0
        binds = self.calls + self.resident_calls
        if self.step and not any("time" in c for c in binds):
            self.refused = (
                "its optimizer's step count advances but reaches no update as an input (it is "
                "baked into kernels: only Adam's fused update takes it as an input)"
            )
            return
        if any("time" in c for c in binds) and not self.step:
            self.refused = (
                "the optimizer's step count is not an input: pass the optimizer to the "
                "captured function (step(model, optim, batch, lr)) so its state is carried"
            )
            return
        for c in binds:
            if "lr" in c and c["lr"] is None:
                c["lr_fixed"] = True  # not an input: guarded by the recorded value
        baked = scalars(tape.signature(lambda k: None)) | scalars(self.host_ops)
        said: dict = {}  # learning rate -> what became of it (BURN_CAPTURE_DEBUG)
        for c in binds:  # an lr also baked into a kernel is not an input: guarded
            lr = c.get("lr_value")
            if c.get("lr") is not None and is_baked(lr, baked):
                c["lr"] = None
                where = sorted({n for n, fs in self.host_ops if lr in fs}) or "a fused kernel"
                said[lr] = f"also a kernel constant ({where}): guarded by value, not bound"
            elif c.get("lr") is not None:
                said[lr] = f"float argument {c['lr']}, bound as an input"
        for lr, what in said.items():
            debug(f"learning rate {lr}: {what}")
        self.bound = {c["lr"] for c in binds if c.get("lr") is not None}
        self.fixed_floats = [
            (i, v)
            for i, (v, k) in enumerate(zip(self.in_tree.leaves, self.in_tree.kinds))
            if k == "F" and i not in self.bound
        ]
        tape.call_dynamic = self._call_dynamic
        tape.on_swap = self._swap
        if self.resident_calls:
            tape.scalars_of = self._scalars_of
        end = work(self.stream)
        tape.finish([c["work"] != end for c in self.calls])
        self._prepare_results()
        kinds = self.in_tree.kinds  # (a replayed call's leaves are laid out the same)
        self.tensor_at = [j for j, k in enumerate(kinds) if k == "T"]
        self.counter_at = [j for j, k in enumerate(kinds) if k == "I"]
        self.rebinds = callable(getattr(tape, "rebind", None))
        self.writes = getattr(tape, "writes", None)
        self._prepare_bind()
        self._prepare_check()
        # without rebinding (fixed addresses: a CUDA graph) the recording read its inputs in
        # the layout they came in (static copies keep it): another layout records again, as
        # a GEMM may read a transposed operand in another order (other bits than eager's)
        layout, t = self.rt.layout, self.in_tree
        self.loose = [
            (i, layout(prim_of(leaf)))
            for i, (leaf, k, c) in enumerate(zip(t.leaves, t.kinds, t.carried))
            if k == "T" and not c and not self.rebinds
        ]
        self.bound_keys = {key(s) for s in self.statics if s is not None}
        # the handles a swapped dynamic result must reach: results and optimizer state
        by_key: dict = {}
        leaves = list(self.out_tree.leaves)
        for _, st in self.out_states:
            leaves += [v for v, k in zip(st.leaves, st.kinds) if k == "T"]
        for leaf in leaves:
            if isinstance(leaf, Tensor):
                h = handle_of(leaf)
                by_key.setdefault(key(h.prim), []).append(h)
        self.swaps = {
            id(r): by_key.get(key(r), []) for _, _, _, results in tape.calls for r in results
        }
        # results that are inputs (or views of them): after a rebind they must show the
        # input the replay read, not the recording's copy
        self.aliases = [
            (h, self.in_keys[k], h.prim)
            for k, hs in by_key.items()
            if k in self.in_keys
            for h in hs
        ]

    def signature(self) -> tuple:
        """What this call did, with buffers as roles: equal for calls that did the same work."""
        in_keys = self.in_keys

        def role(k):
            i = in_keys.get(k)
            return "t" if i is None else i

        def call(c, args) -> tuple:
            sig = [c["name"]]
            for j, a in enumerate(args):
                if c.get("lr") is not None and j == hooks.roles(c["name"]).get("lr"):
                    sig.append("lr")
                elif "time" in c and j == hooks.roles(c["name"]).get("time"):
                    sig.append("time")
                else:
                    sig.append(canon(a, role))
            return tuple(sig)

        calls = [call(c, args) for (_, args, _, _), c in zip(self.tape.calls, self.calls)]
        calls += [("resident", *call(c, c["args"])) for c in self.resident_calls]
        return (
            self.tape.signature(role), tuple(calls), tuple(self.steps), tuple(self.host_ops)
        )

    def release(self) -> None:
        if self.tape is not None:
            self.tape.call_dynamic = self.tape.on_swap = None  # no cycle left for the collector
            if self.resident_calls:
                self.tape.scalars_of = None
            self._drop_carry()  # (its prepared copies hold the tape's arrays: dropped first)
            self.tape.release()
            self.tape = None
