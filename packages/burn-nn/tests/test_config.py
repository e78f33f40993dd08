import enum
import pickle

import pytest
from burn_nn import (
    Config,
    ConfigError,
    Initializer,
    KaimingUniform,
    LinearConfig,
    PaddingConfig2d,
    config,
    Conv2dConfig,
)


class Act(enum.Enum):
    Relu = 1
    Gelu = 2


@config
class Inner:
    a: int
    b: float = 0.5


@config
class Outer:
    x: int
    inner: Inner
    acts: list[Act] = [Act.Relu]
    maybe: int | None = None
    name: str = "hi"
    w: int  # required after defaulted fields: still positional, in declaration order


def test_positional_required_keyword_defaults():
    o = Outer(1, Inner(2), 3)
    assert (o.x, o.inner.a, o.w, o.acts, o.maybe) == (1, 2, 3, [Act.Relu], None)
    with pytest.raises(TypeError):
        Outer(1, Inner(2), 3, [Act.Gelu])  # defaulted fields are keyword-only
    assert Outer(1, Inner(2), 3, acts=[Act.Gelu]).acts == [Act.Gelu]


def test_with_and_replace_return_copies():
    o = Outer(1, Inner(2), 3)
    o2 = o.with_maybe(4).with_name("q")
    assert (o2.maybe, o2.name, o.maybe, o.name) == (4, "q", None, "hi")
    assert o.replace(x=9).x == 9
    with pytest.raises(Exception):
        o.x = 5  # frozen


def test_mutable_default_not_shared():
    a, b = Outer(1, Inner(2), 3), Outer(1, Inner(2), 3)
    assert a.acts is not b.acts


def test_json_round_trip_nested_enum_list_none(tmp_path):
    o = Outer(1, Inner(2, b=0.25), 3, acts=[Act.Gelu, Act.Relu], maybe=None)
    text = o.to_json()
    assert '"Gelu"' in text and '"maybe": null' in text
    assert Outer.from_json(text) == o
    path = o.save(tmp_path / "config.json")
    assert Outer.load(path) == o
    assert hash(Outer.load(path)) == hash(o)
    assert pickle.loads(pickle.dumps(o)) == o


def test_missing_and_unknown_fields_are_named(tmp_path):
    with pytest.raises(ConfigError, match="missing required field.*'inner'.*'w'"):
        Outer.from_json('{"x": 1}')
    with pytest.raises(ConfigError, match="unknown field.*'oops'"):
        Outer.from_json('{"x": 1, "inner": {"a": 1}, "w": 2, "oops": 3}')
    with pytest.raises(ConfigError, match=r"Outer.inner: missing required field\(s\) 'a'"):
        Outer.from_json('{"x": 1, "inner": {}, "w": 2}')
    with pytest.raises(ConfigError, match="expected an integer"):
        Outer.from_json('{"x": "one", "inner": {"a": 1}, "w": 2}')
    with pytest.raises(ConfigError, match="not a Act"):
        Outer.from_json('{"x": 1, "inner": {"a": 1}, "w": 2, "acts": ["Tanh"]}')
    with pytest.raises(ConfigError, match="no config file"):
        Outer.load(tmp_path / "nope.json")


def test_defaulted_field_missing_from_json_takes_default():
    assert Outer.from_json('{"x": 1, "inner": {"a": 1}, "w": 2}').name == "hi"


def test_config_base_class_style():
    class TrainingConfig(Config):
        model: Inner
        num_epochs: int = 10
        learning_rate: float = 1.0e-4

    c = TrainingConfig(Inner(3)).with_num_epochs(2)
    assert TrainingConfig.from_json(c.to_json()) == c
    assert TrainingConfig.load_binary(c.to_json().encode()) == c


def test_book_config_example():
    @config
    class MyModuleConfig:
        d_model: int
        d_ff: int
        dropout: float = 0.1

    c = MyModuleConfig(512, 2048)
    assert (c.d_model, c.d_ff, c.dropout) == (512, 2048, 0.1)
    assert c.with_dropout(0.2).dropout == 0.2


def test_builtin_configs_round_trip_with_initializer_and_padding():
    c = (
        Conv2dConfig([1, 8], [3, 3])
        .with_padding(PaddingConfig2d.Explicit(1, 2))
        .with_initializer(Initializer.XavierNormal(gain=2.0))
    )
    back = Conv2dConfig.from_json(c.to_json())
    assert back == c and back.padding == PaddingConfig2d.Explicit(1, 2, 1, 2)
    assert '"Same"' in Conv2dConfig([1, 1], [3, 3], padding=PaddingConfig2d.Same).to_json()
    lin = LinearConfig(3, 4)
    assert '"KaimingUniform"' in lin.to_json()
    assert LinearConfig.from_json(lin.to_json()).initializer == KaimingUniform()
    ones = LinearConfig(3, 4, initializer=Initializer.Ones())
    assert '"Ones"' in ones.to_json() and LinearConfig.from_json(ones.to_json()) == ones
    with pytest.raises(ConfigError, match="unknown initializer"):
        LinearConfig.from_json('{"d_input": 1, "d_output": 2, "initializer": "Magic"}')
