"""float64 reference of the CTC loss: the forward (alpha) recursion of Graves et al. 2006,
one sample, one time step and one extended-label state at a time (never a backend's code)."""

from __future__ import annotations

import math

import numpy as np


def _lse(*xs):
    m = max(xs)
    if m == -math.inf:
        return -math.inf
    return m + math.log(sum(math.exp(x - m) for x in xs))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0) -> np.ndarray:
    """-log p(target_b | log_probs[:input_length_b, b]) per sample (inf without alignment)."""
    lp = np.asarray(log_probs, np.float64)
    out = []
    for b in range(lp.shape[1]):
        labels = list(np.asarray(targets)[b, : int(target_lengths[b])])
        ext = [blank]
        for lab in labels:
            ext += [int(lab), blank]
        s_len = len(ext)
        alpha = [-math.inf] * s_len
        alpha[0] = lp[0, b, ext[0]]
        if s_len > 1:
            alpha[1] = lp[0, b, ext[1]]
        for t in range(1, int(input_lengths[b])):
            new = []
            for s in range(s_len):
                terms = [alpha[s]]
                if s >= 1:
                    terms.append(alpha[s - 1])
                if s >= 2 and ext[s] != blank and ext[s] != ext[s - 2]:
                    terms.append(alpha[s - 2])
                new.append(_lse(*terms) + lp[t, b, ext[s]])
            alpha = new
        end = _lse(alpha[-1], alpha[-2]) if s_len > 1 else alpha[-1]
        out.append(-end)
    return np.array(out)
