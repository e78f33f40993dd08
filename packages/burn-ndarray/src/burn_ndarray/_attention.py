"""NdArray's attention kernel: blocked, multi-threaded, never the whole [seq_q, seq_k] scores.

Forward: the work is cut into tasks of (batch item, a few heads, a block of <= `BLOCK_Q`
queries); each task walks the keys in blocks of <= `BLOCK_K` with an online softmax (running
max and sum per query, the accumulator rescaled when the max grows: flash attention's
recurrence), so at most [heads, BLOCK_Q, BLOCK_K] scores exist per task. Causal tasks stop at
their last visible key (about half the GEMM work of the full square) and mask only the keys past
the diagonal.

Backward: tasks of (batch item, a few heads) walk their queries in blocks, recompute the block's
probabilities over its visible keys (one [heads, block, seq_k] row block, the block's height
chosen so that it stays ~`SCORES_BACKWARD` elements), and accumulate dK and dV of their own heads:
no two tasks write the same gradient, so no locks and no partial sums to add.

Threads: the tasks are split into `num_threads` contiguous runs on the backend's pool, each run's
GEMMs on one BLAS thread (numpy's matmul and ufuncs release the GIL). Results do not depend on the
thread count (every task's arithmetic is fixed by the shape). Dtypes: float32 and float64 (others
take the default decomposition). Semantics as `burn_tensor`'s `AttentionOps` (masked = -inf, a
fully masked query gives 0, causal boundary at the bottom-right corner).
"""

from __future__ import annotations

import numpy as np

from . import _blas
from ._parallel import ranges
from ._threads import run_chunks

BLOCK_Q = 128
BLOCK_K = 1024
#: score elements per head group of a task, forward (heads are grouped up to this)
SCORES_FORWARD = 1 << 17
#: score elements of one backward row block per head ([block, seq_k])
SCORES_BACKWARD = 1 << 17
KERNEL_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))


def _visible(q1: int, sk: int, offset: int, causal: bool) -> int:
    """Keys [0, end) that a causal query block ending at q1 (exclusive) can see."""
    return min(sk, max(0, q1 + offset)) if causal else sk


def _mask_causal(s, q0: int, k0: int, offset: int) -> None:
    """-inf where key j > query i + offset in the block s [.., bq, bk] at (q0, k0)."""
    bq, bk = s.shape[-2], s.shape[-1]
    first_hidden = q0 + offset + 1 - k0  # the first hidden column of the block's first row
    if first_hidden >= bk:
        return
    tri = np.arange(bk)[None, :] >= (np.arange(bq)[:, None] + first_hidden)
    np.copyto(s, -np.inf, where=tri)


def _scores(qb, kb, scale, mask, q0, k0, offset, causal):
    """qb [nh, bq, d] @ kb [nh, bk, d]ᵗ * scale, masked -> [nh, bq, bk]."""
    s = np.matmul(qb, kb.transpose(0, 2, 1))
    s *= s.dtype.type(scale)
    if mask is not None:
        np.copyto(s, -np.inf, where=mask)
    if causal:
        _mask_causal(s, q0, k0, offset)
    return s


def _forward_task(q, k, v, out, mask, scale, causal, task):
    bi, h0, h1, q0, q1 = task
    sk = k.shape[2]
    offset = sk - q.shape[2]
    end = _visible(q1, sk, offset, causal)
    o = out[bi, h0:h1, q0:q1]
    if end == 0:
        o.fill(0)
        return
    qb = q[bi, h0:h1, q0:q1]
    dt = qb.dtype
    nh, bq = qb.shape[0], qb.shape[1]
    top = np.full((nh, bq, 1), -np.inf, dt)
    total = np.zeros((nh, bq, 1), dt)
    acc = None
    for k0, k1 in ((a, min(a + BLOCK_K, end)) for a in range(0, end, BLOCK_K)):
        mb = None if mask is None else mask[bi, h0:h1, q0:q1, k0:k1]
        s = _scores(qb, k[bi, h0:h1, k0:k1], scale, mb, q0, k0, offset, causal)
        new_top = np.maximum(top, s.max(axis=2, keepdims=True))
        # A row with nothing visible yet keeps max -inf: shift by 0 there (exp(-inf) = 0).
        shift = np.where(np.isneginf(new_top), dt.type(0), new_top)
        s -= shift
        np.exp(s, out=s)
        part = np.matmul(s, v[bi, h0:h1, k0:k1])
        if acc is None:
            acc, total = part, s.sum(axis=2, keepdims=True)
        else:
            alpha = np.exp(top - shift)
            acc *= alpha
            acc += part
            total *= alpha
            total += s.sum(axis=2, keepdims=True)
        top = new_top
    np.maximum(total, np.finfo(dt).tiny, out=total)
    np.divide(acc, total, out=o)


