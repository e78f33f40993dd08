"""Reductions, arg ops, scans and sorting: launchers over burn_gpu's reduction kernels
(`burn_gpu.reduce_program`, rendered in the OpenCL dialect), and its column reductions
(`burn_gpu.col_program`) for sums / means / max / min along a dim other than the last with few
outputs and a long dim (`burn_gpu.use_cols`)."""

from __future__ import annotations

import math

import numpy as np
from burn_gpu import COL_OPS, col_plan, col_program, reduce_program, use_cols

from . import _ew
from ._array import ClArray
from ._plan import Plan, own_kernel, remember


def _kernel(rt, dt, idt, name):
    dt, idt = np.dtype(dt), np.dtype(idt)
    key = ("reduce", dt.str, idt.str, rt.wg)
    return rt.kernel(key, name, lambda: render(dt, idt, rt.wg))


def render(dt: np.dtype, idt: np.dtype, rwg: int) -> str:
    return reduce_program(np.dtype(dt).name, np.dtype(idt).name, rwg, "opencl")


def _col_kernel(rt, dt, name):
    dt = np.dtype(dt)
    key = ("cols", dt.str, rt.wg)
    return rt.kernel(key, name, lambda: col_program(dt.name, rt.wg, "opencl"))


def _accumulator(dt: np.dtype) -> np.dtype:
    """The type the column kernels' partials are kept in (their compute type `T`)."""
    return np.dtype(np.float32) if dt.name in ("float16", "bfloat16") else dt


def reduce_cols(x: ClArray, out: ClArray, op: str, outer: int, n: int, inner: int, div: int):
    """`op` of contiguous x as [outer, n, inner] along n into `out` by the column kernels: one
    launch, or two with per-chunk partials (in float32 for half storage) in a scratch buffer."""
    rt = x.rt
    plan = col_plan(outer, n, inner, rt.wg)
    i32 = np.int32
    part = out
    if plan.chunks > 1:
        part = ClArray.empty(rt, (outer * plan.chunks * inner,), _accumulator(x.dtype))
    geo = [i32(outer), i32(n), i32(inner), i32(plan.chunks), i32(plan.ltx), i32(div)]
    k = _col_kernel(rt, x.dtype, f"{op}_cols")
    rt.launch(k, (plan.groups * rt.wg,), (rt.wg,), [out.buf, part.buf, x.buf, i32(x.offset), *geo])
    if plan.chunks > 1:
        k = _col_kernel(rt, x.dtype, f"{op}_cols_fin")
        fin = [i32(0), i32(outer), i32(plan.chunks), i32(inner), i32(plan.ltx), i32(div)]
        rt.launch(k, (plan.fin_groups * rt.wg,), (rt.wg,), [out.buf, part.buf, *fin])
    return out


def _split(x: ClArray, dim: int):
    """(contiguous x, outer, n, inner) for a reduction along `dim`."""
    x = _ew.contiguous(x)
    shape = x.shape
    return x, math.prod(shape[:dim]), shape[dim], math.prod(shape[dim + 1 :])


def _kept(shape, dim):
    return tuple(1 if d == dim else s for d, s in enumerate(shape))


