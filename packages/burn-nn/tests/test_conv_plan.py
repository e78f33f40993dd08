"""Conv1d / Conv2d options computed once per geometry (`_conv_plan`): the padding is derived
once, not on every forward; results stay the float64 reference's for Same (odd pixel after),
asymmetric Explicit and Valid paddings, strides, dilations and groups; fields the op refuses
still get the op's own error."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
from burn_backend_tests.reference import conv as ref
from burn_ndarray import NdArray
from burn_nn import Conv1dConfig, Conv2d, Conv2dConfig, PaddingConfig1d, PaddingConfig2d
from burn_nn import _padding
from burn_tensor import Tensor, TensorCheckError

DEV = NdArray(float_dtype="float64", int_dtype="int64").device()
RNG = np.random.default_rng(37)


def _want(conv, x, pads):
    """The float64 reference with (top, left, bottom, right) padding applied by hand."""
    t, left, b, r = pads
    xp = np.pad(x, ((0, 0), (0, 0), (t, b), (left, r)))
    w = conv.weight.val().to_data().numpy()
    bias = conv.bias.val().to_data().numpy()
    return ref.conv2d(xp, w, bias, conv.stride, [0, 0], conv.dilation, conv.groups)


CASES = [
    # (padding, kernel, stride, dilation, groups, input sizes, pads for each input size)
    (PaddingConfig2d.Same, [3, 3], [2, 2], [1, 1], 1, [(7, 8), (6, 6)], [(1, 0, 1, 1), (0, 0, 1, 1)]),
    (PaddingConfig2d.Explicit(1, 2, 0, 1), [3, 2], [1, 1], [1, 1], 2, [(5, 6)], [(1, 2, 0, 1)]),
    (PaddingConfig2d.Valid, [2, 3], [1, 2], [2, 1], 4, [(6, 7)], [(0, 0, 0, 0)]),
    (PaddingConfig2d.Explicit(1, 1), [3, 3], [1, 1], [1, 1], 4, [(4, 5)], [(1, 1, 1, 1)]),
]


@pytest.mark.parametrize("case", range(len(CASES)))
def test_conv2d_against_float64_reference(case):
    padding, kernel, stride, dilation, groups, sizes, pads = CASES[case]
    cfg = Conv2dConfig([4, 8], kernel).with_padding(padding).with_stride(stride)
    conv = cfg.with_dilation(dilation).with_groups(groups).init(DEV)
    for _ in range(2):  # the second round runs from the stored plans
        for hw, p in zip(sizes, pads):
            x = RNG.standard_normal((2, 4, *hw))
            got = conv.forward(Tensor.from_data(x, DEV)).to_data().numpy()
            np.testing.assert_allclose(got, _want(conv, x, p), rtol=1e-12, atol=1e-12)


def test_padding_is_derived_once_per_geometry(monkeypatch):
    """Before: `PaddingConfig.pads` ran on every forward (with `split_pads`, ~2 us a call)."""
    calls = []
    real = _padding._Padding.pads

    def counted(self, *args):
        calls.append(self)
        return real(self, *args)

    monkeypatch.setattr(_padding._Padding, "pads", counted)
    conv = Conv2dConfig([3, 3], [3, 3]).with_padding(PaddingConfig2d.Explicit(1, 1)).init(DEV)
    same = Conv2dConfig([3, 3], [3, 3]).with_padding(PaddingConfig2d.Same).init(DEV)
    x, y = (Tensor.from_data(RNG.standard_normal(s), DEV) for s in ((1, 3, 5, 5), (1, 3, 6, 4)))
    for _ in range(5):
        conv.forward(x), same.forward(x), same.forward(y)
    # at most once per geometry (0 if an earlier test already stored it)
    assert calls.count(PaddingConfig2d.Explicit(1, 1)) <= 1
    assert calls.count(PaddingConfig2d.Same) <= 2


def test_conv1d_uses_the_plan_too():
    conv = Conv1dConfig(2, 3, 3).with_padding(PaddingConfig1d.Same).init(DEV)
    x = RNG.standard_normal((1, 2, 7))
    got = conv.forward(Tensor.from_data(x, DEV)).to_data().numpy()
    w = conv.weight.val().to_data().numpy()[..., None, :]
    b = conv.bias.val().to_data().numpy()
    want = ref.conv2d(np.pad(x, ((0, 0), (0, 0), (1, 1)))[..., None, :], w, b, [1, 1], [0, 0],
                      [1, 1], 1)[..., 0, :]  # fmt: skip
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


def test_fields_the_op_refuses_still_get_its_error():
    good = Conv2dConfig([2, 2], [3, 3]).init(DEV)
    x = Tensor.from_data(RNG.standard_normal((1, 2, 5, 5)), DEV)
    bad = Conv2d(weight=good.weight, bias=good.bias, stride=[1, 1, 1], kernel_size=[3, 3])
    with pytest.raises(TensorCheckError, match="stride needs 2 values"):
        bad.forward(x)
    bad = Conv2d(weight=good.weight, bias=good.bias, stride=[0, 1], kernel_size=[3, 3])
    with pytest.raises(TensorCheckError, match="stride"):
        bad.forward(x)
    good.forward(x)  # its plan is stored: a rank-3 input then meets the op's rank check
    with pytest.raises(TensorCheckError, match="rank-4"):
        good.forward(Tensor.from_data(RNG.standard_normal((2, 5, 5)), DEV))


def test_padding_hash_is_stored_and_survives_pickle():
    a, b = PaddingConfig2d.Explicit(1, 2), PaddingConfig2d.Explicit(1, 2, 1, 2)
    assert a == b and hash(a) == hash(b) and hash(a) != hash(PaddingConfig2d.Explicit(2, 1))
    c = pickle.loads(pickle.dumps(a))
    assert c == a and hash(c) == hash(a)
    assert hash(PaddingConfig1d.Same) != hash(PaddingConfig2d.Same)
