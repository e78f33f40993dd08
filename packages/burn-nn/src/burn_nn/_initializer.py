"""Parameter initializers with Burn's formulas (`burn::nn::Initializer`)."""

from __future__ import annotations

import contextlib
import dataclasses
import math
import threading
from typing import Any, ClassVar

import numpy as np
from burn_tensor import Distribution, Tensor, TensorData

from ._codec import ConfigError
from ._param import Param


class Initializer:
    """Base of the initializer variants; `init(shape, device)` / `init_with(shape, fan_in, fan_out,
    device)` return a `Param`, `init_tensor` / `init_tensor_with` the bare tensor.

    Variants (also `Initializer.<Name>`): `Constant(value)`, `Ones()`, `Zeros()`, `Uniform(min, max)`,
    `Normal(mean, std)`, `KaimingUniform(gain, fan_out_only)`, `KaimingNormal(gain, fan_out_only)`,
    `XavierUniform(gain)`, `XavierNormal(gain)`, `Orthogonal(gain)`. Kaiming/Xavier need fans.

    Example:
        >>> from burn_ndarray import NdArray
        >>> init = Initializer.KaimingUniform(gain=1 / 3 ** 0.5, fan_out_only=False)
        >>> init.init_with([4, 2], 4, 2, NdArray().device()).dims()
        [4, 2]
    """

    _variants: ClassVar[dict[str, type]] = {}

    def __init_subclass__(cls, **kw: Any) -> None:
        super().__init_subclass__(**kw)
        Initializer._variants[cls.__name__] = cls
        setattr(Initializer, cls.__name__, cls)

    def init(self, shape, device=None) -> Param:
        return self.init_with(shape, None, None, device)

    def init_with(self, shape, fan_in: int | None, fan_out: int | None, device=None) -> Param:
        if getattr(_LAZY, "depth", 0):
            from ._util import device_or_default

            dev = device_or_default(device)
            shape = [int(d) for d in shape]

            def init(d, require_grad):
                return self.init_tensor_with(shape, fan_in, fan_out, d)

            return Param.uninitialized(None, init, dev, True, shape)
        return Param.from_tensor(self.init_tensor_with(shape, fan_in, fan_out, device))

    def init_tensor(self, shape, device=None) -> Tensor:
        return self.init_tensor_with(shape, None, None, device)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        raise NotImplementedError

    # -- JSON (Burn serde: unit variants as "Ones", struct variants as {"Name": {...}}) ------------
    def _to_json_value(self) -> Any:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return type(self).__name__ if not values else {type(self).__name__: values}

    @classmethod
    def _from_json_value(cls, value: Any, where: str = "Initializer") -> Initializer:
        if isinstance(value, str):
            name, args = value, {}
        elif isinstance(value, dict) and len(value) == 1:
            ((name, args),) = value.items()
        else:
            raise ConfigError(f"{where}: expected an initializer, got {value!r}")
        variant = Initializer._variants.get(name)
        if variant is None or (cls is not Initializer and variant is not cls):
            raise ConfigError(
                f"{where}: unknown initializer {name!r} (one of {list(Initializer._variants)})"
            )
        if not isinstance(args, dict):
            raise ConfigError(f"{where}: {name} expects an object of fields, got {args!r}")
        known = {f.name for f in dataclasses.fields(variant)}
        if set(args) - known:
            raise ConfigError(f"{where}: unknown field(s) {sorted(set(args) - known)} for {name}")
        return variant(
            **{
                k: float(v) if isinstance(v, int) and not isinstance(v, bool) else v
                for k, v in args.items()
            }
        )


_LAZY = threading.local()


@contextlib.contextmanager
def lazy_init():
    """Inside the block, initializers return lazy params (`Param.uninitialized`): a model's
    random init runs on the first use of each param (its first forward), never when a record
    is loaded into it first (Burn's lazy initialization). Outside, params are built eagerly.

    Example:
        >>> from burn_ndarray import NdArray
        >>> from burn_nn import LinearConfig
        >>> with lazy_init():
        ...     layer = LinearConfig(4, 2).init(NdArray().device())
        >>> layer.weight.is_initialized(), layer.num_params(), layer.weight.is_initialized()
        (False, 10, False)
    """
    _LAZY.depth = getattr(_LAZY, "depth", 0) + 1
    try:
        yield
    finally:
        _LAZY.depth -= 1


