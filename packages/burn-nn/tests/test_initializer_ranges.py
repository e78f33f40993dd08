"""Initializer settings are checked when the initializer is built (issue 21: `std` NaN loaded and
filled the model with NaNs)."""

import math

import pytest
from burn_ndarray import NdArray
from burn_nn import ConfigError, Initializer, LinearConfig

NAN, INF = math.nan, math.inf

BAD = [
    (
        lambda: Initializer.Normal(0.0, NAN),
        r"Initializer.Normal: std must be a finite number >= 0.0, got nan",
    ),
    (lambda: Initializer.Normal(0.0, -1.0), r"Initializer.Normal: std .* got -1.0"),
    (
        lambda: Initializer.Normal(INF, 1.0),
        r"Initializer.Normal: mean must be a finite number, got inf",
    ),
    (lambda: Initializer.Uniform(NAN, 1.0), r"Initializer.Uniform: min .* got nan"),
    (
        lambda: Initializer.Uniform(1.0, 0.0),
        r"Initializer.Uniform: min must be < max, got min=1.0, max=0.0",
    ),
    (lambda: Initializer.Constant(NAN), r"Initializer.Constant: value .* got nan"),
    (lambda: Initializer.KaimingUniform(gain=NAN), r"Initializer.KaimingUniform: gain .* got nan"),
    (lambda: Initializer.KaimingNormal(gain=-1.0), r"Initializer.KaimingNormal: gain .* got -1.0"),
    (lambda: Initializer.XavierUniform(INF), r"Initializer.XavierUniform: gain .* got inf"),
    (lambda: Initializer.XavierNormal(NAN), r"Initializer.XavierNormal: gain .* got nan"),
    (lambda: Initializer.Orthogonal(NAN), r"Initializer.Orthogonal: gain .* got nan"),
]


@pytest.mark.parametrize("case", range(len(BAD)))
def test_bad_initializer_values_are_refused(case):
    make, message = BAD[case]
    with pytest.raises(ConfigError, match=message):
        make()


def test_a_config_loaded_with_a_nan_std_fails_naming_the_field(tmp_path):
    path = tmp_path / "linear.json"
    path.write_text(
        '{"d_input": 2, "d_output": 3, "bias": true, '
        '"initializer": {"Normal": {"mean": 0.0, "std": NaN}}}'
    )
    with pytest.raises(ConfigError, match="std must be a finite number"):
        LinearConfig.load(path)


def test_good_values_still_initialize():
    w = Initializer.Normal(1.0, 0.0).init([3], NdArray().device()).val()
    assert w.tolist() == [1.0, 1.0, 1.0]
