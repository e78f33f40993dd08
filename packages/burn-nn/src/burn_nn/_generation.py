"""Token generation: `Sampler` (temperature, top-k, top-p; seeded) and `generate`, the loop that
feeds a model its own tokens (Burn's text-generation example, as a library helper).

Sampling runs on the host in float64 with its own `numpy.random.Generator`, so a seed gives
the same tokens on every backend and whatever else draws random numbers meanwhile.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from burn_tensor import Int, Tensor


class Sampler:
    """Picks the next token of each sequence from its logits.

    Args:
        temperature: logits are divided by it; 0 picks the most likely token (greedy).
        top_k: keep only the k most likely tokens (None: all).
        top_p: keep the smallest set of most likely tokens whose probability reaches p
            (nucleus sampling; None or 1.0: all). Applied after top_k.
        seed: seed of the sampler's random stream (None: fresh entropy).

    Example:
        >>> s = Sampler(temperature=0.0)
        >>> s.sample(np.array([[0.1, 2.0, -1.0]])).tolist()
        [1]
    """

    def __init__(self, temperature=1.0, top_k=None, top_p=None, seed=None):
        problems = []
        if not isinstance(temperature, (int, float)) or not temperature >= 0.0:
            problems.append(f"temperature must be >= 0, got {temperature!r}")
        bad_k = isinstance(top_k, bool) or not isinstance(top_k, int) or top_k < 1
        if top_k is not None and bad_k:
            problems.append(f"top_k must be a positive int or None, got {top_k!r}")
        if top_p is not None and not (isinstance(top_p, (int, float)) and 0.0 < top_p <= 1.0):
            problems.append(f"top_p must be in (0, 1] or None, got {top_p!r}")
        if problems:
            raise ValueError("Sampler: " + "; ".join(problems))
        self.temperature = float(temperature)
        self.top_k = top_k
        self.top_p = top_p
        self.rng = np.random.default_rng(seed)

    def probabilities(self, logits) -> np.ndarray:
        """The distribution each row is drawn from [batch, vocab] (float64), after temperature,
        top-k and top-p; with temperature 0, one-hot on the first most likely token."""
        z = _checked(logits)
        if self.temperature == 0.0:
            # one-hot rows, written directly: `np.eye(vocab)[argmax]` built a vocab x vocab
            # float64 matrix per call (8 MB at vocab 1,000, 20 GB at 50,000)
            p = np.zeros(z.shape)
            p[np.arange(z.shape[0]), np.argmax(z, axis=1)] = 1.0
            return p
        z = z / self.temperature
        if self.top_k is not None and self.top_k < z.shape[1]:
            kth = np.sort(z, axis=1)[:, -self.top_k][:, None]
            z = np.where(z < kth, -np.inf, z)
        p = np.exp(z - z.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        if self.top_p is not None and self.top_p < 1.0:
            order = np.argsort(-p, axis=1, kind="stable")
            sorted_p = np.take_along_axis(p, order, axis=1)
            before = np.cumsum(sorted_p, axis=1) - sorted_p  # mass of the more likely tokens
            keep_sorted = before < self.top_p  # the first token is always kept
            keep = np.zeros_like(keep_sorted)
            np.put_along_axis(keep, order, keep_sorted, axis=1)
            p = np.where(keep, p, 0.0)
            p /= p.sum(axis=1, keepdims=True)
        return p

    def sample(self, logits) -> np.ndarray:
        """One token per row: int64 [batch]."""
        if self.temperature == 0.0:  # the one-hot row's draw is its token: no distribution
            return np.argmax(_checked(logits), axis=1).astype(np.int64)
        p = self.probabilities(logits)
        u = self.rng.random(p.shape[0])[:, None]
        # inverse CDF; the clip guards a cumulative sum that rounds below u at the end
        idx = (np.cumsum(p, axis=1) <= u).sum(axis=1)
        return np.minimum(idx, p.shape[1] - 1).astype(np.int64)


def _checked(logits) -> np.ndarray:
    """`logits` as float64 [batch, vocab], refused when not 2-D, empty or not finite."""
    z = np.asarray(logits, np.float64)
    if z.ndim != 2 or z.shape[1] == 0:
        raise ValueError(f"Sampler: logits must be [batch, vocab], got {list(z.shape)}")
    if not np.isfinite(z).all():
        raise ValueError("Sampler: logits hold NaN or infinity")
    return z


def generate(
    next_logits: Callable[[Tensor], Tensor],
    prompt: Tensor,
    max_new_tokens: int,
    sampler: Sampler | None = None,
    eos_token: int | None = None,
) -> Tensor:
    """Extend `prompt` Int [batch, seq] by up to `max_new_tokens` tokens.

    `next_logits(tokens)` gets the whole sequence so far (Int [batch, seq]) and returns the
    logits of its next token, [batch, vocab] (or [batch, seq, vocab], of which the last position
    is read). A model with an autoregressive cache (`TransformerEncoder.
    forward_autoregressive_inference`) computes only the new position of each call. With
    `eos_token`, a sequence that produced it keeps producing it, and the loop stops once every
    sequence has. Returns Int [batch, seq + generated].

    Example:
        >>> s = Sampler(0.8, top_k=40, seed=1)
        >>> tokens = generate(model_logits, prompt, 32, s)  # doctest: +SKIP
    """
    if prompt.kind is not Int or prompt.rank() != 2:
        raise ValueError(
            f"generate: prompt must be Int [batch, seq], got {prompt.kind.value} {prompt.dims()}"
        )
    n = max_new_tokens
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"generate: max_new_tokens must be an int >= 0, got {max_new_tokens!r}")
    sampler = sampler or Sampler()
    device = prompt.device
    tokens = prompt.numpy().astype(np.int64)
    done = np.zeros(tokens.shape[0], bool)
    for _ in range(max_new_tokens):
        logits = next_logits(Tensor.from_ints(tokens, device))
        dims = logits.dims()
        if len(dims) == 3:
            logits = logits.narrow(1, dims[1] - 1, 1).reshape([dims[0], dims[2]])
        elif len(dims) != 2:
            raise ValueError(f"generate: next_logits must return [batch, (seq,) vocab], got {dims}")
        nxt = sampler.sample(logits.numpy())
        if eos_token is not None:
            nxt = np.where(done, eos_token, nxt)
            done |= nxt == eos_token
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
        if eos_token is not None and done.all():
            break
    return Tensor.from_ints(tokens, device)


__all__ = ["Sampler", "generate"]
