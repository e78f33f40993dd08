"""MultiHeadAttention on the fused attention op, CrossAttention, the transformers' autoregressive
caches: numpy float64 references and equality with the full forward."""

import numpy as np
import pytest
from burn_tensor import Tensor
from burn_tensor import module as F

from burn_nn.attention import (
    CrossAttentionCache,
    CrossAttentionConfig,
    MhaCache,
    MhaInput,
    MultiHeadAttentionConfig,
    generate_autoregressive_mask,
)
from burn_nn.transformer import (
    TransformerDecoderConfig,
    TransformerDecoderInput,
    TransformerEncoderConfig,
    TransformerEncoderInput,
)


def T(a, d):
    return Tensor.from_data(np.asarray(a, dtype=np.float64), d)


def B(a, d):
    return Tensor.from_bool(np.asarray(a, bool), d)


def lin(layer, x):
    out = x @ layer.weight.val().numpy()
    return out if layer.bias is None else out + layer.bias.val().numpy()


def softmax(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


class _Spy:
    """Counts calls of `burn_tensor.module.attention` (the fused op) while active."""

    def __init__(self, monkeypatch):
        self.calls = 0
        orig = F.attention

        def op(*args, **kwargs):
            self.calls += 1
            return orig(*args, **kwargs)

        monkeypatch.setattr(F, "attention", op)


def test_mha_runs_the_fused_op_and_keeps_min_float_semantics(dev64, rng, monkeypatch):
    # Batch 0 pads every key: under Burn's min_float fill its queries spread uniformly over
    # the keys (context = mean of the values); the fused op alone would give 0 there.
    m = MultiHeadAttentionConfig(8, 2).init(dev64)
    x, mem = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 3, 8))
    pad = np.array([[True, True, True], [False, True, False]])
    spy = _Spy(monkeypatch)
    out = m.forward(MhaInput.new(T(x, dev64), T(mem, dev64), T(mem, dev64)).mask_pad(B(pad, dev64)))
    ctx = out.context.numpy()
    assert spy.calls == 1
    heads = lambda a: a.reshape(2, a.shape[1], 2, 4).transpose(0, 2, 1, 3)
    q, k, v = heads(lin(m.query, x)), heads(lin(m.key, mem)), heads(lin(m.value, mem))
    s = np.where(pad[:, None, None, :], -1e4, q @ k.transpose(0, 1, 3, 2) / 2.0)
    w = softmax(s)
    ref = lin(m.output, (w @ v).transpose(0, 2, 1, 3).reshape(2, 4, 8))
    np.testing.assert_allclose(ctx, ref, rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(out.weights.numpy(), w, rtol=1e-9, atol=1e-12)


def test_mha_trains_through_the_fused_op_with_dropout(autodiff, monkeypatch):
    # issue 36: dropout on the weights runs inside the fused op (one fused forward and one
    # fused backward per layer); before, an active dropout composed matmul/softmax/dropout
    x = T(np.ones((1, 3, 4)), autodiff)
    seen = []
    orig = F.attention
    monkeypatch.setattr(F, "attention", lambda *a, **kw: seen.append(kw) or orig(*a, **kw))
    for prob in (0.5, 0.0):
        m = MultiHeadAttentionConfig(4, 2, dropout=prob).init(autodiff)
        m.forward(MhaInput.self_attn(x))
        assert seen.pop()["dropout"] == prob and not seen


def test_mha_dropout_matches_numpy_with_the_ops_keep_mask(autodiff, rng):
    # the training forward equals (softmax * keep / (1 - p)) @ V with the keep mask of the
    # seed words the op draws (device.seed repeats the draw), and its backward runs
    from burn_tensor.ops import attention_keep_mask as keep_mask, draw_attention_seed as draw_seed

    p = 0.3
    m = MultiHeadAttentionConfig(8, 2, dropout=p).init(autodiff)
    x = rng.normal(size=(2, 5, 8))
    autodiff.seed(11)
    words = draw_seed(autodiff).numpy()
    autodiff.seed(11)
    xt = T(x, autodiff).require_grad()
    out = m.forward(MhaInput.self_attn(xt)).context
    heads = lambda a: a.reshape(2, 5, 2, 4).transpose(0, 2, 1, 3)
    q, k, v = heads(lin(m.query, x)), heads(lin(m.key, x)), heads(lin(m.value, x))
    w = softmax(q @ k.transpose(0, 1, 3, 2) / 2.0) * keep_mask(words, p, 2, 2, 5, 5) / (1 - p)
    ref = lin(m.output, (w @ v).transpose(0, 2, 1, 3).reshape(2, 5, 8))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-9, atol=1e-9)
    grad = xt.grad(out.sum().backward())
    assert grad is not None and np.isfinite(grad.numpy()).all()


def _ref_cross(ca, q, c, mask, n_heads, n_kv, d_head):
    b, sq, _ = q.shape
    sk = c.shape[1]
    Q = lin(ca.query, q).reshape(b, sq, n_heads, d_head).transpose(0, 2, 1, 3)
    K = lin(ca.key, c).reshape(b, sk, n_kv, d_head).transpose(0, 2, 1, 3)
    V = lin(ca.value, c).reshape(b, sk, n_kv, d_head).transpose(0, 2, 1, 3)
    rep = n_heads // n_kv
    K, V = np.repeat(K, rep, axis=1), np.repeat(V, rep, axis=1)  # head i reads kv head i // rep
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d_head)
    if mask is not None:
        s = np.where(mask[:, None, None, :], -1e4, s)
    ctx = (softmax(s) @ V).transpose(0, 2, 1, 3).reshape(b, sq, n_heads * d_head)
    return lin(ca.output, ctx)


