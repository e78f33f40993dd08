"""Fused reductions on the lazy stream: a reduction along a dim is a *node* of the plan, so the
elementwise ops that consume its [rows, 1] result join the same plan and the flush runs one row
kernel (`_render_row.py`): reduce the row, then the epilogue over the row.

A plan holds at most one pending reduction, over the plan's whole shape `S`: recording a second
one first runs the pending one alone (`force_reduction`), whose result then becomes an input of
the plan. So softmax (`e = (x - x.max_dim(d)).exp(); e / e.sum_dim(d)`) is the max kernel, then
one row kernel for the sum and the division; layer norm is the mean kernel, then the variance
and the normalisation in one row kernel; RMS norm is a single row kernel.
"""

from __future__ import annotations

import weakref

import numpy as np
from burn_gpu import FUSABLE_DTYPES, Node, Program, Reduction
from burn_gpu import dtype_name as _name

from . import _stream as _s  # (a cycle: read at call time, never at import)
from ._stream_plan import _merge
from ._tensor import FusionTensor, pending, ready

#: a row kernel's reduction node -> the inner backend's op that runs it alone on an input
INNER_REDUCE = {
    "reduce_sum": "float_sum_dim",
    "reduce_mean": "float_mean_dim",
    "reduce_max": "float_max_dim",
    "reduce_min": "float_min_dim",
}
_MAX_N = 2**31 - 1
#: pending reductions per plan (each takes a local/shared array of the work-group's size)
MAX_REDUCTIONS = 8


def _dead():
    return None


