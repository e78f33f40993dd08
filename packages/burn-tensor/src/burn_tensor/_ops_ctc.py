"""`ctc_loss`: the CTC negative log likelihood as a default decomposition (Burn 0.21's
`ModuleOps::ctc_loss`), so every backend runs it and Autodiff differentiates it through its parts.

`ctc_loss(log_probs [T, N, C], targets [N, S] int, input_lengths [N] int, target_lengths [N]
int, blank) -> [N]`: per sample, -log of the summed probability of every alignment of its
target (blanks between and around the labels, repeats merged) to its first input_length steps.

The forward (alpha) recursion runs over the extended label sequence (blank, l1, blank, l2, ..,
blank) for the whole batch at once, one step of a few elementwise ops per time step. Impossible
states hold a large negative finite number instead of -inf, so no gradient meets inf - inf or
0 * inf; a sample without any alignment (input too short for its target) gets +inf (torch).
The lengths and targets are read to the host once (they shape the recursion).
"""

from __future__ import annotations

import numpy as np

from ._data import TensorData


def _dtype_of(x):
    from ._dtype import DType

    return DType.from_np(x.dtype)


class CtcOps:
    def ctc_loss(self, log_probs, targets, input_lengths, target_lengths, blank):
        t_max, n, _c = log_probs.shape
        dt = _dtype_of(log_probs)
        dev = self.device_of(log_probs)
        tg = self.int_into_data(targets).array.astype(np.int64)
        il = self.int_into_data(input_lengths).array.astype(np.int64).reshape(-1)
        tl = self.int_into_data(target_lengths).array.astype(np.int64).reshape(-1)
        lmax = tg.shape[1] if tg.ndim == 2 else 0
        s = 2 * lmax + 1
        ext = np.full((n, s), blank, np.int64)
        if lmax:
            ext[:, 1::2] = tg
        # a skip from s-2 to s is allowed onto a label that differs from the label before it
        skip = np.zeros((n, s), bool)
        if s > 2:
            skip[:, 2:] = (ext[:, 2:] != blank) & (ext[:, 2:] != ext[:, :-2])
        neg = float(-np.finfo(dt.np if dt.np.kind == "f" else np.float32).max / 4)

        def const(a, kind="float"):
            if kind == "float":
                return self.float_from_data(TensorData(np.asarray(a, dt.np)), dev)
            if kind == "bool":
                return self.bool_from_data(TensorData(np.asarray(a, bool)), dev)
            return self.int_from_data(TensorData(np.asarray(a, self.int_dtype.np)), dev)

        # e[t, b, s] = log_probs[t, b, ext[b, s]]
        idx = const(np.broadcast_to(ext[None], (t_max, n, s)), "int")
        e = self.float_gather(2, log_probs, idx)

        def step_e(t):
            sl = (slice(t, t + 1, 1), slice(0, n, 1), slice(0, s, 1))
            return self.float_reshape(self.float_slice(e, sl), (n, s))

        no_skip = const(~skip, "bool")
        start = np.full((n, s), neg)
        start[:, 0] = 0.0
        if s > 1:
            start[:, 1] = 0.0
        alpha = self.float_add(const(start), step_e(0)) if t_max else const(start)

        def shifted(k):
            """alpha moved k states right, the first k states impossible."""
            head = self.float_slice(alpha, (slice(0, n, 1), slice(0, s - k, 1)))
            return self.float_cat([const(np.full((n, k), neg)), head], 1)

        for t in range(1, t_max):
            terms = [alpha, shifted(1)]
            if s > 2:
                terms.append(self.float_mask_fill(shifted(2), no_skip, neg))
            m = terms[0]
            for x in terms[1:]:
                m = self.float_mask_where(m, self.float_greater(x, m), x)
            # the max is a constant of the logsumexp: no gradient goes through it
            m = self.float_detach(m)
            total = None
            for x in terms:
                ex = self.float_exp(self.float_sub(x, m))
                total = ex if total is None else self.float_add(total, ex)
            new = self.float_add(self.float_add(m, self.float_log(total)), step_e(t))
            # samples whose input ended keep their last alpha
            live = const(np.broadcast_to((t < il)[:, None], (n, s)), "bool")
            alpha = self.float_mask_where(alpha, live, new)
        # -log(alpha[2L] + alpha[2L - 1]) (just alpha[0] for an empty target)
        last = const(np.stack([2 * tl, np.maximum(2 * tl - 1, 0)], 1), "int")
        ends = self.float_gather(1, alpha, last)
        ends = self.float_mask_fill(ends, const(np.stack([tl < 0, tl == 0], 1), "bool"), neg)
        m = self.float_detach(self.float_max_dim(ends, 1))
        lse = self.float_add(
            m, self.float_log(self.float_sum_dim(self.float_exp(self.float_sub(ends, m)), 1))
        )
        loss = self.float_reshape(self.float_neg(lse), (n,))
        # no alignment: fewer steps than labels plus the blanks forced between repeats
        repeats = np.array(
            [int(np.sum(tg[b, 1 : tl[b]] == tg[b, : max(tl[b] - 1, 0)])) for b in range(n)], np.int64
        )
        impossible = il < tl + repeats
        return self.float_mask_fill(loss, const(impossible, "bool"), float("inf"))