@pytest.mark.parametrize("n_heads,n_kv", [(4, 4), (4, 2), (6, 1)])
def test_cross_attention_matches_reference(dev64, rng, n_heads, n_kv):
    ca = CrossAttentionConfig(8, 5, n_heads, n_kv, 3).init(dev64)
    assert ca.query.weight.dims() == [8, n_heads * 3] and ca.key.weight.dims() == [5, n_kv * 3]
    q, c = rng.normal(size=(2, 4, 8)), rng.normal(size=(2, 6, 5))
    mask = np.array([[False] * 5 + [True], [True, False, False, True, False, False]])
    ref = _ref_cross(ca, q, c, mask, n_heads, n_kv, 3)
    out = ca.forward(T(q, dev64), T(c, dev64), B(mask, dev64))
    np.testing.assert_allclose(out.numpy(), ref, rtol=1e-9, atol=1e-9)
    cache = CrossAttentionCache.new()
    for t in (1, 3, 4):
        step = ca.forward_cache(T(q[:, :t], dev64), T(c, dev64), B(mask, dev64), cache)
        np.testing.assert_allclose(step.numpy(), ref[:, :t], rtol=1e-9, atol=1e-9)


def test_cross_attention_errors(dev64):
    with pytest.raises(ValueError, match="n_heads=4 is not divisible by n_heads_kv=3"):
        CrossAttentionConfig(8, 5, 4, 3, 2).init(dev64)
    ca = CrossAttentionConfig(8, 5, 2, 2, 3).init(dev64)
    with pytest.raises(ValueError, match=r"context must be \[batch, seq_k, d_context=5\]"):
        ca.forward(T(np.ones((1, 2, 8)), dev64), T(np.ones((1, 2, 4)), dev64))
    with pytest.raises(ValueError, match=r"mask must be \[batch, seq_k\] = \[1, 2\]"):
        q, c = T(np.ones((1, 2, 8)), dev64), T(np.ones((1, 2, 5)), dev64)
        ca.forward(q, c, B([[0, 0, 1]], dev64))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_cache_equals_full_forward(dev64, rng, norm_first):
    enc = TransformerEncoderConfig(8, 16, 2, 2, norm_first=norm_first).init(dev64)
    x = T(rng.normal(size=(2, 6, 8)), dev64)
    full = enc.forward(
        TransformerEncoderInput.new(x).mask_attn(generate_autoregressive_mask(2, 6, dev64))
    ).numpy()
    cache = enc.new_autoregressive_cache()
    for t in (1, 2, 3, 5, 6):  # one and two positions per step
        inp = TransformerEncoderInput.new(x.narrow(1, 0, t))
        out = enc.forward_autoregressive_inference(
            inp.mask_attn(generate_autoregressive_mask(2, t, dev64)), cache
        )
        np.testing.assert_allclose(out.numpy(), full[:, :t], rtol=1e-9, atol=1e-9)
    # a shorter sequence starts over
    out = enc.forward_autoregressive_inference(
        TransformerEncoderInput.new(x.narrow(1, 0, 2)).mask_attn(
            generate_autoregressive_mask(2, 2, dev64)
        ),
        cache,
    )
    np.testing.assert_allclose(out.numpy(), full[:, :2], rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_cache_equals_full_forward(dev64, rng, norm_first):
    dec = TransformerDecoderConfig(8, 16, 2, 2, norm_first=norm_first).init(dev64)
    x, mem = T(rng.normal(size=(2, 5, 8)), dev64), T(rng.normal(size=(2, 4, 8)), dev64)
    pad = B([[0, 0, 1, 0], [0, 0, 0, 0]], dev64)

    def inp(t):
        return (
            TransformerDecoderInput.new(x.narrow(1, 0, t), mem)
            .target_mask_attn(generate_autoregressive_mask(2, t, dev64))
            .memory_mask_pad(pad)
        )

    full = dec.forward(inp(5)).numpy()
    cache = dec.new_autoregressive_cache()
    for t in range(1, 6):
        out = dec.forward_autoregressive_inference(inp(t), cache)
        np.testing.assert_allclose(out.numpy(), full[:, :t], rtol=1e-9, atol=1e-9)


def test_mha_cache_weights_and_restart(dev64, rng):
    m = MultiHeadAttentionConfig(8, 2).init(dev64)
    x = T(rng.normal(size=(1, 4, 8)), dev64)
    full = m.forward(MhaInput.self_attn(x).mask_attn(generate_autoregressive_mask(1, 4, dev64)))
    cache = MhaCache.autoregressive()
    for t in range(1, 5):
        step = m.forward_cache(
            MhaInput.self_attn(x.narrow(1, 0, t)).mask_attn(
                generate_autoregressive_mask(1, t, dev64)
            ),
            cache,
        )
    np.testing.assert_allclose(step.context.numpy(), full.context.numpy(), rtol=1e-9, atol=1e-9)
    np.testing.assert_allclose(step.weights.numpy(), full.weights.numpy(), rtol=1e-9, atol=1e-12)
    assert cache.rows == 4 and cache.key.dims() == [1, 2, 4, 4]
    m.forward_cache(MhaInput.self_attn(x.narrow(1, 0, 1)), cache)
    assert cache.rows == 1 and cache.key.dims() == [1, 2, 1, 4]
