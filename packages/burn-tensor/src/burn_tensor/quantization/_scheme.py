"""Quantization schemes as in Burn 0.20: `QuantScheme` and the enums it is made of.

A scheme says how a float tensor is stored as integers:
- `value`: the integer range (`Q8S` is [-127, 127], `Q4S` [-7, 7], `Q2S` [-1, 1]; the full-range
  `Q8F` [-128, 127], `Q4F` [-8, 7], `Q2F` [-2, 1]);
- `level`: one scale for the whole tensor (`QuantLevel.TENSOR`) or one per block of
  `block_size` consecutive elements along the last dim (`QuantLevel.block(32)`);
- `store`: `QuantStore.PACKED_U32` packs 32 / bits values into one 32-bit word along the last
  dim, first value in the lowest bits (Burn's packing order); `QuantStore.NATIVE` keeps one
  int8 per value;
- `mode`: only `QuantMode.SYMMETRIC` (x = scale * q), as Burn;
- `param`: precision of the scales (F32, F16, BF16);
- `acc`: accumulation precision of quantized kernels (F32 or F16);
- `propagation`: whether an op with no quantized kernel returns its output requantized
  with the input's scheme (`PROPAGATE`) or in float (`INHIBIT`, Burn's default).
"""

from __future__ import annotations

import dataclasses
import enum

from .._dtype import DType, Float


class QuantValue(enum.Enum):
    """Integer value type of a quantized tensor (Burn's `QuantValue`)."""

    Q8F = "q8f"
    Q4F = "q4f"
    Q2F = "q2f"
    Q8S = "q8s"
    Q4S = "q4s"
    Q2S = "q2s"

    @property
    def bits(self) -> int:
        """Bits per value (8, 4 or 2)."""
        return int(self.value[1])

    def range(self) -> tuple[int, int]:
        """The representable `(a, b)` of the value type: quantized values clamp to it."""
        b = self.bits
        if self.value.endswith("s"):
            return -(2 ** (b - 1) - 1), 2 ** (b - 1) - 1
        return -(2 ** (b - 1)), 2 ** (b - 1) - 1

    def is_symmetric(self) -> bool:
        return self.value.endswith("s")


class QuantStore(enum.Enum):
    """How quantized values are laid out (Burn's `QuantStore`)."""

    #: 32 / bits values per 32-bit word along the last dim, first value in the lowest bits
    PACKED_U32 = "packed_u32"
    #: one int8 per value (q8 only)
    NATIVE = "native"


class QuantMode(enum.Enum):
    """Quantization mode: only symmetric (x = scale * q), as Burn."""

    SYMMETRIC = "symmetric"


class QuantParam(enum.Enum):
    """Precision of the scales (Burn's `QuantParam`)."""

    F32 = "float32"
    F16 = "float16"
    BF16 = "bfloat16"

    @property
    def dtype(self) -> DType:
        return DType.from_any(self.value)


class QuantAcc(enum.Enum):
    """Accumulation precision of quantized kernels (Burn's `QuantAcc`)."""

    F32 = "float32"
    F16 = "float16"


class QuantPropagation(enum.Enum):
    """Whether ops with no quantized kernel requantize their output (Burn's `QuantPropagation`)."""

    PROPAGATE = "propagate"
    INHIBIT = "inhibit"


@dataclasses.dataclass(frozen=True)
class QuantLevel:
    """Granularity: one scale per tensor, or one per block of `block_size` along the last dim.

    Example:
        >>> QuantLevel.TENSOR, QuantLevel.block(32)
        (QuantLevel.TENSOR, QuantLevel.block(32))
    """

    block_size: int | None = None

    TENSOR = None  # type: ignore[assignment]  # set below

    @staticmethod
    def block(size: int) -> QuantLevel:
        if not isinstance(size, int) or isinstance(size, bool) or size < 1:
            raise ValueError(f"QuantLevel.block: block size must be an int >= 1, got {size!r}")
        return QuantLevel(size)

    def is_block(self) -> bool:
        return self.block_size is not None

    def __repr__(self) -> str:
        return "QuantLevel.TENSOR" if self.block_size is None else f"QuantLevel.block({self.block_size})"


QuantLevel.TENSOR = QuantLevel(None)


class Calibration(enum.Enum):
    """How the range of a float tensor is measured before quantizing (Burn's `Calibration`)."""

    MIN_MAX = "min_max"
    MinMax = "min_max"  # Burn's spelling; an alias of MIN_MAX