def reduce_dim(x: ClArray, dim: int, op: str, div: int = 1, idt=np.int32, key=None) -> ClArray:
    """`op` in sum/prod/max/min along `dim` (dim kept); `div` divides a sum (mean).

    With `key`, a single-launch reduction of an already contiguous x is recorded as a plan.
    """
    rt = x.rt
    if key is not None and not x.is_contiguous():
        key = None
    x, outer, n, inner = _split(x, dim)
    outs = outer * inner
    out = ClArray.empty(rt, _kept(x.shape, dim), x.dtype)
    if outs == 0:
        return out
    i32 = np.int32
    if op in COL_OPS and use_cols(outer, n, inner) and not rt.wg & (rt.wg - 1):
        # few outputs, long columns: tiles over the columns, chunks of n (no recorded plan;
        # the tiles need a power-of-two group size, which every device we know of has)
        return reduce_cols(x, out, op, outer, n, inner, div)
    if n >= 4096 or (n >= 256 and outs <= 64):
        # few long rows: a work-group per (row, chunk), partials reduced by a second launch
        wg = rt.wg
        chunks = max(1, min(-(-n // (wg * 8)), rt.max_groups // outs))
        per = -(-n // chunks)
        chunks = -(-n // per)  # no empty chunk
        k = _kernel(rt, x.dtype, idt, f"{op}_tree")
        target = out if chunks == 1 else ClArray.empty(rt, (outs * chunks,), x.dtype)
        args = [target.buf, x.buf, i32(x.offset), i32(outer), i32(n), i32(inner)]
        rt.launch(k, (outs * chunks * wg,), (wg,), args + [i32(chunks), i32(div)])
        if chunks == 1 and key is not None:
            _remember(
                rt,
                key,
                x,
                out,
                f"{op}_tree",
                idt,
                (outs * wg,),
                (wg,),
                [x.offset, outer, n, inner, chunks, div],
            )
        if chunks > 1:
            args = [out.buf, target.buf, i32(0), i32(outs), i32(chunks), i32(1)]
            rt.launch(k, (outs * wg,), (wg,), args + [i32(1), i32(div)])
        return out
    k = _kernel(rt, x.dtype, idt, f"{op}_rows")
    args = [out.buf, x.buf, i32(x.offset), i32(outer), i32(n), i32(inner), i32(div)]
    rt.launch1d(k, outs, args)
    if key is not None:
        wg = rt.wg
        g = min((outs + wg - 1) // wg, rt.max_groups) * wg
        _remember(rt, key, x, out, f"{op}_rows", idt, (g,), (wg,), [x.offset, outer, n, inner, div])
    return out


def _remember(rt, key, x, out, name, idt, gsize, lsize, ints) -> None:
    dt, idt = x.dtype, np.dtype(idt)
    k = own_kernel(rt, ("reduce", dt.str, idt.str, rt.wg), name, lambda: render(dt, idt, rt.wg))
    for i, v in enumerate(ints):
        k.set_arg(2 + i, np.int32(v))
    remember(rt, key, Plan(rt, k, out.shape, out.dtype, out.strides, gsize, lsize, 0, first=0))


def _flat(x: ClArray) -> ClArray:
    return _ew.contiguous(x).reshape_view((x.size,))


def _make(op: str, mean: bool = False):
    tag = op + ("_mean" if mean else "")

    def dim_op(self, x, dim):
        key = (tag, dim, x.dtype, x.shape, x.strides, x.offset)
        plan = x.rt.plans.get(key)
        if plan is not None:
            return plan(x.buf)
        return reduce_dim(x, dim, op, x.shape[dim] if mean else 1, key=key)

    def full_op(self, x):
        key = (tag, None, x.dtype, x.shape, x.strides, x.offset)
        plan = x.rt.plans.get(key)
        if plan is not None:
            return plan(x.buf)
        if not x.is_contiguous():
            key = None
        flat = _flat(x)
        return reduce_dim(flat, 0, op, x.size if mean else 1, key=key)

    return dim_op, full_op


def _argop(name):
    def op(self, x, dim):
        rt = x.rt
        idt = self.int_dtype.np
        x, outer, n, inner = _split(x, dim)
        out = ClArray.empty(rt, _kept(x.shape, dim), idt)
        if out.size == 0 or n == 0:
            return out
        k = _kernel(rt, x.dtype, idt, f"{name}_rows")
        i32 = np.int32
        args = [out.buf, x.buf, i32(x.offset), i32(outer), i32(n), i32(inner)]
        rt.launch1d(k, outer * inner, args)
        return out

    return op


def _scan(name):
    def op(self, x, dim):
        rt = x.rt
        x, outer, n, inner = _split(x, dim)
        out = ClArray.empty(rt, x.shape, x.dtype)
        if out.size == 0:
            return out
        k = _kernel(rt, x.dtype, self.int_dtype.np, name)
        i32 = np.int32
        args = [out.buf, x.buf, i32(x.offset), i32(outer), i32(n), i32(inner)]
        rt.launch1d(k, outer * inner, args)
        return out

    return op


def sort_with_indices(self, x, dim, descending=False):
    """Stable merge sort along `dim` (numpy's order: NaN last ascending, first descending)."""
    rt = x.rt
    idt = self.int_dtype.np
    rank = x.ndim
    perm = [d for d in range(rank) if d != dim] + [dim]
    inv = [perm.index(d) for d in range(rank)]
    xp = _ew.contiguous(x.permute(perm))
    n = xp.shape[-1] if rank else 1
    total = xp.size
    if total == 0 or n <= 1:
        idx = _ew.full(rt, xp.shape, 0, idt)
        return xp.permute(inv), idx.permute(inv)
    k = _kernel(rt, x.dtype, idt, "merge_pass")
    keys_in, idx_in = xp, None
    width = 1
    i32 = np.int32
    while width < n:
        keys_out = ClArray.empty(rt, xp.shape, x.dtype)
        idx_out = ClArray.empty(rt, xp.shape, idt)
        src_idx = idx_in.buf if idx_in is not None else idx_out.buf  # unread on the first pass
        koff = keys_in.offset
        if koff:  # the kernel reads rows from element 0 of its buffer
            keys_in = _ew.run("copy", x.dtype, x.dtype, keys_in.shape, [keys_in])
        args = [keys_out.buf, idx_out.buf, keys_in.buf, src_idx, i32(total), i32(n), i32(width)]
        rt.launch1d(k, total, args + [i32(1 if descending else 0), i32(idx_in is None)])
        keys_in, idx_in = keys_out, idx_out
        width *= 2
    return keys_in.permute(inv), idx_in.permute(inv)


def _sort(self, x, dim, descending=False):
    return sort_with_indices(self, x, dim, descending)[0]


def _argsort(self, x, dim, descending=False):
    return sort_with_indices(self, x, dim, descending)[1]


def reduce_ops() -> dict:
    ops = {}
    for prefix in ("float_", "int_"):
        for op in ("sum", "prod", "max", "min"):
            ops[f"{prefix}{op}_dim"], ops[f"{prefix}{op}"] = _make(op)
        ops[f"{prefix}mean_dim"], ops[f"{prefix}mean"] = _make("sum", mean=True)
        ops[f"{prefix}argmax"] = _argop("argmax")
        ops[f"{prefix}argmin"] = _argop("argmin")
        for name in ("cumsum", "cumprod", "cummax", "cummin"):
            ops[f"{prefix}{name}"] = _scan(name)
        ops[f"{prefix}sort_with_indices"] = sort_with_indices
        ops[f"{prefix}sort"] = _sort
        ops[f"{prefix}argsort"] = _argsort
    return ops
