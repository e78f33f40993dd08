"""`module.quantize_weights(Quantizer(...))`: weight-only quantized Linear, Conv1d/2d, Embedding.

Each quantized layer must compute what the float layer computes with the dequantized weights
(dequantized by the numpy reference, not by the code under test), on NdArray and on
Autodiff(NdArray) where the quantized params must not require grad.
"""

from __future__ import annotations

import numpy as np
import pytest
from burn_autodiff import Autodiff
from burn_ndarray import NdArray
from burn_nn import EmbeddingConfig, LinearConfig, Quantizer
from burn_nn.conv import Conv1dConfig, Conv2dConfig
from burn_tensor import Int, Tensor
from burn_tensor.quantization import (
    Calibration,
    QuantLevel,
    QuantScheme,
    QuantValue,
    dequantize_ref,
)

SCHEMES = [
    QuantScheme(),
    QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(4)),
    QuantScheme(value=QuantValue.Q2S, level=QuantLevel.block(2)),
]


def _deq(t) -> np.ndarray:
    qd = t.quantized_data()
    return dequantize_ref(qd.values, qd.scales, qd.scheme, qd.shape)


def _float_copy(module, device):
    """The module with every quantized param replaced by its reference dequantization."""

    class Deq:
        def map_float(self, p):
            t = p.val()
            if not t.is_quantized():
                return p
            return type(p)(p.id, Tensor.from_data(_deq(t).astype(np.float32), device), False)

    return module.map(Deq())


LAYERS = [
    ("linear", lambda d: LinearConfig(8, 4).init(d), (3, 8), False),
    ("conv1d", lambda d: Conv1dConfig(2, 4, 3).init(d), (2, 2, 9), False),
    ("conv2d", lambda d: Conv2dConfig([2, 4], [3, 2]).init(d), (2, 2, 6, 6), False),
    ("embedding", lambda d: EmbeddingConfig(10, 4).init(d), (2, 3), True),
]


@pytest.mark.parametrize("backend", [NdArray(), Autodiff(NdArray())], ids=["ndarray", "autodiff"])
@pytest.mark.parametrize("scheme", SCHEMES, ids=["q8s", "q4s-b4", "q2s-b2"])
@pytest.mark.parametrize("name,make,xshape,ints", LAYERS, ids=[layer[0] for layer in LAYERS])
def test_quantized_layer_equals_float_layer_on_dequantized_weights(
    backend, scheme, name, make, xshape, ints
):
    d = backend.device()
    layer = make(d)
    quantizer = Quantizer(calibration=Calibration.MinMax, scheme=scheme)
    q = layer.quantize_weights(quantizer)
    params = q.named_parameters()
    assert any(p.val().is_quantized() for _, p in params)
    for _, p in params:
        if p.val().is_quantized():
            assert p.val().dtype.scheme == scheme and not p.require_grad
    rng = np.random.default_rng(0)
    x = (
        Tensor.from_data(rng.integers(0, 10, xshape), d, dtype="int32")
        if ints
        else Tensor.from_data(rng.normal(size=xshape).astype(np.float32), d)
    )
    got = q(x)
    assert not got.is_quantized()
    want = _float_copy(q, d)(x)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)
    # and it is close to the unquantized layer (q8 only: q4/q2 are coarse on purpose)
    if scheme == SCHEMES[0]:
        np.testing.assert_allclose(got.numpy(), layer(x).numpy(), atol=0.05)
    assert Int is not None


def test_params_the_scheme_cannot_hold_stay_float_and_are_listed():
    d = NdArray().device()
    layer = Conv2dConfig([2, 6], [3, 4]).init(d)  # kernel width 4 fits block(4), a bias of 6 not
    quantizer = Quantizer(scheme=QuantScheme(level=QuantLevel.block(4)))
    q = layer.quantize_weights(quantizer)
    assert q.weight.val().is_quantized()
    assert not q.bias.val().is_quantized()
    assert quantizer.skipped == [str(layer.bias.id)]
    with pytest.raises(TypeError, match="scheme must be a QuantScheme"):
        Quantizer(scheme="q8")