class ReduceMixin:
    """The reduction half of `Stream` (its attributes: nodes, inputs, red, shape, rt, ...)."""

    def reduce_dim(self, t: FusionTensor, dim: int, kind: str) -> FusionTensor | None:
        """Record `kind` ("sum", "mean", "max", "min") of `t` along `dim` (kept, size 1) as a
        pending node of this stream's plan. None when it runs on the inner backend instead:
        not a float dtype a kernel can hold, empty or too large, or a ready `t` that does not
        fit the current plan (recording it would flush that plan for nothing)."""
        name = _name(t.dtype)
        if (t.dtype.kind != "f" and name != "bfloat16") or name not in FUSABLE_DTYPES:
            return None  # bfloat16 (ml_dtypes' kind "V") is a float, fused like float16
        shape = t.shape
        if not -len(shape) <= dim < len(shape):
            raise IndexError(f"burn_fusion: dim {dim} out of range for a tensor of shape {shape}")
        dim %= len(shape)
        n = 1
        for d in shape:
            n *= d
        if n == 0 or n > _MAX_N:
            return None
        op = "reduce_" + kind
        if t.prim is not None and not self.nodes and self.solo:
            # the pass-through (`Stream.record`): a reduction of a ready tensor that ran alone
            key = (self.last_op, op, (shape, dim), name, name)
            if key in self.solo:
                self.last_op = op
                self.stats["ops_passed_through"] += 1
                return None
        with self.lock:
            if self.nodes:
                fits = (
                    _merge(self.shape, shape) == shape
                    and len(self.nodes) < _s.MAX_OPS
                    and len(self.inputs) < _s.MAX_INPUTS
                )
                # a reduction along the pending ones' dim joins them (one row kernel reduces
                # them all, `_render_rows.py`); another dim runs them first
                joins = self.red is None or (
                    self.red[1] == dim and len(self.red[0]) < MAX_REDUCTIONS
                )
                if t.prim is not None and (not fits or not joins):
                    return None
                if not fits:
                    self.flush()  # a pending `t` is materialised by it (the caller holds it)
                elif not joins:
                    self.force_reduction()
            if t.prim is None and t.node is None:
                raise RuntimeError(
                    "burn_fusion: the fused kernel computing an input failed (see the first "
                    "error raised by that flush); the tensor has no value"
                )
            ref = t.node if t.prim is None else -self._input(t) - 1
            self.shape = shape
            j = len(self.nodes)
            out_shape = tuple(1 if d == dim else s for d, s in enumerate(shape))
            out = pending(out_shape, t.dtype, self, j)
            node = (op, (ref,), name, name, (dim,), weakref.ref(out), shape)
            if self.sig is not None:  # the plan's structure (`_recipe.Sig`), its dim too
                self.sig = self.sig.step((op, (ref,), name, name, shape, dim))
            self.nodes.append(node)
            if j == 0:
                self.first = (self.last_op, op, (shape, dim), name, name)
            self.last_op = op
            self.red = ((j,), dim) if self.red is None else ((*self.red[0], j), dim)
            self.stats["ops_recorded"] += 1
            return out

    def force_reduction(self) -> None:
        """Run the plan's pending reductions now (one row kernel, or the inner backend's
        reduction for one of an input); their results become inputs of the plan (the ops that
        read them stay pending)."""
        js, dim = self.red
        self.red = None
        self.sig = None  # the plan is rewritten below: its flush takes the whole key
        nodes = self.nodes
        results = []
        for j in js:
            dt, wref, shape = nodes[j][2], nodes[j][5], nodes[j][6]
            t = wref()
            if t is None:  # dropped, but maybe read by the ops after it: computed all the same
                t = _Shape(tuple(1 if d == dim else s for d, s in enumerate(shape)), None, dt)
            results.append((j, t))
        prims = self._run(nodes, self.inputs, None, results, (js, dim))
        for j, prim in zip(js, prims):
            k = len(self.inputs)
            self.in_ids[id(prim)] = k
            self.inputs.append(prim)
            self.in_owner.append(None)
            for q in range(j + 1, len(nodes)):
                nd = nodes[q]
                if j in nd[1]:
                    nodes[q] = (nd[0], tuple(-k - 1 if r == j else r for r in nd[1]), *nd[2:])
            nodes[j] = (*nodes[j][:5], _dead, nodes[j][6])

    def reduce_all(self, t: FusionTensor, mean: bool) -> FusionTensor | None:
        """Sum (or mean) of every element of pending `t`, shape (1,): partial sums with the ops
        that make `t` inside (`t` is never written, the plan stays pending), then their sum.
        None when `t` is not a full-size float result of this stream's plan."""
        with self.lock:
            if t.prim is not None or t.stream is not self or t.shape != self.shape:
                return None
            if t.dtype.kind != "f" or t.dtype.itemsize == 2:
                return None  # half partial sums would round twice: the inner backend's sum
            if self.red is not None:
                self.force_reduction()
            g = self._gather(self.nodes, self.inputs, None, [t.node])
            if g["shape"] != t.shape:
                return None
            dt, L = _name(t.dtype), self.rt.reduce_local
            n = 1
            for d in t.shape:
                n *= d
            groups = min(-(-n // (L * 8)), 1024)
            chunk = -(-n // groups)
            j = len(g["nodes"])
            prog = Program(
                tuple(g["in_desc"]),
                len(t.shape) if g["ints_in"] else 0,
                (*g["nodes"], Node("reduce_sum", (g["remap"][t.node],), dt, dt)),
                ((j, -1, ()),),
            )
            layout = (list(t.shape) + g["ints_in"]) if g["ints_in"] else []
            parts = self._launch_stage(prog, n, [groups, chunk, 1, 1] + layout, g, (groups,), t)
            kind = "reduce_mean" if mean else "reduce_sum"
            p2 = Program(((dt, False),), 0, (Node(kind, (-1,), dt, dt),), ((0, -1, ()),))
            g2 = {"ins": [parts], "scalars": []}
            out = self._launch_stage(p2, groups, [1, groups, 1, n], g2, (1,), t)
            res = ready(out, owned=True)
            res.stream = self
            return res

    def _launch_stage(self, prog, n, ints, g, out_shape, like):
        rt = self.rt
        kernel = self.kernel(Reduction(prog, rt.reduce_local))
        out = rt.empty(out_shape, like.dtype)
        self.launch(
            kernel, n, ints, [out], g["ins"], g["scalars"], groups=min(ints[0], rt.max_groups)
        )
        self.stats["kernels_launched"] += 1
        self.stats["reductions_fused"] += 1
        return out


class _Shape:
    """Shape and dtype of a forced reduction's result whose handle may already be dead."""

    def __init__(self, shape, t, dt):
        self.shape = shape
        self.dtype = t.dtype if t is not None else np.dtype(dt)
