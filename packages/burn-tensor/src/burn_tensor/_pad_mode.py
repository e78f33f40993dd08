"""`PadMode` (Burn's `burn::tensor::ops::PadMode`): how `Tensor.pad` fills the new border."""

from __future__ import annotations

from dataclasses import dataclass

PAD_MODES = ("constant", "reflect", "edge")


@dataclass(frozen=True)
class PadMode:
    """`PadMode.Constant(value)`, `PadMode.Reflect` (mirror without repeating the edge:
    [1, 2, 3] padded by 2 on the left is [3, 2, 1, 2, 3]; the padding must be smaller than the
    dim) or `PadMode.Edge` (repeat the edge value). `Tensor.pad` also takes a number (constant)
    or the names "constant", "reflect", "edge".

    Example:
        >>> PadMode.Constant(1.5), PadMode.Reflect.mode
        (PadMode.Constant(1.5), 'reflect')
    """

    mode: str
    value: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in PAD_MODES:
            raise ValueError(f"PadMode: mode must be one of {PAD_MODES}, got {self.mode!r}")

    @staticmethod
    def Constant(value=0.0) -> PadMode:  # noqa: N802 - Burn's variant name
        return PadMode("constant", value)

    def __repr__(self) -> str:
        if self.mode == "constant":
            return f"PadMode.Constant({self.value!r})"
        return f"PadMode.{self.mode.capitalize()}"


PadMode.Reflect = PadMode("reflect")
PadMode.Edge = PadMode("edge")