def test_layer_norm_dequantizes_a_quantized_gamma_and_beta():
    # `module.layer_norm` handed the primitives to the backend as they were: a quantized gamma
    # crashed in a reshape (AttributeError) instead of running dequantized like Linear's weight
    from burn_tensor import module as F

    d = NdArray().device()
    rng = np.random.default_rng(3)
    x = rng.normal(size=(3, 8))
    g, b = rng.normal(size=8), rng.normal(size=8)
    scheme = QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(4))
    gq = Tensor.from_data(g.astype(np.float32), d).quantize_dynamic(scheme)
    bq = Tensor.from_data(b.astype(np.float32), d).quantize_dynamic(scheme)
    got = F.layer_norm(Tensor.from_data(x.astype(np.float32), d), gq, bq, 1e-5)
    xhat = (x - x.mean(-1, keepdims=True)) / np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    np.testing.assert_allclose(got.numpy(), xhat * _deq(gq) + _deq(bq), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("scheme", SCHEMES[:2], ids=["q8s", "q4s-b4"])
def test_transformer_quantizes_attention_and_feed_forward_keeps_norms_float(scheme):
    from burn_nn.transformer import TransformerEncoderConfig, TransformerEncoderInput

    d = NdArray().device()
    enc = TransformerEncoderConfig(8, 16, 2, 2, dropout=0.0, norm_first=True).init(d)
    quantizer = Quantizer(calibration=Calibration.MinMax, scheme=scheme)
    q = enc.quantize_weights(quantizer)
    params = dict(q.named_parameters())
    norms = {k for k in params if ".norm_" in k}
    assert len(norms) == 8 and len(params) == 8 + 2 * (4 * 2 + 2 * 2)
    for path, p in params.items():  # every projection, both feed-forward linears; no norm
        assert p.val().is_quantized() == (path not in norms), path
    assert quantizer.kept_float == {k: "in a LayerNorm (Quantizer.keep_float)" for k in norms}
    assert sorted(quantizer.skipped) == sorted(str(params[k].id) for k in norms)
    x = Tensor.from_data(np.random.default_rng(4).normal(size=(2, 5, 8)).astype(np.float32), d)
    inp = TransformerEncoderInput.new(x)
    got = q.forward(inp).numpy()
    np.testing.assert_allclose(got, _float_copy(q, d).forward(inp).numpy(), rtol=1e-4, atol=1e-4)
    if scheme == SCHEMES[0]:
        np.testing.assert_allclose(got, enc.forward(inp).numpy(), atol=0.05)


def test_keep_float_empty_quantizes_norms_too_and_they_still_run():
    from burn_nn import LayerNormConfig

    d = NdArray().device()
    ln = LayerNormConfig(8).init(d)
    kept = Quantizer(scheme=QuantScheme())
    assert not ln.quantize_weights(kept).gamma.val().is_quantized()  # the root module counts too
    assert kept.kept_float == {"gamma": "in a LayerNorm (Quantizer.keep_float)",
                               "beta": "in a LayerNorm (Quantizer.keep_float)"}  # fmt: skip
    q = ln.quantize_weights(Quantizer(scheme=QuantScheme(), keep_float=()))
    assert q.gamma.val().is_quantized() and q.beta.val().is_quantized()
    x = Tensor.from_data(np.random.default_rng(5).normal(size=(2, 8)).astype(np.float32), d)
    np.testing.assert_allclose(q(x).numpy(), ln(x).numpy(), atol=1e-5)  # ones and zeros: exact
    with pytest.raises(TypeError, match="keep_float must be a tuple of module type names"):
        Quantizer(keep_float="LayerNorm")


def test_kept_float_names_the_reason_per_path():
    d = NdArray().device()
    layer = Conv2dConfig([2, 6], [3, 4]).init(d)
    quantizer = Quantizer(scheme=QuantScheme(level=QuantLevel.block(4)))
    layer.quantize_weights(quantizer)
    assert quantizer.kept_float == {"bias": "last dim 6 is not a multiple of the block size 4"}


MOVE_TARGETS = [
    NdArray(num_threads=1, quantize_activations=True),  # another backend: through QuantizedData
    Autodiff(NdArray()),
]


@pytest.mark.parametrize("target", MOVE_TARGETS, ids=["ndarray-act8", "autodiff"])
@pytest.mark.parametrize("scheme", SCHEMES[:2], ids=["q8s", "q4s-b4"])
@pytest.mark.parametrize("name,make,xshape,ints", LAYERS[::2], ids=[layer[0] for layer in LAYERS[::2]])
def test_to_device_moves_quantized_params_as_quantized(target, scheme, name, make, xshape, ints):
    """`Module.to_device` used to detach each param through the quantized view, which dequantized
    it: the moved model was float (4x its record, no quantized kernels on the target)."""
    src, dst = NdArray().device(), target.device()
    q = make(src).quantize_weights(Quantizer(calibration=Calibration.MinMax, scheme=scheme))
    moved = q.to_device(dst)
    assert moved.devices() == [dst]
    before, after = dict(q.named_parameters()), dict(moved.named_parameters())
    assert before.keys() == after.keys()
    for path, p in before.items():
        t, m = p.val(), after[path].val()
        assert m.is_quantized() == t.is_quantized(), path
        assert after[path].id == p.id and m.device is dst
        if t.is_quantized():
            a, b = t.quantized_data(), m.quantized_data()
            assert b.scheme == a.scheme == scheme and b.shape == a.shape
            np.testing.assert_array_equal(b.values, a.values)
            np.testing.assert_array_equal(b.scales, a.scales)
    x = np.random.default_rng(1).normal(size=xshape).astype(np.float32)
    got, want = moved(Tensor.from_data(x, dst)).numpy(), q(Tensor.from_data(x, src)).numpy()
    # the act8 backend also quantizes the activations of 8-bit per-tensor layers (int8 per row)
    act8 = getattr(target, "quantize_activations", False) and scheme == SCHEMES[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=0.02 if act8 else 1e-5)
