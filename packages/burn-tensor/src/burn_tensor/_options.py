"""Option records for module ops (Burn's `ConvOptions`, `ConvTransposeOptions`, ...)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ConvOptions:
    """Convolution options, one int per spatial dim: `ConvOptions((1, 1), (0, 0), (1, 1), 1)`."""

    stride: tuple[int, ...]
    padding: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int = 1


@dataclass(frozen=True)
class ConvTransposeOptions:
    """Transposed convolution options; `padding_out` adds rows/cols at the end of the output."""

    stride: tuple[int, ...]
    padding: tuple[int, ...]
    padding_out: tuple[int, ...]
    dilation: tuple[int, ...]
    groups: int = 1


@dataclass(frozen=True)
class UnfoldOptions:
    """Options of `unfold4d` (im2col): stride, padding, dilation per spatial dim."""

    stride: tuple[int, int] = (1, 1)
    padding: tuple[int, int] = (0, 0)
    dilation: tuple[int, int] = (1, 1)


INTERPOLATE_MODES = ("nearest", "bilinear", "bicubic")


@dataclass(frozen=True)
class InterpolateOptions:
    """`mode` is one of "nearest", "bilinear", "bicubic" (align_corners=True, as Burn)."""

    mode: str = "nearest"

    def __post_init__(self) -> None:
        if self.mode not in INTERPOLATE_MODES:
            raise ValueError(
                f"InterpolateOptions: mode must be one of {INTERPOLATE_MODES}, got {self.mode!r}"
            )
