"""`module.ctc_loss` (Burn's `burn::tensor::module::ctc_loss`): argument checks, then the
backend op `ctc_loss` (`_ops_ctc.py`)."""

from __future__ import annotations

import numpy as np

from ._dtype import Float, Int
from ._errors import TensorCheckError


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank: int = 0):
    """CTC negative log likelihood per sample (no reduction).

    Args:
        log_probs: Float `[time, batch, classes]` log-probabilities (e.g. `log_softmax(x, 2)`),
            classes including the blank.
        targets: Int `[batch, max_target_len]` labels, padded; never the blank.
        input_lengths: Int `[batch]`, each in [1, time].
        target_lengths: Int `[batch]`, each in [0, max_target_len].
        blank: the blank class, in [0, classes).

    Returns:
        Float `[batch]`: -log p(target | input); +inf where no alignment exists (the input is
        shorter than the labels plus one blank between each repeated pair), as torch.

    The lengths and targets are read to the host (they shape the recursion), so every check
    below runs on every backend.
    """
    from ._tensor import Tensor

    op = "ctc_loss"
    named = {
        "log_probs": (log_probs, Float, 3),
        "targets": (targets, Int, 2),
        "input_lengths": (input_lengths, Int, 1),
        "target_lengths": (target_lengths, Int, 1),
    }
    problems = []
    for name, (t, kind, rank) in named.items():
        if not isinstance(t, Tensor) or t.kind is not kind or t.rank() != rank:
            got = f"{t.kind.value} {t.dims()}" if isinstance(t, Tensor) else type(t).__name__
            problems.append(f"{name} must be a rank-{rank} {kind.value} tensor, got {got}")
    if problems:
        raise TensorCheckError(op, problems)
    t_max, n, c = log_probs.dims()
    lmax = targets.dims()[1]
    for name, t, want in (
        ("targets", targets, n),
        ("input_lengths", input_lengths, n),
        ("target_lengths", target_lengths, n),
    ):
        if t.dims()[0] != n:
            problems.append(f"{name} has batch {t.dims()[0]}, log_probs has {want}")
        if t.device is not log_probs.device:
            problems.append(f"{name} is on {t.device!r}, log_probs on {log_probs.device!r}")
    if not 0 <= int(blank) < c:
        problems.append(f"blank {blank} out of range for {c} classes")
    if problems:
        raise TensorCheckError(op, problems)
    il = input_lengths.to_data().array.astype(np.int64)
    tl = target_lengths.to_data().array.astype(np.int64)
    tg = targets.to_data().array.astype(np.int64)
    bad = [
        f"input_lengths[{b}] = {il[b]} not in [1, {t_max}]"
        for b in range(n)
        if not 1 <= il[b] <= t_max
    ]
    bad += [
        f"target_lengths[{b}] = {tl[b]} not in [0, {lmax}]"
        for b in range(n)
        if not 0 <= tl[b] <= lmax
    ]
    for b in range(n):
        labels = tg[b, : max(0, min(tl[b], lmax))]
        if np.any((labels < 0) | (labels >= c) | (labels == blank)):
            bad.append(
                f"targets[{b}] holds {labels.tolist()}: labels must be in [0, {c}) and not "
                f"the blank {blank}"
            )
    if bad:
        raise TensorCheckError(op, bad)
    p = log_probs._d.backend.ctc_loss(
        log_probs._p, targets._p, input_lengths._p, target_lengths._p, int(blank)
    )
    return Tensor._make(p, Float, log_probs._d)
