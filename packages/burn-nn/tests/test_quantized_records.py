"""Records of quantized modules: stored as quantized (files shrink), loading restores the scheme."""

from __future__ import annotations

import os

import numpy as np
import pytest
from burn_ndarray import NdArray
from burn_nn import LinearConfig, Quantizer
from burn_record import (
    BinFileRecorder,
    NamedMpkFileRecorder,
    PrettyJsonFileRecorder,
    UnsupportedItemError,
)
from burn_tensor import Tensor
from burn_tensor.quantization import QuantLevel, QuantParam, QuantPropagation, QuantScheme, QuantValue


def _model(d):
    return LinearConfig(256, 128).init(d)


@pytest.mark.parametrize(
    "scheme,min_ratio",
    [
        (QuantScheme(), 3.5),  # int8 per tensor: 4x minus the file's framing
        (QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32)), 6.0),
        (QuantScheme(value=QuantValue.Q2S, level=QuantLevel.block(64)), 10.0),
    ],
    ids=["q8s", "q4s-b32", "q2s-b64"],
)
def test_quantized_record_file_shrinks_and_restores(tmp_path, scheme, min_ratio):
    d = NdArray().device()
    model = _model(d)
    q = model.quantize_weights(Quantizer(scheme=scheme))
    f = model.save_file(tmp_path / "float")
    fq = q.save_file(tmp_path / "quant")
    ratio = os.path.getsize(f) / os.path.getsize(fq)
    assert ratio >= min_ratio, f"record only {ratio:.2f}x smaller"
    loaded = _model(d).load_file(tmp_path / "quant")  # a float model: loading restores the scheme
    for name in ("weight", "bias"):
        a, b = getattr(q, name).val(), getattr(loaded, name).val()
        assert b.is_quantized() and b.dtype == a.dtype
        assert not getattr(loaded, name).require_grad
        np.testing.assert_array_equal(b.quantized_data().values, a.quantized_data().values)
        np.testing.assert_array_equal(b.quantized_data().scales, a.quantized_data().scales)
    x = Tensor.from_data(np.random.default_rng(1).normal(size=(3, 256)).astype(np.float32), d)
    np.testing.assert_array_equal(loaded(x).numpy(), q(x).numpy())


def test_json_recorder_round_trips_and_binary_refuses_clearly(tmp_path):
    d = NdArray().device()
    q = _model(d).quantize_weights(Quantizer(scheme=QuantScheme(value=QuantValue.Q4S)))
    rec = PrettyJsonFileRecorder()
    loaded = _model(d).load_file(q.save_file(tmp_path / "j", rec), rec)
    np.testing.assert_array_equal(
        loaded.weight.val().quantized_data().values, q.weight.val().quantized_data().values
    )
    with pytest.raises(UnsupportedItemError, match="binary format does not store quantized"):
        q.save_file(tmp_path / "b", BinFileRecorder())
    assert not os.path.exists(tmp_path / "b.bin")
    assert NamedMpkFileRecorder is not None


@pytest.mark.parametrize(
    "scheme,stored",
    [
        (QuantScheme(), {"value": "q8s"}),
        (QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32)), {"value": "q4s", "block_size": 32}),
        (QuantScheme(value=QuantValue.Q4S, level=QuantLevel.block(32), param=QuantParam.F16,
                     propagation=QuantPropagation.PROPAGATE),
         {"value": "q4s", "block_size": 32, "param": "float16", "propagation": "propagate"}),
    ],
    ids=["q8s", "q4s-b32", "q4s-b32-f16-propagate"],
)  # fmt: skip
def test_record_stores_only_the_scheme_fields_that_differ_from_the_defaults(tmp_path, scheme, stored):
    # every quantized tensor used to carry all 7 scheme fields (~100 bytes): in a small
    # transformer (26 quantized tensors) that framing alone kept the int4 record under 6x
    from burn_record._json import dumps, loads  # the checksummed JSON layout, to edit a file

    d = NdArray().device()
    q = _model(d).quantize_weights(Quantizer(scheme=scheme))
    rec = PrettyJsonFileRecorder()
    path = q.save_file(tmp_path / "j", rec)
    with open(path, "rb") as f:
        tree = loads(f.read(), "test")
    assert list(_find(tree, "qscheme")) == [stored, stored]  # weight, bias
    loaded = _model(d).load_file(path, rec)
    assert loaded.weight.val().dtype.scheme == scheme
    # a file written with every field (the layout before) loads the same
    with open(tmp_path / "old.json", "wb") as f:
        f.write(dumps(_rewrite_schemes(tree, scheme.to_dict()), pretty=True))
    again = _model(d).load_file(tmp_path / "old", rec)
    assert again.weight.val().dtype.scheme == scheme
    np.testing.assert_array_equal(
        again.weight.val().quantized_data().values, q.weight.val().quantized_data().values
    )


def _find(obj, key):
    if isinstance(obj, dict):
        for k, v in obj.items():
            if k == key:
                yield v
            else:
                yield from _find(v, key)
    elif isinstance(obj, list):
        for v in obj:
            yield from _find(v, key)


def _rewrite_schemes(obj, full):
    if isinstance(obj, dict):
        return {k: (full if k == "qscheme" else _rewrite_schemes(v, full)) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_rewrite_schemes(v, full) for v in obj]
    return obj
