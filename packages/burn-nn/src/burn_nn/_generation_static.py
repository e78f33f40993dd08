"""`generate_static`: the generation loop over a static cache (`TransformerStaticCache`), its
one-token decode step captured once and replayed where the backend can capture (Fusion), so a
token costs one replay instead of ~100 ops of Python (gpt-fast's and HF's "static cache +
CUDA graph" recipe).

The prompt runs eagerly (one call with all its positions); each later token is one call of the
same step with one position: the same shapes and ops every token, so `burn_fusion.capture`
records it once (two identical recordings, then replays). Sampling is `generate`'s (`Sampler`,
on the host), so greedy and seeded tokens equal `generate`'s, cached or not.
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

import numpy as np
from burn_tensor import Int, Tensor

from ._generation import Sampler
from ._static_cache import TransformerStaticCache


def can_capture(device) -> bool:
    """Whether steps on `device` can be captured: a Fusion backend, burn-fusion installed."""
    name = str(getattr(device.backend, "name", ""))
    return "fusion" in name and importlib.util.find_spec("burn_fusion") is not None


def _decoder(step, device, capture):
    if capture is False or capture is None and not can_capture(device):
        return step
    if callable(capture):  # a captured step of the caller's (its stats() are the caller's)
        return capture
    if not can_capture(device):
        raise ValueError(
            f"generate_static: capture=True needs a Fusion backend and burn-fusion "
            f"(pip install 'burn-nn[capture]'), got {getattr(device.backend, 'name', device)}"
        )
    from burn_fusion import capture as capture_step

    return capture_step(step, name=f"generate_static({getattr(step, '__qualname__', step)})")


def _last(logits: Tensor) -> np.ndarray:
    """The last position's logits [batch, vocab] on the host: sliced after the read, so a
    token costs no device op beyond the step (a narrow and a reshape on Fusion: two more ops
    of Python, which is what the captured step saves)."""
    z = logits.numpy()
    if z.ndim == 3:
        return z[:, -1]
    if z.ndim != 2:
        raise ValueError(f"generate_static: step must return logits [batch, (n,) vocab], got "
                         f"{list(z.shape)}")  # fmt: skip
    return z


def generate_static(
    step: Callable,
    model,
    cache: TransformerStaticCache,
    prompt: Tensor,
    max_new_tokens: int,
    sampler: Sampler | None = None,
    eos_token: int | None = None,
    capture=None,
) -> Tensor:
    """Extend `prompt` Int [batch, seq] by up to `max_new_tokens` tokens over a static cache.

    `step(model, tokens, position, cache) -> (logits, cache)` runs the new tokens Int [batch, n]
    whose first sits at `position` (Int tensor [1]) through the model (e.g. through
    `TransformerEncoder.forward_static_cache`) and returns the logits of the last position,
    [batch, vocab] (or [batch, n, vocab]), and the updated cache. It must be a function of its
    arguments (capture replays its device work, not its Python): everything that changes
    between tokens is an argument (tokens, position, cache), the model is passed in.

    Args:
        step: the step above; called once with the whole prompt (eagerly), then with one token.
        model: passed to `step` unchanged (a `Module`: capture guards its parameters).
        cache: `model`'s `new_static_cache(batch, max_len)`; prompt plus new tokens must fit in
            `max_len` (checked before any work).
        prompt, max_new_tokens, sampler, eos_token: as `generate`'s.
        capture: None (default) captures the one-token step where the backend can (Fusion with
            burn-fusion installed) and runs it eagerly otherwise; True requires capture; False
            never captures; a callable (e.g. `burn.capture(step)`, to read its `stats()`) is
            used for the one-token calls.

    Returns:
        Int [batch, seq + generated], the same tokens as `generate` with or without a cache.

    Example:
        >>> cache = enc.new_static_cache(batch_size=4, max_len=264)  # doctest: +SKIP
        >>> out = generate_static(step, model, cache, prompt, 256, Sampler(0.0))  # doctest: +SKIP
    """
    if not isinstance(prompt, Tensor) or prompt.kind is not Int or prompt.rank() != 2:
        got = f"{prompt.kind.value} {prompt.dims()}" if isinstance(prompt, Tensor) else prompt
        raise ValueError(f"generate_static: prompt must be Int [batch, seq], got {got}")
    n = max_new_tokens
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"generate_static: max_new_tokens must be an int >= 0, got {n!r}")
    if not isinstance(cache, TransformerStaticCache):
        raise ValueError(f"generate_static: cache must be a TransformerStaticCache "
                         f"(new_static_cache), got {type(cache).__name__}")  # fmt: skip
    batch, seq = prompt.dims()
    if cache.key and cache.key[0].dims()[0] != batch:
        raise ValueError(f"generate_static: the cache holds batch {cache.key[0].dims()[0]}, "
                         f"the prompt batch {batch}")  # fmt: skip
    if seq + n > cache.max_len:
        raise ValueError(f"generate_static: the prompt ({seq}) plus max_new_tokens ({n}) is "
                         f"{seq + n} tokens, past the cache's max_len={cache.max_len}")  # fmt: skip
    sampler = sampler or Sampler()
    device = prompt.device
    tokens = prompt.numpy().astype(np.int64)
    if n == 0:
        return Tensor.from_ints(tokens, device)
    decode = _decoder(step, device, capture)
    logits, cache = step(model, prompt, Tensor.from_ints([0], device), cache)
    done = np.zeros(batch, bool)
    for i in range(n):
        nxt = sampler.sample(_last(logits))
        if eos_token is not None:
            nxt = np.where(done, eos_token, nxt)
            done |= nxt == eos_token
        tokens = np.concatenate([tokens, nxt[:, None]], axis=1)
        if i == n - 1 or eos_token is not None and done.all():
            break
        new = Tensor.from_ints(nxt[:, None], device)
        logits, cache = decode(model, new, Tensor.from_ints([seq + i], device), cache)
    return Tensor.from_ints(tokens, device)


__all__ = ["can_capture", "generate_static"]
