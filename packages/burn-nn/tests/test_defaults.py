"""Every config's defaults equal Burn's (reference/burn-inventory.md §7)."""

import dataclasses
import math

import pytest

import burn_nn as nn
from burn_nn import Initializer, LinearLayout, PaddingConfig1d, PaddingConfig2d
from burn_nn.loss import Reduction  # noqa: F401

KU = Initializer.KaimingUniform(gain=1 / math.sqrt(3), fan_out_only=False)

TABLE = [
    (nn.LinearConfig, (3, 4), dict(bias=True, initializer=KU, layout=LinearLayout.Row)),
    (
        nn.Conv1dConfig,
        (2, 3, 3),
        dict(
            stride=1, dilation=1, groups=1, padding=PaddingConfig1d.Valid, bias=True, initializer=KU
        ),
    ),
    (
        nn.Conv2dConfig,
        ([2, 3], [3, 3]),
        dict(
            stride=[1, 1],
            dilation=[1, 1],
            groups=1,
            padding=PaddingConfig2d.Valid,
            bias=True,
            initializer=KU,
        ),
    ),
    (
        nn.ConvTranspose1dConfig,
        ([2, 3], 3),
        dict(stride=1, dilation=1, groups=1, padding=0, padding_out=0, bias=True, initializer=KU),
    ),
    (
        nn.ConvTranspose2dConfig,
        ([2, 3], [3, 3]),
        dict(
            stride=[1, 1],
            dilation=[1, 1],
            groups=1,
            padding=[0, 0],
            padding_out=[0, 0],
            bias=True,
            initializer=KU,
        ),
    ),
    (
        nn.MaxPool1dConfig,
        (3,),
        dict(stride=3, padding=PaddingConfig1d.Valid, dilation=1, ceil_mode=False),
    ),
    (
        nn.MaxPool2dConfig,
        ([2, 3],),
        dict(strides=[2, 3], padding=PaddingConfig2d.Valid, dilation=[1, 1], ceil_mode=False),
    ),
    (
        nn.AvgPool1dConfig,
        (3,),
        dict(stride=3, padding=PaddingConfig1d.Valid, count_include_pad=True, ceil_mode=False),
    ),
    (
        nn.AvgPool2dConfig,
        ([2, 2],),
        dict(
            strides=[2, 2], padding=PaddingConfig2d.Valid, count_include_pad=True, ceil_mode=False
        ),
    ),
    (nn.AdaptiveAvgPool1dConfig, (4,), dict()),
    (nn.AdaptiveAvgPool2dConfig, ([4, 4],), dict()),
    (nn.BatchNormConfig, (8,), dict(epsilon=1e-5, momentum=0.1)),
    (nn.LayerNormConfig, (8,), dict(epsilon=1e-5, bias=True)),
    (nn.GroupNormConfig, (2, 8), dict(epsilon=1e-5, affine=True)),
    (nn.InstanceNormConfig, (8,), dict(epsilon=1e-5, affine=True)),
    (nn.RmsNormConfig, (8,), dict(epsilon=1e-5)),
    (nn.DropoutConfig, (0.5,), dict()),
    (nn.EmbeddingConfig, (10, 4), dict(initializer=Initializer.Normal(mean=0.0, std=1.0))),
    (nn.LeakyReluConfig, (), dict(negative_slope=0.01)),
    (nn.PReluConfig, (), dict(num_parameters=1, alpha=0.25)),
    (nn.HardSigmoidConfig, (), dict(alpha=0.2, beta=0.5)),
    (nn.SoftplusConfig, (), dict(beta=1.0)),
    (nn.SwiGluConfig, (4, 4), dict(bias=False, initializer=KU, layout=LinearLayout.Row)),
    (
        nn.CrossEntropyLossConfig,
        (),
        dict(pad_tokens=None, weights=None, smoothing=None, logits=True),
    ),
    (nn.BinaryCrossEntropyLossConfig, (), dict(weights=None, smoothing=None, logits=False)),
    (nn.HuberLossConfig, (1.0,), dict()),
    (nn.SmoothL1LossConfig, (), dict(beta=1.0)),
    (nn.KLDivLossConfig, (), dict(log_target=False)),
]


def _extra_table():
    xn = Initializer.XavierNormal(gain=1.0)
    rows = []
    names = {
        "LstmConfig": (
            (4, 8, True),
            dict(initializer=xn, batch_first=True, reverse=False, clip=None, input_forget=False),
        ),
        "BiLstmConfig": (
            (4, 8, True),
            dict(initializer=xn, batch_first=True, clip=None, input_forget=False),
        ),
        "GruConfig": ((4, 8, True), dict(reset_after=True, initializer=xn, clip=None)),
        "MultiHeadAttentionConfig": (
            (8, 2),
            dict(dropout=0.1, min_float=-1e4, quiet_softmax=False, initializer=KU),
        ),
        "TransformerEncoderConfig": (
            (8, 16, 2, 2),
            dict(
                dropout=0.1,
                norm_first=False,
                quiet_softmax=False,
                initializer=KU,
                layer_norm_eps=1e-5,
            ),
        ),
        "TransformerDecoderConfig": (
            (8, 16, 2, 2),
            dict(
                dropout=0.1,
                norm_first=False,
                quiet_softmax=False,
                initializer=KU,
                layer_norm_eps=1e-5,
            ),
        ),
        "PositionWiseFeedForwardConfig": ((8, 16), dict(dropout=0.1, initializer=KU)),
        "PositionalEncodingConfig": ((8,), dict(max_sequence_size=5000, max_timescale=10000)),
        "RotaryEncodingConfig": ((16, 8), dict(theta=10000.0)),
        "Unfold4dConfig": (([2, 2],), dict(stride=[1, 1], dilation=[1, 1], padding=[0, 0])),
        "Interpolate2dConfig": ((), dict(output_size=None, scale_factor=None)),
        "Interpolate1dConfig": ((), dict(output_size=None, scale_factor=None)),
    }
    for name, (args, defaults) in names.items():
        rows.append(pytest.param(getattr(nn, name), args, defaults, id=name))
    return rows


@pytest.mark.parametrize(
    "cls,args,defaults", [pytest.param(*r, id=r[0].__name__) for r in TABLE] + _extra_table()
)
def test_config_defaults(cls, args, defaults):
    cfg = cls(*args)
    for name, value in defaults.items():
        assert getattr(cfg, name) == value, f"{cls.__name__}.{name}"
    # required fields are exactly the positional args
    required = [
        f.name
        for f in dataclasses.fields(cls)
        if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
    ]
    assert len(required) == len(args)
    assert cls.from_json(cfg.to_json()) == cfg
