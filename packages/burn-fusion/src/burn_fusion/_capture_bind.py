"""Binding a replay's inputs (`_capture_replay.Replay`): the new call's tensors into the slots
the recorded tape reads, with as little host work before the tape's launch as can be.

`cur[j]` is the array whose values input slot `j` holds for the tape: the slot's own static
buffer, or (a tape that rebinds) the array it was pointed at, or (below) an array whose values
were copied into the static buffer after the last launch. A new tensor `p` for slot `j` needs
no work when `p is cur[j]` (tensors are immutable; a tape never writes its inputs).

Two fast paths for the common loop `model, opt = step(model, opt, batch)` on a tape of fixed
addresses (a CUDA graph), where every input that is a module's or optimizer's tensor (~300 for
a transformer step) comes back as the very array the previous replay returned:
- *carry-out*: after the tape's launch, the results that the call bound into slots (arrays the
  replay writes) are copied into those slots' static buffers at once (one prepared batch,
  `copy_plan`), and `cur[j]` becomes that result: the next call passing it back binds nothing
  before its launch. The copies cost the GPU what the binding cost it before; they move from
  before the launch to after it, where the host does not delay the GPU. A result a replay
  writes is written only by this recording's replays, each followed by the same copies, so
  the slot keeps its values until the next replay.
- *same carried leaves*: the carried slots' tensors (those of modules and stateful objects)
  are compared with the last call's by identity in C (`map(is_, ...)`), and their handles'
  arrays with `cur` likewise; when all match nothing is bound for them (what the per-slot loop
  would conclude, without its ~300 Python iterations). Loose tensors (a batch) are bound per
  slot, and are not kept alive between calls.
Anything else (a parameter replaced, an older model, a tensor not yet computed) takes the
per-slot loop, which also learns the carry-out set again.

An array is "held" by a slot (`cur[j] = p`, no copy next time) only if no live recording's
replay writes it (`rewritten`): a model returned by a captured training step and passed to a
captured evaluation step changes values at the training step's next replay, so the evaluation
step copies it at each call.
"""

from __future__ import annotations

import weakref
from operator import attrgetter, is_, itemgetter

from ._capture_util import handle_of, key, prim_of

_PRIM = attrgetter("prim")
_FIRST, _SECOND = itemgetter(0), itemgetter(1)

#: the recordings of fixed-address tapes that can replay (settled, not released), any step's:
#: an array one of them writes (its results) gets new values at each of its replays
_WRITERS: weakref.WeakSet = weakref.WeakSet()


def writers() -> list:
    """The `writes(array)` of every live fixed-address recording; one that cannot say (no
    `writes`) as a function answering True (it may write anything)."""
    return [_ANY if rec.writes is None else rec.writes for rec in list(_WRITERS)]


def _ANY(_) -> bool:
    return True


def rewritten(p) -> bool:
    """Whether a replay of any live recording may write array `p` (a captured step's result:
    a model a captured training step returned, passed to a captured evaluation step)."""
    for writes in writers():
        if writes(p):
            return True
    return False


def getter(slots: list):
    """A function `leaves -> tuple of leaves[j] for j in slots` (itemgetter's, in C)."""
    if not slots:
        return lambda leaves: ()
    if len(slots) == 1:
        j = slots[0]
        return lambda leaves: (leaves[j],)
    return itemgetter(*slots)


