"""The static KV cache (`TransformerStaticCache`, `forward_static_cache`) and `generate_static`
on the nn test backend (NdArray by default): keys and values written at the position tensor's
rows (against numpy's projection), the causal mask at the cache's ends (position 0, max_len-1,
stale rows of a longer earlier sequence hidden), errors naming max_len, and the same tokens as
`generate` with and without the autoregressive cache, greedy and seeded. The captured decode
step on Fusion(OpenCl()) is tested in burn-fusion (tests/test_capture_generation.py)."""

import numpy as np
import pytest
from burn_nn import Embedding, EmbeddingConfig, Linear, LinearConfig, Module
from burn_nn.attention import generate_autoregressive_mask
from burn_nn.generation import Sampler, generate, generate_static
from burn_nn.transformer import (
    TransformerEncoder,
    TransformerEncoderConfig,
    TransformerEncoderInput,
    TransformerStaticCache,
)
from burn_tensor import Tensor


def _x(dev, b, s, d, seed=0):
    return Tensor.from_data(np.random.default_rng(seed).normal(size=(b, s, d)), dev)


def _causal(enc, x, dev):
    b, s, _ = x.dims()
    inp = TransformerEncoderInput.new(x).mask_attn(generate_autoregressive_mask(b, s, dev))
    return enc.forward(inp).numpy()


def _static(enc, x, cache, position):
    return enc.forward_static_cache(TransformerEncoderInput.new(x), cache, position)


@pytest.mark.parametrize("norm_first", [False, True])
def test_static_steps_equal_the_causal_forward(dev64, norm_first):
    """A prefill of 3 positions then one position per step (the position a tensor), up to the
    last row of the cache (max_len - 1), equals the causal `forward` of the whole sequence."""
    enc = TransformerEncoderConfig(16, 32, 4, 2, dropout=0.0, norm_first=norm_first).init(dev64)
    x = _x(dev64, 2, 7, 16)
    want = _causal(enc, x, dev64)
    cache = enc.new_static_cache(2, 7, dev64)
    out, cache = _static(enc, x.narrow(1, 0, 3), cache, Tensor.from_ints([0], dev64))
    got = [out.numpy()]
    for p in range(3, 7):
        out, cache = _static(enc, x.narrow(1, p, 1), cache, Tensor.from_ints([p], dev64))
        got.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(got, 1), want, rtol=1e-10, atol=1e-10)


def test_keys_and_values_are_written_at_the_position_rows(dev64):
    """Layer 0 (post-norm: its attention sees the input itself) holds x @ W + bias, split into
    heads, at the rows of the positions done, and zeros after them."""
    enc = TransformerEncoderConfig(8, 16, 2, 1, dropout=0.0).init(dev64)
    mha = enc.layers[0].mha
    x = _x(dev64, 1, 5, 8, seed=1)
    cache = enc.new_static_cache(1, 5, dev64)
    assert cache.key[0].dims() == [1, 2, 5, 4] and cache.positions.val().tolist() == [0, 1, 2, 3, 4]
    _, cache = _static(enc, x.narrow(1, 0, 2), cache, 0)
    _, cache = _static(enc, x.narrow(1, 2, 1), cache, Tensor.from_ints([2], dev64))

    def heads(lin):
        y = x.numpy()[0] @ lin.weight.val().numpy() + lin.bias.val().numpy()  # [5, 8]
        return y.reshape(5, 2, 4).transpose(1, 0, 2)  # [heads, seq, d_k]

    for got, lin in ((cache.key[0], mha.key), (cache.value[0], mha.value)):
        g, want = got.val().numpy()[0], heads(lin)
        np.testing.assert_allclose(g[:, :3], want[:, :3], rtol=1e-12, atol=1e-12)
        assert (g[:, 3:] == 0).all()
    _, cache = _static(enc, x.narrow(1, 4, 1), cache, Tensor.from_ints([4], dev64))  # last row
    g = cache.key[0].val().numpy()[0]
    np.testing.assert_allclose(g[:, 4], heads(mha.key)[:, 4], rtol=1e-12, atol=1e-12)
    assert (g[:, 3] == 0).all()  # position 3 was skipped: only row 4 was written


