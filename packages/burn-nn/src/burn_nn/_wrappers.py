"""Wrapper enums: `NormalizationConfig`/`Normalization` and `ActivationConfig`/`Activation`
(Burn's `nn::norm::Normalization*` and `nn::activation::Activation*`).

A config is one variant (`NormalizationConfig.Layer(LayerNormConfig(64))`,
`ActivationConfig.Relu`, `ActivationConfig.LeakyRelu(LeakyReluConfig(0.1))`) and serializes as
Burn's serde does (`{"Layer": {...}}`, `"Relu"`, `{"LeakyRelu": {...}}`). `init(device)` builds
the wrapper module, which holds the variant's module in its `inner` field (its params are
`inner.<name>` in records) and forwards to it.
"""

from __future__ import annotations

from typing import Any

from burn_tensor import Tensor

from ._activation import (
    Gelu,
    HardSigmoidConfig,
    HardSwish,
    LeakyReluConfig,
    PReluConfig,
    Relu,
    Sigmoid,
    SoftplusConfig,
    SwiGluConfig,
    Tanh,
)
from ._codec import ConfigError
from ._module import Module
from ._norm import (
    BatchNormConfig,
    GroupNormConfig,
    InstanceNormConfig,
    LayerNormConfig,
    RmsNormConfig,
)


class _Variant:
    """One variant of a Burn config enum: a name and its config (None for unit variants)."""

    __slots__ = ("config", "variant")
    #: variant name -> config class (None: a unit variant without config)
    VARIANTS: dict = {}

    def __init__(self, variant: str, config=None):
        kinds = type(self).VARIANTS
        if variant not in kinds:
            raise ValueError(f"{type(self).__name__}: unknown variant {variant!r} ({list(kinds)})")
        want = kinds[variant]
        if (want is None) != (config is None) or (want is not None and type(config) is not want):
            need = "no config" if want is None else want.__name__
            raise TypeError(
                f"{type(self).__name__}.{variant} takes {need}, got {type(config).__name__}"
            )
        object.__setattr__(self, "variant", variant)
        object.__setattr__(self, "config", config)

    def __setattr__(self, name, value):
        raise AttributeError(f"{type(self).__name__} is immutable")

    @classmethod
    def from_config(cls, config):
        """The variant holding `config` (Burn's `From<XConfig>`)."""
        for name, kind in cls.VARIANTS.items():
            if kind is not None and type(config) is kind:
                return cls(name, config)
        raise TypeError(f"{cls.__name__}: no variant takes a {type(config).__name__}")

    def __eq__(self, other) -> bool:
        return type(self) is type(other) and (self.variant, self.config) == (
            other.variant,
            other.config,
        )

    def __hash__(self) -> int:
        return hash((type(self).__name__, self.variant))

    def __repr__(self) -> str:
        name = f"{type(self).__name__}.{self.variant}"
        return name if self.config is None else f"{name}({self.config!r})"

    def __reduce__(self):
        return (type(self), (self.variant, self.config))

    def _to_json_value(self) -> Any:
        if self.config is None:
            return self.variant
        return {self.variant: self.config._to_json_value()}

    @classmethod
    def _from_json_value(cls, value: Any, where: str = "config"):
        if isinstance(value, str) and cls.VARIANTS.get(value, 0) is None:
            return cls(value)
        if isinstance(value, dict) and len(value) == 1:
            (name, body), = value.items()
            kind = cls.VARIANTS.get(name)
            if kind is not None:
                return cls(name, kind._from_json_value(body, f"{where}.{name}"))
        raise ConfigError(f"{where}: not a {cls.__name__} variant: {value!r}")

    def to_json(self) -> str:
        import json

        return json.dumps(self._to_json_value(), indent=2)

    @classmethod
    def from_json(cls, text):
        import json

        return cls._from_json_value(json.loads(text), cls.__name__)


def _variant_ctor(name):
    return classmethod(lambda cls, config: cls(name, config))


# -- normalization ---------------------------------------------------------------------------------
_NORM_FEATURES = {
    "Batch": "num_features",
    "Group": "num_channels",
    "Instance": "num_channels",
    "Layer": "d_model",
    "Rms": "d_model",
}