def _backward_task(q, k, v, g, dq, dk, dv, mask, scale, causal, task):
    bi, h0, h1 = task
    sq, sk = q.shape[2], k.shape[2]
    offset = sk - sq
    dt = q.dtype
    tiny = np.finfo(dt).tiny
    block = int(max(16, min(BLOCK_Q, SCORES_BACKWARD // max(sk, 1))))
    kh, vh = k[bi, h0:h1], v[bi, h0:h1]
    dkh, dvh = dk[bi, h0:h1], dv[bi, h0:h1]
    dkh.fill(0)
    dvh.fill(0)
    for q0 in range(0, sq, block):
        q1 = min(q0 + block, sq)
        end = _visible(q1, sk, offset, causal)
        if end == 0:
            dq[bi, h0:h1, q0:q1].fill(0)
            continue
        qb, gb = q[bi, h0:h1, q0:q1], g[bi, h0:h1, q0:q1]
        mb = None if mask is None else mask[bi, h0:h1, q0:q1, :end]
        p = _scores(qb, kh[:, :end], scale, mb, q0, 0, offset, causal)
        top = p.max(axis=2, keepdims=True)
        np.maximum(top, np.finfo(dt).min, out=top)
        p -= top
        np.exp(p, out=p)
        total = p.sum(axis=2, keepdims=True)
        np.maximum(total, tiny, out=total)
        p /= total
        dvh[:, :end] += np.matmul(p.transpose(0, 2, 1), gb)
        dp = np.matmul(gb, vh[:, :end].transpose(0, 2, 1))
        # dS = P * (dP - rowsum(P * dP)) * scale, in place in dp
        row = np.einsum("hij,hij->hi", p, dp)[..., None]
        dp -= row
        dp *= p
        dp *= dt.type(scale)
        np.matmul(dp, kh[:, :end], out=dq[bi, h0:h1, q0:q1])
        dkh[:, :end] += np.matmul(dp.transpose(0, 2, 1), qb)


def _head_group(heads: int, per_head: int, budget: int) -> int:
    """Heads per task: as many as keep the task's scores within `budget` elements."""
    return int(max(1, min(heads, budget // max(per_head, 1))))


def _run(fn, tasks, threads: int) -> None:
    """Run `fn(task)` for every task: contiguous runs of tasks on the pool, one BLAS thread
    each; on the calling thread alone when one run."""
    parts = min(threads, len(tasks))
    if parts <= 1:
        for t in tasks:
            fn(t)
        return
    runs = [(tasks[a:b],) for a, b in ranges(len(tasks), parts)]
    _blas.set_threads(1)
    try:
        run_chunks(lambda run: [fn(t) for t in run], runs)
    finally:
        _blas.set_threads(threads)


def _broadcast_mask(mask, shape):
    return None if mask is None else np.broadcast_to(mask, shape)


def forward(q, k, v, mask, causal: bool, scale: float, threads: int):
    """Attention forward. Shapes: q [b, h, sq, d], k [b, h, sk, d], v [b, h, sk, dv], mask
    Bool broadcastable to [b, h, sq, sk] or None -> [b, h, sq, dv]."""
    b, h, sq, _ = q.shape
    sk, dvd = k.shape[2], v.shape[3]
    out = np.empty((b, h, sq, dvd), q.dtype)
    m = _broadcast_mask(mask, (b, h, sq, sk))
    bq = min(sq, BLOCK_Q)
    nh = _head_group(h, bq * min(sk, BLOCK_K), SCORES_FORWARD)
    tasks = [
        (bi, h0, min(h0 + nh, h), q0, min(q0 + bq, sq))
        for bi in range(b)
        for h0 in range(0, h, nh)
        for q0 in range(0, sq, bq)
    ]
    _run(lambda t: _forward_task(q, k, v, out, m, scale, causal, t), tasks, threads)
    return out


def backward(q, k, v, mask, grad, causal: bool, scale: float, threads: int):
    """(dq, dk, dv) of `forward` for grad [b, h, sq, dv], the probabilities recomputed."""
    b, h, sq, _ = q.shape
    sk = k.shape[2]
    g = np.ascontiguousarray(grad, q.dtype)
    dq, dk, dv = np.empty(q.shape, q.dtype), np.empty(k.shape, q.dtype), np.empty(v.shape, q.dtype)
    m = _broadcast_mask(mask, (b, h, sq, sk))
    # Head groups small enough that the batch x groups tasks keep every thread busy.
    nh = _head_group(h, min(sq, BLOCK_Q) * sk, SCORES_BACKWARD)
    while nh > 1 and b * -(-h // nh) < 2 * threads:
        nh //= 2
    tasks = [(bi, h0, min(h0 + nh, h)) for bi in range(b) for h0 in range(0, h, nh)]
    _run(
        lambda t: _backward_task(q, k, v, g, dq, dk, dv, m, scale, causal, t), tasks, threads
    )
    return dq, dk, dv