def test_a_reused_cache_hides_the_earlier_sequence(dev64):
    """Rows past the position hold an earlier, longer sequence's keys: the mask hides them, so
    position 0 of a new sequence equals a fresh cache's (and `forward` of one position)."""
    enc = TransformerEncoderConfig(8, 16, 2, 2, dropout=0.0).init(dev64)
    old, new = _x(dev64, 1, 6, 8, seed=2), _x(dev64, 1, 2, 8, seed=3)
    _, cache = _static(enc, old, enc.new_static_cache(1, 6, dev64), 0)
    assert np.abs(cache.key[1].val().numpy()[0, :, 5]).sum() > 0
    first, cache = _static(enc, new.narrow(1, 0, 1), cache, Tensor.from_ints([0], dev64))
    second, _ = _static(enc, new.narrow(1, 1, 1), cache, Tensor.from_ints([1], dev64))
    want = _causal(enc, new, dev64)
    np.testing.assert_allclose(first.numpy()[:, 0], want[:, 0], rtol=1e-10, atol=1e-10)
    np.testing.assert_allclose(second.numpy()[:, 0], want[:, 1], rtol=1e-10, atol=1e-10)


def test_static_cache_errors_name_what_is_wrong(device):
    enc = TransformerEncoderConfig(8, 16, 2, 1, dropout=0.0).init(device)
    cache = enc.new_static_cache(2, 4, device)
    x = Tensor.zeros([2, 1, 8], device)
    with pytest.raises(ValueError, match=r"positions 4\.\.4 run past the cache's max_len=4"):
        _static(enc, x, cache, 4)
    with pytest.raises(ValueError, match=r"5 new positions do not fit the cache's max_len=4"):
        _static(enc, Tensor.zeros([2, 5, 8], device), cache, Tensor.from_ints([0], device))
    with pytest.raises(ValueError, match=r"\[batch=2, n, d_model=8\], got \[3, 1, 8\]"):
        _static(enc, Tensor.zeros([3, 1, 8], device), cache, 0)
    with pytest.raises(ValueError, match=r"position must be an Int tensor \[1\]"):
        _static(enc, x, cache, Tensor.from_ints([0, 1], device))
    with pytest.raises(ValueError, match="builds its own causal mask"):
        inp = TransformerEncoderInput.new(x).mask_attn(generate_autoregressive_mask(2, 1, device))
        enc.forward_static_cache(inp, cache, 0)
    with pytest.raises(ValueError, match=r"mask_pad must be \[batch=2, max_len=4\]"):
        inp = TransformerEncoderInput.new(x).mask_pad(
            Tensor.from_bool(np.zeros((2, 1), bool), device)
        )
        enc.forward_static_cache(inp, cache, 0)
    with pytest.raises(ValueError, match="max_len must be an int >= 1, got 0"):
        enc.new_static_cache(2, 0, device)
    with pytest.raises(ValueError, match="must be a TransformerStaticCache"):
        _static(enc, x, enc.new_autoregressive_cache(), 0)


class TinyLm(Module):
    """embedding -> causal encoder -> linear head: the decoder-only model of the bench."""

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


def static_step(model, tokens, position, cache):
    """One `generate_static` step: the new tokens' logits at the last of them, the new cache."""
    n = tokens.dims()[1]
    inp = TransformerEncoderInput.new(model.embed.forward(tokens))
    h, cache = model.enc.forward_static_cache(inp, cache, position)
    return model.head.forward(h.narrow(1, n - 1, 1)), cache


def tiny_lm(device, vocab=40):
    device.seed(5)
    enc = TransformerEncoderConfig(16, 32, 2, 2, dropout=0.0, norm_first=True).init(device)
    return TinyLm(
        EmbeddingConfig(vocab, 16).init(device), enc, LinearConfig(16, vocab).init(device)
    )


