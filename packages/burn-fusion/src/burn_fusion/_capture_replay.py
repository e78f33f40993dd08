"""The replay half of a captured step's `Recording` (`_capture_run.py`): check a new call's
inputs against the recording's guards, bind them, replay the tape and hand back the results.

A replay copies the new inputs into the static inputs (or, where the tape can rebind, points it
at them), replays the tape (dynamic ops called anew with the bound learning rate, step count
and the device's random counter; resident ones given those values through `scalars_of`) and
returns the recorded results: tensors of returned modules
and optimizer state are the recorded ones (their buffers hold the new values); loose result
tensors (a loss, logits) are fresh copies.
"""

from __future__ import annotations

from operator import sub
from typing import Any

from . import _capture_hooks as hooks
from ._capture_bind import Binder, getter
from ._capture_tree import Tree, builder, entry, is_module, pristine, unflatten, views_of
from ._capture_util import lift, prim_of


class Replay(Binder):
    """Mixed into `Recording`: its replay, on the attributes `_settle` set."""

    def check(self, tree: Tree) -> str | None:
        """None if `tree` (the new call's inputs, same spec) can replay this recording, else
        what differs (a guard miss)."""
        for i, v in self.fixed_floats:
            if tree.leaves[i] != v:
                return f"float argument {i} changed from {v} to {tree.leaves[i]}"
        # the step counts: the int leaves of the stateful objects' states, in the order
        # `_states` lists them (the same walk)
        leaves = tree.leaves
        counters = self.counters_of(leaves)
        d = self.uniform
        if d:  # every counter advances by d (Adam's step count of each parameter): in C
            diffs = list(map(sub, counters, self.in_counters))
            if diffs.count(diffs[0]) == len(diffs) and not diffs[0] % d and diffs[0] // d >= 1:
                self.k = diffs[0] // d
                return self._check_layouts(tree)
        k = None
        for now, rec, d in zip(counters, self.in_counters, self.steps):
            diff = now - rec
            if d == 0:
                if diff:
                    return "a step counter that did not advance changed"
                continue
            if diff % d or diff // d < 1 or (k is not None and diff // d != k):
                return "the optimizer's step counts are not those of later steps"
            k = diff // d
        self.k = k or 0
        return self._check_layouts(tree)

    def _prepare_check(self) -> None:
        """Set up `check` (after `_settle` set `counter_at` and `steps`)."""
        self.counters_of = getter(self.counter_at)
        steps = self.steps
        # the step every counter advances by, when they all advance by one step d != 0
        same = bool(steps) and steps.count(steps[0]) == len(steps)
        self.uniform = steps[0] if same else 0

    def _check_layouts(self, tree: Tree) -> str | None:
        """`check`'s last part: the layouts of loose tensors (a CUDA graph reads them as
        recorded)."""
        layout = self.rt.layout
        for i, was in self.loose:
            p = prim_of(tree.leaves[i])
            if p is not self.cur[i] and layout(p) != was:
                return f"tensor argument {i}'s layout changed from {was} to {layout(p)}"
        return None

    def _now(self, c: dict) -> dict:
        """This replay's bound host scalars of dynamic call `c`: "lr" (a learning rate bound to
        a float input) and "time" (the step count, advanced by `k` steps); a fixed learning
        rate is absent (the recorded one, guarded by value)."""
        now = {}
        if c.get("lr") is not None:
            now["lr"] = float(self.floats[c["lr"]])
        if "time" in c:
            now["time"] = c["time"] + self.k * self.step
        return now

    def _scalars_of(self, index: int) -> dict:
        """`_now` of resident call `index` (the tape writes them where its kernels read)."""
        return self._now(self.resident_calls[index])

    def _call_dynamic(self, index: int):
        fn, args, kwargs, _ = self.tape.calls[index]
        c = self.calls[index]
        roles = hooks.roles(c["name"])
        now = self._now(c)
        if now:
            args = list(args)
            for role, v in now.items():
                args[roles[role]] = v
        return fn(*args, **kwargs)

    def replay(self, tree: Tree, memo=None) -> Any:
        """Bind `tree`'s inputs, replay, and return this call's results (`memo`: a
        `_capture_tree.Memo` that gets the optimizer state the replay restores)."""
        self.fusion.flush()  # pending plans may read the buffers the replay writes
        slow = self._bind_inputs(tree.leaves)
        self.floats = tree.leaves
        self.tape.replay()
        self._carry_out(slow)  # (after the launch: the host no longer delays the GPU)
        for h, j, view in self.aliases:
            cur = self.cur[j]
            if self.rebinds and cur is not self.statics[j]:  # the tape read `cur` itself
                h.prim = self.rt.rebased(view, cur)
            else:
                h.prim = view
        return self._results(memo)

    def _swap(self, old, new) -> None:
        """A dynamic op's new result `new` replaces the recorded `old` in the results."""
        for h in self.swaps.get(id(old), ()):
            h.prim = new
            h.owned = False

    def _results(self, memo=None) -> Any:
        counters = [c + (self.k + 1) * d for c, d in zip(self.in_counters, self.steps)]
        at = 0
        for (obj, st), build, where in zip(self.out_states, self.builders, self.counters_in):
            # the optimizer's state after this step: its step counts advanced
            leaves = list(st.leaves)
            for i, v in zip(where, counters[at:]):
                leaves[i] = v
            at += len(where)
            if build is not None:
                state, made = build(leaves)
            else:
                made = []
                state = unflatten(st.spec, iter(leaves), iter(st.templates), made=made)
            obj.capture_restore(state)
            if memo is not None and type(state) is dict:
                # the next call passes `obj` back: its subtree is the one just restored (the
                # spec, leaves and templates a walk of it would give), not walked again
                spec = ("S", type(obj), id(obj), st.spec)
                memo.put(entry(obj, spec, leaves, st.kinds, [obj, *st.templates], state,
                               views_of(made)))  # fmt: skip
        return self._loose_copies()

    def _prepare_results(self) -> None:
        """Set up `_results`: the returned modules are watched (a caller may edit one in place:
        `model.fc = ...`: `_handed`) and a private copy of each is kept to hand out instead
        then; each returned optimizer state gets its rebuild."""
        self.handed = list(self.out_tree.templates)
        # per returned state: its rebuild (`builder`) and where its step counts sit
        self.builders = [None if st.templates else builder(st.spec) for _, st in self.out_states]
        self.counters_in = [
            [i for i, k in enumerate(st.kinds) if k == "I"] for _, st in self.out_states
        ]
        self.kept = [
            (i, pristine(m), entry(m, None, None, None, None))
            for i, m in enumerate(self.handed)
            if is_module(m)
        ]

    def _handed(self) -> list:
        """The objects the results are rebuilt on: the recording's returned modules as they
        were, or, for one a caller changed since (its attribute or list replaced: it no longer
        holds this recording's tensors), a new copy of the recorded module."""
        for n, (i, keep, e) in enumerate(self.kept):
            if not e.valid():
                m = self.handed[i] = pristine(keep)
                self.kept[n] = (i, keep, entry(m, None, None, None, None))
        return self.handed

    def _loose_copies(self) -> Any:
        """The results, each loose tensor (not in a module or a state) a fresh copy: a caller
        may keep a loss to read later, after more replays."""
        out = self.out_tree
        leaves = []
        for leaf, kind, carried in zip(out.leaves, out.kinds, out.carried):
            if kind == "T" and not carried:
                fresh = self.rt.static_copy(prim_of(leaf))
                leaves.append(lift(leaf, fresh, self.fusion))
            else:
                leaves.append(leaf)
        return unflatten(out.spec, iter(leaves), iter(self._handed()), restore=False, same=True)
