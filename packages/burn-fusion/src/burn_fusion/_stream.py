"""The lazy stream of one device: ops are recorded into a plan, and a flush compiles (or finds in
the plan cache) one kernel for the whole plan and launches it.

A plan holds elementwise ops whose result shapes all broadcast to one plan shape (equal rank,
dims equal or 1: a [batch, 1] statistic and the [batch, n] ops that use it join one plan); its
inputs (already materialised inner primitives) broadcast to it too. A smaller result is computed
at every item of the plan and written once, by the items at index 0 of its broadcast dims. A
plan may also hold one reduction along a dim (`_stream_reduce.py`); it then runs as a row
kernel. A flush happens when a value is read (`into_data`, an unfused op taking a pending
tensor), on `device.sync()`, when an op cannot join the plan (another output shape) or when the
plan reaches its size limit (`MAX_OPS` ops, `MAX_INPUTS` inputs).

At flush: results no one holds any more are not written (dead-code elimination keeps only the
ops the live results need), a result may be written into an input buffer the plan alone
still holds (the handle was dropped, the buffer is a fused kernel's own and never left Fusion),
and a plan whose operands are all contiguous and aligned runs the vector kernel. That planning
is `_stream_plan.py`'s; recording, flushing and the pass-through are here.
"""

from __future__ import annotations

import os
import threading
import weakref

import numpy as np
from burn_gpu import DTYPE_NAMES, FUSABLE_DTYPES, REDUCE_OPS, WIDTHS, Program
from burn_gpu import dtype_name as _name
from burn_tensor import DType

from . import _recipe
from ._recipe import MAX_PER_SIG, MAX_RECIPES, MAX_SIGS, Sig, dropped, plan_key
from ._stream_plan import PlanMixin, _merge
from ._stream_reduce import INNER_REDUCE, ReduceMixin
from ._table import OPS
from ._tensor import FusionTensor

#: ops per plan; past this the plan is flushed (bounds compile time and register pressure)
MAX_OPS = 64
#: distinct inputs per plan
MAX_INPUTS = 16
_BOOL = np.dtype(np.bool_)
_new_handle = object.__new__
#: one-op plans of a key before its op passes through unrecorded (`Stream._learn`)
PASS_AFTER = 2
#: bound on the learned keys (a model with ever-new shapes must not grow the set forever)
MAX_SOLO = 4096
#: `BURN_FUSION_PASS_THROUGH=0` records every fusable op (the pass-through off)
PASS_THROUGH = os.environ.get("BURN_FUSION_PASS_THROUGH", "1") != "0"
_MAX_N = 2**31 - 1

STAT_NAMES = (
    "ops_recorded",
    "ops_unfused",
    "flushes",
    "kernels_launched",
    "kernels_compiled",
    "kernels_from_disk",
    "plan_cache_hits",
    "results_in_place",
    "plans_run_unfused",
    "reductions_fused",
    "ops_passed_through",
)


def _shapes(tensors) -> tuple:
    """The shapes of an op's 1, 2 or 3 operands (no generator for the common arities: this runs
    once or twice per recorded op)."""
    n = len(tensors)
    if n == 1:
        return (tensors[0].shape,)
    if n == 2:
        return (tensors[0].shape, tensors[1].shape)
    return tuple([t.shape for t in tensors])


def _vector_width(text: str) -> int:
    """`BURN_FUSION_VECTOR`'s value: 0 (scalar kernels only) or one of `WIDTHS`."""
    if text == "0":
        return 0
    if text not in {str(w) for w in WIDTHS}:
        raise ValueError(f"BURN_FUSION_VECTOR must be 0, 4 or 8, got {text!r}")
    return int(text)