@dataclasses.dataclass(frozen=True)
class QuantScheme:
    """A quantization scheme (Burn's `QuantScheme`); defaults: q8 symmetric, per tensor, packed.

    Example:
        >>> QuantScheme().with_value(QuantValue.Q4S).with_level(QuantLevel.block(32)).value
        <QuantValue.Q4S: 'q4s'>
    """

    value: QuantValue = QuantValue.Q8S
    level: QuantLevel = QuantLevel.TENSOR
    store: QuantStore = QuantStore.PACKED_U32
    mode: QuantMode = QuantMode.SYMMETRIC
    param: QuantParam = QuantParam.F32
    acc: QuantAcc = QuantAcc.F32
    propagation: QuantPropagation = QuantPropagation.INHIBIT

    def __post_init__(self):
        for name, typ in (
            ("value", QuantValue),
            ("level", QuantLevel),
            ("store", QuantStore),
            ("mode", QuantMode),
            ("param", QuantParam),
            ("acc", QuantAcc),
            ("propagation", QuantPropagation),
        ):
            got = getattr(self, name)
            if not isinstance(got, typ):
                raise TypeError(
                    f"QuantScheme: {name} must be a {typ.__name__}, got {type(got).__name__} {got!r}"
                )
        if self.store is QuantStore.NATIVE and self.value.bits != 8:
            raise ValueError(
                f"QuantScheme: store NATIVE holds one int8 per value, so it needs an 8-bit value "
                f"type; got {self.value.name} (use QuantStore.PACKED_U32)"
            )

    def with_value(self, value: QuantValue) -> QuantScheme:
        return dataclasses.replace(self, value=value)

    def with_level(self, level: QuantLevel) -> QuantScheme:
        return dataclasses.replace(self, level=level)

    def with_store(self, store: QuantStore) -> QuantScheme:
        return dataclasses.replace(self, store=store)

    def with_mode(self, mode: QuantMode) -> QuantScheme:
        return dataclasses.replace(self, mode=mode)

    def with_param(self, param: QuantParam) -> QuantScheme:
        return dataclasses.replace(self, param=param)

    def with_acc(self, acc: QuantAcc) -> QuantScheme:
        return dataclasses.replace(self, acc=acc)

    def with_propagation(self, propagation: QuantPropagation) -> QuantScheme:
        return dataclasses.replace(self, propagation=propagation)

    @property
    def num_quants(self) -> int:
        """Values per stored element: 32 / bits when packed, 1 for native int8."""
        return 1 if self.store is QuantStore.NATIVE else 32 // self.value.bits

    def params_shape(self, shape: tuple) -> tuple:
        """Shape of the scales for a tensor of `shape`: `(1,)` per tensor, else the shape with
        the last dim divided by the block size."""
        if not self.level.is_block():
            return (1,)
        return tuple(shape[:-1]) + (shape[-1] // self.level.block_size,)

    def to_dict(self) -> dict:
        """Plain strings and ints (what records store)."""
        return {
            "value": self.value.value,
            "block_size": self.level.block_size,
            "store": self.store.value,
            "mode": self.mode.value,
            "param": self.param.value,
            "acc": self.acc.value,
            "propagation": self.propagation.value,
        }

    @staticmethod
    def from_dict(d: dict) -> QuantScheme:
        try:
            bs = d.get("block_size")
            return QuantScheme(
                value=QuantValue(d["value"]),
                level=QuantLevel.TENSOR if bs is None else QuantLevel.block(int(bs)),
                store=QuantStore(d.get("store", "packed_u32")),
                mode=QuantMode(d.get("mode", "symmetric")),
                param=QuantParam(d.get("param", "float32")),
                acc=QuantAcc(d.get("acc", "float32")),
                propagation=QuantPropagation(d.get("propagation", "inhibit")),
            )
        except (KeyError, ValueError) as e:
            raise ValueError(f"QuantScheme.from_dict: bad scheme {d!r}: {e}") from None


class QFloat:
    """The dtype of a quantized float tensor (Burn's `DType::QFloat(scheme)`): kind Float.

    Example:
        >>> QFloat(QuantScheme()).kind, QFloat(QuantScheme()).is_quantized
        (Float, True)
    """

    __slots__ = ("scheme",)
    is_quantized = True
    kind = Float

    def __init__(self, scheme: QuantScheme):
        object.__setattr__(self, "scheme", scheme)

    def __setattr__(self, name, value):
        raise AttributeError("QFloat is immutable")

    def __eq__(self, other):
        return isinstance(other, QFloat) and other.scheme == self.scheme

    def __hash__(self):
        return hash(("QFloat", self.scheme))

    def __call__(self) -> QFloat:
        return self

    @property
    def name(self) -> str:
        return "QFLOAT"

    @property
    def value(self) -> str:
        s = self.scheme
        lvl = "tensor" if not s.level.is_block() else f"block{s.level.block_size}"
        return f"qfloat({s.value.value}, {lvl}, {s.store.value})"

    @property
    def size(self) -> float:
        """Bytes per value (fractional for packed q4/q2), scales not counted."""
        return s_bits / 8 if (s_bits := self.scheme.value.bits) else 0

    def is_float(self) -> bool:
        return True

    def is_int(self) -> bool:
        return False

    def is_bool(self) -> bool:
        return False

    def __repr__(self) -> str:
        return f"DType.QFloat({self.value})"
