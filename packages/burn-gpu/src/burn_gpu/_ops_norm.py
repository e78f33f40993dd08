"""Layer norm and its backward written once over the runtime contract: `GpuNormOps` launches
`layer_norm_rows` (`_norm.py`, one kernel) and the three backward kernels (`_norm_bwd.py`) in
place of burn-tensor's composed defaults (about ten and seventeen launches). On CUDA, rows of
at most `WARP_ROW_MAX` elements take the warp-per-row forms of the two row kernels."""

from __future__ import annotations

import numpy as np

from ._dtype_name import dtype_name
from ._norm import layer_norm_program
from ._norm_bwd import bwd_chunks, layer_norm_bwd_program
from ._softmax import FLOATS, row_group

#: most work items per row of the layer-norm kernels (a row's group is `row_group(d)`, up to
#: this); read per call, so `benches/probes/norm_kernels.py` compares sizes in-process (on the
#: H200, 32-256 items a row of [4096, 512] changed the kernels' time by under 10%)
NORM_GROUP = 256
#: CUDA: rows of at most this many elements run the warp-per-row kernels (`_norm.warp_rows`),
#: WARP_ROWS rows a block; read per call (0 turns them off, for the probe's comparison). On
#: the H200 (`benches/probes/norm_kernels.py`), rows of 512 (the transformer step's 12 layer
#: norms): forward 0.171 -> 0.067 ms, the backward's row kernel 0.281 -> 0.130 ms per step;
#: rows of 2048 float32: the backward 0.095 ms a call against 0.079 with a block per row
WARP_ROW_MAX = 1024
WARP_ROWS = 8


class GpuNormOps:
    """Mixin of a `GpuBackend`: `layer_norm` and `layer_norm_backward` as burn_gpu's kernels
    for float32, float64 and the half types (float32 statistics and sums for half storage);
    operands of mixed or other dtypes take the decomposition of the class after it. Inputs
    that are not contiguous are made so (views at an offset are read in place)."""

    def layer_norm(self, x, gamma, beta, epsilon):
        if not _eligible(x, gamma, beta):
            return super().layer_norm(x, gamma, beta, epsilon)
        rt = self.kernels_of(x)
        x, gamma = rt.contiguous(x), rt.contiguous(gamma)
        b = gamma if beta is None else rt.contiguous(beta)  # unread without beta
        dt = x.dtype
        out = rt.empty(x.shape, dt)
        d = x.shape[-1]
        rows = x.size // d
        if rows == 0:
            return out
        args = [out, x, gamma, b, (d, "int32"), (int(beta is not None), "int32"),
                (float(epsilon), _ct(dt)), *_offsets(rt, x, gamma, b)]  # fmt: skip
        key = ("layer_norm", _name(dt))
        if _warp(rt, d):
            k = rt.kernel(key, "layer_norm_rows_w", _render(dt, rt, False))
            rt.call(k, -(-rows // WARP_ROWS) * 32 * WARP_ROWS, [*args, (rows, "int64")],
                    group=32 * WARP_ROWS)  # fmt: skip
            return out
        k = rt.kernel(key, "layer_norm_rows", _render(dt, rt, False))
        # a power of two: OpenCL's tree halves it
        g = min(row_group(d), NORM_GROUP, rt.max_group)
        rt.call(k, rows * g, args, group=g)
        return out

    def layer_norm_backward(self, x, gamma, output_grad, epsilon):
        if not _eligible(x, gamma, None, output_grad) or output_grad.shape != x.shape:
            return super().layer_norm_backward(x, gamma, output_grad, epsilon)
        rt = self.kernels_of(x)
        x, gamma, g = rt.contiguous(x), rt.contiguous(gamma), rt.contiguous(output_grad)
        dt = x.dtype
        d = x.shape[-1]
        rows = x.size // d
        dx = rt.empty(x.shape, dt)
        dgamma, dbeta = rt.empty((d,), dt), rt.empty((d,), dt)
        ct = _ct(dt)
        render = _render(dt, rt, True)
        key = ("layer_norm_bwd", _name(dt))
        if rows == 0:  # sums over no rows: zeros
            z = rt.kernel(key, "layer_norm_bwd_cols", render)
            empty_part = rt.empty((1,), np.dtype(ct))
            rt.call(z, d, [dgamma, dbeta, empty_part, (0, "int64"), (d, "int32")], flat=True)
            return dx, dgamma, dbeta
        stats = rt.empty((2 * rows,), np.dtype(ct))
        xo, go, yo = _offsets(rt, x, gamma, g)
        args = [dx, stats, x, gamma, g, (d, "int32"), (float(epsilon), ct), xo, go, yo]
        if _warp(rt, d):
            k = rt.kernel(key, "layer_norm_bwd_rows_w", render)
            rt.call(k, -(-rows // WARP_ROWS) * 32 * WARP_ROWS, [*args, (rows, "int64")],
                    group=32 * WARP_ROWS)  # fmt: skip
        else:
            grp = min(row_group(d), NORM_GROUP, rt.max_group)
            k = rt.kernel(key, "layer_norm_bwd_rows", render)
            rt.call(k, rows * grp, args, group=grp)
        chunks, chunk = bwd_chunks(rows, d)
        items = chunks * d
        part = rt.empty((2 * items,), np.dtype(ct))
        k = rt.kernel(key, "layer_norm_bwd_part", render)
        args = [part, x, g, stats, (rows, "int64"), (d, "int32"), (chunk, "int64"),
                (items, "int64"), xo, yo]  # fmt: skip
        rt.call(k, items, args, flat=True)
        k = rt.kernel(key, "layer_norm_bwd_cols", render)
        rt.call(k, d, [dgamma, dbeta, part, (chunks, "int64"), (d, "int32")], flat=True)
        return dx, dgamma, dbeta


#: dtype -> its name (numpy's `dtype.name` costs ~1.5 us a read: three reads per op)
_name = dtype_name


def _ct(dt) -> str:
    """The compute type's dtype name of storage dtype `dt`."""
    return "float64" if _name(dt) == "float64" else "float32"


def _render(dt, rt, bwd: bool):
    if bwd:
        return lambda: layer_norm_bwd_program(_name(dt), rt.dialect)
    return lambda: layer_norm_program(_name(dt), rt.dialect)


def _warp(rt, d: int) -> bool:
    """Whether rows of `d` run the warp-per-row kernels (CUDA only: warp shuffles)."""
    return rt.dialect == "cuda" and d <= WARP_ROW_MAX and rt.max_group >= 32 * WARP_ROWS


def _offsets(rt, *arrays):
    return [(rt.layout(a)[1], "int64") for a in arrays]


def _eligible(x, gamma, beta, *more) -> bool:
    dt = x.dtype
    ops = (gamma, *more) if beta is None else (gamma, beta, *more)
    for a in ops:  # (a loop: `all(<genexpr>)` resumed a generator per operand)
        if a.dtype != dt:
            return False
    return (
        _name(dt) in FLOATS
        and len(x.shape) >= 1
        and x.shape[-1] > 0
        and tuple(gamma.shape) == (x.shape[-1],)
        and (beta is None or tuple(beta.shape) == (x.shape[-1],))
        and x.size < 2**31
    )