class NormalizationConfig(_Variant):
    """A normalization layer's config, one of `Batch`, `Group`, `Instance`, `Layer`, `Rms`
    (Burn's `NormalizationConfig`).

    Example:
        >>> cfg = NormalizationConfig.Layer(LayerNormConfig(8)).with_num_features(16)
        >>> cfg.num_features(), cfg.to_json().startswith('{')
        (16, True)
    """

    VARIANTS = {
        "Batch": BatchNormConfig,
        "Group": GroupNormConfig,
        "Instance": InstanceNormConfig,
        "Layer": LayerNormConfig,
        "Rms": RmsNormConfig,
    }
    Batch = _variant_ctor("Batch")
    Group = _variant_ctor("Group")
    Instance = _variant_ctor("Instance")
    Layer = _variant_ctor("Layer")
    Rms = _variant_ctor("Rms")

    def init(self, device=None) -> Normalization:
        return Normalization(variant=self.variant, inner=self.config.init(device))

    def num_features(self) -> int:
        """The feature count of the wrapped config (num_features, num_channels or d_model)."""
        return getattr(self.config, _NORM_FEATURES[self.variant])

    def with_num_features(self, num_features: int) -> NormalizationConfig:
        """The same variant with its feature count replaced."""
        field = _NORM_FEATURES[self.variant]
        return type(self)(self.variant, self.config.replace(**{field: num_features}))


class Normalization(Module):
    """A normalization layer of any variant (Burn's `Normalization` enum module).

    Shapes: those of the wrapped layer.
    """

    variant: str
    inner: Module

    def forward(self, x: Tensor) -> Tensor:
        return self.inner.forward(x)


# -- activation ------------------------------------------------------------------------------------
_UNIT_ACTIVATIONS = {
    "Gelu": Gelu,
    "Relu": Relu,
    "Sigmoid": Sigmoid,
    "Tanh": Tanh,
    "HardSwish": HardSwish,
}


class ActivationConfig(_Variant):
    """An activation's config (Burn's `ActivationConfig`): `ActivationConfig.Gelu`, `.Relu`,
    `.Sigmoid`, `.Tanh`, `.HardSwish` (unit variants), `.PRelu(cfg)`, `.LeakyRelu(cfg)`,
    `.SwiGlu(cfg)`, `.HardSigmoid(cfg)`, `.Softplus(cfg)`.

    Example:
        >>> from burn_ndarray import NdArray
        >>> act = ActivationConfig.Relu.init(NdArray().device())
        >>> act.forward(Tensor.from_data([-1.0, 2.0], NdArray().device())).tolist()
        [0.0, 2.0]
    """

    VARIANTS = {
        "Gelu": None,
        "PRelu": PReluConfig,
        "Relu": None,
        "LeakyRelu": LeakyReluConfig,
        "SwiGlu": SwiGluConfig,
        "Sigmoid": None,
        "Tanh": None,
        "HardSigmoid": HardSigmoidConfig,
        "HardSwish": None,
        "Softplus": SoftplusConfig,
    }
    PRelu = _variant_ctor("PRelu")
    LeakyRelu = _variant_ctor("LeakyRelu")
    SwiGlu = _variant_ctor("SwiGlu")
    HardSigmoid = _variant_ctor("HardSigmoid")
    Softplus = _variant_ctor("Softplus")

    def init(self, device=None) -> Activation:
        if self.config is None:
            inner = _UNIT_ACTIVATIONS[self.variant]()
        else:
            inner = self.config.init(device)
        return Activation(variant=self.variant, inner=inner)


for _name in _UNIT_ACTIVATIONS:
    setattr(ActivationConfig, _name, ActivationConfig(_name))


class Activation(Module):
    """An activation of any variant (Burn's `Activation` enum module).

    Shapes: those of the wrapped activation (any -> same; SwiGlu: `[..., d_input]` ->
    `[..., d_output]`).
    """

    variant: str
    inner: Module

    def forward(self, x: Tensor) -> Tensor:
        return self.inner.forward(x)