def _finite(owner: str, field: str, value, lo: float | None = None) -> None:
    """Refuse NaN/inf (and values below `lo`) when the initializer is built, naming the field:
    `Normal(0.0, nan)` would otherwise fill a model with NaNs at init."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        raise ConfigError(f"Initializer.{owner}: {field} must be a number, got {value!r}") from None
    if not math.isfinite(v) or (lo is not None and v < lo):
        bound = "" if lo is None else f" >= {lo}"
        raise ConfigError(f"Initializer.{owner}: {field} must be a finite number{bound}, got {v}")


def _numel(shape) -> int:
    return math.prod(int(d) for d in shape)


def _fan(name: str, fan: int | None, which: str) -> int:
    if fan is None:
        raise ValueError(
            f"{name} initializer needs {which}; use init_with(shape, fan_in, fan_out, device)"
        )
    return fan


def _uniform(shape, a: float, device) -> Tensor:
    if a <= 0:
        return Tensor.zeros(list(shape), device)
    return Tensor.random(list(shape), Distribution.uniform(-a, a), device)


def _normal(shape, mean: float, std: float, device) -> Tensor:
    return Tensor.random(list(shape), Distribution.normal(mean, std), device)


@dataclasses.dataclass(frozen=True)
class Constant(Initializer):
    """Every element equal to `value`."""

    value: float

    def __post_init__(self) -> None:
        _finite("Constant", "value", self.value)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        return Tensor.full(list(shape), float(self.value), device)


@dataclasses.dataclass(frozen=True)
class Ones(Initializer):
    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        return Tensor.ones(list(shape), device)


@dataclasses.dataclass(frozen=True)
class Zeros(Initializer):
    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        return Tensor.zeros(list(shape), device)


@dataclasses.dataclass(frozen=True)
class Uniform(Initializer):
    """U(min, max)."""

    min: float
    max: float

    def __post_init__(self) -> None:
        _finite("Uniform", "min", self.min)
        _finite("Uniform", "max", self.max)
        if not self.min < self.max:
            raise ConfigError(
                f"Initializer.Uniform: min must be < max, got min={self.min}, max={self.max}"
            )

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        return Tensor.random(list(shape), Distribution.uniform(self.min, self.max), device)


@dataclasses.dataclass(frozen=True)
class Normal(Initializer):
    """N(mean, std)."""

    mean: float
    std: float

    def __post_init__(self) -> None:
        _finite("Normal", "mean", self.mean)
        _finite("Normal", "std", self.std, 0.0)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        return _normal(shape, self.mean, self.std, device)


@dataclasses.dataclass(frozen=True)
class KaimingUniform(Initializer):
    """U(-a, a), a = sqrt(3) * gain / sqrt(fan); fan = fan_out if `fan_out_only` else fan_in."""

    gain: float = 1.0 / math.sqrt(3.0)
    fan_out_only: bool = False

    def __post_init__(self) -> None:
        _finite("KaimingUniform", "gain", self.gain, 0.0)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        fan = _fan(
            "KaimingUniform",
            fan_out if self.fan_out_only else fan_in,
            "fan_out" if self.fan_out_only else "fan_in",
        )
        return _uniform(shape, math.sqrt(3.0) * self.gain / math.sqrt(fan), device)


@dataclasses.dataclass(frozen=True)
class KaimingNormal(Initializer):
    """N(0, gain / sqrt(fan)); fan = fan_out if `fan_out_only` else fan_in."""

    gain: float = 1.0 / math.sqrt(3.0)
    fan_out_only: bool = False

    def __post_init__(self) -> None:
        _finite("KaimingNormal", "gain", self.gain, 0.0)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        fan = _fan(
            "KaimingNormal",
            fan_out if self.fan_out_only else fan_in,
            "fan_out" if self.fan_out_only else "fan_in",
        )
        return _normal(shape, 0.0, self.gain / math.sqrt(fan), device)


@dataclasses.dataclass(frozen=True)
class XavierUniform(Initializer):
    """U(-a, a), a = sqrt(3) * gain * sqrt(2 / (fan_in + fan_out))."""

    gain: float = 1.0

    def __post_init__(self) -> None:
        _finite("XavierUniform", "gain", self.gain, 0.0)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        fi, fo = _fan("XavierUniform", fan_in, "fan_in"), _fan("XavierUniform", fan_out, "fan_out")
        return _uniform(shape, math.sqrt(3.0) * self.gain * math.sqrt(2.0 / (fi + fo)), device)


@dataclasses.dataclass(frozen=True)
class XavierNormal(Initializer):
    """N(0, gain * sqrt(2 / (fan_in + fan_out)))."""

    gain: float = 1.0

    def __post_init__(self) -> None:
        _finite("XavierNormal", "gain", self.gain, 0.0)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        fi, fo = _fan("XavierNormal", fan_in, "fan_in"), _fan("XavierNormal", fan_out, "fan_out")
        return _normal(shape, 0.0, self.gain * math.sqrt(2.0 / (fi + fo)), device)


@dataclasses.dataclass(frozen=True)
class Orthogonal(Initializer):
    """QR of an N(0, 1) [rows, numel / rows] matrix (transposed when rows < cols), columns
    sign-corrected by diag(R), times `gain`. Needs a rank >= 2 shape."""

    gain: float = 1.0

    def __post_init__(self) -> None:
        _finite("Orthogonal", "gain", self.gain, 0.0)

    def init_tensor_with(self, shape, fan_in, fan_out, device=None) -> Tensor:
        shape = [int(d) for d in shape]
        if len(shape) < 2:
            raise ValueError(f"Orthogonal initializer needs a shape of rank >= 2, got {shape}")
        rows = shape[0]
        cols = _numel(shape) // rows
        flat = _normal([rows, cols], 0.0, 1.0, device).numpy().astype(np.float64)
        if rows < cols:
            flat = flat.T
        q, r = np.linalg.qr(flat)
        q = q * np.sign(np.diag(r))
        if rows < cols:
            q = q.T
        return Tensor.from_data(TensorData((q * self.gain).reshape(shape)), device)
