"""`Sampler` (temperature, top-k, top-p: hand-derived distributions, seeded draws) and `generate`
(a decoder-only model gives the same tokens with its autoregressive cache as without)."""

import numpy as np
import pytest
from burn_tensor import Tensor

from burn_nn import EmbeddingConfig, LinearConfig
from burn_nn.attention import generate_autoregressive_mask
from burn_nn.generation import Sampler, generate
from burn_nn.transformer import TransformerEncoderConfig, TransformerEncoderInput

LOGITS = np.log([[1.0, 2.0, 4.0]])  # p = [1, 2, 4] / 7


@pytest.mark.parametrize(
    "kwargs,expected",
    [
        ({}, [1 / 7, 2 / 7, 4 / 7]),
        ({"temperature": 2.0}, np.sqrt([1.0, 2.0, 4.0]) / np.sqrt([1.0, 2.0, 4.0]).sum()),
        ({"top_k": 2}, [0, 1 / 3, 2 / 3]),
        ({"top_k": 5}, [1 / 7, 2 / 7, 4 / 7]),
        ({"top_p": 0.5}, [0, 0, 1]),  # 4/7 alone reaches 0.5
        ({"top_p": 0.6}, [0, 1 / 3, 2 / 3]),  # 4/7 < 0.6: the next one is needed
        ({"top_p": 1.0}, [1 / 7, 2 / 7, 4 / 7]),
        ({"top_k": 2, "top_p": 0.6}, [0, 0, 1]),  # top-p over top-k's renormalized [1/3, 2/3]
        ({"temperature": 0.0}, [0, 0, 1]),
    ],
)
def test_sampler_distributions(kwargs, expected):
    np.testing.assert_allclose(Sampler(**kwargs).probabilities(LOGITS)[0], expected, atol=1e-12)


def test_sampler_draws_follow_the_distribution_and_the_seed():
    s = Sampler(top_k=2, seed=7)
    draws = np.concatenate([s.sample(np.repeat(LOGITS, 1000, axis=0)) for _ in range(10)])
    freq = np.bincount(draws, minlength=3) / draws.size
    np.testing.assert_allclose(freq, [0, 1 / 3, 2 / 3], atol=0.015)
    a = Sampler(seed=3).sample(np.repeat(LOGITS, 50, axis=0))
    b = Sampler(seed=3).sample(np.repeat(LOGITS, 50, axis=0))
    assert np.array_equal(a, b) and a.dtype == np.int64


def test_greedy_sampler_at_a_large_vocabulary():
    """Temperature 0 gives one-hot rows on the first most likely token and draws it, at a
    vocabulary where the old `np.eye(vocab)[argmax]` needed a 150,000 x 150,000 float64 matrix
    (180 GB) per call."""
    vocab = 150_000
    z = np.zeros((2, vocab))
    z[0, 77] = 3.0
    z[1, [5, 149_999]] = 2.0  # a tie: the first index wins, as argmax
    s = Sampler(0.0, seed=0)
    p = s.probabilities(z)
    assert p.shape == (2, vocab) and p.dtype == np.float64
    assert p.sum(axis=1).tolist() == [1.0, 1.0]
    assert p[0, 77] == 1.0 and p[1, 5] == 1.0
    assert s.sample(z).tolist() == [77, 5]
    z[1, 9] = np.nan  # the greedy draw checks its logits as every draw does
    with pytest.raises(ValueError, match="NaN or infinity"):
        s.sample(z)


def test_sampler_errors():
    with pytest.raises(ValueError, match="temperature must be >= 0.*top_k must be.*top_p must be"):
        Sampler(temperature=-1.0, top_k=0, top_p=1.5)
    with pytest.raises(ValueError, match=r"logits must be \[batch, vocab\]"):
        Sampler().sample(np.zeros(3))
    with pytest.raises(ValueError, match="NaN"):
        Sampler().sample(np.array([[0.0, np.nan]]))


class _TinyLm:
    """A decoder-only language model: embedding + causal TransformerEncoder + linear head."""

    def __init__(self, device, vocab=11, d=16):
        self.embed = EmbeddingConfig(vocab, d).init(device)
        self.enc = TransformerEncoderConfig(d, 32, 2, 2, dropout=0.0).init(device)
        self.head = LinearConfig(d, vocab).init(device)
        self.device = device

    def logits(self, tokens, cache=None):
        b, s = tokens.dims()
        inp = TransformerEncoderInput.new(self.embed.forward(tokens)).mask_attn(
            generate_autoregressive_mask(b, s, self.device)
        )
        if cache is None:
            h = self.enc.forward(inp)
        else:
            h = self.enc.forward_autoregressive_inference(inp, cache)
        return self.head.forward(h.narrow(1, s - 1, 1))


def test_generate_same_tokens_with_and_without_cache(dev64):
    dev64.seed(1)
    lm = _TinyLm(dev64)
    prompt = Tensor.from_ints([[1, 2, 3], [4, 5, 6]], dev64)
    plain = generate(lm.logits, prompt, 12, Sampler(0.9, top_k=5, top_p=0.9, seed=11))
    cache = lm.enc.new_autoregressive_cache()
    cached = generate(
        lambda t: lm.logits(t, cache), prompt, 12, Sampler(0.9, top_k=5, top_p=0.9, seed=11)
    )
    assert plain.dims() == [2, 15]
    assert plain.tolist() == cached.tolist()
    assert plain.narrow(1, 0, 3).tolist() == prompt.tolist()


def test_generate_stops_at_eos_and_checks_arguments(dev64):
    calls = []

    def next_logits(tokens):
        calls.append(tokens.dims()[1])
        b = tokens.dims()[0]
        z = np.full((b, 4), -5.0)
        z[0, 3] = 5.0  # row 0 ends at once (eos = 3)
        z[1, 2 if len(calls) < 3 else 3] = 5.0
        return Tensor.from_data(z, dev64)

    out = generate(next_logits, Tensor.from_ints([[0], [0]], dev64), 10, Sampler(0.0), eos_token=3)
    assert out.tolist() == [[0, 3, 3, 3], [0, 2, 2, 3]] and calls == [1, 2, 3]
    with pytest.raises(ValueError, match=r"prompt must be Int \[batch, seq\]"):
        generate(next_logits, Tensor.from_data([[0.0]], dev64), 1)
    with pytest.raises(ValueError, match="max_new_tokens"):
        generate(next_logits, Tensor.from_ints([[0]], dev64), -1)
