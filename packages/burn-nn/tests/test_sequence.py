"""RNNs, attention, transformer, encodings, unfold, interpolate: numpy float64 references."""

import numpy as np
from burn_tensor import Tensor

import burn_nn as nn
from burn_nn.attention import (
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


def close(t, ref, tol=1e-9):
    np.testing.assert_allclose(t.numpy(), ref, rtol=tol, atol=tol)


def sig(x):
    return 1 / (1 + np.exp(-x))


def lin(layer, x):
    out = x @ layer.weight.val().numpy()
    return out if layer.bias is None else out + layer.bias.val().numpy()


def gate(g, x, h):
    return lin(g.input_transform, x) + lin(g.hidden_transform, h)


def test_lstm_matches_reference(dev64, rng):
    m = nn.LstmConfig(3, 4, True).init(dev64)
    x = rng.normal(size=(2, 5, 3))
    out, state = m.forward(T(x, dev64))
    c = h = np.zeros((2, 4))
    hs = []
    for t in range(5):
        xt = x[:, t]
        i, f = sig(gate(m.input_gate, xt, h)), sig(gate(m.forget_gate, xt, h))
        o, g = sig(gate(m.output_gate, xt, h)), np.tanh(gate(m.cell_gate, xt, h))
        c = f * c + i * g
        h = o * np.tanh(c)
        hs.append(h)
    close(out, np.stack(hs, 1))
    close(state.cell, c)
    close(state.hidden, h)
    bi_out, bi_state = nn.BiLstmConfig(3, 4, True).init(dev64).forward(T(x, dev64))
    assert bi_out.dims() == [2, 5, 8] and bi_state.hidden.dims() == [2, 2, 4]


def test_gru_matches_reference(dev64, rng):
    m = nn.GruConfig(3, 4, True).init(dev64)
    x = rng.normal(size=(2, 4, 3))
    h = np.zeros((2, 4))
    hs = []
    for t in range(4):
        xt = x[:, t]
        z, r = sig(gate(m.update_gate, xt, h)), sig(gate(m.reset_gate, xt, h))
        n = np.tanh(lin(m.new_gate.input_transform, xt) + r * lin(m.new_gate.hidden_transform, h))
        h = z * h + (1 - z) * n
        hs.append(h)
    close(m.forward(T(x, dev64)), np.stack(hs, 1))


def ref_mha(m, q, k, v, mask=None):
    b, sq, d = q.shape
    nh, dk = m.n_heads, m.d_k

    def heads(x):
        return x.reshape(b, x.shape[1], nh, dk).transpose(0, 2, 1, 3)

    Q, K, V = heads(lin(m.query, q)), heads(lin(m.key, k)), heads(lin(m.value, v))
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(dk)
    if mask is not None:
        s = np.where(mask[:, None], -1e4, s)
    w = np.exp(s - s.max(-1, keepdims=True))
    w /= w.sum(-1, keepdims=True)
    ctx = (w @ V).transpose(0, 2, 1, 3).reshape(b, sq, d)
    return lin(m.output, ctx), w


def test_mha_with_masks_and_cache(dev64, rng):
    m = MultiHeadAttentionConfig(8, 2).init(dev64)  # dropout inactive off autodiff
    x = rng.normal(size=(2, 4, 8))
    mem = rng.normal(size=(2, 3, 8))
    out = m.forward(MhaInput.new(T(x, dev64), T(mem, dev64), T(mem, dev64)))
    ref, w = ref_mha(m, x, mem, mem)
    close(out.context, ref)
    close(out.weights, w)
    pad = np.array([[False, False, True], [False, False, False]])
    out = m.forward(
        MhaInput.new(T(x, dev64), T(mem, dev64), T(mem, dev64)).mask_pad(
            Tensor.from_bool(pad, dev64)
        )
    )
    ref, w = ref_mha(m, x, mem, mem, np.broadcast_to(pad[:, None, :], (2, 4, 3)))
    close(out.context, ref)
    assert np.allclose(out.weights.numpy()[0, :, :, 2], 0, atol=1e-6)
    causal = generate_autoregressive_mask(2, 4, dev64)
    full = m.forward(MhaInput.self_attn(T(x, dev64)).mask_attn(causal))
    ref, _ = ref_mha(m, x, x, x, np.triu(np.ones((4, 4), bool), 1)[None].repeat(2, 0))
    close(full.context, ref)
    cache = MhaCache.autoregressive()
    for t in range(1, 5):
        step = m.forward_cache(
            MhaInput.self_attn(T(x[:, :t], dev64)).mask_attn(
                generate_autoregressive_mask(2, t, dev64)
            ),
            cache,
        )
    close(step.context, ref)


def test_transformer_shapes_and_grads(autodiff, rng):
    d = autodiff
    enc = TransformerEncoderConfig(8, 16, 2, 2).init(d)
    x = T(rng.normal(size=(2, 5, 8)), d)
    out = enc.forward(
        TransformerEncoderInput.new(x).mask_pad(Tensor.from_bool(np.zeros((2, 5), bool), d))
    )
    assert out.dims() == [2, 5, 8]
    grads = out.sum().backward()
    assert all(p.val().grad(grads) is not None for _, p in enc.named_parameters())
    dec = TransformerDecoderConfig(8, 16, 2, 1, norm_first=True).init(d)
    y = dec.forward(
        TransformerDecoderInput.new(x, T(rng.normal(size=(2, 3, 8)), d)).target_mask_attn(
            generate_autoregressive_mask(2, 5, d)
        )
    )
    assert y.dims() == [2, 5, 8]
    grads = y.sum().backward()
    assert all(p.val().grad(grads) is not None for _, p in dec.named_parameters())
    v = enc.valid()
    assert v.forward(TransformerEncoderInput.new(x.inner())).dims() == [2, 5, 8]


def test_rnn_grads(autodiff, rng):
    x = T(rng.normal(size=(2, 3, 4)), autodiff)
    for m in (nn.LstmConfig(4, 5, True).init(autodiff), nn.GruConfig(4, 5, True).init(autodiff)):
        out = m.forward(x)
        out = out[0] if isinstance(out, tuple) else out
        grads = out.sum().backward()
        assert all(p.val().grad(grads) is not None for _, p in m.named_parameters())


def test_positional_and_rotary(dev64, rng):
    pe = nn.PositionalEncodingConfig(6, max_sequence_size=10).init(dev64)
    x = rng.normal(size=(2, 4, 6))
    pos = np.arange(4)[:, None]
    i = np.arange(0, 6, 2)[None]
    sin, cos = np.sin(pos / 10000 ** (i / 6)), np.cos(pos / 10000 ** (i / 6))
    ref = np.stack([sin, cos], -1).reshape(4, 6)
    close(pe.forward(T(x, dev64)), x + ref)
    assert pe.num_params() == 0 and pe.into_record() == {}
    rope = nn.RotaryEncodingConfig(8, 4).init(dev64)
    out = rope.apply(T(x[..., :4], dev64), 2).numpy()
    ang = (np.arange(2, 6)[:, None]) * (1 / 10000 ** (np.arange(0, 4, 2) / 4))[None]
    a, b = x[..., 0:4:2], x[..., 1:4:2]
    ref = np.stack(
        [a * np.cos(ang) - b * np.sin(ang), a * np.sin(ang) + b * np.cos(ang)], -1
    ).reshape(2, 4, 4)
    np.testing.assert_allclose(out, ref, atol=1e-9)


def test_unfold_and_interpolate(dev64, rng):
    x = rng.normal(size=(1, 2, 3, 3))
    out = nn.Unfold4dConfig([2, 2]).init().forward(T(x, dev64)).numpy()
    cols = [x[0, :, i : i + 2, j : j + 2].reshape(-1) for i in range(2) for j in range(2)]
    np.testing.assert_allclose(out[0], np.stack(cols, 1))
    up = nn.Interpolate2dConfig(scale_factor=[2.0, 2.0]).init().forward(T(x, dev64))
    assert up.dims() == [1, 2, 6, 6]
    lin1 = nn.Interpolate1dConfig(output_size=5, mode=nn.InterpolateMode.Linear).init()
    close(
        lin1.forward(T(np.array([[[0.0, 1.0, 2.0]]]), dev64)),
        np.array([[[0.0, 0.5, 1.0, 1.5, 2.0]]]),
    )
