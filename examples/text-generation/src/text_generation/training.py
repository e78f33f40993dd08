"""Training: next-character cross-entropy with Adam on `Autodiff(backend)`, then a sample
generated with the autoregressive cache (or the static cache, its step captured on Fusion)."""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np
from burn_autodiff import Autodiff
from burn_nn import CrossEntropyLossConfig
from burn_nn.generation import Sampler, generate, generate_static
from burn_optim import AdamConfig, GradientsParams
from burn_tensor import Tensor

from .data import CharTokenizer, batches
from .model import TextGenerationModelConfig, static_step


@dataclass
class TrainingConfig:
    steps: int = 400
    batch: int = 32
    seq: int = 64
    lr: float = 3e-3
    seed: int = 0
    log_every: int = 50


def train(text: str, backend, cfg: TrainingConfig, model_cfg: dict | None = None, log=print):
    """Train on `text`; returns (model on the inner backend, tokenizer, report dict)."""
    tok = CharTokenizer(text)
    ids = tok.encode(text)
    if len(ids) < cfg.seq + 2:
        raise ValueError(f"corpus of {len(ids)} characters is shorter than seq + 2 = {cfg.seq + 2}")
    device = Autodiff(backend).device()
    device.seed(cfg.seed)
    mcfg = TextGenerationModelConfig(tok.vocab_size, **(model_cfg or {}))
    model = mcfg.init(device)
    optim = AdamConfig().init()
    loss_fn = CrossEntropyLossConfig().init(device)
    rng = np.random.default_rng(cfg.seed)
    history, start = [], time.perf_counter()
    for step in range(1, cfg.steps + 1):
        x, y = batches(ids, cfg.batch, cfg.seq, rng)
        logits = model.forward(Tensor.from_ints(x, device))
        loss = loss_fn.forward(
            logits.reshape([cfg.batch * cfg.seq, tok.vocab_size]),
            Tensor.from_ints(y.reshape(-1), device),
        )
        grads = GradientsParams.from_grads(loss.backward(), model)
        model = optim.step(cfg.lr, model, grads)
        if step % cfg.log_every == 0 or step in (1, cfg.steps):
            value = float(loss.into_scalar())
            history.append((step, value))
            log(f"step {step:5d}  loss {value:.4f}  ({time.perf_counter() - start:.1f} s)")
    report = {
        "initial_loss_uniform": math.log(tok.vocab_size),
        "history": history,
        "final_loss": history[-1][1],
        "seconds": time.perf_counter() - start,
    }
    return model.valid(), tok, report


def sample(model, tok: CharTokenizer, prompt: str, n: int, sampler: Sampler, cache=True):
    """`prompt` followed by `n` generated characters; `cache`: True (Burn's autoregressive
    cache), False (none), "static" (`generate_static`: a cache of max_seq_len positions, the
    one-token step captured on a Fusion backend)."""
    device = model.head.weight.val().device
    ids = Tensor.from_ints(tok.encode(prompt)[None, :], device)
    if cache == "static":
        static = model.encoder.new_static_cache(1, model.max_seq_len)
        out = generate_static(static_step, model, static, ids, n, sampler)
        return tok.decode(out.numpy()[0])
    c = model.encoder.new_autoregressive_cache() if cache else None
    out = generate(lambda t: model.next_logits(t, c), ids, n, sampler)
    return tok.decode(out.numpy()[0])