class Binder:
    """Mixed into `Replay`: the binding of a replay's inputs (see the module docstring)."""

    def _prepare_bind(self) -> None:
        """Set up binding (after `_settle` set `tensor_at`, `statics`, `rebinds`, `writes`)."""
        carried = self.in_tree.carried
        self.cur = list(self.statics)  # the array each input slot holds, by slot
        self.known = [None] * len(self.in_tree.leaves)  # (tensor, its handle), by input slot
        self.carried_at = [j for j in self.tensor_at if carried[j]]
        self.loose_at = [j for j in self.tensor_at if not carried[j]]
        self.carried_of = getter(self.carried_at)
        self.last = None  # (carried tensors, their handles, their `cur`) after the last bind
        self.carry: list = []  # (slot, result array) copied into the slot after each launch
        self.carry_go = None  # the prepared copies of `carry` (one call)
        if not self.rebinds:
            _WRITERS.add(self)

    def _bind_inputs(self, leaves: list) -> bool:
        """Bind the call's input `leaves`; True when the carried slots took the per-slot loop
        (`_carry_out` then refreshes what the fast path compares against)."""
        last = self.last
        if last is not None:
            now = self.carried_of(leaves)
            if all(map(is_, now, last[0])) and all(map(is_, map(_PRIM, last[1]), last[2])):
                self._bind_slots(leaves, self.loose_at, None)
                return False
        carry = None if self.rebinds or self.writes is None else []
        self._bind_slots(leaves, self.tensor_at, carry)
        if carry is not None:
            self._plan_carry(carry)
        return True

    def _bind_slots(self, leaves: list, slots: list, carry: list | None) -> None:
        """The per-slot loop over input `slots`; `carry` (a list): gets (slot, array) of each
        carried slot given an array the replay writes (a result of the last replay)."""
        bind = self._bind
        many = None if self.rebinds else getattr(self.rt, "copy_many", None)
        pending = []
        cur, known, carried, statics = self.cur, self.known, self.in_tree.carried, self.statics
        writes = self.writes
        for j in slots:
            leaf = leaves[j]
            h = known[j]  # the handle of slot j's last carried tensor, when `leaf` is it
            if h is not None and h[0] is leaf and h[1].prim is not None:
                p = h[1].prim
            else:
                p = prim_of(leaf)
                # a module's or optimizer's tensor (the one a replay returned comes back):
                # its handle is kept; a loose one (a batch) is not kept alive
                known[j] = (leaf, handle_of(leaf)) if carried[j] else None
            # (not an input's own buffer: a result that is an input, or a view of one, holds
            # what that input's slot gets, not a value a replay wrote)
            if (carry is not None and carried[j] and p is not statics[j] and writes(p)
                    and key(p) not in self.in_keys):  # fmt: skip
                carry.append((j, p))
            if p is not cur[j]:
                if p is statics[j] and not self.rebinds:
                    # the slot's own buffer: a result that passed this input through (a
                    # module field the step returns unchanged), handed out by a replay after
                    # another tensor was bound; it holds the values already (copying a buffer
                    # onto itself is an overlapping copy, refused by OpenCL)
                    cur[j] = p
                    continue
                if many is None:
                    bind(j, p)
                else:
                    pending.append((j, p))
        if pending:
            # fixed addresses: every new input copied into its slot, in one call where the
            # runtime batches copies (a training step passes back ~300 parameters and moments)
            many([(statics[j], p) for j, p in pending])
            ws = writers()  # (`rewritten`, inline: ~300 slots)
            for j, p in pending:
                cur[j] = p
                for writes in ws:
                    if writes(p):
                        cur[j] = statics[j]
                        break

    def _plan_carry(self, carry: list) -> None:
        """Prepare the copies of `carry` ((slot, result) pairs), unless they are those already
        prepared."""
        old = self.carry
        if len(old) == len(carry) and all(a[0] == b[0] and a[1] is b[1]
                                          for a, b in zip(old, carry)):  # fmt: skip
            return
        self.carry = carry
        if not carry:
            self.carry_go = None
            return
        pairs = [(self.statics[j], p) for j, p in carry]
        rt = self.rt
        plan = getattr(rt, "copy_plan", None)
        if plan is not None:
            self.carry_go = plan(pairs)
        else:
            many = getattr(rt, "copy_many", None)
            if many is not None:
                self.carry_go = lambda: many(pairs)
            else:
                self.carry_go = lambda: [rt.copy_into(d, s) for d, s in pairs]

    def _carry_out(self, slow: bool) -> None:
        """After the tape's launch: the carried results into their slots (see the docstring);
        after a per-slot bind, what the next call's fast path compares against."""
        go = self.carry_go
        if go is not None:
            go()
            if slow:
                cur = self.cur
                for j, p in self.carry:
                    cur[j] = p
        if slow:  # (the per-slot loop set `known` of every carried slot: (tensor, handle))
            known = self.carried_of(self.known)
            self.last = (tuple(map(_FIRST, known)), tuple(map(_SECOND, known)),
                         self.carried_of(self.cur))  # fmt: skip

    def _drop_carry(self) -> None:
        """Forget the prepared copies and the last call's tensors (the recording is released)."""
        self.carry, self.carry_go, self.last = [], None, None
        _WRITERS.discard(self)

    def _bind(self, j: int, p) -> None:
        """Input slot `j` reads `p` from now on: the tape is pointed at `p`'s buffer where the
        runtime allows it (an OpenCL tape) and `p` is a contiguous array the tape does not
        write; otherwise `p` is copied into the slot's own buffer. (Tensors are immutable and
        a tape never writes its inputs: the same `p` again needs nothing.)"""
        tape, static, cur = self.tape, self.statics[j], self.cur[j]
        if not self.rebinds:  # fixed addresses (a CUDA graph)
            self.rt.copy_into(static, p)
            # the same `p` next time needs no copy, unless a replay writes its memory: a
            # result of this recording (a parameter a dynamic op's result was copied into
            # holds the new values the next call passes in, in the same array) or of
            # another's (a model a captured training step returned, given to this one)
            self.cur[j] = static if rewritten(p) else p
            return
        k = key(p)
        if (
            p.shape == static.shape
            and p.dtype == static.dtype
            and self.rt.layout(p) == self.rt.layout(static)
            and k not in tape.bufs
            and k not in self.bound_keys
        ):
            tape.rebind(key(cur), p)
            self.bound_keys.discard(key(cur))
            self.bound_keys.add(k)
            self.cur[j] = p
            return
        if cur is not static:
            tape.rebind(key(cur), static)
            self.bound_keys.discard(key(cur))
            self.bound_keys.add(key(static))
            self.cur[j] = static
        self.rt.copy_into(static, p)
