"""Generation over a static KV cache with its one-token decode step captured (issue 36:
`burn_nn.generation.generate_static`): on Fusion(OpenCl()) (PoCL here) and under the CUDA-graph
rules' tape, the tokens equal `generate`'s with and without the autoregressive cache, greedy and
seeded, and the decode step is recorded once (two identical recordings, as capture's protocol
asks) then replayed: no guard miss, no eager fallback, across 32 tokens."""

from __future__ import annotations

import pytest
from _fusion_testlib import INNER, inner_backend
from burn_fusion import Fusion, capture
from burn_nn import Embedding, EmbeddingConfig, Linear, LinearConfig, Module
from burn_nn.attention import generate_autoregressive_mask
from burn_nn.generation import Sampler, can_capture, generate, generate_static
from burn_nn.transformer import (
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)
from burn_tensor import Tensor

try:
    DEV = Fusion(inner_backend()).device()
except pytest.skip.Exception as exc:
    pytest.skip(str(exc), allow_module_level=True)

VOCAB = 48


class TinyLm(Module):
    embed: Embedding
    enc: TransformerEncoder
    head: Linear

    def logits(self, tokens, cache=None):
        b, s = tokens.dims()
        inp = TransformerEncoderInput.new(self.embed.forward(tokens)).mask_attn(
            generate_autoregressive_mask(b, s, tokens.device)
        )
        enc = self.enc
        h = enc.forward(inp) if cache is None else enc.forward_autoregressive_inference(inp, cache)
        return self.head.forward(h.narrow(1, s - 1, 1))


def decode_step(model, tokens, position, cache):
    n = tokens.dims()[1]
    h, cache = model.enc.forward_static_cache(
        TransformerEncoderInput.new(model.embed.forward(tokens)), cache, position
    )
    return model.head.forward(h.narrow(1, n - 1, 1)), cache


def _model():
    DEV.seed(4)
    enc = TransformerEncoderConfig(32, 64, 4, 2, dropout=0.0, norm_first=True).init(DEV)
    return TinyLm(EmbeddingConfig(VOCAB, 32).init(DEV), enc, LinearConfig(32, VOCAB).init(DEV))


def _check(sampler):
    m = _model()
    prompt = Tensor.from_ints([[(5 * i + j) % VOCAB for j in range(6)] for i in range(2)], DEV)
    plain = generate(m.logits, prompt, 32, sampler()).tolist()
    auto = m.enc.new_autoregressive_cache()
    cached = generate(lambda t: m.logits(t, auto), prompt, 32, sampler()).tolist()
    step = capture(decode_step)
    cache = m.enc.new_static_cache(2, 40, DEV)
    got = generate_static(decode_step, m, cache, prompt, 32, sampler(), capture=step).tolist()
    assert got == plain == cached
    s = step.stats()
    # 31 one-token calls (the prompt's call runs eagerly, the last token is not fed back):
    # one warm-up, two recordings that match, then replays of that one recording
    assert (s["calls"], s["eager_calls"], s["recordings"], s["replays"]) == (31, 1, 2, 28), s
    assert s["guard_misses"] == 0 and s["guards"] == 1 and s["eager_reasons"] == [], s
    # a second generation from the same cache: its prompt's (eager) call returns a cache with
    # the same parameter ids, so every one-token call replays the recording (no new one)
    again = generate_static(decode_step, m, cache, prompt, 32, sampler(), capture=step).tolist()
    assert again == plain
    s = step.stats()
    assert s["recordings"] == 2 and s["replays"] == 28 + 31 and s["guard_misses"] == 0, s
    step.release()


@pytest.mark.parametrize(
    "sampler",
    [lambda: Sampler(0.0), lambda: Sampler(0.8, top_k=10, seed=3)],
    ids=["greedy", "seeded"],
)
def test_captured_static_generation_gives_the_same_tokens(sampler):
    assert can_capture(DEV)
    _check(sampler)


def test_captured_static_generation_under_cuda_rules(monkeypatch):
    if INNER == "opencl":
        from _capture_cuda_rules import CudaRulesTape
        from burn_opencl._gpu_runtime import OpenClRuntime

        monkeypatch.setattr(OpenClRuntime, "tape", lambda self: CudaRulesTape(self.rt))
    _check(lambda: Sampler(0.0))


def test_generate_static_captures_by_default_on_fusion():
    """`capture=None` on a Fusion device captures (the step is wrapped inside): same tokens."""
    m = _model()
    prompt = Tensor.from_ints([[1, 2, 3]], DEV)
    want = generate(m.logits, prompt, 10, Sampler(0.0)).tolist()
    cache = m.enc.new_static_cache(1, 13, DEV)
    assert generate_static(decode_step, m, cache, prompt, 10, Sampler(0.0)).tolist() == want


def test_captured_decoder_generation_over_a_memory():
    """`TransformerDecoder.forward_static_cache` captured too: a target generated over a padded
    memory (the memory rides in the step's `model` tuple: a tensor argument) equals `generate`
    re-running the decoder's causal `forward` on the whole target."""
    import numpy as np
    from burn_nn.transformer import TransformerDecoderConfig, TransformerDecoderInput

    DEV.seed(6)
    dec = TransformerDecoderConfig(32, 64, 4, 2, dropout=0.0, norm_first=True).init(DEV)
    embed, head = EmbeddingConfig(VOCAB, 32).init(DEV), LinearConfig(32, VOCAB).init(DEV)
    rng = np.random.default_rng(2)
    memory = Tensor.from_data(rng.normal(size=(2, 5, 32)).astype(np.float32), DEV)
    pad = np.zeros((2, 5), bool)
    pad[0, 3:] = True
    mem_pad = Tensor.from_bool(pad, DEV)

    def full(tokens):
        b, s = tokens.dims()
        inp = TransformerDecoderInput.new(embed.forward(tokens), memory).memory_mask_pad(mem_pad)
        h = dec.forward(inp.target_mask_attn(generate_autoregressive_mask(b, s, DEV)))
        return head.forward(h.narrow(1, s - 1, 1))

    def step(model, tokens, position, cache):
        embed, dec, head, memory, mem_pad = model
        n = tokens.dims()[1]
        inp = TransformerDecoderInput.new(embed.forward(tokens), memory).memory_mask_pad(mem_pad)
        h, cache = dec.forward_static_cache(inp, cache, position)
        return head.forward(h.narrow(1, n - 1, 1)), cache

    prompt = Tensor.from_ints([[1, 2, 3], [4, 5, 6]], DEV)
    want = generate(full, prompt, 16, Sampler(0.0)).tolist()
    captured = capture(step)
    model = (embed, dec, head, memory, mem_pad)
    cache = dec.new_static_cache(2, 19, DEV)
    got = generate_static(step, model, cache, prompt, 16, Sampler(0.0), capture=captured)
    assert got.tolist() == want
    s = captured.stats()
    assert s["recordings"] == 2 and s["replays"] == 12 and s["eager_reasons"] == [], s
    captured.release()