@pytest.mark.parametrize("sampler", [lambda: Sampler(0.0), lambda: Sampler(0.9, top_k=8, seed=11)])
def test_generate_static_gives_generates_tokens(device, sampler):
    m = tiny_lm(device)
    prompt = Tensor.from_ints([[1, 2, 3, 4], [5, 6, 7, 8], [9, 10, 11, 12]], device)
    plain = generate(m.logits, prompt, 12, sampler()).tolist()
    auto = m.enc.new_autoregressive_cache()
    cached = generate(lambda t: m.logits(t, auto), prompt, 12, sampler()).tolist()
    cache = m.enc.new_static_cache(3, 16, device)
    static = generate_static(static_step, m, cache, prompt, 12, sampler(), capture=False).tolist()
    assert static == plain == cached and len(static[0]) == 16
    # None captures only where the backend can (NdArray cannot): the same tokens, eagerly
    assert generate_static(static_step, m, cache, prompt, 12, sampler()).tolist() == plain


def test_generate_static_stops_at_eos_and_checks_max_len(device):
    m = tiny_lm(device)
    prompt = Tensor.from_ints([[1, 2], [3, 4]], device)
    free = generate(m.logits, prompt, 6, Sampler(0.0)).numpy()
    eos = int(free[0, 3])  # the second token of sequence 0
    want = generate(m.logits, prompt, 6, Sampler(0.0), eos_token=eos).tolist()
    cache = m.enc.new_static_cache(2, 8, device)
    got = generate_static(static_step, m, cache, prompt, 6, Sampler(0.0), eos_token=eos)
    assert got.tolist() == want
    with pytest.raises(ValueError, match=r"prompt \(2\) plus max_new_tokens \(7\) is 9 tokens, "
                                         r"past the cache's max_len=8"):  # fmt: skip
        generate_static(static_step, m, cache, prompt, 7, Sampler(0.0))
    with pytest.raises(ValueError, match="the cache holds batch 2, the prompt batch 1"):
        generate_static(static_step, m, cache, prompt.narrow(0, 0, 1), 2)
    with pytest.raises(ValueError, match="capture=True needs a Fusion backend"):
        generate_static(static_step, m, cache, prompt, 2, capture=True)
    assert generate_static(static_step, m, cache, prompt, 0).tolist() == prompt.tolist()

    def flat(model, tokens, position, cache):
        logits, cache = static_step(model, tokens, position, cache)
        return logits.reshape([-1]), cache

    with pytest.raises(ValueError, match=r"logits \[batch, \(n,\) vocab\], got \[80\]"):
        generate_static(flat, m, cache, prompt, 2)
    assert isinstance(cache, TransformerStaticCache)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_static_steps_equal_the_causal_forward(dev64, norm_first):
    """The decoder's static steps (target positions one at a time after a prefill of 2) over a
    memory with padding equal its causal `forward` of the whole target."""
    from burn_nn.transformer import TransformerDecoderConfig, TransformerDecoderInput

    dec = TransformerDecoderConfig(16, 32, 4, 2, dropout=0.0, norm_first=norm_first).init(dev64)
    target, memory = _x(dev64, 2, 5, 16, seed=4), _x(dev64, 2, 6, 16, seed=5)
    pad = np.zeros((2, 6), bool)
    pad[1, 4:] = True  # the second memory's last two positions are padding
    mem_pad = Tensor.from_bool(pad, dev64)
    full = TransformerDecoderInput.new(target, memory).memory_mask_pad(mem_pad)
    want = dec.forward(full.target_mask_attn(generate_autoregressive_mask(2, 5, dev64))).numpy()
    cache = dec.new_static_cache(2, 6, dev64)

    def step(rows, position):
        inp = TransformerDecoderInput.new(rows, memory).memory_mask_pad(mem_pad)
        return dec.forward_static_cache(inp, cache, position)

    out, cache = step(target.narrow(1, 0, 2), 0)
    got = [out.numpy()]
    for p in range(2, 5):
        out, cache = step(target.narrow(1, p, 1), Tensor.from_ints([p], dev64))
        got.append(out.numpy())
    np.testing.assert_allclose(np.concatenate(got, 1), want, rtol=1e-10, atol=1e-10)
    with pytest.raises(ValueError, match="no memory_mask_attn"):
        attn = Tensor.from_bool(np.zeros((2, 1, 6), bool), dev64)
        inp = TransformerDecoderInput.new(target.narrow(1, 0, 1), memory).memory_mask_attn(attn)
        dec.forward_static_cache(inp, cache, 0)