class Stream(ReduceMixin, PlanMixin):
    """Pending plan, plan cache and counters of one device of one `Fusion(B)`."""

    def __init__(self, runtime, inner=None):
        self.rt = runtime
        self.inner = inner  # the inner backend: runs one-op plans with its own kernel
        self.index = 0  # the device's index (set by Fusion.stream): pending handles' device
        self.dialect = runtime.dialect
        self.lock = threading.RLock()
        self.plans: dict[Program, object] = {}
        #: launch recipes by plan structure (`_recipe.py`): a recurring plan is not re-planned
        self.recipes: dict = {}
        #: a fused kernel launches through `launch` (the runtime's, looked up per call: a
        #: step-capture tape replaces it while recording) or through a launch the runtime
        #: prepared once for a recipe (`prepare`, optional; None sends every launch through
        #: `launch`). A prepared launch records on a tape too (each runtime sees to it).
        self.prepare = getattr(runtime, "prepare", None)
        self.stats = dict.fromkeys(STAT_NAMES, 0)
        #: the Program of the last fused launch (introspection, tests)
        self.last_program: Program | None = None
        #: elements per item of vector kernels (4 or 8), or 0 for scalar kernels only
        #: (`BURN_FUSION_VECTOR=0|4|8`, default 4; the bandwidth script compares them)
        self.vector_width = _vector_width(os.environ.get("BURN_FUSION_VECTOR", "4"))
        #: pass-through keys (previous op, op, input shapes, dtype names): ops seen running
        #: alone as a one-op plan `PASS_AFTER` times in that context (`_learn`)
        self.solo: set = set()
        self.seen_alone: dict = {}
        self.last_op = None  # the op recorded (or passed through) last: the context of a key
        #: the recipes by recorded op stream (`_recipe.Sig`); `sig` is the pending plan's prefix
        #: (None once a forced reduction rewrote the plan: its flush takes `plan_key`)
        self.sig_root = Sig()
        #: an input's layout in a signature: the runtime's `layout_key` (an attribute) where it
        #: has one, else its `layout` (with shape and dtype, either determines the layout)
        self.layout_key = getattr(runtime, "layout_key", None) or runtime.layout
        self._reset()

    def _learn(self, key) -> None:
        """A plan of one op ran: after `PASS_AFTER` such plans with the same key, the op passes
        through (a training step repeats its op sequence, so the first steps teach the rest)."""
        if not PASS_THROUGH:
            return
        n = self.seen_alone.get(key, 0) + 1
        if n >= PASS_AFTER:
            if len(self.solo) >= MAX_SOLO:
                self.solo.clear()
            self.solo.add(key)
            self.seen_alone.pop(key, None)
        else:
            if len(self.seen_alone) >= MAX_SOLO:
                self.seen_alone.clear()
            self.seen_alone[key] = n

    def _reset(self) -> None:
        self.shape = None
        # (op, refs, dtype name, out name, scalars, weakref of the result, result shape)
        self.nodes: list = []
        self.inputs: list = []  # inner primitives
        self.in_ids: dict[int, int] = {}
        self.in_owner: list = []  # weakref of an owned input's handle (in-place candidate)
        #: (node indices, dim) of the plan's pending reductions: all along one dim of the plan's
        #: whole shape (one row kernel reduces them all)
        self.red: tuple | None = None
        self.first = None  # the pass-through key of the plan's first recorded op
        if self.sig_root.tree[0] >= MAX_SIGS:  # a model with ever-new shapes: start afresh
            self.sig_root = Sig()
        self.sig = self.sig_root

    # -- recording ------------------------------------------------------------------------------
    def record(self, op: str, tensors, scalars, out_dtype) -> FusionTensor | None:
        """Record `op` over handles `tensors`; None when it cannot be fused (the caller then runs
        it unfused)."""
        x = tensors[0]
        if out_dtype is None:
            out_dtype = x.dtype if OPS[op].out == "T" else _BOOL
        names = DTYPE_NAMES
        xname = names.get(x.dtype) or _name(x.dtype)
        oname = xname if out_dtype is x.dtype else names.get(out_dtype) or _name(out_dtype)
        solo = self.solo
        if solo and not self.nodes:
            # An op that ran alone the last time it came after the same op, with the same
            # shapes: record + plan + flush would only end in the inner op, so run that now.
            # (First: a key is only learned from an op that passed the checks below, and an
            # op that fails them runs unfused all the same, so they need not run again.)
            for t in tensors:
                if t.prim is None:
                    break
            else:
                key = (self.last_op, op, _shapes(tensors), xname, oname)
                if key in solo:
                    self.last_op = op
                    self.stats["ops_passed_through"] += 1
                    return None
        shape = x.shape
        for t in tensors[1:]:
            if t.shape != shape:
                shape = tuple(max(a, b) if 0 not in (a, b) else 0 for a, b in zip(shape, t.shape))
        n = 1
        for d in shape:
            n *= d
        if n == 0 or n > _MAX_N:
            return None
        if oname not in FUSABLE_DTYPES or xname not in FUSABLE_DTYPES:
            return None
        for t in tensors:
            if t.dtype is not x.dtype and _name(t.dtype) not in FUSABLE_DTYPES:
                return None
        with self.lock:
            nodes = self.nodes
            if nodes:
                new_inputs = 0
                for t in tensors:
                    if t.prim is not None:
                        new_inputs += 1
                merged = shape if shape == self.shape else _merge(self.shape, shape)
                if (
                    merged is None
                    or (self.red is not None and merged != self.shape)
                    or len(nodes) >= MAX_OPS
                    or len(self.inputs) + new_inputs > MAX_INPUTS
                ):
                    self.flush()
                    nodes = self.nodes
                else:
                    self.shape = merged
            refs = ()
            for t in tensors:
                if t.prim is None:
                    if t.node is None:
                        raise RuntimeError(
                            "burn_fusion: the fused kernel computing an input failed (see the "
                            "first error raised by that flush); the tensor has no value"
                        )
                    if t.stream is not self:
                        t.stream.flush()
                if t.prim is None:
                    refs += (t.node,)
                else:  # `-self._input(t) - 1`, inline
                    k = self.in_ids.get(id(t.prim))
                    if k is None:
                        k = self._input(t)
                    refs += (-k - 1,)
            j = len(nodes)
            if not j:
                self.shape = shape
                # what the pass-through learns from, should this op run alone
                self.first = (self.last_op, op, _shapes(tensors), xname, oname)
            out = _new_handle(FusionTensor)  # `pending(...)`, inline: once per recorded op
            out.shape = shape
            out.dtype = out_dtype
            out.prim = None
            out.node = j
            out.stream = self
            out.owned = False
            sig = self.sig
            if sig is not None:  # `sig.step(...)`, inline; the operands' dtypes and shapes are
                tok = (op, refs, oname)  # their own steps' (an input's or a node's)
                nxt = sig.next.get(tok)
                self.sig = nxt if nxt is not None else sig.step(tok)
            nodes.append((op, refs, xname, oname, scalars, weakref.ref(out), shape))
            self.last_op = op
            self.stats["ops_recorded"] += 1
            return out

    def _input(self, t: FusionTensor) -> int:
        key = id(t.prim)
        k = self.in_ids.get(key)
        if k is None:
            p = t.prim
            k = self.in_ids[key] = len(self.inputs)
            self.inputs.append(p)
            self.in_owner.append(weakref.ref(t) if t.owned else None)
            sig = self.sig
            if sig is not None:  # the input's layout is part of the plan's structure
                dt = p.dtype
                tok = (p.shape, self.layout_key(p), DTYPE_NAMES.get(dt) or _name(dt))
                nxt = sig.next.get(tok)  # `sig.step(tok)`, inline
                self.sig = nxt if nxt is not None else sig.step(tok)
        return k

    def escape(self, t: FusionTensor) -> None:
        """`t`'s buffer was handed to an inner op (which may keep a view of it): never write it
        in place."""
        t.owned = False
        with self.lock:
            k = self.in_ids.get(id(t.prim))
            if k is not None:
                self.in_owner[k] = None

    # -- execution ------------------------------------------------------------------------------
    def flush(self) -> None:
        """Compile (or reuse) and launch the kernel of the pending plan."""
        with self.lock:
            if not self.nodes:
                return
            nodes, inputs, owners, red = self.nodes, self.inputs, self.in_owner, self.red
            first, sig = self.first, self.sig
            self._reset()
            self.stats["flushes"] += 1
            if len(nodes) == 1 and self.inner is not None:
                t = nodes[0][5]()
                if t is None:
                    return
                if first is not None and first[1] == nodes[0][0]:
                    self._learn(first)
                try:
                    self._run_one(nodes[0], inputs, t)
                except BaseException:
                    t.node = None
                    raise
                return
            results, j = [], 0
            for nd in nodes:  # the results someone still holds
                t = nd[5]()
                if t is not None:
                    results.append((j, t))
                j += 1
            if not results:
                return
            try:
                self._run(nodes, inputs, owners, results, red, sig)
            except BaseException:
                for _, t in results:  # no value will come: mark them, so a use raises clearly
                    if t.prim is None:
                        t.node = None
                raise

    def _run_one(self, node, inputs, t) -> None:
        """A plan of one op gains nothing from a generated kernel: the inner backend's own
        (already compiled) kernel runs it."""
        op, refs, _, out, scalars = node[:5]
        args = [inputs[-r - 1] for r in refs]
        if op in REDUCE_OPS:  # a reduction of a materialised input alone: (x, dim)
            op = INNER_REDUCE[op]
            args += scalars
        elif OPS[op].out == "D":
            args.append(DType.from_any(out))
        else:
            args += scalars
        t.prim = getattr(self.inner, op)(*args)
        t.node = None
        self.stats["kernels_launched"] += 1
        self.stats["plans_run_unfused"] += 1

    def launch(self, kernel, n, ints, outs, ins, scalars, groups=None, items=None) -> None:
        """A fused launch through the runtime's general `launch` (same arguments)."""
        self.rt.launch(kernel, n, ints, outs, ins, scalars, groups=groups, items=items)

    def _run(self, nodes, inputs, owners, results, red, sig=None) -> list:
        """Launch `results` [(node, handle)] of plan `nodes`: its recipe from the cache (built
        on a miss, `_recipe.py`), then the values. Returns the results' buffers. `sig`: the
        plan's recorded prefix (`_recipe.Sig`), whose recipes need only the rest of the key;
        None: the whole structural key (`plan_key`)."""
        roots = tuple([j for j, _ in results])
        if sig is not None:
            key = (roots, dropped(owners), red, self.vector_width)
            cache, bound = sig.recipes, MAX_PER_SIG
        else:
            key = plan_key(self, nodes, inputs, owners, roots, red)
            cache, bound = self.recipes, MAX_RECIPES
        rec = cache.get(key)
        if rec is None:
            rec = _recipe.build(self, nodes, inputs, owners, results, red)
            if len(cache) >= bound:
                cache.clear()
            cache[key] = rec
        if rec.one >= 0:  # one op is needed: the inner backend's kernel runs it
            t = results[0][1]
            self._run_one(nodes[rec.one], inputs, t)
            return [t.prim]
        return _recipe.run(self, rec, nodes, inputs, results)
